// libc-guard (fixed): the same string key-value store, with the value made durable before the key
// is written: `set K V` copies the value in, clwb, sfence, then the key, clwb, sfence.
//
// Why no crash state fails: at the first sfence only the value is pending, and the slot's key is
// still the old one (no key: not found; the same key: the old or the new value, rolled back or
// committed); at the second the value is durable and only the key is pending. The property the
// reads through strcmp and printf imply (value before key) holds, so the invariants strategy has
// no state to test; the twin is checked with the default strategies, which test every state.
// scry: args {pool}
// scry: workload workload.txt
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
			_mm_clwb(s->val);
			_mm_sfence();
			strncpy(s->key, k, LEN); // property MPB after "slot"
			_mm_clwb(s->key);
			_mm_sfence();
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
