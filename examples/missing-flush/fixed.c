// missing-flush (fixed): the data is flushed before the valid flag is written, and the flag is
// flushed too (clflush by inline assembly; clflush is ordered with older stores and with other
// clflushes, so no fence is needed).
// scry: pm *.pool
// scry: args {pool}
// scry: persistency all
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

#define CLFLUSH(p) asm volatile("clflush %0" : "+m"(*(volatile char *)(p)))

struct record {
	_Alignas(64) volatile uint64_t data;  /* cache line 0 */
	_Alignas(64) volatile uint64_t valid; /* cache line 1 */
};

int main(int argc, char *argv[])
{
	struct record *r = example_mmap(argc, argv, 4096, NULL);

	r->data = 42;
	CLFLUSH(&r->data);
	r->valid = 1;
	CLFLUSH(&r->valid);

	munmap(r, 4096);
	return 0;
}
