// realtime-order (fixed): two threads append to one persistent log (libpmem's pmem_map_file,
// 4 KiB): its `count` on cache line 0, its entries from line 2 on, each append durable in order
// (entry, clwb, sfence, then count, clwb, sfence). main() reads all of standard input (`add V`
// lines, example_values) and hands line i to thread i % 2; in each round both threads begin their operations
// (scry_op_begin, <scry.h>), thread 0 appends first, thread 1 appends and ends its operation,
// and only then does thread 0 end its own; each records durably which operation it ran last
// before it ends (a heartbeat no output shows). When both threads are done, main() prints the
// log in order, so the output depends on the order in which the operations took effect.
//
// Why no crash state fails: a crash at thread 0's heartbeat, after thread 1's operation ended and
// while thread 0's is in flight, leaves both entries in the order they were appended, thread 0's
// first ("11 22"). Durable linearizability (Izraelevitz et al., DISC'16) allows that: thread 0's
// operation began before thread 1's ended, so it may be ordered first. An oracle that applies the
// ended operation first and the in-flight one after it, or not at all, has only "22" and "22 11"
// for this round: scry's, before it followed real-time order, reported an atomicity violation at
// the heartbeat's fence that the real run allows.
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

enum { POOL_SIZE = 4096, NTHREADS = 2, CAP = 48, MAXOPS = 256 };

/* The log: its count on cache line 0, each thread's heartbeat (the operation it ran last) on
 * line 1, its CAP entries on lines 2..7. */
struct plog {
	_Alignas(64) uint64_t count;
	_Alignas(64) uint64_t beat[NTHREADS];
	_Alignas(64) uint64_t entry[CAP];
};

static volatile struct plog *plog;
static pthread_barrier_t step_done; /* the threads' schedule (worker) */

static char *lines[MAXOPS]; /* the operations, without their newlines */
static unsigned long values[MAXOPS];
static int nops;

static void persist(volatile void *p)
{
	_mm_clwb((void *)p);
	_mm_sfence();
}

/* Only one thread appends at a time: the schedule orders them (worker). */
static void append(unsigned long v)
{
	uint64_t n = plog->count;
	if (n >= CAP) {
		fprintf(stderr, "log full: %lu dropped\n", v);
		return;
	}
	plog->entry[n] = v;  // property MPB before "log"
	persist(&plog->entry[n]);
	plog->count = n + 1; // property MPB after "log"
	persist(&plog->count);
}

/* Records durably that thread id ran operation i last (no output shows it). */
static void beat(int id, int i)
{
	plog->beat[id] = (uint64_t)i + 1;
	persist(&plog->beat[id]);
}

/* Thread id runs lines id, id + 2, ...: round r is lines 2r (thread 0) and 2r + 1 (thread 1), in
 * steps, one barrier between two: thread 0 begins its operation; thread 1 begins its own; thread 0
 * appends; thread 1 appends, records its heartbeat and ends; thread 0 records its heartbeat and
 * ends. Both threads pass every barrier of every round, with an operation or without. */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (int r = 0; r < (nops + 1) / 2; r++) {
		int i = 2 * r + id;
		int mine = i < nops;
		for (int step = 0; step < 5; step++) {
			if (mine && step == 0 + id)
				SCRY_OP_BEGIN(lines[i]);
			if (mine && id == 0 && step == 2)
				append(values[i]);
			if (mine && id == 1 && step == 3) {
				append(values[i]);
				beat(id, i);
				SCRY_OP_END();
			}
			if (mine && id == 0 && step == 4) {
				beat(id, i);
				SCRY_OP_END();
			}
			pthread_barrier_wait(&step_done);
		}
	}
	return NULL;
}

int main(int argc, char *argv[])
{
	plog = example_pmem(argc, argv, POOL_SIZE, "add V");
	nops = example_values("add %lu", lines, values, MAXOPS);

	pthread_barrier_init(&step_done, NULL, NTHREADS);
	pthread_t th[NTHREADS];
	for (intptr_t t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	/* The log, in the order its entries were appended. */
	uint64_t n = plog->count < CAP ? plog->count : CAP;
	printf("%lu entries:", (unsigned long)n);
	for (uint64_t i = 0; i < n; i++)
		printf(" %lu", (unsigned long)plog->entry[i]);
	printf("\n");

	pmem_unmap((void *)plog, POOL_SIZE);
	return 0;
}
