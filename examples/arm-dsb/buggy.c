// arm-dsb (buggy): examples/arm-ordering's fixed store with its last DSB replaced by a DMB, as
// a port that maps x86's sfence to Arm's "dmb ishst" or "dmb ish" (PMDK's aarch64 code maps
// sfence to a DMB) writes it. `set K V` cleans the value (DC CVAP), issues a DMB, stores the
// token, cleans it and issues another DMB, then the operation ends.
//
// A DMB orders a clean before the thread's later stores but does not wait for it (Arm
// persistency, Raad, Wickerson and Vafeiadis, OOPSLA'19): only a DSB does. The order of value
// and token is right, but when `set 1 10` has ended, its token may still be in the cache, and
// stays so until the thread's next store. The trace oracles report the token of the last `set`
// not durable when the program exits (unpersisted-store: missing DSB); a crash right after
// `set 1 10` that loses its token makes the later `get 1` print `1: not found` though the `set`
// had ended (durability-violation). fixed.c ends `set` with a DSB.
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
			r->valid = 1; // want "unpersisted-store durability-violation"; property MPB after "record"
			clean(&r->valid);
			dmb();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid) // related recovery-load
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
