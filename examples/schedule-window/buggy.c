// schedule-window (buggy): a writer and an archiver share a persistent log (libpmem's
// pmem_map_file, 4 KiB). The workload alternates `add V` lines, which the writer thread runs,
// and `archive` lines, which the archiver thread runs; as in threads-lock, two barriers per
// round make the operations begin in line order and overlap. `add V` appends V to the log under
// a mutex in DRAM and signals the archiver, then writes the entry and the log's count back and
// fences; `archive` waits for the entry of the round's `add`, then copies the oldest entry not
// yet archived into the archive, under the same mutex, taking its time, and persists it.
// At the end main() prints the log's entries, sorted, and whether every archived value is in the
// log: the output depends only on which operations were applied, never on the order in which
// the threads took the mutex.
//
// The bug: add() makes the entry visible to the archiver (it releases the mutex) before the
// entry is durable. When the archiver runs in that window, it persists a copy of a value the
// log may still lose: a crash then leaves an archive holding a value no log ever held, which no
// legal outcome prints (PMRace's inter-thread inconsistency, ASPLOS'22; the gap between an
// operation's visibility and its durability, Durinn, OSDI'22). The window is a few instructions
// long and the archiver takes its time (2 ms) before it copies: under the operating system's
// schedule the writer has persisted the entry long before the archiver copies it, so a check
// with --schedules 1 almost never finds the bug; under a controlled schedule that gives the turn
// to the archiver when the writer releases the mutex (PCT, when the archiver's priority is the
// higher one), the archiver copies the entry before the writer can persist it. scry check's
// default schedules find it twice: a crash in add() after the archiver persisted its copy (the
// PM-aware schedule), and a crash in archive() after it persisted a copy of an entry whose add()
// has not persisted the log's count (a PCT schedule of depth 3). The trace of such a schedule
// also shows the archiver's copy as an inter-thread inconsistency (a store derived from the
// writer's entry, not durable yet); it stays a warning: the crash states that persist the copy
// and lose the entry fail with the entry persisted too, since the log's count, which the writer
// persists after the entry, is lost with it (examples/inter-thread-inconsistency has the bug
// with the entry alone).
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
	visible = n + 1;
	adds++;
	pthread_cond_signal(&published);
	pthread_mutex_unlock(&lock); /* the entry is visible, not durable */
	persist(&plog->entry[n]);
	plog->count = n + 1;
	persist(&plog->count); // want "atomicity-violation"
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
		plog->arch[k] = plog->entry[k]; // want "inter-thread-inconsistency:unconfirmed"
		persist(&plog->arch[k]);
		plog->archived = k + 1;
		persist(&plog->archived); // want "atomicity-violation"
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
