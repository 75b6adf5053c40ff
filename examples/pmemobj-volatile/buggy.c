// pmemobj-volatile (buggy): a root object keeps, next to its durable version number, a lookup
// cache that is volatile by contract: pmemobj_volatile(3) (PMDK 1.12) hands it out, running the
// constructor on the first call of each run, as libpmemobj-cpp's pmem::obj::v<T> does. Its
// stores are never persisted, and need not be: scry takes the variable (and its run id) out of
// PM at the call. The buggy twin declares only the counter volatile, so the cache's other field
// is PM, stored and never persisted.
// scry: args {pool}
// scry: opt -O0 -O2
#include <libpmemobj.h>
#include <stdint.h>

#include "example.h"

struct cache {
	uint64_t hits; /* lookups this run */
	uint64_t last; /* the last key looked up, set before it is read */
};

struct root {
	_Alignas(64) uint64_t version; /* durable */
	_Alignas(64) struct pmemvlt vlt;
	struct cache cache; /* volatile */
};

POBJ_LAYOUT_BEGIN(vcache);
POBJ_LAYOUT_ROOT(vcache, struct root);
POBJ_LAYOUT_END(vcache);

static int cache_init(void *ptr, void *arg)
{
	struct cache *c = ptr;
	(void)arg;
	c->hits = 0;
	return 0;
}

static struct cache *cache_of(PMEMobjpool *pop, struct root *r)
{
	return pmemobj_volatile(pop, &r->vlt, &r->cache, sizeof(r->cache.hits), cache_init, NULL);
}

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(vcache), NULL);
	struct root *r = D_RW(POBJ_ROOT(pop, struct root));

	r->version = 1;
	pmemobj_persist(pop, &r->version, sizeof(r->version));

	for (int i = 0; i < 3; i++) {
		struct cache *c = cache_of(pop, r);
		c->hits++;
	}
	cache_of(pop, r)->last = (uint64_t)argc; // want "unpersisted-store"

	pmemobj_close(pop);
	return 0;
}
