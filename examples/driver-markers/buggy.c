// driver-markers (buggy): a benchmark driver as published PM benchmarks write them. It reads its
// whole workload from standard input first, then runs each operation between calls of its own
// markers, bench_op_begin() and bench_op_end() (empty functions, kept out of line, where a
// benchmark would start and stop its timers). Read line by line, standard input would mark the
// wrong operations (every line while loading, none while running), so the example is checked
// with `--op-begin bench_op_begin --op-end bench_op_end`: each marker call begins or ends an
// operation, named by the workload line of the same number. The driver is not edited.
//
// The store is the ordering example's: `set K V` writes back the value's and the token's lines
// with ONE sfence, so a crash before it can persist the token without the value (an
// ordering-violation at the sfence) and the token store breaks the must-persist-before property
// that `get`'s guarded read implies (an mpb-violation).
// scry: args {pool}
// scry: workload workload.txt
// scry: op-markers bench_op_begin bench_op_end
// scry: opt -O0 -O2
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16
#define MAXOPS 1024

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

__attribute__((noinline)) void bench_op_begin(void) { __asm__ volatile(""); }
__attribute__((noinline)) void bench_op_end(void) { __asm__ volatile(""); }

static char ops[MAXOPS][64];

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);
	int n = 0;
	while (n < MAXOPS && fgets(ops[n], sizeof ops[n], stdin))
		n++;

	unsigned long k, v;
	for (int i = 0; i < n; i++) {
		bench_op_begin();
		if (sscanf(ops[i], "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			r->valid = 1; // want "mpb-violation"; property MPB after "record"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
		} else if (sscanf(ops[i], "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", ops[i]);
			return 1;
		}
		bench_op_end();
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
