// missing-flush (buggy): a record is written to a raw memory-mapped file, its data and its valid
// flag on separate cache lines; the program flushes the flag with clflush (inline assembly) but
// forgets the data, so the data may never reach PM even though the flag says it is valid. On an
// eADR platform (persistent caches) the data is durable once visible: the finding is ADR's only.
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

	r->data = 42; // want "unpersisted-store"; profiles adr
	r->valid = 1;
	CLFLUSH(&r->valid); /* clflush: durable when it completes, no fence needed */

	munmap(r, 4096);
	return 0;
}
