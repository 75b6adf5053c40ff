// getline-workload (fixed): the same store with the value made durable before the token is
// written (clwb + sfence after each), read with getline(3) at -O1 and -O2 as in the buggy twin
// (glibc inlines getline into __getdelim, which scry hooks). No crash state has the token
// without its value.
// scry: args {pool}
// scry: workload workload.txt
// scry: opt -O1 -O2
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <immintrin.h>
#include <libpmem.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	alignas(64) uint64_t value; /* cache line 2K */
	alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	auto *recs = static_cast<record *>(example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS));

	char *line = nullptr;
	size_t cap = 0;
	unsigned long k, v;
	while (getline(&line, &cap, stdin) > 0) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile record *r = &recs[k];
			r->value = v; // property MPB before "record"
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1; // property MPB after "record"
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile record *r = &recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	free(line);
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
