// clflush-ordering (fixed): the same key-value store, persisted with clflush alone, in the right
// order: `set K V` writes the value and clflushes it, then writes the token and clflushes it.
//
// Why no crash state fails: before the first clflush only the value is unpersisted, and the
// record is still invalid (or holds the old value, for an existing key): rolled back, or
// committed when the new value persisted. Before the second, the value is durable and only the
// token is not: rolled back or committed. No crash state has the token without its value.
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
			_mm_clflush((void *)&r->value);
			r->valid = 1; // property MPB after "record"
			_mm_clflush((void *)&r->valid);
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
