/* lazymap.c: a program for lazy exploration's tests (lazy_test.go). Usage: lazymap POOL
 * shared|private. It maps anonymous memory in a constructor (before main), maps POOL with plain mmap, installs a SIGSEGV handler of its own, writes
 * "start" to standard output (flushed) and "pre" (left in libc's buffer), then runs the commands
 * it reads from standard input one byte at a time (so that the input's offset is exactly what
 * was consumed):
 *   r OFF          prints "r OFF V": the 8 bytes at OFF, as a hexadecimal number
 *   w OFF B        stores byte B (hexadecimal) at OFF
 *   pw OFF B       writes byte B at OFF of POOL with pwrite(2)
 *   rd OFF         reads the first 4 bytes of POOL.log ("log0") into the pool at OFF with read(2)
 *   log            appends "leaf" to POOL.log, which it opened (and wrote "log0" into) at start
 *   showlog        prints the content of POOL.log
 *   if OFF B CMD   runs CMD when the byte at OFF is B (hexadecimal)
 *   loop, abort, segv (a fault outside the pool: the handler exits 3), exit N,
 *   thread (starts a second thread, which waits forever), usr1parent (sends SIGUSR1, whose
 *   action is the default, to its parent)
 * and prints "end" at the end of its input. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned char *pool;
static int logfd, poolfd;

static void on_segv(int sig)
{
	(void)sig;
	static const char msg[] = "caught\n";
	if (write(1, msg, sizeof msg - 1) < 0)
		_exit(4);
	_exit(3);
}

/* One line of standard input, read with read(2); 0 at its end. */
static int read_line(char *buf, size_t cap)
{
	size_t n = 0;
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);
		if (r <= 0)
			break;
		if (c == '\n') {
			buf[n] = 0;
			return 1;
		}
		if (n + 1 < cap)
			buf[n++] = c;
	}
	buf[n] = 0;
	return n > 0;
}

/* A mapping made before main (as a library's constructor would make), in the fork server too. */
__attribute__((constructor)) static void map_early(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(106);
	munmap(p, 4096);
}

static void *wait_forever(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void run(const char *cmd)
{
	unsigned long off, b, n;
	char rest[64];
	if (sscanf(cmd, "r %lu", &off) == 1) {
		uint64_t v;
		memcpy(&v, pool + off, sizeof v);
		printf("r %lu %016llx\n", off, (unsigned long long)v);
	} else if (sscanf(cmd, "w %lu %lx", &off, &b) == 2) {
		pool[off] = (unsigned char)b;
	} else if (sscanf(cmd, "pw %lu %lx", &off, &b) == 2) {
		unsigned char c = (unsigned char)b;
		if (pwrite(poolfd, &c, 1, (off_t)off) != 1)
			exit(108);
	} else if (sscanf(cmd, "rd %lu", &off) == 1) {
		if (lseek(logfd, 0, SEEK_SET) != 0 || read(logfd, pool + off, 4) != 4)
			printf("rd failed\n");
	} else if (strcmp(cmd, "log") == 0) {
		if (write(logfd, "leaf\n", 5) != 5)
			exit(107);
	} else if (strcmp(cmd, "showlog") == 0) {
		char buf[256];
		ssize_t n = pread(logfd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		printf("log: %s", buf);
	} else if (sscanf(cmd, "if %lu %lx %63[^\n]", &off, &b, rest) == 3) {
		if (pool[off] == b)
			run(rest);
	} else if (strcmp(cmd, "loop") == 0) {
		for (;;)
			__asm__ volatile("" ::: "memory");
	} else if (strcmp(cmd, "abort") == 0) {
		abort();
	} else if (strcmp(cmd, "segv") == 0) {
		*(volatile int *)(uintptr_t)8 = 1;
	} else if (strcmp(cmd, "usr1parent") == 0) {
		kill(getppid(), SIGUSR1);
	} else if (strcmp(cmd, "thread") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, wait_forever, NULL) != 0)
			exit(105);
	} else if (sscanf(cmd, "exit %lu", &n) == 1) {
		exit((int)n);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	int fd = open(argv[1], O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return 101;
	poolfd = fd;
	int flags = strcmp(argv[2], "private") == 0 ? MAP_PRIVATE : MAP_SHARED;
	pool = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (pool == MAP_FAILED)
		return 102;
	char logpath[4096];
	snprintf(logpath, sizeof logpath, "%s.log", argv[1]);
	logfd = open(logpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (logfd < 0 || write(logfd, "log0\n", 5) != 5)
		return 103;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	printf("start\n");
	fflush(stdout);
	fprintf(stderr, "err\n");
	printf("pre\n");
	char line[256];
	while (read_line(line, sizeof line))
		run(line);
	printf("end\n");
	return 0;
}
