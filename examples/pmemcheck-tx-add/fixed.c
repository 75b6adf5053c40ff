// pmemcheck-tx-add (fixed): libpmemobj. Inside a transaction the program logs a field by its own
// means (it keeps the old value in an undo slot it persists first, and persists the new value
// itself) and declares the field part of the transaction to pmemcheck with
// VALGRIND_PMC_ADD_TO_TX, which scry takes as a range added to the thread's transaction that
// libpmemobj neither snapshots nor flushes (docs/pmemcheck.md): the store to it is no
// transaction misuse.
// scry: args {pool}
// scry: opt -O0 -O2
#include <libpmemobj.h>
#include <pmemcheck.h>
#include <stdint.h>

#include "example.h"

struct account {
	_Alignas(64) uint64_t balance; /* cache line 0 */
	_Alignas(64) uint64_t undo;    /* cache line 1: the balance before the transaction */
	_Alignas(64) uint64_t audit;   /* cache line 2 */
};

POBJ_LAYOUT_BEGIN(account);
POBJ_LAYOUT_ROOT(account, struct account);
POBJ_LAYOUT_END(account);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(account), NULL);
	TOID(struct account) root = POBJ_ROOT(pop, struct account);
	struct account *a = D_RW(root);

	TX_BEGIN(pop) {
		TX_ADD_FIELD(root, undo);
		a->undo = a->balance;
		pmemobj_persist(pop, &a->undo, sizeof(a->undo));
		VALGRIND_PMC_ADD_TO_TX(&a->balance, sizeof(a->balance));
		a->balance += 10;
		pmemobj_persist(pop, &a->balance, sizeof(a->balance));
	} TX_END

	pmemobj_close(pop);
	return 0;
}
