// pmemcheck-flush (fixed): a record in a raw mapped file is written back by a path the program
// declares to pmemcheck instead of flushing it with instructions scry sees (here a stand-in,
// write_back, built without scry's instrumentation in a real code base): VALGRIND_PMC_DO_FLUSH
// names the bytes written back, VALGRIND_PMC_DO_FENCE the fence that orders them. scry takes
// them as a flush of exactly the cache lines of the range and an sfence (docs/pmemcheck.md).
// scry: pm *.pool
// scry: args {pool}
// scry: opt -O0 -O2
#include <pmemcheck.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

struct record {
	_Alignas(64) volatile uint64_t data;  /* cache line 0 */
	_Alignas(64) volatile uint64_t valid; /* cache line 1 */
};

/* The program's write-back of [p, p+len): declared, not executed, in this example. */
static void write_back(const volatile void *p, size_t len)
{
	VALGRIND_PMC_DO_FLUSH(p, len);
	VALGRIND_PMC_DO_FENCE;
}

int main(int argc, char *argv[])
{
	struct record *r = example_mmap(argc, argv, 4096, NULL);

	r->data = 42;
	write_back(&r->data, sizeof(r->data));
	r->valid = 1;
	write_back(&r->valid, sizeof(r->valid));

	munmap(r, 4096);
	return 0;
}
