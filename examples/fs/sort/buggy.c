// Trapdoor sort (Barowsky et al., Improving Application Crash Consistency with Symbolic
// Execution and Fuzzing, 2021, §5.1.2): sorts the lines of FILE in place. It reads the lines,
// then reopens FILE with O_TRUNC and writes them sorted: a crash after the truncation, or in
// the middle of the write, loses lines.
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
	fd = open(argv[1], O_WRONLY | O_TRUNC); // want "fs-atomicity-violation"
	if (fd < 0 || write(fd, out, len) != (ssize_t)len) {
		perror(argv[1]);
		return 1;
	}
	fsync(fd);
	close(fd);
	printf("sorted %d lines\n", k);
	return 0;
}
