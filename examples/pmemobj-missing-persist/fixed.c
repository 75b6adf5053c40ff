// pmemobj-missing-persist (fixed): libpmemobj outside transactions. Every store to the root
// object is persisted with pmemobj_persist before the pool is closed.
// scry: args {pool}
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>

struct header {
	_Alignas(64) uint64_t version; /* cache line 0 */
	_Alignas(64) char name[8];     /* cache line 1 */
};

POBJ_LAYOUT_BEGIN(header);
POBJ_LAYOUT_ROOT(header, struct header);
POBJ_LAYOUT_END(header);

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL\n", argv[0]);
		return 2;
	}
	PMEMobjpool *pop = pmemobj_create(argv[1], POBJ_LAYOUT_NAME(header), PMEMOBJ_MIN_POOL, 0600);
	if (pop == NULL) {
		fprintf(stderr, "%s: %s\n", argv[1], pmemobj_errormsg());
		return 1;
	}
	struct header *h = D_RW(POBJ_ROOT(pop, struct header));

	h->version = 2;
	pmemobj_persist(pop, &h->version, sizeof(h->version));
	*(volatile uint64_t *)h->name = 0x6f6c6c6568; /* "hello" */
	pmemobj_persist(pop, h->name, sizeof(h->name));

	pmemobj_close(pop);
	return 0;
}
