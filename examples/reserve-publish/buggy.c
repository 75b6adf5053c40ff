// reserve-publish (buggy): libpmemobj's action API. A node is reserved and filled, then
// published without being persisted first: once published it is allocated, reachable from the
// root, and its contents are still in the CPU cache when the pool is closed.
// scry: args {pool}
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

struct node {
	uint64_t key;
	uint64_t value;
};

struct root {
	PMEMoid head;
};

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, "reserve", NULL);
	struct root *r = pmemobj_direct(pmemobj_root(pop, sizeof(struct root)));
	struct pobj_action act[2];
	PMEMoid oid = pmemobj_reserve(pop, &act[0], sizeof(struct node), 1);
	if (OID_IS_NULL(oid)) {
		fprintf(stderr, "reserve: %s\n", pmemobj_errormsg());
		return 1;
	}
	struct node *n = pmemobj_direct(oid);
	n->key = 0;
	n->key = 42; // want "unpersisted-store"
	n->value = 7; // want "unpersisted-store"
	pmemobj_set_value(pop, &act[1], &r->head.pool_uuid_lo, oid.pool_uuid_lo);
	if (pmemobj_publish(pop, act, 2) != 0) {
		fprintf(stderr, "publish: %s\n", pmemobj_errormsg());
		return 1;
	}
	r->head.off = oid.off;
	pmemobj_persist(pop, &r->head.off, sizeof(r->head.off));
	pmemobj_close(pop);
	return 0;
}
