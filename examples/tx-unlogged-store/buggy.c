// tx-unlogged-store (buggy): libpmemobj. A transaction moves 10 units from one balance to
// another but adds only the first to the transaction (TX_ADD_FIELD); the second balance is
// modified without an undo-log snapshot. A crash inside the transaction rolls `from` back but
// not `to`: money is created. (The program persists `to` after the transaction, so the store is
// durable at exit: the one bug is the missing snapshot.)
// scry: args {pool}
#include <libpmemobj.h>
#include <stdint.h>

#include "example.h"

struct bank {
	_Alignas(64) uint64_t from; /* cache line 0 */
	_Alignas(64) uint64_t to;   /* cache line 1 */
};

POBJ_LAYOUT_BEGIN(bank);
POBJ_LAYOUT_ROOT(bank, struct bank);
POBJ_LAYOUT_END(bank);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(bank), NULL);
	TOID(struct bank) root = POBJ_ROOT(pop, struct bank);

	TX_BEGIN(pop) {
		TX_ADD_FIELD(root, from);
		D_RW(root)->from -= 10;
		D_RW(root)->to += 10; // want "tx-unlogged-store"
	} TX_END
	pmemobj_persist(pop, &D_RW(root)->to, sizeof(D_RW(root)->to));

	pmemobj_close(pop);
	return 0;
}
