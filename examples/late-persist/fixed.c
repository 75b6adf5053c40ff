// late-persist (fixed): the same store, with the value written back after it is stored: no store
// is pending when its operation ends, no crash state fails, and scry reports nothing.
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
			vals[k] = v;
			_mm_clwb((void *)&vals[k]);
			_mm_sfence();
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
