// redundant-flush (fixed): libpmem. One pmem_flush and one pmem_drain (pmem_persist would do
// both) per update.
// scry: args {pool}
#include <libpmem.h>
#include <stdint.h>

#include "example.h"

int main(int argc, char *argv[])
{
	volatile uint64_t *counter = example_pmem(argc, argv, 4096, NULL);

	*counter = 1;
	pmem_flush((void *)counter, sizeof(*counter));
	pmem_drain();

	pmem_unmap((void *)counter, 4096);
	return 0;
}
