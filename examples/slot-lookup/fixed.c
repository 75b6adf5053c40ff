// slot-lookup (fixed): the same bucket and lookup, with the value made durable before the
// token: `set K V` writes the key, clwb, sfence, the value, clwb, sfence, then the token, clwb,
// sfence.
//
// Why no crash state fails: at the first two sfences the slot's token is still clear, so a crash
// there leaves the key unfound (rolled back); at the last one the key and the value are durable
// and only the token is pending. The properties inferred through the index the lookup loop
// leaves with (value before token, value before key) and key before token hold, so the
// invariants strategy has no state to test; the twin is checked with the default strategies.
// scry: args {pool}
// scry: workload workload.txt
// scry: opt -O0 -O1 -O2
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NBUCKETS 4
#define ASSOC 4

struct bucket {
	_Alignas(64) uint64_t token[ASSOC]; /* cache line 3b: non-zero, the slot is in use */
	_Alignas(64) uint64_t key[ASSOC];   /* cache line 3b+1 */
	_Alignas(64) uint64_t value[ASSOC]; /* cache line 3b+2 */
};

int main(int argc, char *argv[])
{
	struct bucket *B = example_pmem(argc, argv, POOL_SIZE, "set K V | get K");
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2) {
			volatile struct bucket *b = &B[k % NBUCKETS];
			int j = 0;
			while (j < ASSOC && b->token[j])
				j++;
			if (j == ASSOC) {
				printf("%lu: bucket full\n", k);
				continue;
			}
			b->key[j] = k; // property MPB,RO3 before "key"; property MPB,RO3 after "value"
			_mm_clwb((void *)&b->key[j]);
			_mm_sfence();
			b->value[j] = v; // property MPB,RO3 before "value"
			_mm_clwb((void *)&b->value[j]);
			_mm_sfence();
			b->token[j] = 1; // property MPB,RO3 after "key"; property MPB,RO3 after "value"
			_mm_clwb((void *)&b->token[j]);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1) {
			volatile struct bucket *b = &B[k % NBUCKETS];
			int i = -1;
			for (int j = 0; j < ASSOC; j++)
				if (b->token[j] && b->key[j] == k) {
					i = j;
					break;
				}
			if (i >= 0)
				printf("%lu = %lu\n", k, (unsigned long)b->value[i]);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(B, POOL_SIZE);
	return 0;
}
