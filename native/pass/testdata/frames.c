/* frames.c: a program whose activation serials (the FRAME records) deps_test.go checks, by the
 * values it stores. Usage: frames POOL [threads]
 *   without "threads": driver() stores 100, calls touch(1) and touch(2) (two stores each), stores 200;
 *   with "threads": two threads each call touch(p, i) for i = 0 .. ROUNDS-1 on their own slot. */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scry.h"

#define ROUNDS 10000

__attribute__((noinline)) void touch(long *p, long v)
{
	p[0] = v;
	p[1] = v;
}

__attribute__((noinline)) void driver(long *p)
{
	p[10] = 100;
	touch(p, 1);
	touch(p, 2);
	p[11] = 200;
}

static int ready; /* threads at the start line (a global: not traced, and no call) */

/* A thread's outermost function: the i-th call of touch is the thread's (i+1)-th activation. The
 * threads start together so that their records interleave. */
static void *worker(void *arg)
{
	long *p = arg;
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2)
		;
	for (long i = 0; i < ROUNDS; i++)
		touch(p, i);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 100;
	long *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 100;
	SCRY_REGISTER_PM(pm, 4096, argv[1]);
	if (argc > 2 && strcmp(argv[2], "threads") == 0) {
		pthread_t th[2];
		for (int k = 0; k < 2; k++)
			if (pthread_create(&th[k], NULL, worker, pm + 64 * (k + 1)) != 0)
				return 100;
		for (int k = 0; k < 2; k++)
			pthread_join(th[k], NULL);
		return pm[64] == ROUNDS - 1 && pm[128] == ROUNDS - 1 ? 0 : 1;
	}
	driver(pm);
	return pm[0] == 2 && pm[11] == 200 ? 0 : 1;
}
