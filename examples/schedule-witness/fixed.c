// schedule-witness (fixed): the twin of buggy.c (read its comment first). put() now persists the
// entry before it publishes it (before the mutex's release), so every schedule consistent with
// the program's synchronization has the entry durable before the copier can load it: the SMT
// query over the trace finds no schedule witness, and no crash keeps a copy and loses its entry.
// scry: args {pool}
// scry: workload workload.txt
// scry: schedule-witness
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
#define CAP 32
#define MAXOPS 256

struct plog {
	_Alignas(64) uint64_t entry[CAP]; /* the log: its entries are not 0, the first 0 ends it */
	_Alignas(64) uint64_t archived; /* the archive's entries */
	_Alignas(64) uint64_t arch[CAP];
};

static struct plog *plog;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* in DRAM */
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static uint64_t visible; /* entries published (under lock) */
static uint64_t copied;  /* entries copied (under lock) */
static uint64_t puts_done; /* put operations of the run that published or gave up (under lock) */
static uint64_t nputs;     /* put lines of the run */

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn; /* the next line to begin (under turn_lock) */

static char *lines[MAXOPS];
static uint64_t values[MAXOPS]; /* put V: V; copy: 0 */
static int nops;

static void persist(void *p)
{
	_mm_clwb(p);
	_mm_sfence();
}

static void put(uint64_t v)
{
	pthread_mutex_lock(&lock);
	uint64_t n = visible;
	if (n < CAP) {
		plog->entry[n] = v;
		persist(&plog->entry[n]); /* durable before it is published */
		visible = n + 1;
	}
	puts_done++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

/* copy waits for an entry not copied yet (or for the run's last put), then copies the oldest
 * entry not copied. */
static void copy(void)
{
	pthread_mutex_lock(&lock);
	while (copied == visible && puts_done < nputs)
		pthread_cond_wait(&changed, &lock);
	uint64_t c = copied;
	if (c < visible) {
		plog->arch[c] = plog->entry[c];
		persist(&plog->arch[c]);
		plog->archived = c + 1;
		persist(&plog->archived);
		copied = c + 1;
	}
	pthread_mutex_unlock(&lock);
}

/* Thread 0 runs the put lines, thread 1 the copy lines, each in input order. */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (int i = 0; i < nops; i++) {
		if ((values[i] != 0) != (id == 0))
			continue; /* the other thread's line */
		/* Operations begin in line order. */
		pthread_mutex_lock(&turn_lock);
		while (turn != i)
			pthread_cond_wait(&turn_changed, &turn_lock);
		SCRY_OP_BEGIN(lines[i]);
		turn++;
		pthread_cond_broadcast(&turn_changed);
		pthread_mutex_unlock(&turn_lock);
		if (id == 0)
			put(values[i]);
		else
			copy();
		SCRY_OP_END();
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
	plog = (struct plog *)example_pmem(argc, argv, POOL_SIZE, "put V and copy lines");
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
		if (nops == MAXOPS || (strcmp(l, "copy") != 0 && (sscanf(l, "put %lu", &v) != 1 || v == 0))) {
			fprintf(stderr, "bad operation %d: %s (want put V, V not 0, or copy)\n", nops, l);
			return 1;
		}
		lines[nops] = l;
		values[nops++] = v;
		nputs += v != 0;
	}

	pthread_t th[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < 2; t++)
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
