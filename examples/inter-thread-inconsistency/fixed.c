// inter-thread-inconsistency (fixed): the twin of buggy.c (read its comment first). add() now
// persists the entry before it publishes it to the archiver, so the archiver only ever copies a
// durable value, and no crash can keep a copy and lose the entry it was made from.
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
#define CAP 32
#define MAXOPS 256
#define NTHREADS 2

struct plog {
	_Alignas(64) uint64_t entry[CAP]; /* the log: its entries are not 0, the first 0 ends it */
	_Alignas(64) uint64_t archived; /* the archive's entries */
	_Alignas(64) uint64_t arch[CAP];
};

static struct plog *plog;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* in DRAM */
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static uint64_t visible;  /* entries the writer has published (under lock) */
static uint64_t copied;   /* entries the archiver has copied (under lock) */
static uint64_t rounds_done; /* add operations that published or gave up (under lock) */
static pthread_barrier_t round_begun[NTHREADS];

static char *lines[MAXOPS];
static uint64_t values[MAXOPS]; /* add V: V; archive: 0 */
static int nops;

static void persist(void *p)
{
	_mm_clwb(p);
	_mm_sfence();
}

static void add(uint64_t v)
{
	pthread_mutex_lock(&lock);
	uint64_t n = visible;
	if (n == CAP) {
		rounds_done++;
		pthread_cond_broadcast(&changed);
		pthread_mutex_unlock(&lock);
		return;
	}
	plog->entry[n] = v;
	persist(&plog->entry[n]); /* durable before it is published */
	visible = n + 1;
	rounds_done++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	usleep(2000); /* takes its time: the archiver copies the entry meanwhile */
}

/* archive, in round r, waits for the round's add to publish its entry (or give up), then copies
 * the oldest entry not archived. */
static void archive(uint64_t r)
{
	pthread_mutex_lock(&lock);
	while (rounds_done <= r)
		pthread_cond_wait(&changed, &lock);
	uint64_t k = copied;
	if (k < visible) {
		plog->arch[k] = plog->entry[k];
		persist(&plog->arch[k]);
		plog->archived = k + 1;
		persist(&plog->archived);
		copied = k + 1;
	}
	pthread_mutex_unlock(&lock);
}

/* Thread id runs lines id, id + 2, ... (thread 0 the `add` lines, thread 1 the `archive` lines);
 * in round r, thread 0 begins line 2r, then thread 1 begins line 2r + 1, then both run. */
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
	plog = (struct plog *)example_pmem(argc, argv, POOL_SIZE, "add V and archive, alternating");
	/* What recovery knows: the log's entries up to the first 0, and the archive's count. */
	while (visible < CAP && plog->entry[visible] != 0)
		visible++;
	copied = plog->archived < CAP ? plog->archived : CAP;
	if (copied > visible)
		copied = visible;

	static char input[16384];
	size_t got = fread(input, 1, sizeof input - 1, stdin);
	input[got] = '\0';
	for (char *save, *l = strtok_r(input, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long v = 0;
		int want_add = nops % 2 == 0;
		if (nops == MAXOPS || (want_add ? sscanf(l, "add %lu", &v) != 1 || v == 0 : strcmp(l, "archive") != 0)) {
			fprintf(stderr, "bad operation %d: %s (want add V, V not 0, and archive, alternating)\n", nops, l);
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

	uint64_t n = 0, sorted[CAP];
	while (n < CAP && plog->entry[n] != 0)
		n++;
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
		if (bsearch(&plog->arch[i], sorted, n, sizeof sorted[0], cmp_u64) == NULL)
			printf("archive holds %lu, which the log does not\n", (unsigned long)plog->arch[i]);
	printf("archive checked\n");

	pmem_unmap(plog, POOL_SIZE);
	return 0;
}
