// tx-unadded (buggy): libpmemobj. The root object keeps running statistics of the numbers added
// so far, `count` and `sum`, on one cache line. `add V` updates both in a transaction but adds
// only `count` to it (TX_ADD_FIELD); `sum` is modified without an undo-log snapshot. `print`
// prints both. At commit PMDK writes back the lines of the added ranges, which include `sum`'s,
// so every store is durable at exit: the trace oracle tx-unlogged-store flags the store to `sum`,
// and nothing else.
//
// After a crash: at the commit crash point (TX_END) both stores are pending on one line, which
// persists a prefix of them. In the state where both persisted (a program-order prefix), PMDK's
// recovery at the next pmemobj_open finds the transaction uncommitted and rolls back `count` from
// its undo log, but not `sum`: the later `print` shows the old count with the new sum, which is
// neither legal outcome (`add` committed: both new; rolled back: both old). An atomicity
// violation, located at the commit point. (With `count` alone persisted, recovery restores it:
// rolled back, legal.)
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
				D_RW(root)->count += 1;
				D_RW(root)->sum += v; // want "tx-unlogged-store"
			} TX_END // want "atomicity-violation"
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
