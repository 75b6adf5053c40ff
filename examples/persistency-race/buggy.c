// persistency-race (buggy): four versioned records in raw PM (libpmem's pmem_map_file, 4 KiB) and
// a root word, cur, that names the current one: its slot in the low 32 bits, its generation in
// the high 32 bits. `put V` writes V with the next generation into the next slot and makes the
// record durable (clwb + sfence), then publishes it by storing the new cur and making that durable
// too. `get` reads cur, checks that its slot holds a record of its generation (a torn or stale
// word would name another) and prints the value, or says the pool is corrupt and exits with 1.
//
// The order is right: the record is durable before cur names it, so every crash state in which
// cur holds its old or its new value recovers. The bug is how cur is written: a plain 64-bit
// store, which C11 lets a compiler split into two 32-bit ones (GCC does so for some constants).
// A crash after one half reached PM leaves a word naming the new slot with the old generation,
// or the reverse, and `get` finds the pool corrupt (Yashme's persistency race). The record's own
// plain stores can be torn too, but no crash shows it: cur does not name the record until it is
// durable. scry's torn strategy tears each plain store issued since the last fence; the fixed
// twin writes cur with an atomic store, which compilers never split.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy prefix,torn
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NSLOTS 4

struct record {
	_Alignas(64) uint64_t gen; /* one cache line per record */
	uint64_t val;
};

struct root {
	_Alignas(64) uint64_t cur; /* generation << 32 | slot */
	struct record slots[NSLOTS];
};

int main(int argc, char *argv[])
{
	struct root *r = example_pmem(argc, argv, POOL_SIZE, "put V | get");

	char line[256];
	unsigned long v;
	while (fgets(line, sizeof line, stdin)) {
		uint64_t cur = r->cur; // related recovery-load
		uint32_t slot = (uint32_t)cur, gen = (uint32_t)(cur >> 32);
		if (slot >= NSLOTS || r->slots[slot].gen != gen) {
			printf("corrupt: cur %#llx\n", (unsigned long long)cur);
			return 1;
		}
		if (sscanf(line, "put %lu", &v) == 1) {
			uint32_t next = (slot + 1) % NSLOTS;
			struct record *rec = &r->slots[next];
			rec->gen = gen + 1;
			rec->val = v;
			_mm_clwb(rec);
			_mm_sfence();
			r->cur = (uint64_t)(gen + 1) << 32 | next; // want "persistency-race"
			_mm_clwb(&r->cur);
			_mm_sfence();
		} else if (line[0] == 'g') {
			printf("value %lu (generation %u)\n", (unsigned long)r->slots[slot].val, gen);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(r, POOL_SIZE);
	return 0;
}
