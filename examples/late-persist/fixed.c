// late-persist (fixed): the same store, with the value written back after it is stored: no store
// is pending when its operation ends, no crash state fails, and scry reports nothing.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#define POOL_SIZE 4096
#define NKEYS 64

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL < OPS   (OPS: set K V | get K, K < %d, V > 0)\n", argv[0], NKEYS);
		return 2;
	}
	size_t len;
	int is_pmem;
	volatile uint64_t *vals = pmem_map_file(argv[1], POOL_SIZE, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (vals == NULL) {
		perror(argv[1]);
		return 1;
	}
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
	pmem_unmap((void *)vals, len);
	return 0;
}
