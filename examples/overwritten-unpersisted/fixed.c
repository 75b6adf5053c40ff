// overwritten-unpersisted (fixed): state 1 is persisted (clflushopt + sfence) before the payload
// and state 2 are written, so a crash leaves either nothing, "started", or "done" durable.
// scry: args {pool}
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

struct entry {
	volatile uint64_t state;
	volatile uint64_t payload;
};

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL\n", argv[0]);
		return 2;
	}
	size_t len;
	struct entry *e = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, NULL);
	if (e == NULL) {
		perror(argv[1]);
		return 1;
	}

	e->state = 1;
	_mm_clflushopt((void *)e);
	_mm_sfence();
	e->payload = 99;
	e->state = 2;
	_mm_clflushopt((void *)e);
	_mm_sfence();

	pmem_unmap(e, len);
	return 0;
}
