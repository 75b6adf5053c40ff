// missing-fence (buggy): a value is written to a raw memory-mapped file and written back with
// clwb (compiler intrinsic), but no sfence follows: clwb's write-back is only guaranteed complete
// at the next fence, and the program unmaps the file without one.
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

	*counter = 7; // want "unpersisted-store"
	_mm_clwb((void *)counter);
	/* missing: _mm_sfence(); */

	munmap((void *)counter, 4096);
	close(fd);
	return 0;
}
