// The program of the tests of `scry cc` on shared libraries and LTO: maps the file argv[1] and
// calls put (kvlib.c) on it, linked in, or, built with -DDLOPEN, found with dlsym in the library
// argv[2] it dlopens.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

void put(void *pm, uint64_t value);

int main(int argc, char *argv[])
{
	void (*fn)(void *, uint64_t);
#ifdef DLOPEN
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE LIBRARY\n", argv[0]);
		return 2;
	}
	void *lib = dlopen(argv[2], RTLD_NOW);
	if (!lib || !(fn = (void (*)(void *, uint64_t))dlsym(lib, "put"))) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
#else
	fn = put;
#endif
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	void *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	fn(pm, 42);
	munmap(pm, 4096);
	close(fd);
	return 0;
}
