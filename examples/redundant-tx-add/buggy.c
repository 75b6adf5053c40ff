// redundant-tx-add (buggy): libpmemobj. The whole root object is added to the transaction, then
// one of its fields again; PMDK skips the second snapshot but still pays for the range lookup.
// A performance finding.
// scry: args {pool}
#include <libpmemobj.h>
#include <stdint.h>

#include "example.h"

struct point {
	uint64_t x;
	uint64_t y;
};

POBJ_LAYOUT_BEGIN(point);
POBJ_LAYOUT_ROOT(point, struct point);
POBJ_LAYOUT_END(point);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(point), NULL);
	TOID(struct point) root = POBJ_ROOT(pop, struct point);

	TX_BEGIN(pop) {
		TX_ADD(root);
		TX_ADD_FIELD(root, y); // want "redundant-tx-add"
		D_RW(root)->x = 3;
		D_RW(root)->y = 4;
	} TX_END

	pmemobj_close(pop);
	return 0;
}
