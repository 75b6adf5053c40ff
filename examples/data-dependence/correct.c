// data-dependence (correct-only): amounts by key in raw PM (libpmem's pmem_map_file, 4 KiB), and
// their `total` on a cache line of its own. `set K V` writes amount K, then updates the total FROM
// THE AMOUNT IT JUST WROTE (total = total - old + amount[K]), writes both lines back with clwb and
// fences once; `print` prints the total and the non-zero amounts. The total is a cache: the
// amounts are the truth, and every start of the program rebuilds the total from them.
//
// The program is correct, and scry must say so. It is here for what it is NOT: the store of the
// total is data dependent on a load of an amount that is not yet persisted, which is WITCHER's
// rule RO1 (Table 1: W(Y) data dependent on R(X) implies P(X) hb W(Y)). RO1 infers "the amount
// store must persist before the total store" and picks the crash state where the total persisted
// and the amount did not. That state is harmless: the next start rebuilds the total from the
// amounts, so the program reads it as `set` rolled back. The dissertation (§5.3.4) infers no
// must-persist-before property from a data dependence alone, only from a load that is control
// dependent on another load (a guarded read), and this program has none: no MPB or MPA property,
// so no mpb-violation, even though the total store can persist before the amount store. Crash
// exploration with the `invariants` strategy (crash states that violate the inferred properties)
// finds nothing, and so does every other strategy: each of the four states at the sfence reads as
// committed or rolled back.
// scry: args {pool}
// scry: workload workload.txt
// scry: strategy invariants
// scry: exact-properties MPB MPA
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 8

struct pool {
	_Alignas(64) uint64_t amount[NKEYS]; /* cache line 0: the records */
	_Alignas(64) uint64_t total;         /* cache line 1: sum of the amounts, a cache */
};

/* Start-up: the total is recomputed from the amounts, whatever a crash left in it. */
static void rebuild_total(volatile struct pool *p)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < NKEYS; i++)
		sum += p->amount[i];
	p->total = sum;
	_mm_clwb((void *)&p->total);
	_mm_sfence();
}

static void set(volatile struct pool *p, unsigned k, uint64_t v)
{
	uint64_t old = p->amount[k];
	p->amount[k] = v;                         // property RO1 before "total"
	p->total = p->total - old + p->amount[k]; // property RO1 after "total"
	_mm_clwb((void *)&p->amount[k]);
	_mm_clwb((void *)&p->total);
	_mm_sfence();
}

/* No load here is guarded by another PM load: each value is read once, then printed. */
static void print(volatile struct pool *p)
{
	printf("total %lu:", (unsigned long)p->total);
	for (unsigned i = 0; i < NKEYS; i++) {
		uint64_t a = p->amount[i];
		if (a != 0)
			printf(" %u=%lu", i, (unsigned long)a);
	}
	printf("\n");
}

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "set K V | print, K < %d", NKEYS);
	rebuild_total(p);

	char line[256];
	unsigned k;
	unsigned long v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %u %lu", &k, &v) == 2 && k < NKEYS) {
			set(p, k, v);
		} else if (line[0] == 'p') {
			print(p);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(p, POOL_SIZE);
	return 0;
}
