/* schedprog.c: programs for the controlled scheduler's tests (sched_test.go), built with scry cc.
 * Usage: schedprog MODE POOL. POOL (a new 64 KiB file) is mapped and registered as PM; every
 * thread's PM access is a scheduling point under SCRY_SCHED. Modes:
 *   mutex     two workers append their id to a log in PM, six times each, under a mutex
 *   cond      a producer hands four values to a consumer through a condition variable, then
 *             both workers and main meet at a barrier, and main joins them
 *   block     a worker blocks on a mutex, a condition variable, a barrier, a join, a semaphore
 *             and a read(2) of a pipe, each released by main (or by a third thread)
 *   one       one thread: stores, flushes, fences, an atomic, a mutex and a condition variable
 *             that are never contended
 *   window    two workers store to lines of their own and flush and fence each, no lock
 *   ops       worker 2 begins a workload operation (SCRY_OP_BEGIN) and lets worker 1 begin one;
 *             each appends its id to the log three times, without a lock, and ends its operation
 *   spin      two workers append their id to the log three times each under a spin lock, a word
 *             in PM taken by compare-and-swap
 *   deadlock  main holds a mutex and joins a worker that waits for it
 *   stall     a worker spins on a plain variable (no scheduling point) that another sets after
 *             it saw the first one start
 * It prints what the threads saw (the log, the values), so that the tests can check it. */
#include <fcntl.h>
#include <pthread.h>
#include <scry.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define POOL_SIZE (64 << 10)

struct pool {
	uint64_t next;       /* mutex: entries in log */
	uint64_t box, sum;   /* cond: the value handed over, the consumer's sum */
	uint64_t after[4];   /* cond: set by each thread after the barrier */
	uint64_t log[64];    /* mutex: the writers' ids, in order */
	uint64_t steps[16];  /* block: what the worker got through */
	uint64_t line[2][8][8]; /* window: each worker's lines (64 bytes each) */
	uint64_t spin;       /* spin: the lock word */
};

static struct pool *pm;

static void persist(const void *p)
{
	__builtin_ia32_clflush(p);
	__builtin_ia32_sfence();
}

/* Runs fn in two threads, with arguments 1 and 2, and joins them. */
static void two(void *(*fn)(void *))
{
	pthread_t a, b;
	pthread_create(&a, NULL, fn, (void *)1);
	pthread_create(&b, NULL, fn, (void *)2);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

/* Prints the log: the ids of the appends, in order. */
static void print_log(void)
{
	for (uint64_t i = 0; i < pm->next; i++)
		printf("%lu", (unsigned long)pm->log[i]);
	printf("\n");
}

/* ---------------------------------------------------------------- mutex */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *appender(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	for (int i = 0; i < 6; i++) {
		pthread_mutex_lock(&mu);
		uint64_t n = pm->next;
		pm->log[n] = id;
		persist(&pm->log[n]);
		pm->next = n + 1;
		persist(&pm->next);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static int run_mutex(void)
{
	two(appender);
	print_log();
	return pm->next == 12 ? 0 : 1;
}

/* ---------------------------------------------------------------- cond */

static pthread_cond_t filled = PTHREAD_COND_INITIALIZER, emptied = PTHREAD_COND_INITIALIZER;
static int full;
static pthread_barrier_t bar;

static void *producer(void *arg)
{
	(void)arg;
	for (uint64_t v = 1; v <= 4; v++) {
		pthread_mutex_lock(&mu);
		while (full)
			pthread_cond_wait(&emptied, &mu);
		pm->box = v;
		persist(&pm->box);
		full = 1;
		pthread_cond_signal(&filled);
		pthread_mutex_unlock(&mu);
	}
	pthread_barrier_wait(&bar);
	pm->after[1] = 1;
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		pthread_mutex_lock(&mu);
		while (!full)
			pthread_cond_wait(&filled, &mu);
		pm->sum += pm->box;
		persist(&pm->sum);
		full = 0;
		pthread_cond_signal(&emptied);
		pthread_mutex_unlock(&mu);
	}
	pthread_barrier_wait(&bar);
	pm->after[2] = 1;
	return NULL;
}

static int run_cond(void)
{
	pthread_t p, c;
	pthread_barrier_init(&bar, NULL, 3);
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_barrier_wait(&bar);
	pm->after[0] = 1;
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("sum %lu after %lu%lu%lu\n", (unsigned long)pm->sum, (unsigned long)pm->after[0],
	       (unsigned long)pm->after[1], (unsigned long)pm->after[2]);
	return pm->sum == 10 ? 0 : 1;
}

/* ---------------------------------------------------------------- block */

static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;
static sem_t sem;
static int pipefd[2];

static void *helper(void *arg)
{
	(void)arg;
	pm->steps[8] = 1;
	return NULL;
}

static void *blocker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu); /* main holds it */
	pm->steps[0] = 1;
	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&m2);
	while (!flag)
		pthread_cond_wait(&cv, &m2);
	pthread_mutex_unlock(&m2);
	pm->steps[1] = 1;
	pthread_barrier_wait(&bar);
	pm->steps[2] = 1;
	pthread_t h;
	pthread_create(&h, NULL, helper, NULL);
	pthread_join(h, NULL);
	pm->steps[3] = 1;
	sem_wait(&sem);
	pm->steps[4] = 1;
	char c;
	if (read(pipefd[0], &c, 1) == 1 && c == 'x')
		pm->steps[5] = 1;
	return NULL;
}

