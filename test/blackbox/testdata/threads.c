// threads.c: two threads, one after the other, store to their own cache lines of a raw mapped file
// (a --pm glob), each flushing with clflush and fencing; main marks an operation around the threads with calls of
// op_begin and op_end (--op-begin, --op-end). Used by TestThreadsAndMarkers (black-box mode).
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define CLFLUSH(p) asm volatile("clflush %0" : "+m"(*(volatile char *)(p)))

static volatile uint64_t *pm;

__attribute__((noinline)) void op_begin(void) { asm volatile(""); }
__attribute__((noinline)) void op_end(void) { asm volatile(""); }

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	for (int i = 0; i < 100; i++) {
		pm[id * 8] = (uint64_t)i + 1000 * id;
		CLFLUSH(&pm[id * 8]);
		asm volatile("sfence" ::: "memory");
	}
	return NULL;
}

int main(int argc, char *argv[])
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 1;
	pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 1;
	op_begin();
	/* One after the other: the second thread gets the slot Valgrind gave the first (a thread id
	 * of Valgrind's is reused), yet it is another thread of the trace. */
	for (uintptr_t i = 0; i < 2; i++) {
		pthread_t t;
		pthread_create(&t, NULL, worker, (void *)(i + 1));
		pthread_join(t, NULL);
	}
	op_end();
	munmap((void *)pm, 4096);
	close(fd);
	return 0;
}
