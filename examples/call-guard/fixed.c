// call-guard (fixed): the same store with its guards in callees (find returns an index, lookup a
// pointer), with the value made durable before the tag: `set K V` writes the value, clwb,
// sfence, then the tag, clwb, sfence.
//
// Why no crash state fails: at the first sfence only the value is pending and the slot still has
// its old tag (a new key is not found; an existing one shows the old or the new value); at the
// second the value is durable and only the tag is pending. The property inferred across the
// calls (value before tag) holds, so the invariants strategy has no state to test; the twin is
// checked with the default strategies.
// scry: args {pool}
// scry: workload workload.txt
// scry: opt -O0 -O2
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NSLOTS 8

struct slot {
	_Alignas(64) uint64_t val; /* cache line 2i */
	_Alignas(64) uint64_t tag; /* cache line 2i+1: the key, 0 for an empty slot */
};

static struct slot *T;

/* The index of the slot tagged k, or -1. */
__attribute__((noinline)) static int find(uint64_t k)
{
	for (int h = 0; h < NSLOTS; h++)
		if (((volatile struct slot *)T)[h].tag == k)
			return h;
	return -1;
}

/* The slot tagged k, or NULL. */
__attribute__((noinline)) static struct slot *lookup(uint64_t k)
{
	volatile struct slot *s = &T[k % NSLOTS];
	return s->tag == k ? (struct slot *)s : NULL;
}

int main(int argc, char *argv[])
{
	T = example_pmem(argc, argv, POOL_SIZE, "set K V | get K | has K, 0 < K");
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k > 0) {
			volatile struct slot *s = &T[k % NSLOTS];
			s->val = v; // property MPB before "slot"
			_mm_clwb((void *)&s->val);
			_mm_sfence();
			s->tag = k; // property MPB after "slot"
			_mm_clwb((void *)&s->tag);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1) {
			int h = find(k);
			if (h >= 0)
				printf("%lu = %lu\n", k, (unsigned long)((volatile struct slot *)T)[h].val);
			else
				printf("%lu: not found\n", k);
		} else if (sscanf(line, "has %lu", &k) == 1) {
			volatile struct slot *s = lookup(k);
			if (s != NULL)
				printf("%lu has %lu\n", k, (unsigned long)s->val);
			else
				printf("%lu: none\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(T, POOL_SIZE);
	return 0;
}
