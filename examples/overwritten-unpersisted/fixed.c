// overwritten-unpersisted (fixed): state 1 is persisted (clflushopt + sfence) before the payload
// and state 2 are written, so a crash leaves either nothing, "started", or "done" durable.
// scry: args {pool}
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>

#include "example.h"

struct entry {
	volatile uint64_t state;
	volatile uint64_t payload;
};

int main(int argc, char *argv[])
{
	struct entry *e = example_pmem(argc, argv, 4096, NULL);

	e->state = 1;
	_mm_clflushopt((void *)e);
	_mm_sfence();
	e->payload = 99;
	e->state = 2;
	_mm_clflushopt((void *)e);
	_mm_sfence();

	pmem_unmap(e, 4096);
	return 0;
}
