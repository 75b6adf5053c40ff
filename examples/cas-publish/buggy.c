// cas-publish (buggy): the key-value store of examples/ordering, its `valid` token set with an
// atomic exchange (a locked read-modify-write, `xchg`) instead of a plain store. `set K V` writes
// the value, sets the token with the exchange, then writes both lines back with clwb and one
// sfence: the exchange orders nothing, since no write-back of the value precedes it, and at the
// crash point before the sfence the token's line may persist without the value's. A later
// `get K` then prints 0, which neither legal outcome prints: an ordering violation at the sfence,
// and the token's store breaks the must-persist-before property the guarded read implies.
// fixed.c writes the value back before the exchange.
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
			__atomic_exchange_n(&r->valid, 1, __ATOMIC_SEQ_CST); // want "mpb-violation"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
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
