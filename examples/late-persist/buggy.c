// late-persist (buggy): a key-value store (libpmem, raw PM) of 8-byte values, eight to a cache
// line, 0 for an absent key. `set K V` writes the line back and fences, but before it stores the
// value (a misplaced clwb): the value stays pending when the operation ends, and reaches PM only
// when a later `set` of a key on the same line writes that line back, or never.
//
// Taken literally, a crash inside that later, innocent `set`, before its fence, may lose the
// earlier value (pending on the line it flushes), and a later `get` prints "not found" where both
// legal outcomes print the value: the later operation would be blamed, at its fence. scry
// attributes the failure to its cause: a store still pending when its operation ended is assumed
// durable from the next operation on, and one crash state right before that operation, losing
// only it, tests whether the missing persist matters. It does: a durability-violation at the
// store. The last value is never made durable at all (unpersisted-store, confirmed by the same
// crash), and the first clwb of the line has nothing to write back nor its sfence anything to
// order (redundant-flush, redundant-fence). Nothing is reported at the innocent `set`'s fence
// (with --no-assume-fixed, the literal model, an atomicity-violation is).
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 64

int main(int argc, char *argv[])
{
	volatile uint64_t *vals = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d, V > 0", NKEYS);
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS && v > 0) {
			_mm_clwb((void *)&vals[k]); // want "redundant-flush"
			vals[k] = v;                // want "durability-violation unpersisted-store"
			_mm_sfence();               // want "redundant-fence"
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			if (vals[k])
				printf("%lu = %lu\n", k, (unsigned long)vals[k]);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap((void *)vals, POOL_SIZE);
	return 0;
}
