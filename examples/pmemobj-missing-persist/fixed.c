// pmemobj-missing-persist (fixed): libpmemobj outside transactions. Every store to the root
// object is persisted with pmemobj_persist before the pool is closed.
// scry: args {pool}
#include <libpmemobj.h>
#include <stdint.h>

#include "example.h"

struct header {
	_Alignas(64) uint64_t version; /* cache line 0 */
	_Alignas(64) char name[8];     /* cache line 1 */
};

POBJ_LAYOUT_BEGIN(header);
POBJ_LAYOUT_ROOT(header, struct header);
POBJ_LAYOUT_END(header);

int main(int argc, char *argv[])
{
	PMEMobjpool *pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(header), NULL);
	struct header *h = D_RW(POBJ_ROOT(pop, struct header));

	h->version = 2;
	pmemobj_persist(pop, &h->version, sizeof(h->version));
	*(volatile uint64_t *)h->name = 0x6f6c6c6568; /* "hello" */
	pmemobj_persist(pop, h->name, sizeof(h->name));

	pmemobj_close(pop);
	return 0;
}
