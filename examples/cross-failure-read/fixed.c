// cross-failure-read (fixed): the log of buggy.c without a count in PM. Recovery does not trust
// bytes no operation made durable: it counts the records itself, scanning the log up to the first
// record whose key is 0. A record's key is written after its value on the same cache line, whose
// stores persist in program order, so a key that survived a crash comes with its value; and each
// `add` persists its record before it ends. The count lives in DRAM.
//
// Why no crash state fails: every record an operation added is durable when it ends, and
// recovery rebuilds everything else from the records.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NRECS 32

struct record {
	_Alignas(64) uint64_t value; /* one cache line per record */
	uint64_t key;                /* written after the value: same line, persisted in order */
};

struct pool {
	_Alignas(64) uint64_t unused; /* cache line 0: the header buggy.c kept its count in */
	struct record recs[NRECS];
};

static uint64_t index_key[NRECS]; /* DRAM: the key of each record, in log order */

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "add K V | get K, K > 0, at most %d adds", NRECS);
	volatile struct pool *vp = p;
	uint64_t n = 0;
	while (n < NRECS && vp->recs[n].key != 0) {
		index_key[n] = vp->recs[n].key;
		n++;
	}

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "add %lu %lu", &k, &v) == 2 && k > 0 && n < NRECS) {
			volatile struct record *r = &vp->recs[n];
			r->value = v;
			r->key = k;
			_mm_clwb((void *)r);
			_mm_sfence();
			index_key[n++] = k;
		} else if (sscanf(line, "get %lu", &k) == 1 && k > 0) {
			uint64_t i = n;
			while (i > 0 && index_key[i - 1] != k)
				i--;
			if (i > 0)
				printf("%lu = %lu\n", k, (unsigned long)vp->recs[i - 1].value);
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
