// getline-workload (buggy): the ordering example's key-value store written in C++, reading its
// workload with getline(3), built at -O1 and -O2: there glibc's <bits/stdio.h> inlines getline
// into a call of __getdelim, which scry hooks as it hooks getline, so every line is still an
// operation and its crash points are explored. `set K V` writes the value and the `valid` token
// on two cache lines, writes both back with clwb and ONE sfence: the token's line may persist
// without the value's, and the later `get 1` prints `1 = 0` (an ordering violation at the
// sfence; the guarded read in `get` also makes scry infer that the value must persist first).
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
			r->valid = 1; // want "mpb-violation"; property MPB after "record"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
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
