// schedule-window (fixed): as buggy.c, but add() makes the entry durable, and the log's count,
// before it releases the mutex: the archiver can copy only durable entries, so no crash leaves
// an archived value the log lost.
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

#define POOL_SIZE 4096
#define CAP 32 /* entries: 4 cache lines each */
#define MAXOPS 256
#define NTHREADS 2

struct plog {
	_Alignas(64) uint64_t count;    /* cache line 0: the log's persisted entries */
	_Alignas(64) uint64_t entry[CAP];
	_Alignas(64) uint64_t archived; /* the archive's entries */
	_Alignas(64) uint64_t arch[CAP];
};

static volatile struct plog *plog;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* in DRAM */
static pthread_cond_t published = PTHREAD_COND_INITIALIZER;
static uint64_t visible;  /* entries the writer has published (DRAM, under lock) */
static uint64_t adds;     /* add operations of this run that published or gave up (under lock) */
static uint64_t archived; /* entries archived (DRAM, under lock) */
static pthread_barrier_t round_begun[NTHREADS];

static char *lines[MAXOPS];
static uint64_t values[MAXOPS]; /* add V: V; archive: 0 */
static int nops;

static void persist(volatile void *p)
{
	_mm_clwb((void *)p);
	_mm_sfence();
}

static void add(uint64_t v)
{
	pthread_mutex_lock(&lock);
	uint64_t n = visible;
	if (n == CAP) {
		adds++;
		pthread_cond_signal(&published);
		pthread_mutex_unlock(&lock);
		return;
	}
	plog->entry[n] = v;
	persist(&plog->entry[n]);
	plog->count = n + 1;
	persist(&plog->count);
	visible = n + 1;
	adds++;
	pthread_cond_signal(&published);
	pthread_mutex_unlock(&lock); /* the entry is durable before it is visible */
}

/* archive, in round r, waits for the round's add operation to publish its entry, then copies the
 * oldest entry not archived; it takes its time (2 ms) before it copies. */
static void archive(uint64_t r)
{
	pthread_mutex_lock(&lock);
	while (adds <= r)
		pthread_cond_wait(&published, &lock);
	uint64_t k = archived;
	if (k < visible) {
		usleep(2000);
		plog->arch[k] = plog->entry[k];
		persist(&plog->arch[k]);
		plog->archived = k + 1;
		persist(&plog->archived);
		archived = k + 1;
	}
	pthread_mutex_unlock(&lock);
}

/* Thread id runs lines id, id + 2, id + 4, ... (thread 0 the `add` lines, thread 1 the
 * `archive` lines); in round r, thread 0 begins line 2r, then thread 1 begins line 2r + 1, then
 * both run. */
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
			if (id == 0)
				add(values[i]);
			else
				archive((uint64_t)r);
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
	plog = example_pmem(argc, argv, POOL_SIZE, "add V and archive, alternating");
	/* What recovery knows: the persisted counts. */
	visible = plog->count < CAP ? plog->count : CAP;
	archived = plog->archived < CAP ? plog->archived : CAP;

	static char input[16384];
	size_t got = fread(input, 1, sizeof input - 1, stdin);
	input[got] = '\0';
	for (char *save, *l = strtok_r(input, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long v = 0;
		int want_add = nops % 2 == 0;
		if (nops == MAXOPS || (want_add ? sscanf(l, "add %lu", &v) != 1 : strcmp(l, "archive") != 0)) {
			fprintf(stderr, "bad operation %d: %s (want add V and archive, alternating)\n", nops, l);
			return 1;
		}
		lines[nops] = l;
		values[nops++] = v;
	}

	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++)
		pthread_barrier_init(&round_begun[t], NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);

	uint64_t n = plog->count < CAP ? plog->count : CAP, sorted[CAP];
	for (uint64_t i = 0; i < n; i++)
		sorted[i] = plog->entry[i];
	qsort(sorted, n, sizeof sorted[0], cmp_u64);
	printf("%lu entries:", (unsigned long)n);
	for (uint64_t i = 0; i < n; i++)
		printf(" %lu", (unsigned long)sorted[i]);
	printf("\n");
	/* Every archived value must be a value of the log. */
	uint64_t a = plog->archived < CAP ? plog->archived : CAP;
	for (uint64_t i = 0; i < a; i++)
		if (bsearch((const void *)&plog->arch[i], sorted, n, sizeof sorted[0], cmp_u64) == NULL)
			printf("archive holds %lu, which the log does not\n", (unsigned long)plog->arch[i]);
	printf("archive checked\n");

	pmem_unmap((void *)plog, POOL_SIZE);
	return 0;
}
