// overwritten-unpersisted (buggy): a log entry's state goes from 1 (started) to 2 (done), but
// the first state is overwritten before it was persisted, so no crash can ever leave "started"
// durable: the intended ordering point is lost. Flushes use the clflushopt intrinsic and sfence.
// The file is mapped with libpmem's pmem_map_file, which scry recognises as PM by itself.
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
	e->payload = 99;
	e->state = 2; // want "overwritten-unpersisted"
	_mm_clflushopt((void *)e);
	_mm_sfence();

	pmem_unmap(e, 4096);
	return 0;
}
