/* windowobj.c: two threads allocate libpmemobj objects at once, for the protection windows'
 * test (window_test.go). Usage: windowobj POOL ROUNDS creates POOL and runs ROUNDS rounds; in
 * round r threads 0 and 1 begin operations 2r and 2r+1 (in that order, SCRY_OP_BEGIN) and then
 * each allocates one object (pmemobj_alloc, atomic API) whose constructor sets its value to the
 * operation's index plus one; the round ends when both operations ended. windowobj POOL opens POOL and prints the number of objects the
 * pool's heap holds (pmemobj_first/pmemobj_next, which read the allocator's metadata). */
#include <libpmemobj.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <scry.h>

struct obj {
	uint64_t v;
	char pad[248];
};

static PMEMobjpool *pop;
static int rounds;
static pthread_barrier_t begun[2], done; /* done: both ended the round */

static int ctor(PMEMobjpool *p, void *ptr, void *arg)
{
	struct obj *o = ptr;
	o->v = *(uint64_t *)arg;
	pmemobj_persist(p, &o->v, sizeof o->v);
	return 0;
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char text[32];
	for (int r = 0; r < rounds; r++) {
		uint64_t op = (uint64_t)(2 * r + id);
		for (int t = 0; t < 2; t++) {
			if (t == id) {
				snprintf(text, sizeof text, "a %lu", (unsigned long)op + 1);
				SCRY_OP_BEGIN(text);
			}
			pthread_barrier_wait(&begun[t]);
		}
		uint64_t v = op + 1;
		PMEMoid oid;
		if (pmemobj_alloc(pop, &oid, sizeof(struct obj), 1, ctor, &v) != 0)
			return (void *)1;
		SCRY_OP_END();
		pthread_barrier_wait(&done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		pop = pmemobj_open(argv[1], "windowobj");
		if (!pop) {
			perror("pmemobj_open");
			return 100;
		}
		int n = 0;
		for (PMEMoid o = pmemobj_first(pop); !OID_IS_NULL(o); o = pmemobj_next(o))
			n++;
		printf("%d objects\n", n);
		pmemobj_close(pop);
		return 0;
	}
	if (argc != 3)
		return 100;
	rounds = atoi(argv[2]);
	pop = pmemobj_create(argv[1], "windowobj", PMEMOBJ_MIN_POOL, 0644);
	if (!pop) {
		perror("pmemobj_create");
		return 100;
	}
	for (int t = 0; t < 2; t++)
		pthread_barrier_init(&begun[t], NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_t th[2];
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	void *ret[2];
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], &ret[t]);
	pmemobj_close(pop);
	return ret[0] || ret[1] ? 1 : 0;
}
