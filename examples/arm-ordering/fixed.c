// arm-ordering (fixed): the value's line is cleaned (DC CVAP) and a DMB issued before the token
// is stored: the DMB orders the clean before the thread's later stores, so no crash state
// persists the token without the value. The DSB at the end waits for both cleans before the
// operation ends. See buggy.c.
// scry: args {pool}
// scry: workload workload.txt
// scry: target aarch64-linux-gnu
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

/* clean writes the cache line holding p back to the point of persistence (DC CVAP). */
static inline void clean(volatile void *p) { __asm__ volatile("dc cvap, %0" : : "r"(p) : "memory"); }
/* dmb orders the thread's earlier cleans before its later stores. */
static inline void dmb(void) { __asm__ volatile("dmb ish" : : : "memory"); }
/* dsb waits until the thread's earlier cleans have completed. */
static inline void dsb(void) { __asm__ volatile("dsb ish" : : : "memory"); }

int main(int argc, char *argv[])
{
	struct record *recs = example_mmap(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			clean(&r->value);
			dmb();
			r->valid = 1; // property MPB after "record"
			clean(&r->valid);
			dsb();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	munmap(recs, POOL_SIZE);
	return 0;
}
