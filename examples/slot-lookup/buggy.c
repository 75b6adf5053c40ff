// slot-lookup (buggy): WITCHER's Level Hashing bucket in small. A bucket has 4 slots; a slot's
// token (valid flag), key and value lie on three cache lines (the bucket's tokens on one, its
// keys on the next, its values on the third). `set K V` takes the first slot of bucket K % 4
// whose token is clear, writes the key and makes it durable (clwb, sfence), then writes the value
// and the token and writes both lines back with ONE sfence. `get K` looks the key up as Level
// Hashing's query does, with the loop written in the caller: it scans the bucket for the slot
// whose token is set and whose key is K, leaves the loop with its index i (-1: none), and prints
// value[i].
//
// The bug: the value is not durable before the token. On the crash image taken before set's
// second sfence with the token's line persisted and the value's not, the later `get` finds the
// slot (token and key durable) and prints `K = 0`: an ordering violation at that sfence.
//
// The read of value[i] is guarded by the token and the key through the index the loop leaves
// with: no load's data flows into i, but which i reaches the read was decided by the branches on
// token[j] and key[j] (implicit flow out of the loop, WITCHER §4.3.2). scry sees it at -O0 (i
// and j are locals in stack slots), -O1 (i is a phi of the loop's exits) and -O2 (the loop is
// unrolled and the test of i is threaded into the exits, so the read is directly control
// dependent on the key's branches). So it infers that the value's store must persist before the
// token's and the key's (MPB) and reports the single sfence's breach of it at the token store
// (mpb-violation); the invariants strategy tests the state that breaks it, which confirms it.
// Without that implicit flow, at -O0 and -O1 only key-before-token is inferred (the key load is
// guarded by the token load), which this program keeps (the key is durable before the token is
// written): the invariants strategy then has no state to test, while the exhaustive one finds
// the bug.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy invariants
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
			b->token[j] = 1; // want "mpb-violation"; property MPB,RO3 after "key"; property MPB,RO3 after "value"
			_mm_clwb((void *)&b->value[j]);
			_mm_clwb((void *)&b->token[j]);
			_mm_sfence(); // want "ordering-violation"
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
