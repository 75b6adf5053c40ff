// threads-lock (buggy): two threads append to one persistent log (libpmem's pmem_map_file,
// 4 KiB) under a mutex in DRAM. The log's `count` is on cache line 0, its entries from line 1 on.
// main() reads all of standard input (`add V` lines), hands line i to thread i % 2, and each thread
// runs its lines as operations, each bracketed by scry_op_begin/scry_op_end (<scry.h>). Two
// barriers per round make the operations begin in line order (so operation i is line i) and
// overlap: both of a round's operations have begun before either takes the lock, so the trace
// always has two operations in flight at once. When both threads are done, main() prints the log
// sorted: the output depends only on which operations were applied, not on the order in which the
// threads took the lock.
//
// The bug: append() writes the entry and the count, writes both lines back with clwb and fences
// ONCE, so a crash before the sfence can persist the new count without the entry. Restarted on
// that image, the program prints a 0 entry that no legal outcome has (every combination of the
// in-flight operations committed or rolled back, in either order, prints only added values): an
// ordering-violation at the sfence. The final print's loop reads the entries only while i < count,
// a guarded read, so scry also infers that the entry store must persist before the count store
// (must-persist-before), which the single fence breaks: an mpb-violation at the count store.
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

#define POOL_SIZE 4096
#define CAP 64       /* entries: cache lines 1..8 */
#define MAXOPS 256
#define NTHREADS 2

struct plog {
	_Alignas(64) uint64_t count;         /* cache line 0 */
	_Alignas(64) uint64_t entry[CAP];    /* cache lines 1..8 */
};

static volatile struct plog *plog;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* in DRAM: a PM lock would persist */
static pthread_barrier_t begun[NTHREADS];

static char *lines[MAXOPS]; /* the operations, without their newlines */
static uint64_t values[MAXOPS];
static int nops;

static void append(uint64_t v)
{
	pthread_mutex_lock(&lock);
	uint64_t n = plog->count;
	if (n < CAP) {
		plog->entry[n] = v;   // property MPB before "log"
		plog->count = n + 1;  // want "mpb-violation"; property MPB after "log"
		_mm_clwb((void *)&plog->entry[n]);
		_mm_clwb((void *)&plog->count);
		_mm_sfence(); // want "ordering-violation"
	} else {
		fprintf(stderr, "log full: %lu dropped\n", (unsigned long)v);
	}
	pthread_mutex_unlock(&lock);
}

/* Thread id runs lines id, id + 2, id + 4, ...; in round r, thread 0 begins line 2r, then thread
 * 1 begins line 2r + 1, then both run. Both threads pass every barrier of every round, with an
 * operation or without. */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	int rounds = (nops + NTHREADS - 1) / NTHREADS;
	for (int r = 0; r < rounds; r++) {
		int i = r * NTHREADS + id;
		for (int t = 0; t < NTHREADS; t++) {
			if (t == id && i < nops)
				SCRY_OP_BEGIN(lines[i]);
			pthread_barrier_wait(&begun[t]);
		}
		if (i < nops) {
			append(values[i]);
			SCRY_OP_END();
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char *argv[])
{
	plog = example_pmem(argc, argv, POOL_SIZE, "add V");

	/* All of standard input at once (fread, not line by line: the operations are the threads'
	 * scry_op_begin markers, not the lines main reads). */
	static char input[16384];
	size_t got = fread(input, 1, sizeof input - 1, stdin);
	input[got] = '\0';
	for (char *save, *l = strtok_r(input, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long v;
		if (nops == MAXOPS || sscanf(l, "add %lu", &v) != 1) {
			fprintf(stderr, "bad operation: %s\n", l);
			return 1;
		}
		lines[nops] = l;
		values[nops++] = v;
	}

	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		pthread_barrier_init(&begun[t], NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	/* The log, sorted. The count is read once; the entries below it are the guarded reads. */
	uint64_t n = plog->count, sorted[CAP];
	if (n > CAP)
		n = CAP;
	for (uint64_t i = 0; i < n; i++)
		sorted[i] = plog->entry[i];
	qsort(sorted, n, sizeof sorted[0], cmp_u64);
	printf("%lu entries:", (unsigned long)n);
	for (uint64_t i = 0; i < n; i++)
		printf(" %lu", (unsigned long)sorted[i]);
	printf("\n");

	pmem_unmap((void *)plog, POOL_SIZE);
	return 0;
}
