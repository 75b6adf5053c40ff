// cas-publish (fixed): the key-value store of examples/ordering, its `valid` token set with an
// atomic exchange (a locked read-modify-write, `xchg`) instead of a plain store. `set K V` writes
// the value and writes it back with clwb, then sets the token with the exchange, then writes the
// token back and fences.
//
// Why no crash state fails: under x86 persistency a locked read-modify-write orders the clwb
// before it, as an sfence would: the value is durable before the token's new value is visible,
// so no crash persists the token without the value. (scry's traces recorded a locked
// instruction's store before its fence until 2026-11-29, and the crash point before that fence
// had the token persisted without the value: a false ordering violation on this program.)
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			struct record *r = &recs[k];
			r->value = v;
			_mm_clwb((void *)&r->value);
			__atomic_exchange_n(&r->valid, 1, __ATOMIC_SEQ_CST); /* orders the clwb before it */
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			struct record *r = &recs[k];
			if (__atomic_load_n(&r->valid, __ATOMIC_ACQUIRE))
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
