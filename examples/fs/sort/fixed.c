// Fixed twin of buggy.c: the sorted lines go to a new file, which is made durable and then
// renamed over FILE (an atomic replacement), and the directory is fsynced before the program
// reports success.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: sort FILE\n");
		return 2;
	}
	static char buf[1 << 16];
	int fd = open(argv[1], O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (n < 0) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	buf[n] = 0;
	char *lines[4096];
	int k = 0;
	for (char *s = strtok(buf, "\n"); s && k < 4096; s = strtok(NULL, "\n"))
		lines[k++] = s;
	qsort(lines, k, sizeof lines[0], cmp);
	static char out[1 << 16];
	size_t len = 0;
	for (int i = 0; i < k; i++)
		len += sprintf(out + len, "%s\n", lines[i]);
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, out, len) != (ssize_t)len || fsync(fd) != 0) {
		perror(tmp);
		return 1;
	}
	close(fd);
	if (rename(tmp, argv[1]) != 0) {
		perror("rename");
		return 1;
	}
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	if (dir < 0 || fsync(dir) != 0) {
		perror(".");
		return 1;
	}
	close(dir);
	printf("sorted %d lines\n", k);
	return 0;
}
