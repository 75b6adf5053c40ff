// unpersisted-read (fixed): the table of buggy.c, in the same schedule (in each round thread 0
// runs its operation, thread 1 runs its own and ends it, then thread 0 ends its own), with `set`
// making its value durable before anything else can read it: value, clwb, sfence in its run
// step, before the barrier that lets the other thread's `get` read it.
//
// Why no crash state fails: a crash before the set's sfence comes before the get has read
// anything (both operations are in flight: either order, either subset, is legal); once the get
// has printed the value, the value is durable, and every crash state holds it, as the only
// linearization that gives the completed get its response (set, then get) does.
// scry: args {pool}
// scry: workload workload.txt
// scry: concurrent-operations
#include <immintrin.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <scry.h> /* `scry cc` adds its include directory */

#include "example.h"

enum { POOL_SIZE = 4096, KEYS = 16, MAXOPS = 64 };

struct table {
	_Alignas(64) struct {
		uint64_t v;
		char pad[56];
	} slot[KEYS]; /* a cache line each */
};

static volatile struct table *tab;
static pthread_barrier_t step_done; /* the threads' schedule (worker) */

static char *lines[MAXOPS];
static unsigned long keys[MAXOPS];
static int nops;

/* Runs operation i's work: a get prints its response, a set makes the value durable. */
static void run(int i)
{
	unsigned long k = keys[i] % KEYS, v;
	if (sscanf(lines[i], "set %*u %lu", &v) == 1) {
		tab->slot[k].v = v;
		_mm_clwb((void *)&tab->slot[k].v);
		_mm_sfence();
	} else {
		printf("%lu = %lu\n", k, (unsigned long)tab->slot[k].v);
	}
}

/* Ends operation i. */
static void end(int i)
{
	(void)i;
	SCRY_OP_END();
}

/* Thread id runs lines id, id + 2, ...: round r is lines 2r (thread 0) and 2r + 1 (thread 1), in
 * five steps (see the header). */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (int r = 0; r < (nops + 1) / 2; r++) {
		int i = 2 * r + id, mine = i < nops;
		for (int step = 0; step < 5; step++) {
			if (mine && step == id)
				SCRY_OP_BEGIN(lines[i]);
			if (mine && step == 2 + id)
				run(i);
			if (mine && step == 4 - id)
				end(i);
			pthread_barrier_wait(&step_done);
		}
	}
	return NULL;
}

int main(int argc, char *argv[])
{
	tab = example_pmem(argc, argv, POOL_SIZE, "set K V | get K");
	nops = example_values("%*s %lu", lines, keys, MAXOPS);

	pthread_barrier_init(&step_done, NULL, 2);
	pthread_t th[2];
	for (intptr_t t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);

	for (int k = 0; k < KEYS; k++)
		if (tab->slot[k].v)
			printf("table: %d = %lu\n", k, (unsigned long)tab->slot[k].v);

	pmem_unmap((void *)tab, POOL_SIZE);
	return 0;
}
