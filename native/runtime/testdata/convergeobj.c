/* convergeobj.c: a libpmemobj program for convergence's tests (converge_test.go). Usage:
 *   convergeobj create POOL   creates POOL, then prints "got LINE" for each line of standard
 *                             input, then "end"
 *   convergeobj late POOL     reads a line of standard input ("got LINE") before it opens POOL,
 *                             then goes on as create does (prints "open failed" and exits 1
 *                             when the open fails) */
#include <libpmemobj.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 100;
	char buf[256];
	PMEMobjpool *pop;
	if (strcmp(argv[1], "create") == 0) {
		pop = pmemobj_create(argv[2], "cv", 8 << 20, 0644);
	} else {
		if (fgets(buf, sizeof buf, stdin))
			printf("got %s", buf);
		pop = pmemobj_open(argv[2], "cv");
	}
	if (!pop) {
		printf("open failed: %s\n", pmemobj_errormsg());
		return 1;
	}
	while (fgets(buf, sizeof buf, stdin))
		printf("got %s", buf);
	printf("end\n");
	pmemobj_close(pop);
	return 0;
}
