// inlined-helper (buggy): the ordering example's key-value store written as PM code usually is,
// through a tiny persistence helper, `persist(p)` (clwb of p's line, then sfence), which the
// compiler inlines at -O2 and calls at -O0. `set K V` writes the value and the `valid` token and
// only then persists them one by one; `del K` clears the token and persists it, twice.
//
// Both bugs sit at one call of the helper among several, and scry reports each at that caller's
// line, not at the helper's clwb or sfence, at either optimisation level (the helper's frame is
// still in the report, marked inlined at -O2):
// - at the crash point before the sfence of set's first persist, the token's line can reach PM
//   before the value's (dirty lines are written back in any order): the later `get` prints a
//   value that was never written. The same sfence reached from set's second call and from del
//   never fails, so the ordering violation is placed at set's first call.
// - del's second persist flushes a clean line and fences nothing: a redundant flush and a
//   redundant fence, placed at that call (del's first call is needed).
// The token store also breaks the must-persist-before property that `get`'s guarded read
// implies (mpb-violation, at the store).
// scry: args {pool}
// scry: workload workload.txt
// scry: opt -O0 -O2
#include <immintrin.h>
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

static inline void persist(volatile void *p)
{
	_mm_clwb((void *)p);
	_mm_sfence();
}

static void set(volatile struct record *r, uint64_t v)
{
	r->value = v; // property MPB before "record"
	r->valid = 1; // want "mpb-violation"; property MPB after "record"
	persist(&r->value); // want "ordering-violation"
	persist(&r->valid);
}

static void del(volatile struct record *r)
{
	r->valid = 0;
	persist(&r->valid);
	persist(&r->valid); // want "redundant-flush redundant-fence"
}

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | del K | get K, K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			set(&recs[k], v);
		} else if (sscanf(line, "del %lu", &k) == 1 && k < NKEYS) {
			del(&recs[k]);
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
