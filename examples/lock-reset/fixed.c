// lock-reset (fixed): a hash table in raw PM (libpmem) whose buckets carry a lock word, as
// P-CLHT's and CCEH's do. `put K V` takes the bucket's lock, writes value and key, writes the
// line back and fences, then releases the lock with a plain store that is never written back:
// a lock protects the volatile execution, not the data on PM. Like P-CLHT's
// clht_lock_initialization() and CCEH's Recovery(), the program resets every lock when it opens
// the pool, so a lock left taken by a crash does no harm.
//
// scry still sees a lock word in PM (pm-lock-word, at the compare-and-swap): a word taken by a
// read-modify-write and given back by a store of 0, which a crash can leave durable as held.
// With a workload it tests the claim with a crash: the states right before the next operation
// that lose the release (the word left taken). The program recovers from every such state, so
// the finding stays a warning that says so, and the trace oracles' findings of the same release
// (unpersisted-store, and the next acquisition's overwritten-unpersisted) are folded into it.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NBUCKETS 8

struct bucket {
	_Alignas(64) uint64_t lock; /* one cache line a bucket: lock, key, value */
	uint64_t key;               /* 0: empty */
	uint64_t value;
};

int main(int argc, char *argv[])
{
	struct bucket *t = example_pmem(argc, argv, POOL_SIZE, "put K V | get K, K > 0");
	for (int i = 0; i < NBUCKETS; i++) /* recovery: no lock survives a restart */
		((volatile struct bucket *)t)[i].lock = 0;
	pmem_persist(t, NBUCKETS * sizeof *t);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "put %lu %lu", &k, &v) == 2 && k > 0) {
			volatile struct bucket *b = &t[k % NBUCKETS];
			if (!__sync_bool_compare_and_swap(&b->lock, 0, 1)) { // want "pm-lock-word:unconfirmed"
				printf("%lu: bucket busy\n", k);
				continue;
			}
			b->value = v; /* the key, written last, makes the entry */
			b->key = k;
			_mm_clwb((void *)b);
			_mm_sfence();
			b->lock = 0;
			printf("%lu: stored\n", k);
		} else if (sscanf(line, "get %lu", &k) == 1 && k > 0) {
			volatile struct bucket *b = &t[k % NBUCKETS];
			if (b->key == k)
				printf("%lu = %lu\n", k, (unsigned long)b->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(t, POOL_SIZE);
	return 0;
}
