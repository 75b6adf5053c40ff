// bucket-overflow (buggy): a hash set of 64-bit keys in PM, for `scry workload fuzz`
// (docs/workloads.md): a bug reached only by a rare sequence of operations. Key K goes to bucket
// K % 1024, which holds up to 8 keys and a count; a key that finds its bucket full goes to a
// shared overflow area (a count and 64 slots). It speaks mapcli's language: `i K` inserts,
// `r K` removes, `c K` prints 1 or 0. Every write is made durable before the count that
// publishes it (clwb, sfence), except in the overflow path.
//
// The bug: spilling into the overflow area persists the overflow count before the key's slot.
// On the crash image taken between the two sfences the count covers an empty slot, and the next
// run's check of the pool ("overflow slot N is empty") fails. The path needs nine keys that
// collide modulo 1024 present at once: `scry workload kv` (2000 operations, keys uniform in
// 1..8000) never builds such a bucket, while the fuzzer's collision mutations and its PM store
// site feedback (the overflow stores are new sites) find it (workload.txt is its workload).
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define NBUCKETS 1024
#define ASSOC 8
#define NOVERFLOW 64

struct bucket {
	uint64_t count;
	uint64_t key[ASSOC];
};

struct set {
	struct bucket bucket[NBUCKETS];
	uint64_t ovf_count;
	uint64_t ovf[NOVERFLOW];
};

/* persist writes back the cache lines of [p, p+len) and orders them (clwb each line, sfence). */
static void persist(volatile void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63;
	for (; a < (uintptr_t)p + len; a += 64)
		_mm_clwb((void *)a);
	_mm_sfence();
}

static int find(volatile struct set *s, uint64_t k)
{
	volatile struct bucket *b = &s->bucket[k % NBUCKETS];
	for (uint64_t i = 0; i < b->count; i++)
		if (b->key[i] == k)
			return 1;
	for (uint64_t i = 0; i < s->ovf_count; i++)
		if (s->ovf[i] == k)
			return 1;
	return 0;
}

static void insert(volatile struct set *s, uint64_t k)
{
	volatile struct bucket *b = &s->bucket[k % NBUCKETS];
	if (find(s, k))
		return;
	if (b->count < ASSOC) {
		b->key[b->count] = k;
		persist(&b->key[b->count], sizeof b->key[0]);
		b->count++;
		persist(&b->count, sizeof b->count);
		return;
	}
	uint64_t n = s->ovf_count;
	if (n == NOVERFLOW) {
		printf("%lu: overflow area full\n", (unsigned long)k);
		return;
	}
	s->ovf_count = n + 1;
	persist(&s->ovf_count, sizeof s->ovf_count); // want "atomicity-violation"
	s->ovf[n] = k;
	persist(&s->ovf[n], sizeof s->ovf[n]);
}

/* remove removes every copy of k (a crash inside an earlier remove may leave two). */
static void remove_key(volatile struct set *s, uint64_t k)
{
	volatile struct bucket *b = &s->bucket[k % NBUCKETS];
	for (uint64_t i = 0; i < b->count;) {
		if (b->key[i] != k) {
			i++;
			continue;
		}
		b->key[i] = b->key[b->count - 1];
		persist(&b->key[i], sizeof b->key[i]);
		b->count--;
		persist(&b->count, sizeof b->count);
	}
	for (uint64_t i = 0; i < s->ovf_count;) {
		if (s->ovf[i] != k) {
			i++;
			continue;
		}
		s->ovf[i] = s->ovf[s->ovf_count - 1];
		persist(&s->ovf[i], sizeof s->ovf[i]);
		s->ovf_count--;
		persist(&s->ovf_count, sizeof s->ovf_count);
	}
}

int main(int argc, char *argv[])
{
	volatile struct set *s = example_pmem(argc, argv, sizeof(struct set), "i K | r K | c K");
	for (uint64_t i = 0; i < s->ovf_count; i++)
		if (s->ovf[i] == 0) {
			fprintf(stderr, "overflow slot %lu is empty: the pool is corrupt\n", (unsigned long)i);
			return 1;
		}
	char line[256];
	unsigned long k;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "i %lu", &k) == 1)
			insert(s, k);
		else if (sscanf(line, "r %lu", &k) == 1)
			remove_key(s, k);
		else if (sscanf(line, "c %lu", &k) == 1)
			printf("%d\n", find(s, k));
		else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap((void *)s, sizeof(struct set));
	return 0;
}
