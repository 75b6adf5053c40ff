// missing-flush (buggy): a record is written to a raw memory-mapped file, its data and its valid
// flag on separate cache lines; the program flushes the flag with clflush (inline assembly) but
// forgets the data, so the data may never reach PM even though the flag says it is valid.
// scry: pm *.pool
// scry: args {pool}
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define CLFLUSH(p) asm volatile("clflush %0" : "+m"(*(volatile char *)(p)))

struct record {
	_Alignas(64) volatile uint64_t data;  /* cache line 0 */
	_Alignas(64) volatile uint64_t valid; /* cache line 1 */
};

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	struct record *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	r->data = 42; // want "unpersisted-store"
	r->valid = 1;
	CLFLUSH(&r->valid); /* clflush: durable when it completes, no fence needed */

	munmap(r, 4096);
	close(fd);
	return 0;
}
