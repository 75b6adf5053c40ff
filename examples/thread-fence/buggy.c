// thread-fence (buggy): a worker thread writes a value to a raw memory-mapped file and writes it
// back with clwb, but never fences; main() joins it, then writes, writes back and fences a value
// of its own. An sfence orders only the write-backs of the thread that executes it, so main's
// fence does not make the worker's value durable: when the file is unmapped the worker's store
// is still only flush-pending. A model that let any thread's fence drain every pending
// write-back would find nothing here.
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
	p->worker = 42; // want "unpersisted-store"
	_mm_clwb(&p->worker);
	/* missing: _mm_sfence(); main's fence below does not order this thread's clwb */
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
