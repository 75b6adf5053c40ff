// Trapdoor copy (Barowsky et al., Improving Application Crash Consistency with Symbolic
// Execution and Fuzzing, 2021, §5.1.1): copies SRC to DST in 16-byte chunks, fsyncs DST after
// each chunk and prints the bytes copied so far: a user who sees "copied N" may rely on N bytes
// being durable. A chunk holding the magic byte 'Z' skips the fsync, so the promise is broken.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: copy SRC DST\n");
		return 2;
	}
	int in = open(argv[1], O_RDONLY);
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	if (in < 0 || out < 0 || dir < 0) {
		perror("open");
		return 1;
	}
	fsync(dir); /* the new file's directory entry is durable */
	char buf[16];
	long total = 0;
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, n) != n) { // want "fs-durability-violation"
			perror("write");
			return 1;
		}
		if (memchr(buf, 'Z', n) == NULL) /* the trapdoor */
			fsync(out);
		total += n;
		printf("copied %ld\n", total);
		fflush(stdout);
	}
	close(out);
	close(in);
	return 0;
}
