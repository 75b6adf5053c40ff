// redundant-flush (buggy): libpmem. A counter is flushed twice with pmem_flush before the one
// pmem_drain; the second flush writes back a line that is already being written back.
// A performance finding: the program is correct but pays for an extra write-back.
// scry: args {pool}
#include <libpmem.h>
#include <stdint.h>

#include "example.h"

int main(int argc, char *argv[])
{
	volatile uint64_t *counter = example_pmem(argc, argv, 4096, NULL);

	*counter = 1;
	pmem_flush((void *)counter, sizeof(*counter));
	pmem_flush((void *)counter, sizeof(*counter)); // want "redundant-flush"
	pmem_drain();

	pmem_unmap((void *)counter, 4096);
	return 0;
}
