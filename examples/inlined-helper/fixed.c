// inlined-helper (fixed): the buggy twin's key-value store with each helper call in its place:
// `set` persists the value before it writes the token, `del` persists the token once. scry
// reports nothing at -O0 or -O2.
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
	r->value = v;
	persist(&r->value);
	r->valid = 1;
	persist(&r->valid);
}

static void del(volatile struct record *r)
{
	r->valid = 0;
	persist(&r->valid);
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
