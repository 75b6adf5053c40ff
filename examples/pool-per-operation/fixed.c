// pool-per-operation (fixed): the value is written back and fenced before the token is written,
// so a crash never leaves a valid token without its value.
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
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1;
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
		pmem_unmap(recs, POOL_SIZE);
	}
	return 0;
}
