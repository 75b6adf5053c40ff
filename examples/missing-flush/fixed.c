// missing-flush (fixed): the data is flushed before the valid flag is written, and the flag is
// flushed too (clflush by inline assembly; clflush is ordered with older stores and with other
// clflushes, so no fence is needed).
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

	r->data = 42;
	CLFLUSH(&r->data);
	r->valid = 1;
	CLFLUSH(&r->valid);

	munmap(r, 4096);
	close(fd);
	return 0;
}
