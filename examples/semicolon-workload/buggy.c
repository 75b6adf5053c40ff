// semicolon-workload (buggy): the ordering example's key-value store driven the way WITCHER's
// benchmark drivers are: each operation is one line `i;KEY;VALUE;` (insert) or `g;KEY;` (get),
// fields separated by semicolons, and every line of the workload is different. `i` writes the
// value and the `valid` token, then writes both lines back with clwb and ONE sfence, so the token
// may persist without the value: after a crash there, a later `g` of that key prints 0.
//
// The bug is one root cause however many inserts the workload has: scry clusters crash findings by
// the crash point's frame and the stores persisted out of order, never by the operation's text,
// so the twelve different inserts below give one ordering-violation (and one mpb-violation at the
// token store), not one finding per line.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 8192
#define NKEYS 32

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "i;K;V; | g;K;   K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "i;%lu;%lu;", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v;
			r->valid = 1; // want "mpb-violation"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
			printf("1\n");
		} else if (sscanf(line, "g;%lu;", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu\n", (unsigned long)r->value);
			else
				printf("(null)\n");
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
