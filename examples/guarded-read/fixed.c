// guarded-read (fixed): the same key-value table, with insert() making the key and the value
// durable before it writes the token: key, value, clwb, sfence, then token, clwb, sfence.
//
// lookup() still reads key and value only under the token, so scry infers the same
// must-persist-before properties (key and value before token); every instance satisfies them,
// since the key and value stores are durable at the first sfence, before the token store is even
// issued. No finding.
// scry: pm *.pool
// scry: args {pool}
// scry: exact-properties MPB MPA
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "example.h"

#define POOL_SIZE 4096
#define NSLOTS 8

struct slot {
	_Alignas(64) uint64_t key; /* cache line 2j */
	uint64_t value;            /* same line as key */
	_Alignas(64) uint64_t token; /* cache line 2j+1: guards key and value */
};

static void insert(volatile struct slot *table, uint64_t k, uint64_t v)
{
	volatile struct slot *s = &table[k % NSLOTS];
	s->key = k;   // property MPB,RO3 before "slot"
	s->value = v; // property MPB,RO3 before "slot"
	_mm_clwb((void *)&s->key);
	_mm_sfence(); /* key and value durable before the token is written */
	s->token = 1; // property MPB,RO3 after "slot"; property RA1 member "tokens"
	_mm_clwb((void *)&s->token);
	_mm_sfence();
}

/* The guarded read: key and value are read only when the token is set. Both are read before
 * they are compared, so neither load is guarded by the other. */
static void lookup(volatile struct slot *table, uint64_t k)
{
	volatile struct slot *s = &table[k % NSLOTS];
	if (s->token) {
		uint64_t key = s->key;
		uint64_t value = s->value;
		if (key == k) {
			printf("%lu = %lu\n", (unsigned long)k, (unsigned long)value);
			return;
		}
	}
	printf("%lu: not found\n", (unsigned long)k);
}

int main(int argc, char *argv[])
{
	struct slot *table = example_mmap(argc, argv, POOL_SIZE, NULL);

	insert(table, 1, 10);
	insert(table, 2, 20);
	insert(table, 5, 50);
	lookup(table, 1);
	lookup(table, 2);
	lookup(table, 3); /* empty slot: token not set */
	lookup(table, 9); /* slot 1 in use by key 1 */

	munmap(table, POOL_SIZE);
	return 0;
}
