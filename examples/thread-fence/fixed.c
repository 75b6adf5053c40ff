// thread-fence (fixed): the worker thread fences after its own clwb, so its value is durable
// before it returns; main() then writes, writes back and fences a value of its own. Both fences
// are needed: each orders only the write-backs of its own thread, so neither is redundant.
// scry: pm *.pool
// scry: args {pool}
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "example.h"

struct pair {
	_Alignas(64) uint64_t worker; /* cache line 0 */
	_Alignas(64) uint64_t main;   /* cache line 1 */
};

static void *work(void *arg)
{
	struct pair *p = arg;
	p->worker = 42;
	_mm_clwb(&p->worker);
	_mm_sfence();
	return NULL;
}

int main(int argc, char *argv[])
{
	struct pair *p = example_mmap(argc, argv, 4096, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, work, p) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "thread failed\n");
		return 1;
	}
	p->main = 7;
	_mm_clwb(&p->main);
	_mm_sfence();

	munmap(p, 4096);
	return 0;
}
