// clflush-ordering (buggy): the key-value store of `ordering`, persisted the old way, with
// clflush alone (no fence: clflush is ordered with the stores around it and is durable when it
// retires). `set K V` writes the value and the `valid` token on two cache lines, then clflushes
// the token's line first and the value's line second.
//
// Between the two clflushes the token is durable and the value is not: a crash there, or one
// before the first clflush with the token's line written back by an eviction, leaves a valid
// record holding 0, and the later `get 1` prints `1 = 0` where the legal outcomes print
// `1 = 10` (committed) or `1: not found` (rolled back). The program has no fence, so the only
// crash points inside `set` are the ones before its clflushes: the failing state is reached at
// the first (the token persisted, the value not), an ordering violation located at that
// clflush. The trace oracles see nothing (every store is flushed before the next operation);
// `get`'s guarded read also gives an mpb-violation at the token store.
// scry: args {pool}
// scry: workload workload.txt
#include <emmintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			r->valid = 1; // want "mpb-violation"; property MPB after "record"
			_mm_clflush((void *)&r->valid); // want "ordering-violation"
			_mm_clflush((void *)&r->value);
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
