// threads-lock (fixed): the same two-thread persistent log, with append() making the entry
// durable before it writes the count: entry, clwb, sfence, then count, clwb, sfence.
//
// Why no crash state fails: at the first sfence only the entry is pending, beyond the durable
// count, so it is invisible (the operation reads as rolled back); at the second the entry is
// durable and only the count is pending (rolled back or committed). The other thread's operation,
// in flight at the same time, has either not taken the lock yet (nothing of it persisted: rolled
// back) or completed (committed), and the output does not depend on the order of the two, so each
// crash image matches one legal combination of the two operations. The must-persist-before
// property of the entry and count stores (from the final print's guarded reads) holds.
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
		_mm_clwb((void *)&plog->entry[n]);
		_mm_sfence(); /* the entry is durable before the count covers it */
		plog->count = n + 1;  // property MPB after "log"
		_mm_clwb((void *)&plog->count);
		_mm_sfence();
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
