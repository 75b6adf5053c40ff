// lock-reset (buggy): the hash table of the fixed twin without its recovery: the program does not
// reset the locks when it opens the pool. A lock release that had not reached PM when the program
// crashed leaves its bucket taken for good: every later `put` into it prints "bucket busy".
//
// scry reports the lock word at the compare-and-swap (pm-lock-word: a word in PM taken by a
// read-modify-write and given back by a store of 0) and tests it with a crash: the state right
// before the next operation that loses the release, leaving the word durable as held, makes a
// later `put` fail, so it is a correctness finding, confirmed by that crash (the
// durability-violation at the release replays it); the trace oracles' findings of the same
// release (unpersisted-store, and the next acquisition's overwritten-unpersisted) are folded into
// it. A crash inside `put` once the lock is taken leaves the bucket taken too: `put` is not
// failure-atomic (an atomicity-violation at the fence that persists the entry, the first crash
// point after the compare-and-swap: the locked instruction's own fence comes before its store,
// so the crash point at it is one before the lock is taken).
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
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "put %lu %lu", &k, &v) == 2 && k > 0) {
			volatile struct bucket *b = &t[k % NBUCKETS];
			if (!__sync_bool_compare_and_swap(&b->lock, 0, 1)) { // want "pm-lock-word:correctness"
				printf("%lu: bucket busy\n", k);
				continue;
			}
			b->value = v; /* the key, written last, makes the entry */
			b->key = k;
			_mm_clwb((void *)b);
			_mm_sfence(); // want "atomicity-violation"
			b->lock = 0; // want "durability-violation"
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
