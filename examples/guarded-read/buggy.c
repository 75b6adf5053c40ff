// guarded-read (buggy): a tiny key-value table in PM (a raw mmap of a 4 KiB file, --pm), after
// WITCHER's Figure 1 (level hashing). Key k lives in slot k % NSLOTS: the key and the value share
// one cache line, the slot's `token` (non-zero: the slot is in use) has a line of its own.
// lookup() is the reader and uses the guarded-read pattern: it reads the token, and only when the
// token is set reads the key and the value. insert() is the writer: it writes the key, the value
// and the token, writes both lines back with clwb, and fences ONCE.
//
// The bug: a clwb is pending until the next sfence and cache lines persist independently, so a
// crash before insert's sfence can persist the token without the key and the value; lookup() would
// then trust a slot holding a stale or zero key/value. The trace oracles see nothing (every store
// is flushed and fenced before the program ends) and this program is not run on crash images.
// What finds it is the property scry infers from the reader: the loads of the key and the value
// are control dependent on the load of the token, so the stores that wrote the key and the value
// must persist before the store that wrote the token (must-persist-before, dissertation §5.3;
// WITCHER's RO3, guarded read implies persistence ordering). Under one sfence the token store may
// persist first: an mpb-violation, located at the token store (the property's `after` side), with
// the key store as the related earlier store (the value store's breach, at the same location, is
// counted in the same finding). (WITCHER's RA1 also makes the tokens of two
// slots guardians that must persist atomically, AP(token[j], token[k]) of its §3.1: one property
// over the instances of the token store. scry never reports WITCHER's properties as findings.)
//
// main() runs a fixed sequence (three inserts, then four lookups) so that the same trace has the
// writer's stores and the reader's guarded loads.
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
	s->token = 1; // want "mpb-violation"; property MPB,RO3 after "slot"; property RA1 member "tokens"
	_mm_clwb((void *)&s->key);
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
