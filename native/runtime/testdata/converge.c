/* converge.c: a program for convergence's tests (converge_test.go). Usage: converge MODE, MODE
 * one of fgets, getline, getdelim, read: prints "start" (and "run ID" when SCRY_RUN_ID is set),
 * left in stdio's buffer, then reads standard input with MODE, printing "got TEXT" for what each
 * call read and, after the first, "errno N" (errno was 0 before it: the hooks must keep it),
 * then "end". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads the next piece of standard input into *p with mode; its length, or -1 at its end. */
static long next(const char *mode, char **p, size_t *cap, char *buf, size_t size)
{
	if (strcmp(mode, "fgets") == 0) {
		*p = buf;
		return fgets(buf, (int)size, stdin) ? (long)strlen(buf) : -1;
	}
	if (strcmp(mode, "getline") == 0)
		return getline(p, cap, stdin);
	if (strcmp(mode, "getdelim") == 0)
		return getdelim(p, cap, '\n', stdin);
	*p = buf;
	ssize_t n = read(0, buf, size);
	return n > 0 ? n : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	printf("start\n");
	const char *id = getenv("SCRY_RUN_ID");
	if (id)
		printf("run %s\n", id);
	char buf[256], *line = NULL;
	size_t cap = 0;
	errno = 0;
	for (int i = 0;; i++) {
		char *p;
		long n = next(argv[1], &p, &cap, buf, sizeof buf);
		if (i == 0)
			printf("errno %d\n", errno);
		if (n < 0)
			break;
		printf("got %.*s", (int)n, p);
	}
	printf("end\n");
	free(line);
	return 0;
}
