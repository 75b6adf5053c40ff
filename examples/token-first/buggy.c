// token-first (buggy): a table of eight slots in raw PM (libpmem's pmem_map_file, 4 KiB), each a
// token, a key and a value on three cache lines. `put K V` takes the first slot whose token is 0:
// it sets the token, then writes the key and the value, and writes all three back with one
// sfence. `list` prints the pair of every slot whose token is set.
//
// The readers read the token, then the key and the value it guards, so inference derives that
// the key and the value must persist before the token (MPB, RO3), although the program stores
// the token first. A crash at the sfence with the token persisted and the key not leaves a slot
// that `list` prints as "0 = 0". The invariants strategy (--strategy invariants) tests the
// states that break the inferred properties: persisting the token alone breaks its pair with the
// key stored after it, so the three states it builds (one per put) all fail, where the
// exhaustive strategy needs 24 states to find the same 9 failures. The fixed twin persists the
// key and the value before it sets the token.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy invariants
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NSLOTS 8

struct slot {
	_Alignas(64) uint64_t token; /* 1: the slot holds a pair */
	_Alignas(64) uint64_t key;
	_Alignas(64) uint64_t value;
};

int main(int argc, char *argv[])
{
	struct slot *t = example_pmem(argc, argv, POOL_SIZE, "put K V | list");

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "put %lu %lu", &k, &v) == 2) {
			for (int i = 0; i < NSLOTS; i++) {
				volatile struct slot *s = &t[i];
				if (s->token)
					continue;
				s->token = 1;
				s->key = k;
				s->value = v;
				_mm_clwb((void *)&s->token);
				_mm_clwb((void *)&s->key);
				_mm_clwb((void *)&s->value);
				_mm_sfence(); // want "atomicity-violation"
				break;
			}
		} else if (line[0] == 'l') {
			for (int i = 0; i < NSLOTS; i++) {
				volatile struct slot *s = &t[i];
				if (s->token)
					printf("%lu = %lu\n", (unsigned long)s->key, (unsigned long)s->value);
			}
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(t, POOL_SIZE);
	return 0;
}
