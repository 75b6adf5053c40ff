// token-first (fixed): a table of eight slots in raw PM (libpmem's pmem_map_file, 4 KiB), each a
// token, a key and a value on three cache lines. `put K V` takes the first slot whose token is 0:
// it writes the key and the value and makes them durable (clwb + sfence), then sets the token and
// makes it durable. `list` prints the pair of every slot whose token is set.
//
// The fix of the buggy twin: the key and the value are durable before the token says the slot
// holds them, so no crash state breaks the inferred properties (key and value before token) and
// the invariants strategy has no state to test.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy prefix,invariants
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
				s->key = k;
				s->value = v;
				_mm_clwb((void *)&s->key);
				_mm_clwb((void *)&s->value);
				_mm_sfence();
				s->token = 1;
				_mm_clwb((void *)&s->token);
				_mm_sfence();
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
