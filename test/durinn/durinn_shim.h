/*
 * durinn_shim.h: what test/durinn/durinn.sh adds to the two-thread drivers of Durinn's artifact
 * (Fu, Lee, Min, OSDI'22), force-included (-include) into each driver's main translation unit
 * only. It is scry's harness code, not the artifact's; the script's header says which lines of
 * the drivers call it (the drivers are edited with sed on an extracted copy, outside this
 * repository).
 *
 * What it does:
 *  - durinn_open_ops("-") reads ALL of standard input with fread, keeps its lines as the
 *    operations' texts, and gives the driver a memory stream of the same bytes to fgets from.
 *    Reading it line by line with fgets on stdin would make every line an operation of the main
 *    thread (scry's runtime marks a line read from standard input as the start of an operation);
 *    here the operations are the worker threads' instead.
 *  - durinn_open_out("-") is standard output.
 *  - durinn_round(n) is called by the driver's main thread before it starts the threads of one
 *    round of n (1 or 2) lines; durinn_thread_arg(i, p) when it starts thread i with argument p.
 *  - durinn_thread_begin(p), first in each thread, returns 0 for a thread with no line this
 *    round (a last, odd line), and otherwise begins the thread's operation with SCRY_OP_BEGIN and
 *    the line's text: thread 0 first, then thread 1 (scry numbers operations in the order they
 *    begin, and operation i must be line i of the workload), and neither goes on before both have
 *    begun, so the two operations overlap from their first instruction.
 *  - durinn_api_end(), the driver's api_end(): thread 1 waits there, after its data-structure
 *    call and before it prints its result, until thread 0 has printed its own, so that standard
 *    output has the round's results in line order whichever thread finished first. The
 *    data-structure calls themselves are not ordered.
 *  - durinn_thread_end(), last in each thread: the result printed, SCRY_OP_END. An operation
 *    thus spans the driver's parsing of its fields, its allocation of the value, the
 *    data-structure call and the printing of the result.
 *
 * Waits use a mutex and a condition variable (no spinning), so that a controlled scheduler that
 * models pthread calls can run the threads one at a time.
 */
#ifndef DURINN_SHIM_H
#define DURINN_SHIM_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scry.h>

static char **durinn_lines;          /* the workload's lines, without their newlines */
static int durinn_nlines;
static int durinn_first, durinn_next; /* this round's first line; the next round's */
static int durinn_npar;               /* lines in this round */
static int durinn_begun, durinn_printed;
static void *durinn_argp[2];
static pthread_mutex_t durinn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t durinn_cv = PTHREAD_COND_INITIALIZER;
static __thread int durinn_slot = -1;

static FILE *durinn_open_ops(const char *path)
{
	if (strcmp(path, "-") != 0)
		return fopen(path, "r");
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
	char *copy = strdup(buf);
	int max = 1;
	for (size_t i = 0; i < n; i++)
		max += buf[i] == '\n';
	durinn_lines = (char **)calloc((size_t)max, sizeof *durinn_lines);
	if (!copy || !durinn_lines)
		abort();
	for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		durinn_lines[durinn_nlines++] = l;
	if (n == 0)
		return fopen("/dev/null", "r"); /* fmemopen refuses an empty buffer */
	return fmemopen(buf, n, "r");
}

static FILE *durinn_open_out(const char *path)
{
	return strcmp(path, "-") ? fopen(path, "w") : stdout;
}

static void durinn_round(int n)
{
	pthread_mutex_lock(&durinn_mu);
	durinn_first = durinn_next;
	durinn_next += n;
	durinn_npar = n;
	durinn_begun = durinn_printed = 0;
	durinn_argp[0] = durinn_argp[1] = NULL;
	pthread_mutex_unlock(&durinn_mu);
}

static void durinn_thread_arg(int i, void *p)
{
	if (i >= 0 && i < 2)
		durinn_argp[i] = p;
}

static int durinn_thread_begin(void *p)
{
	int slot = p == durinn_argp[0] ? 0 : p == durinn_argp[1] ? 1 : -1;
	if (slot < 0 || slot >= durinn_npar)
		return 0;
	durinn_slot = slot;
	pthread_mutex_lock(&durinn_mu);
	while (durinn_begun < slot)
		pthread_cond_wait(&durinn_cv, &durinn_mu);
	int line = durinn_first + slot;
	SCRY_OP_BEGIN(line < durinn_nlines ? durinn_lines[line] : "op");
	durinn_begun = slot + 1;
	pthread_cond_broadcast(&durinn_cv);
	while (durinn_begun < durinn_npar)
		pthread_cond_wait(&durinn_cv, &durinn_mu);
	pthread_mutex_unlock(&durinn_mu);
	return 1;
}

static void durinn_api_end(void)
{
	if (durinn_slot != 1)
		return;
	pthread_mutex_lock(&durinn_mu);
	while (!durinn_printed)
		pthread_cond_wait(&durinn_cv, &durinn_mu);
	pthread_mutex_unlock(&durinn_mu);
}

static void durinn_thread_end(void)
{
	if (durinn_slot == 0) {
		pthread_mutex_lock(&durinn_mu);
		durinn_printed = 1;
		pthread_cond_broadcast(&durinn_cv);
		pthread_mutex_unlock(&durinn_mu);
	}
	SCRY_OP_END();
	durinn_slot = -1;
}

#endif /* DURINN_SHIM_H */
