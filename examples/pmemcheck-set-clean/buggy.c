// pmemcheck-set-clean (buggy): a record in a raw mapped file, its data and its valid flag on one
// cache line, is made durable by a path scry does not see (in a real code base, a library built
// without scry's instrumentation that persisted it); the program says so to pmemcheck with
// VALGRIND_PMC_SET_CLEAN, which scry takes as the fact that exactly those bytes are durable now
// (docs/pmemcheck.md). The buggy twin declares only the flag durable: the data, on the same
// cache line, stays unpersisted.
// scry: pm *.pool
// scry: args {pool}
// scry: opt -O0 -O2
#include <pmemcheck.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

struct record {
	_Alignas(64) volatile uint64_t data; /* cache line 0 */
	volatile uint64_t valid;              /* cache line 0 too */
};

int main(int argc, char *argv[])
{
	struct record *r = example_mmap(argc, argv, 4096, NULL);

	r->data = 42; // want "unpersisted-store"
	r->valid = 1;
	VALGRIND_PMC_SET_CLEAN(&r->valid, sizeof(r->valid));

	munmap(r, 4096);
	return 0;
}
