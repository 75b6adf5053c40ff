/*
 * pmrace_rounds.h: the two-thread harness that test/pmrace/pmrace.sh gives the targets of PMRace
 * (Chen et al., ASPLOS'22; github.com/yhuacode/pm-workloads). It is scry's harness code, not the
 * targets': each driver in test/pmrace/*_driver.* opens its target's pool as PMRace's driver does
 * and calls pmrace_run() with one function that applies one workload line.
 *
 * PMRace's drivers read one tab-separated buffer from standard input, one field per thread, and
 * let every thread run its field's commands as fast as it can, printing time stamps and thread
 * numbers. scry needs instead (docs/concurrency.md, "Workloads for concurrent programs"):
 * operation i is line i of standard input, and what the program prints depends only on which
 * operations took effect. So here:
 *  - all of standard input is read at once with fread (a line read with fgets from stdin would
 *    be an operation of the main thread); its lines are the operations;
 *  - two worker threads (tid 0 and 1) take the lines in rounds of two: line 2r is thread 0's,
 *    line 2r+1 thread 1's;
 *  - the two operations of a round begin in line order (SCRY_OP_BEGIN with the line's text:
 *    thread 0 then thread 1) and neither goes on before both have begun, so that their calls
 *    into the target overlap from the start; the calls themselves are not ordered;
 *  - each operation writes its result into a buffer; the results are printed in line order
 *    (thread 1 waits until thread 0 printed), then the operation ends (SCRY_OP_END);
 *  - the next round begins when both operations of this one have ended (a round is a busy
 *    period of at most two operations).
 * The workload (pmrace.sh) makes the two lines of a round commute, so that the printed results
 * do not depend on how the threads interleaved.
 *
 * Waits use a mutex and a condition variable (no spinning), so that scry's controlled scheduler,
 * which models pthread calls, can run the threads one at a time.
 */
#ifndef PMRACE_ROUNDS_H
#define PMRACE_ROUNDS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scry.h>

#ifdef __cplusplus
extern "C" {
#endif

/* applies one line in thread tid; writes what the program prints for it into out */
typedef void (*pmrace_op_fn)(int tid, const char *line, char *out, size_t outsz);
/* per-thread setup, in the worker thread, before its first operation (may be NULL) */
typedef void (*pmrace_init_fn)(int tid);

static char **pmrace_lines;
static int pmrace_nlines;
static int pmrace_begun, pmrace_printed, pmrace_ended;
static pthread_mutex_t pmrace_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pmrace_cv = PTHREAD_COND_INITIALIZER;
static pmrace_op_fn pmrace_op;
static pmrace_init_fn pmrace_init;

static void pmrace_read_stdin(void)
{
	size_t cap = 1 << 16, n = 0, got;
	char *buf = (char *)malloc(cap);
	if (!buf)
		abort();
	while ((got = fread(buf + n, 1, cap - n - 1, stdin)) > 0) {
		n += got;
		if (n + 1 == cap) {
			cap *= 2;
			buf = (char *)realloc(buf, cap);
			if (!buf)
				abort();
		}
	}
	buf[n] = '\0';
	int max = 1;
	for (size_t i = 0; i < n; i++)
		max += buf[i] == '\n';
	pmrace_lines = (char **)calloc((size_t)max, sizeof *pmrace_lines);
	if (!pmrace_lines)
		abort();
	char *save;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		pmrace_lines[pmrace_nlines++] = l;
}

static void pmrace_wait_locked(int *counter, int value)
{
	while (*counter < value)
		pthread_cond_wait(&pmrace_cv, &pmrace_mu);
}

static void *pmrace_worker(void *arg)
{
	int tid = (int)(long)arg;
	char out[512];
	if (pmrace_init)
		pmrace_init(tid);
	for (int l = tid; l < pmrace_nlines; l += 2) {
		int last = l - tid + 2 < pmrace_nlines ? l - tid + 2 : pmrace_nlines;
		pthread_mutex_lock(&pmrace_mu);
		pmrace_wait_locked(&pmrace_begun, l);
		SCRY_OP_BEGIN(pmrace_lines[l]);
		pmrace_begun = l + 1;
		pthread_cond_broadcast(&pmrace_cv);
		pmrace_wait_locked(&pmrace_begun, last);
		pthread_mutex_unlock(&pmrace_mu);

		out[0] = '\0';
		pmrace_op(tid, pmrace_lines[l], out, sizeof out);

		pthread_mutex_lock(&pmrace_mu);
		pmrace_wait_locked(&pmrace_printed, l);
		fputs(out, stdout);
		fflush(stdout);
		pmrace_printed = l + 1;
		pthread_cond_broadcast(&pmrace_cv);
		pthread_mutex_unlock(&pmrace_mu);
		SCRY_OP_END();

		pthread_mutex_lock(&pmrace_mu);
		pmrace_ended++;
		pthread_cond_broadcast(&pmrace_cv);
		pmrace_wait_locked(&pmrace_ended, last);
		pthread_mutex_unlock(&pmrace_mu);
	}
	return NULL;
}

/* reads the workload from standard input and runs it in two threads, in rounds of two lines */
static void pmrace_run(pmrace_op_fn op, pmrace_init_fn init)
{
	pthread_t th[2];
	pmrace_op = op;
	pmrace_init = init;
	pmrace_read_stdin();
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, pmrace_worker, (void *)i) != 0)
			abort();
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
}

#ifdef __cplusplus
}
#endif

#endif /* PMRACE_ROUNDS_H */
