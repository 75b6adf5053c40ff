// redundant-fence (fixed): one clflushopt and one sfence (inline assembly) per update, on a raw
// memory-mapped file declared to scry with SCRY_REGISTER_PM.
// scry: args {pool}
#include <stdint.h>
#include <sys/mman.h>

#include <scry.h> /* `scry cc` adds its include directory */

#include "example.h"

#define CLFLUSHOPT(p) asm volatile("clflushopt %0" : "+m"(*(volatile char *)(p)))
#define SFENCE() asm volatile("sfence" ::: "memory")

int main(int argc, char *argv[])
{
	volatile uint64_t *head = example_mmap(argc, argv, 4096, NULL);
	SCRY_REGISTER_PM((void *)head, 4096, argv[1]);

	*head = 3;
	CLFLUSHOPT(head);
	SFENCE();

	SCRY_UNREGISTER_PM((void *)head);
	munmap((void *)head, 4096);
	return 0;
}
