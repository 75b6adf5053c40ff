// ordering (buggy): a tiny key-value store in raw PM (libpmem's pmem_map_file, 4 KiB). Each
// record is two cache lines: the value on the first, the `valid` token on the second. `set K V`
// writes the value and the token, then writes both lines back with clwb and ONE sfence; `get K`
// prints the value of a valid record.
//
// The trace oracles see nothing: every store is flushed and fenced before the next operation.
// The bug is only visible after a crash. Under x86 persistency a clwb is pending until the next
// sfence, and lines persist independently of each other, so at the crash point before that sfence
// the token's line may reach PM while the value's line does not. On the crash image taken during
// `set 1 10` with the token persisted and the value not (a non-program-order state: the later
// store persisted, the earlier one did not), the later `get 1` prints `1 = 0`, while the two legal
// outcomes print `1 = 10` (committed) or `1: not found` (rolled back): an ordering violation,
// located at the sfence. The other states are legal (nothing persisted: rolled back; the value
// alone: the record is still invalid, rolled back; both: committed).
//
// `get` reads the value only when the token is set (a guarded read), so scry also infers from the
// same trace that the value store must persist before the token store (must-persist-before,
// docs/examples.md's guarded-read) and reports the single sfence's breach of it at the token
// store: an mpb-violation, found without re-executing anything.
// scry: args {pool}
// scry: workload workload.txt
// scry: persistency all
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
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			r->valid = 1; // want "mpb-violation"; property MPB after "record"; profiles adr
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"; profiles adr
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
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
