// assume-fixed (fixed): the magic is persisted with the records it vouches for, and `set`
// fences between the value and its token, so the token never persists without the value.
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
#define MAGIC 0x5343525950ULL

struct record {
	_Alignas(64) uint64_t value; /* cache line 1 + 2K */
	_Alignas(64) uint64_t valid; /* cache line 2 + 2K: the token guarding value */
};

struct pool {
	_Alignas(64) uint64_t magic; /* cache line 0 */
	struct record recs[NKEYS];
};

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);
	if (p->magic != MAGIC) {
		printf("new pool\n");
		memset(p->recs, 0, sizeof p->recs);
		pmem_persist(p->recs, sizeof p->recs);
		p->magic = MAGIC;
		pmem_persist(&p->magic, sizeof p->magic);
	}

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &p->recs[k];
			r->value = v;
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1;
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &p->recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(p, POOL_SIZE);
	return 0;
}
