// call-guard (buggy): the guarded read of `ordering`, written as real lookups are: the guard sits
// in a callee. A slot's value and its tag (the key, 0 for an empty slot) lie on two cache lines.
// find(K) returns the index of the slot tagged K (or -1) and lookup(K) a pointer to it (or NULL);
// `get K` reads the value through find's index and `has K` through lookup's pointer. `set K V`
// writes the value and the tag, then writes both lines back with clwb and ONE sfence. Both
// lookups are kept out of line (noinline), so the guard reaches the caller only through a return
// value, at -O0 and -O2 alike.
//
// scry carries guards through calls: what decided find's and lookup's returned values (the load
// of the tag) guards the caller's branch on that value, so the read of the value is guarded by the
// tag and the value's store must persist before the tag's (must-persist-before, inferred across
// the call). One sfence breaks it: an mpb-violation at the tag store. Checked with the invariants
// strategy alone, whose one state (the tag persisted, the value not) makes the later `get 1`
// print `1 = 0`: an ordering violation at the sfence, which confirms the mpb-violation. Without
// dependence through calls there would be no property and no state to test.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy invariants
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
			s->tag = k; // want "mpb-violation"; property MPB after "slot"
			_mm_clwb((void *)&s->val);
			_mm_clwb((void *)&s->tag);
			_mm_sfence(); // want "ordering-violation"
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
