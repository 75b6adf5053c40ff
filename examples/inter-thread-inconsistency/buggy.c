// inter-thread-inconsistency (buggy): a writer and an archiver share a persistent log (libpmem's
// pmem_map_file, 4 KiB). The workload alternates `add V` lines, which the writer thread runs,
// and `archive` lines, which the archiver thread runs; two barriers per round make the operations
// begin in line order and overlap. The log is an array of values (not 0), ended by its first
// 0. `add V` writes V into the log's next entry, publishes it to the archiver (a mutex and a
// condition variable in DRAM) and takes its time (2 ms) before it persists the entry. `archive` waits for the
// round's entry, copies it into the archive and persists the copy and the archive's count. At
// the end main() prints the log's entries, sorted, and whether every archived value is in the
// log: the output depends only on which operations were applied.
//
// The bug: the archiver reads the entry while the writer has not made it durable, and persists a
// copy of it: a crash after the copy persisted and before the entry did leaves an archive holding
// a value no log ever held (PMRace's inter-thread inconsistency, Chen et al., ASPLOS'22). The
// writer's 2 ms make the archiver copy the entry before the writer persists it under the
// operating system's schedule and under the controlled ones (a sleeping thread gives the turn
// away): scry reports the bug at the archiver's copy, names the writer's store and the
// archiver's load, and confirms it with the crash state, after the copy is durable, that has
// not persisted the entry (its twin with the entry persisted recovers). fixed.c persists the
// entry before publishing it.
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
	visible = n + 1; /* published, not durable */
	rounds_done++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	usleep(2000); /* takes its time: the archiver copies the entry meanwhile */
	persist(&plog->entry[n]); // want "atomicity-violation"
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
		plog->arch[k] = plog->entry[k]; // want "inter-thread-inconsistency:correctness"
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
