// libc-guard (buggy): a key-value store with string keys and values in raw PM (libpmem's
// pmem_map_file, 4 KiB), read the way C code usually reads strings: through libc. A slot's key
// and value lie on two cache lines. `get K` finds the slot with strcmp(slot->key, K) and prints
// its value with printf("%s"); `set K V` copies the value and the key in with strncpy, then writes
// both lines back with clwb and ONE sfence.
//
// Every PM read of `get` happens inside libc, so scry sees them only through its hooks of strcmp
// and printf: strcmp's read of the key decides whether printf reads the value (a guarded read),
// so the value's store must persist before the key's (must-persist-before). Under one sfence the
// key's line can persist first: an mpb-violation at the key's strncpy, and, since the program is
// checked with the invariants strategy alone, the crash state that breaks that inferred invariant
// (key persisted, value not) is the one re-executed: the later `get a` prints `a = ` where the
// legal outcomes print `a = one` or `a: not found`, an ordering violation at the sfence. Without
// the libc hooks neither the property nor the crash state would exist.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy invariants
// scry: opt -O0 -O2
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 4096
#define NSLOTS 8
#define LEN 16

struct slot {
	_Alignas(64) char key[LEN]; /* cache line 2i: the guard, compared with strcmp */
	_Alignas(64) char val[LEN]; /* cache line 2i+1: printed by printf */
};

int main(int argc, char *argv[])
{
	struct slot *slots = example_pmem(argc, argv, POOL_SIZE, "set K V | get K");

	char line[256], k[LEN], v[LEN];
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %15s %15s", k, v) == 2) {
			struct slot *s = &slots[(unsigned char)k[0] % NSLOTS];
			strncpy(s->val, v, LEN); // property MPB before "slot"
			strncpy(s->key, k, LEN); // want "mpb-violation"; property MPB after "slot"
			_mm_clwb(s->val);
			_mm_clwb(s->key);
			_mm_sfence(); // want "ordering-violation"
		} else if (sscanf(line, "get %15s", k) == 1) {
			struct slot *s = &slots[(unsigned char)k[0] % NSLOTS];
			if (strcmp(s->key, k) == 0)
				printf("%s = %s\n", k, s->val);
			else
				printf("%s: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(slots, POOL_SIZE);
	return 0;
}
