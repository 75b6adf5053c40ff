/* common.h: helpers of the runtime's test programs, which call the scry callbacks by hand (as
 * the LLVM pass would) instead of being instrumented. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scry_abi.h"
#include "scry_hooks.h"
#include "scry_trace_format.h"

/* Site table of a test program; ids are base + index. */
#define SITE(kind, fn, line, callee) {kind, line, 1, 0, fn, __FILE__, callee}

__attribute__((unused)) static void *map_file(const char *path, size_t len, const char *initial, off_t at)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
		perror(path);
		exit(100);
	}
	if (initial && pwrite(fd, initial, strlen(initial), at) < 0) {
		perror("pwrite");
		exit(100);
	}
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(100);
	}
	close(fd);
	return p;
}
