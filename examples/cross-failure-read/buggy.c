// cross-failure-read (buggy): an append-only log of key-value records (libpmem, 4 KiB: a header
// line holding the number of records, then one cache line per record, value then key, key 0 for
// none). `add K V` writes the record and persists it, then sets the count in the header and
// leaves it unpersisted: its author took it for a hint. When the pool is opened, recovery trusts
// the count: it indexes the first `count` records in DRAM, and `get K` answers from that index.
//
// A crash right before an operation can lose the latest count, never made durable. Recovery then
// reads a stale count and indexes one record too few: a later `get` says "not found" for a key
// whose record is durable, and a later `add` writes over that record. The count's store is not
// wrong by itself (nothing but recovery reads it); recovery reading bytes the crash left
// undetermined, and acting on them, is the bug: a cross-failure read (XFDetector), reported at
// the recovery's load, naming the store (reported as unpersisted-store too).
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
	_Alignas(64) uint64_t count; /* cache line 0: how many records the log holds */
	struct record recs[NRECS];
};

static uint64_t index_key[NRECS]; /* DRAM: the key of each record, in log order */

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "add K V | get K, K > 0, at most %d adds", NRECS);
	volatile struct pool *vp = p;
	uint64_t n = vp->count; // want "cross-failure-read"
	if (n > NRECS)
		n = NRECS;
	for (uint64_t i = 0; i < n; i++)
		index_key[i] = vp->recs[i].key;

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
			vp->count = n; // want "unpersisted-store overwritten-unpersisted"
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
