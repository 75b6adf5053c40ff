// ntstore.c: non-temporal stores (movnti, movntdq) to a raw mapped file (a --pm glob), made
// durable by one sfence, and one ordinary store flushed with clflush at the second cache line of a
// 256-byte block (VEX invalidates the whole block; the flush is of that line only). Used by
// TestNTStoresAndFlushLine (black-box mode).
#include <emmintrin.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0)
		return 1;
	char *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 1;
	for (int i = 0; i < 8; i++)
		_mm_stream_si64((long long *)(pm + 8 * i), i + 1);                    /* movnti */
	_mm_stream_si128((__m128i *)(pm + 256), _mm_set1_epi32(7));                /* movntdq */
	_mm_sfence();
	*(volatile uint64_t *)(pm + 512 + 64) = 42;
	asm volatile("clflush %0" : "+m"(*(volatile char *)(pm + 512 + 64)));
	munmap(pm, 4096);
	close(fd);
	return 0;
}
