/* common.h: a tiny persistent-memory harness for the explore tests: a 4 KiB file mapped
 * MAP_SHARED (scry check passes its pool path as a PM glob), clwb and sfence. */
#include <fcntl.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *map_pool(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(path);
		exit(1);
	}
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void clwb(const void *p) { _mm_clwb((void *)p); }
static void sfence(void) { _mm_sfence(); }
