// missing-fence (fixed): clwb (compiler intrinsic) followed by sfence makes the value durable
// before the file is unmapped.
// scry: pm *.pool
// scry: args {pool}
#include <fcntl.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

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
	volatile uint64_t *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counter == MAP_FAILED) {
		perror("mmap");
		return 1;
	}

	*counter = 7;
	_mm_clwb((void *)counter);
	_mm_sfence();

	munmap((void *)counter, 4096);
	close(fd);
	return 0;
}
