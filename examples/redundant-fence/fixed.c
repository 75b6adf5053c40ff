// redundant-fence (fixed): one clflushopt and one sfence (inline assembly) per update, on a raw
// memory-mapped file declared to scry with SCRY_REGISTER_PM.
// scry: args {pool}
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <scry.h> /* `scry cc` adds its include directory */

#define CLFLUSHOPT(p) asm volatile("clflushopt %0" : "+m"(*(volatile char *)(p)))
#define SFENCE() asm volatile("sfence" ::: "memory")

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
	volatile uint64_t *head = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (head == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	SCRY_REGISTER_PM((void *)head, 4096, argv[1]);

	*head = 3;
	CLFLUSHOPT(head);
	SFENCE();

	SCRY_UNREGISTER_PM((void *)head);
	munmap((void *)head, 4096);
	close(fd);
	return 0;
}
