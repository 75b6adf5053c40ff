// tx-unlogged-store (fixed): libpmemobj. Both balances are added to the transaction before they
// are modified, so PMDK snapshots them and makes them durable at commit.
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
		TX_ADD_FIELD(root, to);
		D_RW(root)->from -= 10;
		D_RW(root)->to += 10;
	} TX_END

	pmemobj_close(pop);
	return 0;
}
