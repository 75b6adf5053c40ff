// assume-fixed (buggy): the ordering example's key-value store (libpmem, 4 KiB: a header line,
// then records of two cache lines, value and `valid` token) with a pool header. A new pool is
// initialised once: records cleared and persisted, then the header's magic set, but the magic is
// never written back (a durability bug, reported as unpersisted-store). A program that reopens a
// pool whose magic did not persist takes it for a new one and says "new pool".
//
// Two independent bugs. Taken literally, the magic is lost in every crash state of every
// operation, so every crash image says "new pool" and fails: the durability bug would hide the
// other one among findings at every crash point. scry reports the durability bug once
// (unpersisted-store), proves it matters with one crash state that loses only the magic (the
// rerun's recovery reads the magic, which the crash left undetermined, and says "new pool": a
// cross-failure-read at that check, where a durable magic takes the other branch), and explores
// the operations after it as if the magic had been persisted. There it finds the second bug as on a program without the
// first: `set` writes back value and token with ONE sfence, so the token may persist without
// the value (ordering-violation at the sfence; mpb-violation at the token store, as in the
// ordering example). Built with -DPERSIST_MAGIC the magic is persisted; the ordering findings
// are then the same (test/integration).
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
#define MAGIC 0x5343525950ULL

struct record {
	_Alignas(64) uint64_t value; /* cache line 1 + 2K */
	_Alignas(64) uint64_t valid; /* cache line 2 + 2K: the token guarding value */
};

struct pool {
	_Alignas(64) uint64_t magic; /* cache line 0 */
	struct record recs[NKEYS];
};

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);
	if (p->magic != MAGIC) { // want "cross-failure-read"
		printf("new pool\n");
		memset(p->recs, 0, sizeof p->recs);
		pmem_persist(p->recs, sizeof p->recs);
		p->magic = MAGIC; // want "unpersisted-store"
#ifdef PERSIST_MAGIC
		pmem_persist(&p->magic, sizeof p->magic);
#endif
	}

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &p->recs[k];
			r->value = v;
			r->valid = 1; // want "mpb-violation"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &p->recs[k];
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(p, POOL_SIZE);
	return 0;
}
