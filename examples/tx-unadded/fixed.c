// tx-unadded (fixed): the same statistics, with both fields added to the transaction.
//
// Why no crash state fails: before commit PMDK's undo log holds both fields' old values, so
// whatever prefix of the two stores persisted, recovery restores both (rolled back); at and after
// the commit the transaction's ranges are durable together (committed).
// scry: args {pool}
// scry: workload workload.txt
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

struct stats {
	uint64_t count;
	uint64_t sum; /* same cache line as count */
};

POBJ_LAYOUT_BEGIN(stats);
POBJ_LAYOUT_ROOT(stats, struct stats);
POBJ_LAYOUT_END(stats);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(stats), "add V | print");
	TOID(struct stats) root = POBJ_ROOT(pop, struct stats);

	char line[256];
	unsigned long v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "add %lu", &v) == 1) {
			TX_BEGIN(pop) {
				TX_ADD_FIELD(root, count);
				TX_ADD_FIELD(root, sum);
				D_RW(root)->count += 1;
				D_RW(root)->sum += v;
			} TX_END
		} else if (line[0] == 'p') {
			printf("count %lu sum %lu\n", (unsigned long)D_RO(root)->count,
			       (unsigned long)D_RO(root)->sum);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			pmemobj_close(pop);
			return 1;
		}
	}
	pmemobj_close(pop);
	return 0;
}
