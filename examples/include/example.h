/* example.h: what the examples' main functions share that has nothing to do with persistence:
 * the command line (one argument, the pool file's path) and opening the pool. Nothing here
 * writes persistent memory; what scry checks is in the examples themselves.
 *
 * Each function takes main's argc and argv. With any other number of arguments than one, it
 * prints the usage and exits with status 2; ops, a printf format and its arguments, names the
 * operations the program reads from standard input, one per line (NULL: it reads none). When
 * the pool cannot be opened, it prints why and exits with status 1. */
#ifndef SCRY_EXAMPLE_H
#define SCRY_EXAMPLE_H

#include <fcntl.h>
#include <libpmem.h>
#include <libpmemobj.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* example_pool_arg returns the pool's path, argv[1] (see above). ap holds ops's arguments. */
static inline const char *example_pool_arg(int argc, char *argv[], const char *ops, va_list ap)
{
	if (argc == 2)
		return argv[1];
	fprintf(stderr, "usage: %s POOL", argv[0]);
	if (ops != NULL) {
		fprintf(stderr, " < OPS   (OPS: ");
		vfprintf(stderr, ops, ap);
		fprintf(stderr, ")");
	}
	fprintf(stderr, "\n");
	exit(2);
}

/* example_pmem maps size bytes of the pool file with libpmem's pmem_map_file (creating the file
 * when it does not exist) and returns the mapping, size bytes long (pmem_unmap(p, size)). */
static inline void *example_pmem(int argc, char *argv[], size_t size, const char *ops, ...)
{
	va_list ap;
	va_start(ap, ops);
	const char *path = example_pool_arg(argc, argv, ops, ap);
	va_end(ap);
	size_t len;
	void *p = pmem_map_file(path, size, PMEM_FILE_CREATE, 0600, &len, NULL);
	if (p == NULL) {
		perror(path);
		exit(1);
	}
	return p;
}

/* example_mmap maps size bytes of the pool file with mmap (MAP_SHARED), after creating the file
 * when it does not exist and sizing it to size bytes, and returns the mapping (munmap(p, size)).
 * Raw PM: scry recognises the mapping by the file's name (`// scry: pm GLOB`), or by the
 * program's SCRY_REGISTER_PM. */
static inline void *example_mmap(int argc, char *argv[], size_t size, const char *ops, ...)
{
	va_list ap;
	va_start(ap, ops);
	const char *path = example_pool_arg(argc, argv, ops, ap);
	va_end(ap);
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, size) != 0) {
		perror(path);
		exit(1);
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	close(fd); /* the mapping stays */
	return p;
}

/* example_pmemobj opens the libpmemobj pool with layout (POBJ_LAYOUT_NAME), or creates it
 * (PMEMOBJ_MIN_POOL bytes) when the file does not exist, and returns it (pmemobj_close). */
static inline PMEMobjpool *example_pmemobj(int argc, char *argv[], const char *layout, const char *ops, ...)
{
	va_list ap;
	va_start(ap, ops);
	const char *path = example_pool_arg(argc, argv, ops, ap);
	va_end(ap);
	PMEMobjpool *pop;
	if (access(path, F_OK) == 0)
		pop = pmemobj_open(path, layout);
	else
		pop = pmemobj_create(path, layout, PMEMOBJ_MIN_POOL, 0600);
	if (pop == NULL) {
		fprintf(stderr, "%s: %s\n", path, pmemobj_errormsg());
		exit(1);
	}
	return pop;
}

/* example_values reads all of standard input at once (for a program whose operations are its
 * threads' scry_op_begin markers, not the lines it reads) and parses each line with format, which
 * converts one unsigned long (`add %lu`): line i goes to lines[i], without its newline (the text
 * stays in a static buffer), its value to values[i]. It returns the number of lines; a line that
 * does not parse, or more than max lines, is an error: it prints it and exits with status 1. */
static inline int example_values(const char *format, char **lines, unsigned long *values, int max)
{
	static char input[16384];
	size_t got = fread(input, 1, sizeof input - 1, stdin);
	input[got] = '\0';
	int n = 0;
	for (char *save, *l = strtok_r(input, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == max || sscanf(l, format, &values[n]) != 1) {
			fprintf(stderr, "bad operation: %s\n", l);
			exit(1);
		}
		lines[n++] = l;
	}
	return n;
}

#endif
