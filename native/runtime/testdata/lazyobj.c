/* lazyobj.c: a libpmemobj program for lazy exploration's tests (lazy_test.go). Usage:
 *   lazyobj create POOL TEXT   creates POOL with a 64-byte root object holding TEXT, prints the
 *                              root object's offset in the file
 *   lazyobj open POOL          opens POOL (libpmemobj reads its header and lanes itself), copies
 *                              the root object with libc's memcpy and prints it as a string,
 *                              or "open failed" */
#include <libpmemobj.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	if (strcmp(argv[1], "create") == 0 && argc == 4) {
		PMEMobjpool *pop = pmemobj_create(argv[2], "lazy", 8 << 20, 0644);
		if (!pop)
			return 101;
		PMEMoid root = pmemobj_root(pop, 64);
		char *p = pmemobj_direct(root);
		pmemobj_memcpy_persist(pop, p, argv[3], strlen(argv[3]) + 1);
		printf("%llu\n", (unsigned long long)root.off);
		pmemobj_close(pop);
		return 0;
	}
	PMEMobjpool *pop = pmemobj_open(argv[2], "lazy");
	if (!pop) {
		printf("open failed: %s\n", pmemobj_errormsg());
		return 1;
	}
	char buf[64];
	memcpy(buf, pmemobj_direct(pmemobj_root(pop, 64)), sizeof buf);
	buf[63] = 0;
	printf("root %s\n", buf);
	pmemobj_close(pop);
	return 0;
}
