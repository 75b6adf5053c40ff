// The persistent-memory library of the tests of `scry cc` on shared libraries and LTO: put writes
// a record's data and its valid flag, on separate cache lines, and flushes only the flag
// (clflush), so the data may never reach PM though the flag says it is valid.
#include <stdint.h>

#define CLFLUSH(p) asm volatile("clflush %0" : "+m"(*(volatile char *)(p)))

struct record {
	_Alignas(64) volatile uint64_t data;  /* cache line 0 */
	_Alignas(64) volatile uint64_t valid; /* cache line 1 */
};

void put(void *pm, uint64_t value)
{
	struct record *r = pm;
	r->data = value; // want "unpersisted-store"
	r->valid = 1;
	CLFLUSH(&r->valid);
}
