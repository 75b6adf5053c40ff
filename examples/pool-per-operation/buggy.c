// pool-per-operation (buggy): the ordering example's key-value store, but the program maps its
// pool inside each operation and unmaps it before the next, as one-shot tools and drivers that
// call a program's main once per line do. `set K V` writes the value and the `valid` token on
// two cache lines, writes both back with clwb and ONE sfence; `get K` prints a valid record.
//
// Each operation starts from the pool file the previous one left, not from a mapping: scry takes
// that file as the consistent image the operation starts from. The first operation creates the
// pool, so there is no image before it and its crash points are not explored (a warning says
// so); the later `set 1 11` has the same ordering bug as the ordering example: the token's line
// may persist without the value's, and the later `get 1` prints `1 = 0`. (Unlike the ordering
// example, no must-persist-before property is inferred: inference relates loads to stores
// within one mapping of the pool, and here every operation maps it anew.)
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v;
			r->valid = 1;
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
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
		pmem_unmap(recs, POOL_SIZE);
	}
	return 0;
}
