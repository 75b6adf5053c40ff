// arm-ordering (buggy): examples/ordering's key-value store on Arm. Each record is two cache
// lines: the value on the first, the `valid` token on the second. `set K V` writes the value and
// the token, cleans both lines to the point of persistence with DC CVAP, then waits for the
// cleans with ONE DSB: the x86 pattern (clwb, clwb, sfence) written with Arm's instructions.
//
// Built for aarch64 (`scry cc --target=aarch64-linux-gnu`) and run under qemu-aarch64, the trace
// is checked under the Arm persistency profile (Armv8.2; Raad, Wickerson and Vafeiadis,
// OOPSLA'19): a clean is only guaranteed complete at a later DSB of its thread, and nothing
// orders the two cleans, so before the DSB the token's line may reach PM while the value's does
// not. On that crash image the later `get 1` prints `1 = 0`, while the legal outcomes print
// `1 = 10` or `1: not found`: an ordering violation at the DSB. As in examples/ordering, `get`
// reads the value only when the token is set, so scry also infers that the value must persist
// before the token and reports the breach at the token's store (mpb-violation).
//
// The fix (fixed.c) cleans the value and issues a DMB before it stores the token: a DMB orders
// the clean before the thread's later stores without waiting for it, which is all the order
// needs; the DSB at the end still makes both durable before the operation ends.
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
			r->valid = 1; // want "mpb-violation"; property MPB after "record"
			clean(&r->value);
			clean(&r->valid);
			dsb(); // want "ordering-violation"
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value); // related recovery-load
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