static int run_block(void)
{
	pthread_t w;
	pthread_barrier_init(&bar, NULL, 2);
	sem_init(&sem, 0, 0);
	if (pipe(pipefd) < 0)
		return 2;
	pthread_mutex_lock(&mu);
	pthread_create(&w, NULL, blocker, NULL);
	pm->steps[10] = 1;
	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&m2);
	flag = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m2);
	pthread_barrier_wait(&bar);
	pm->steps[11] = 1;
	sem_post(&sem);
	pm->steps[12] = 1;
	if (write(pipefd[1], "x", 1) != 1)
		return 2;
	pthread_join(w, NULL);
	for (int i = 0; i < 13; i++)
		printf("%lu", (unsigned long)pm->steps[i]);
	printf("\n");
	return 0;
}

/* ---------------------------------------------------------------- one */

static int run_one(void)
{
	pthread_mutex_lock(&mu);
	pm->log[0] = 7;
	persist(&pm->log[0]);
	__atomic_fetch_add(&pm->next, 1, __ATOMIC_SEQ_CST);
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	sched_yield();
	printf("%lu %lu\n", (unsigned long)pm->log[0], (unsigned long)pm->next);
	return 0;
}

/* ---------------------------------------------------------------- window */

static void *liner(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	for (int i = 0; i < 8; i++) {
		pm->line[id - 1][i][0] = id << 8 | (uint64_t)i;
		persist(pm->line[id - 1][i]);
	}
	return NULL;
}

static int run_window(void)
{
	two(liner);
	return 0;
}

/* ---------------------------------------------------------------- deadlock */

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static int run_deadlock(void)
{
	pthread_t w;
	pthread_mutex_lock(&mu);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_join(w, NULL);
	return 0;
}

/* ---------------------------------------------------------------- stall */

static volatile int started, released_flag;

static void *spinner(void *arg)
{
	(void)arg;
	started = 1;
	while (!released_flag)
		;
	pm->steps[0] = 1;
	return NULL;
}

static void *releaser(void *arg)
{
	(void)arg;
	while (!started)
		sched_yield();
	released_flag = 1;
	pm->steps[1] = 1;
	return NULL;
}

/* ---------------------------------------------------------------- ops */

static sem_t ops_begun;

static void *op_appender(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	if (id == 1)
		sem_wait(&ops_begun);
	SCRY_OP_BEGIN(id == 1 ? "a" : "b");
	if (id == 2)
		sem_post(&ops_begun);
	for (int i = 0; i < 3; i++) {
		uint64_t n = pm->next;
		pm->log[n] = id;
		persist(&pm->log[n]);
		pm->next = n + 1;
		persist(&pm->next);
	}
	SCRY_OP_END();
	return NULL;
}

static int run_ops(void)
{
	sem_init(&ops_begun, 0, 0);
	two(op_appender);
	print_log();
	return 0;
}

/* ---------------------------------------------------------------- spin */

static void *spin_appender(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	for (int i = 0; i < 3; i++) {
		uint64_t free_ = 0;
		while (!__atomic_compare_exchange_n(&pm->spin, &free_, id, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			free_ = 0;
		uint64_t n = pm->next;
		pm->log[n] = id;
		persist(&pm->log[n]);
		pm->next = n + 1;
		persist(&pm->next);
		__atomic_store_n(&pm->spin, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int run_spin(void)
{
	two(spin_appender);
	print_log();
	return 0;
}

static int run_stall(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, releaser, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%lu%lu\n", (unsigned long)pm->steps[0], (unsigned long)pm->steps[1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, POOL_SIZE) < 0)
		return 100;
	pm = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 100;
	close(fd);
	SCRY_REGISTER_PM(pm, POOL_SIZE, argv[2]);
	const char *mode = argv[1];
	int r = strcmp(mode, "mutex") == 0      ? run_mutex()
		: strcmp(mode, "cond") == 0     ? run_cond()
		: strcmp(mode, "block") == 0    ? run_block()
		: strcmp(mode, "one") == 0      ? run_one()
		: strcmp(mode, "window") == 0   ? run_window()
		: strcmp(mode, "deadlock") == 0 ? run_deadlock()
		: strcmp(mode, "stall") == 0    ? run_stall()
		: strcmp(mode, "ops") == 0      ? run_ops()
		: strcmp(mode, "spin") == 0     ? run_spin()
						: 100;
	fflush(stdout);
	return r;
}
