// pmemcheck-volatile (buggy): a record in a raw mapped file keeps, next to its durable data, a
// hit counter that is volatile on purpose (recovery resets it), annotated for pmemcheck as
// libpmemobj-cpp annotates such fields: VALGRIND_PMC_REMOVE_PMEM_MAPPING takes the counter out
// of PM, so its unflushed increments are no finding; VALGRIND_PMC_REGISTER_PMEM_MAPPING makes it
// PM again for the final reset, which is persisted (docs/pmemcheck.md). The buggy twin removes
// the wrong field, so the counter's increments are PM stores overwritten before they persist.
// scry: pm *.pool
// scry: args {pool}
// scry: opt -O0 -O2
#include <pmemcheck.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

#define CLWB(p) asm volatile("clwb %0" : "+m"(*(volatile char *)(p)))
#define SFENCE() asm volatile("sfence" ::: "memory")

struct record {
	_Alignas(64) volatile uint64_t data; /* cache line 0 */
	_Alignas(64) volatile uint64_t hits; /* cache line 1: volatile on purpose */
	volatile uint64_t spare;
};

int main(int argc, char *argv[])
{
	struct record *r = example_mmap(argc, argv, 4096, NULL);

	r->data = 42;
	CLWB(&r->data);
	SFENCE();

	VALGRIND_PMC_REMOVE_PMEM_MAPPING(&r->spare, sizeof(r->spare)); /* the wrong field */
	for (int i = 0; i <= argc; i++) /* a few hits */
		r->hits = r->hits + 1; // want "overwritten-unpersisted"
	VALGRIND_PMC_REGISTER_PMEM_MAPPING(&r->hits, sizeof(r->hits));

	r->hits = 0; // want "overwritten-unpersisted"
	CLWB(&r->hits);
	SFENCE();

	munmap(r, 4096);
	return 0;
}
