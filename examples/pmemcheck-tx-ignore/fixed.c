// pmemcheck-tx-ignore (fixed): libpmemobj. A transaction also bumps a statistics counter that
// needs no rollback (an aborted transfer still counts as an attempt); the program persists it
// itself and exempts it from pmemcheck's transaction checks with
// VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE, which scry honours the same way (docs/pmemcheck.md): the
// store to it inside the transaction is no transaction misuse, and it must still be persisted.
// scry: args {pool}
// scry: opt -O0 -O2
#include <libpmemobj.h>
#include <pmemcheck.h>
#include <stdint.h>

#include "example.h"

struct bank {
	_Alignas(64) uint64_t from;     /* cache line 0 */
	_Alignas(64) uint64_t to;       /* cache line 1 */
	_Alignas(64) uint64_t attempts; /* cache line 2: statistics, never rolled back */
	_Alignas(64) uint64_t spare;    /* cache line 3 */
};

POBJ_LAYOUT_BEGIN(bank);
POBJ_LAYOUT_ROOT(bank, struct bank);
POBJ_LAYOUT_END(bank);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(bank), NULL);
	TOID(struct bank) root = POBJ_ROOT(pop, struct bank);
	struct bank *b = D_RW(root);
	VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE(&b->attempts, sizeof(b->attempts));

	TX_BEGIN(pop) {
		b->attempts++;
		pmemobj_persist(pop, &b->attempts, sizeof(b->attempts));
		TX_ADD_FIELD(root, from);
		TX_ADD_FIELD(root, to);
		b->from -= 10;
		b->to += 10;
	} TX_END

	pmemobj_close(pop);
	return 0;
}
