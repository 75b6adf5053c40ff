/* hang.c: maps PM at argv[1], persists one store, then hangs, with a child that hangs too and
 * whose pid it writes to argv[2]: a recorded run that never ends, for --record-timeout. */
#include <libpmem.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len;
	int is_pmem;
	if (argc != 3)
		return 2;
	char *p = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!p) {
		perror(argv[1]);
		return 3;
	}
	p[0] = 1;
	pmem_persist(p, 1);
	pid_t c = fork();
	if (c == 0)
		for (;;)
			pause();
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 4;
	fprintf(f, "%d\n", (int)c);
	fclose(f);
	for (;;)
		pause();
}
