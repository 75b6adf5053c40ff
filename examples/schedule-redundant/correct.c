// schedule-redundant (correct): two threads record heartbeats in one persistent cache line
// (libpmem's pmem_map_file, 4 KiB). The workload's lines are `beat W V` (W 0 or 1); thread 0
// runs the even lines and thread 1 the odd ones, in rounds of two whose operations begin in line
// order and then run at once, as in schedule-window. `beat W V` stores V in word W of the shared
// line (thread 1 after a 5 ms pause) and persists it: clwb of the line, sfence. The workload has
// each thread beat in a word of its own; the word is the line's, not the thread's, so that what
// the program prints depends on which operations took effect only, whichever thread runs them (a
// prep run of a subset of the lines runs them in other threads). At the end main() prints both
// words.
//
// Why no finding. Each beat is one 8-byte store made durable before its operation ends: every
// crash state is explained by the operations that took effect, so there is no correctness
// finding. The flush is needed in one schedule and redundant in another: under the operating
// system's schedule thread 1's pause lets thread 0 store, write back and fence long before
// thread 1 stores, so each clwb writes back a store of its own; under a controlled schedule that
// runs thread 1 first once thread 0 has stored (thread 1's priority the higher, the pause
// changing nothing), thread 1's clwb writes back the line with both words, and thread 0's clwb
// that follows has nothing left to write back (AGAMOTTO's extra flush, OSDI'20 §4.2.1), as its
// sfence has nothing to order. A flush or fence is redundant only when it is redundant in every
// schedule explored: scry reports neither.
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
#include <unistd.h>

#include <scry.h> /* `scry cc` adds its include directory */

#include "example.h"

enum { POOL_SIZE = 4096, MAXOPS = 256, NTHREADS = 2 };

struct beats {
	_Alignas(64) uint64_t seen[NTHREADS]; /* one cache line: each thread's last heartbeat */
};

static volatile struct beats *pb;
static pthread_barrier_t round_begun[NTHREADS];

static char *lines[MAXOPS];
static uint64_t words[MAXOPS], values[MAXOPS];
static int nops;

static void beat(int id, uint64_t w, uint64_t v)
{
	if (id == 1)
		usleep(5000);
	pb->seen[w] = v;
	_mm_clwb((void *)&pb->seen[0]);
	_mm_sfence();
}

/* Thread id runs lines id, id + 2, ...; in round r, thread 0 begins line 2r, then thread 1
 * begins line 2r + 1, then both run. */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	int rounds = (nops + NTHREADS - 1) / NTHREADS;
	for (int r = 0; r < rounds; r++) {
		int i = r * NTHREADS + id;
		for (int t = 0; t < NTHREADS; t++) {
			if (t == id && i < nops)
				SCRY_OP_BEGIN(lines[i]);
			pthread_barrier_wait(&round_begun[t]);
		}
		if (i < nops) {
			beat(id, words[i], values[i]);
			SCRY_OP_END();
		}
	}
	return NULL;
}

int main(int argc, char *argv[])
{
	pb = example_pmem(argc, argv, POOL_SIZE, "beat W V");

	static char input[16384];
	size_t got = fread(input, 1, sizeof input - 1, stdin);
	input[got] = '\0';
	for (char *save, *l = strtok_r(input, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long w, v;
		if (nops == MAXOPS || sscanf(l, "beat %lu %lu", &w, &v) != 2 || w >= NTHREADS) {
			fprintf(stderr, "bad operation %d: %s (want beat W V, W 0 or 1)\n", nops, l);
			return 1;
		}
		lines[nops] = l;
		words[nops] = w;
		values[nops++] = v;
	}

	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		pthread_barrier_init(&round_begun[t], NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	printf("word 0 last beat %lu, word 1 last beat %lu\n", (unsigned long)pb->seen[0],
	       (unsigned long)pb->seen[1]);
	pmem_unmap((void *)pb, POOL_SIZE);
	return 0;
}
