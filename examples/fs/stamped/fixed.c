// A counter kept in one file, "count", as a decimal number. It reads commands from its standard
// input, one per line: "inc" adds one and prints the new value, "get" prints it. Before each
// reply it prints a line of its own with the time in nanoseconds and its process id, as a
// service logs its requests: "# 1764111071.123456789 pid 4242". No two runs print the same
// such line, crash or no crash; scry runs each legal outcome a second time and leaves out of
// the comparison the fields that differ between the two runs, so the replies are still compared
// (WITCHER, SOSP'21, §4.5, with the workload file workload).
//
// Fixed twin of buggy.c: inc writes the new count to count.tmp, fsyncs it, renames it over count
// and fsyncs the directory, so a crash leaves the old count or the new one; the stamp lines
// still differ in every run, and scry reports nothing.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long load(void) {
	char buf[32] = {0};
	int fd = open("count", O_RDONLY);
	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof buf - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atol(buf);
}

static void save(long n) {
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%ld\n", n);
	int fd = open("count.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || dir < 0 || write(fd, buf, len) != len) {
		perror("count");
		exit(1);
	}
	fsync(fd);
	if (rename("count.tmp", "count") != 0) {
		perror("rename");
		exit(1);
	}
	fsync(dir);
	close(fd);
	close(dir);
}

int main(void) {
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("# %ld.%09ld pid %d\n", (long)ts.tv_sec, ts.tv_nsec, (int)getpid());
		long n = load();
		if (strncmp(line, "inc", 3) == 0)
			save(++n);
		printf("%ld\n", n);
		fflush(stdout);
	}
	return 0;
}
