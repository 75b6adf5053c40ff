// redundant-flush (fixed): libpmem. One pmem_flush and one pmem_drain (pmem_persist would do
// both) per update.
// scry: args {pool}
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL\n", argv[0]);
		return 2;
	}
	size_t len;
	volatile uint64_t *counter = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, NULL);
	if (counter == NULL) {
		perror(argv[1]);
		return 1;
	}

	*counter = 1;
	pmem_flush((void *)counter, sizeof(*counter));
	pmem_drain();

	pmem_unmap((void *)counter, len);
	return 0;
}
