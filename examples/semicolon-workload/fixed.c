// semicolon-workload (fixed): the same store driven by the same `i;KEY;VALUE;` lines, with the
// value made durable before the token is written (clwb + sfence between them): no crash state
// has the token without its value, and scry reports nothing, whatever the workload's syntax.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 8192
#define NKEYS 32

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "i;K;V; | g;K;   K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "i;%lu;%lu;", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v;
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1;
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
			printf("1\n");
		} else if (sscanf(line, "g;%lu;", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu\n", (unsigned long)r->value);
			else
				printf("(null)\n");
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
