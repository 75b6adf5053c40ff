// unpersisted-read (buggy): a persistent table of 16 values (libpmem's pmem_map_file, 4 KiB, a
// value per cache line), written and read by two threads. main() reads all of standard input
// (`set K V` and `get K` lines, example_values) and hands line i to thread i % 2; each round of
// two lines runs in steps, one barrier between two: thread 0 begins its operation, thread 1
// begins its own, thread 0 runs its operation, thread 1 runs its operation and ends it, thread 0
// ends its operation. A `get` prints `K = V`, its response; when both threads are done, main()
// prints the table.
//
// The bug: `set` writes the value in its run step and makes it durable only when it ends, after
// the other thread's `get` has read it, printed it and completed. A crash at the set's sfence
// can lose the value that a completed operation already returned. No output after the crash
// shows that by itself: the set is still in flight, and the image without it is the state of the
// linearization that leaves it out, "get, then nothing", which an oracle that only compares states
// accepts. Durable linearizability (Izraelevitz et al., DISC'16) also asks the linearization to
// give the completed get its response: `1 = 10` is printed only where the set comes before the
// get, whose state holds the value. scry runs each order with the runtime recording what each
// operation prints, leaves out the orders where the get prints something else, and the crash
// image matches none of those left: an atomicity-violation at the sfence (the state persisted
// nothing of the set, a program-order prefix).
// scry: args {pool}
// scry: workload workload.txt
// scry: concurrent-operations
#include <immintrin.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Runs operation i's work: a get prints its response, a set writes the value. */
static void run(int i)
{
	unsigned long k = keys[i] % KEYS, v;
	if (sscanf(lines[i], "set %*u %lu", &v) == 1) {
		tab->slot[k].v = v;
	} else {
		printf("%lu = %lu\n", k, (unsigned long)tab->slot[k].v);
	}
}

/* Ends operation i: a set makes its value durable first, too late. */
static void end(int i)
{
	unsigned long k = keys[i] % KEYS;
	if (strncmp(lines[i], "set", 3) == 0) {
		_mm_clwb((void *)&tab->slot[k].v);
		_mm_sfence(); // want "atomicity-violation"
	}
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
