// sparse: a set of keys in PM whose rare path needs a fill-then-selective-delete sequence, for
// TestFuzzReachesSparse. Key K lives in range bucket (K / 16) % 64, as bit K % 16 of the
// bucket's bitmap; each bucket keeps the most keys it ever held (hwm). A remove that leaves a
// bucket which once held 12 keys or more with 5 keys or more, no two of them neighbours (every
// other key of a filled range deleted), compacts it: the rare stores of compact(). It speaks
// mapcli's language: `i K` inserts, `r K` removes, `c K` prints 1 or 0. Every write is persisted
// (clwb, sfence).
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define NBUCKETS 64

struct bucket {
	uint64_t bits;
	uint64_t hwm;
	uint64_t compacted; /* the bitmap at the last compaction */
	uint64_t gen;       /* compactions of this bucket */
};

struct set {
	struct bucket bucket[NBUCKETS];
};

static void persist(volatile void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63;
	for (; a < (uintptr_t)p + len; a += 64)
		_mm_clwb((void *)a);
	_mm_sfence();
}

static volatile struct bucket *bucket_of(volatile struct set *s, uint64_t k)
{
	return &s->bucket[(k / 16) % NBUCKETS];
}

static void compact(volatile struct bucket *b)
{
	b->compacted = b->bits;
	persist(&b->compacted, sizeof b->compacted);
	b->gen++;
	persist(&b->gen, sizeof b->gen);
	b->hwm = (uint64_t)__builtin_popcountll(b->bits);
	persist(&b->hwm, sizeof b->hwm);
}

static void insert(volatile struct set *s, uint64_t k)
{
	volatile struct bucket *b = bucket_of(s, k);
	b->bits |= 1ull << (k % 16);
	persist(&b->bits, sizeof b->bits);
	uint64_t n = (uint64_t)__builtin_popcountll(b->bits);
	if (n > b->hwm) {
		b->hwm = n;
		persist(&b->hwm, sizeof b->hwm);
	}
}

static void remove_key(volatile struct set *s, uint64_t k)
{
	volatile struct bucket *b = bucket_of(s, k);
	uint64_t bit = 1ull << (k % 16);
	if (!(b->bits & bit))
		return;
	b->bits &= ~bit;
	persist(&b->bits, sizeof b->bits);
	uint64_t v = b->bits;
	if (b->hwm >= 12 && __builtin_popcountll(v) >= 5 && (v & (v >> 1)) == 0)
		compact(b);
}

int main(int argc, char *argv[])
{
	volatile struct set *s = example_pmem(argc, argv, sizeof(struct set), "i K | r K | c K");
	char line[256];
	unsigned long k;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "i %lu", &k) == 1)
			insert(s, k);
		else if (sscanf(line, "r %lu", &k) == 1)
			remove_key(s, k);
		else if (sscanf(line, "c %lu", &k) == 1)
			printf("%d\n", (bucket_of(s, k)->bits >> (k % 16)) & 1 ? 1 : 0);
		else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap((void *)s, sizeof(struct set));
	return 0;
}
