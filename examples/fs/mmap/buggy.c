// mmap: a record store updated through a shared mapping (docs/fs-mode.md, "Examples"). db is
// a header page ("count=N") and a page of 16-byte records; each record is stored through a
// MAP_SHARED mapping of db, and the header, which makes it visible, with pwrite(2).
//
// Bug: the header is written before the record's page is msynced: the kernel may write the
// header back first, and a crash then leaves a count that names a record db does not hold.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int fd = open("db", O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 2 * PAGE) != 0 || fsync(fd) != 0)
		return perror("db"), 1;
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	if (dir < 0 || fsync(dir) != 0)
		return perror("."), 1;
	char *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return perror("mmap"), 1;
	for (int i = 0; i < n; i++) {
		snprintf(map + PAGE + 16 * i, 16, "record-%d", i);
		char hdr[16] = {0};
		snprintf(hdr, sizeof hdr, "count=%d\n", i + 1);
		if (pwrite(fd, hdr, sizeof hdr, 0) != sizeof hdr) // want "fs-ordering-violation"
			return perror("pwrite"), 1;
		if (fsync(fd) != 0)
			return perror("fsync"), 1;
		printf("stored %d\n", i + 1);
		fflush(stdout);
	}
	return munmap(map, 2 * PAGE) != 0;
}
