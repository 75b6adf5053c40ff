/* prog: a stand-in target for package exec's tests.
 *
 *   prog MODE POOL [ARG]
 *
 * Every mode first prints "pool: POOL" and a varying "seed: N" line (for output filters), then:
 *   echo       copies each standard-input line to standard output as "op: LINE" and appends it to
 *              POOL; exits 0
 *   exit N     exits with status N (after printing "bye" on stderr)
 *   signal N   raises signal N
 *   hang FILE  forks a child that writes its pid to FILE and sleeps; the parent sleeps too
 *   bgchild FILE  forks a child that writes its pid to FILE and sleeps; the parent exits 0
 *   pwd        prints the working directory
 *   env NAME.. prints NAME=value (or NAME unset) for each name
 *   flood N    prints N lines of 42 bytes
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static void child_sleeps(const char *pidfile, int own_session)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(3);
	}
	if (pid == 0) {
		if (own_session)
			setsid(); /* leaves the run's process group */
		/* write then rename, so that the file appears complete */
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", pidfile);
		FILE *f = fopen(tmp, "w");
		if (!f)
			_exit(4);
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		rename(tmp, pidfile);
		for (;;)
			pause();
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: prog MODE POOL [ARG]\n");
		return 2;
	}
	const char *mode = argv[1], *pool = argv[2];
	printf("pool: %s\n", pool);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("seed: %ld\n", (long)ts.tv_nsec ^ (long)getpid());
	fflush(stdout);

	if (strcmp(mode, "echo") == 0) {
		FILE *p = fopen(pool, "a");
		if (!p) {
			perror(pool);
			return 1;
		}
		char line[4096];
		while (fgets(line, sizeof line, stdin)) {
			printf("op: %s", line);
			fputs(line, p);
		}
		fclose(p);
		return 0;
	}
	if (strcmp(mode, "exit") == 0 && argc > 3) {
		fprintf(stderr, "bye\n");
		return atoi(argv[3]);
	}
	if (strcmp(mode, "signal") == 0 && argc > 3) {
		raise(atoi(argv[3]));
		return 0;
	}
	if (strcmp(mode, "hang") == 0 && argc > 3) {
		child_sleeps(argv[3], 0);
		for (;;)
			pause();
	}
	if ((strcmp(mode, "bgchild") == 0 || strcmp(mode, "setsid") == 0) && argc > 3) {
		child_sleeps(argv[3], strcmp(mode, "setsid") == 0);
		/* wait until the child has written its pid */
		for (int i = 0; i < 2000; i++) {
			if (access(argv[3], F_OK) == 0)
				break;
			usleep(1000);
		}
		return 0;
	}
	if (strcmp(mode, "pwd") == 0) {
		char buf[4096];
		if (!getcwd(buf, sizeof buf))
			return 1;
		printf("%s\n", buf);
		return 0;
	}
	if (strcmp(mode, "env") == 0) {
		for (int i = 3; i < argc; i++) {
			const char *v = getenv(argv[i]);
			if (v)
				printf("%s=%s\n", argv[i], v);
			else
				printf("%s unset\n", argv[i]);
		}
		return 0;
	}
	if (strcmp(mode, "flood") == 0 && argc > 3) {
		for (long i = atol(argv[3]); i > 0; i--)
			if (puts("flood flood flood flood flood flood flood") == EOF)
				return 1;
		return 0;
	}
	fprintf(stderr, "unknown mode %s\n", mode);
	return 2;
}
