/* schedobj.c: two threads increment a counter of a libpmemobj pool, each in a transaction under
 * a PMEMmutex (pmemobj_mutex_lock, whose pthread calls libpmemobj makes itself), for the
 * controlled scheduler's tests (sched_test.go). Usage: schedobj POOL (created). Prints the
 * counter. */
#include <libpmemobj.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define N 5

struct root {
	PMEMmutex lock;
	uint64_t counter;
	uint64_t last;
};

static PMEMobjpool *pop;
static struct root *root;

static void *worker(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	for (int i = 0; i < N; i++) {
		if (pmemobj_mutex_lock(pop, &root->lock) != 0)
			return (void *)1;
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(root, sizeof *root);
			root->counter++;
			root->last = id;
		} TX_END
		pmemobj_mutex_unlock(pop, &root->lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	pop = pmemobj_create(argv[1], "schedobj", PMEMOBJ_MIN_POOL, 0644);
	if (!pop) {
		perror("pmemobj_create");
		return 100;
	}
	root = pmemobj_direct(pmemobj_root(pop, sizeof *root));
	pthread_t a, b;
	pthread_create(&a, NULL, worker, (void *)1);
	pthread_create(&b, NULL, worker, (void *)2);
	void *ra, *rb;
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	printf("%lu\n", (unsigned long)root->counter);
	pmemobj_close(pop);
	return ra || rb || root == NULL ? 1 : 0;
}
