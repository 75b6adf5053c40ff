/* A program that runs instrumented, linked with stubs.c (or the real runtime): it maps a region
 * (the file argv[1], 4096 bytes, MAP_SHARED; anonymous memory without an argument), stores to
 * it, flushes, fences, copies (within PM, and from PM into a local), uses atomics, and calls
 * through several frames. Exit status 0 when it ran. The hooked mmap makes the region PM
 * (stubs: always; runtime: by SCRY_PM_GLOBS). */
#include <fcntl.h>
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

volatile int one = 1; /* keeps sizes opaque to the optimizer */

struct rec { long a, b; char name[48]; };

__attribute__((noinline)) void persist(void *p, size_t n) {
	for (char *c = (char *)((unsigned long)p & ~63UL); c < (char *)p + n; c += 64)
		_mm_clwb(c);
	_mm_sfence();
}

__attribute__((noinline)) void update(struct rec *r, long v, const char *name) {
	r->a = v;
	r->b = v * 2;
	strncpy(r->name, name, sizeof(r->name) - 1);
	persist(r, sizeof(*r));
}

int main(int argc, char **argv) {
	int fd = -1, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	if (argc > 1) {
		fd = open(argv[1], O_RDWR | O_CREAT, 0644);
		if (fd < 0 || ftruncate(fd, 4096) != 0)
			return 3;
		flags = MAP_SHARED;
	}
	struct rec *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (r == MAP_FAILED)
		return 2;
	for (long i = 0; i < 4; i++)
		update(&r[i], i + one, "record");
	memcpy(&r[10], &r[0], (size_t)one * sizeof(*r));
	__atomic_fetch_add(&r[11].a, 1, __ATOMIC_SEQ_CST);
	_mm_stream_si64((long long *)&r[12].a, 42);
	_mm_clflush(&r[12]);
	long sum = 0;
	for (int i = 0; i < 4; i++)
		sum += r[i].b;
	struct rec copy;
	memcpy(&copy, &r[1], (size_t)one * sizeof(copy)); /* copy-into-local: a load, no store */
	printf("sum=%ld\n", sum);
	return sum == 2 * (1 + 2 + 3 + 4) && copy.b == 4 ? 0 : 1;
}
