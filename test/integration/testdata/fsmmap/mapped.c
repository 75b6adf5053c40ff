// mapped: stores "record" in page 1 of db (two pages, made by the test) through a MAP_SHARED
// mapping, makes it visible in the way argv[1] names, then prints "stored". The checker wants
// "record" in db once "stored" is printed. TestFSMappedWrites expects the findings at the lines
// marked L:NAME.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	int fd = open("db", O_RDWR);
	if (fd < 0)
		return perror("db"), 1;
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	if (!strcmp(mode, "fork")) { // the child stores and msyncs through the inherited mapping
		pid_t pid = fork();
		if (pid == 0) {
			memcpy(p + PAGE, "record", 6);
			_exit(msync(p, 2 * PAGE, MS_SYNC) != 0);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
	} else if (!strcmp(mode, "mremap")) { // the mapping grows and moves: the store is in the new page
		if (ftruncate(fd, 3 * PAGE) != 0)
			return 1;
		char *q = mremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return perror("mremap"), 1;
		memcpy(q + 2 * PAGE, "record", 6);
		if (msync(q, 3 * PAGE, MS_SYNC) != 0)
			return 1;
	} else {
		memcpy(p + PAGE, "record", 6);
		if (!strcmp(mode, "sync"))
			msync(p, 2 * PAGE, MS_SYNC);
		else if (!strcmp(mode, "async"))
			msync(p, 2 * PAGE, MS_ASYNC); // L:async
		else if (!strcmp(mode, "munmap"))
			munmap(p, 2 * PAGE); // L:munmap
		else if (!strcmp(mode, "fsync"))
			fsync(fd);
		else if (!strcmp(mode, "fdatasync"))
			fdatasync(fd);
	}
	puts("stored");
	fflush(stdout); // L:output
	return 0;
}
