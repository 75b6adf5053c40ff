// ordering (fixed): the same key-value store, with the value made durable before the token is
// written. `set K V` writes the value, clwb + sfence, then writes the token, clwb + sfence.
//
// Why no crash state fails: at the first sfence only the value's line is pending, and the record
// is still invalid (or still holds the old value, for an existing key): either state reads as
// rolled back or, for an existing key whose value persisted, committed. At the second sfence the
// value is durable and only the token is pending: rolled back or committed. No crash state has
// the token without its value.
// scry: args {pool}
// scry: workload workload.txt
// scry: persistency all
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
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1; // property MPB after "record"
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
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
