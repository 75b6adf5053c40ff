/*
 * cceh_driver.cpp: scry's two-thread driver for CCEH-PMDK (DICL/CCEH, with PMRace's patch), in
 * place of PMRace's CCEH-PMDK/src/test.cpp (test/pmrace/pmrace.sh says why). Like PMRace's
 * driver it creates the pool (layout "CCEH") with initCCEH when the file does not exist, else
 * opens it and runs Recovery when the root's `crashed` flag is set, and at the end clears
 * `crashed` and closes the pool. Commands (PMRace's letters, keys in hex):
 *   i K V  Insert (the value V is stored as the 8-byte pointer value V, as Durinn's driver does;
 *          PMRace's driver stored a pointer to a temporary string)   prints "i K"
 *   g K    Get                                                        prints "g K <value>"
 * Usage: cceh_driver POOL [INITIAL_SIZE] < workload   (PMRace's driver: INITIAL_SIZE 1024)
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "src/CCEH.h"
#include "pmrace_rounds.h"

#define POOL_SIZE (8 * 1024 * 1024UL) /* PMRace: 32 MiB; smaller pools reopen faster */

static PMEMobjpool *pop;
static TOID(CCEH) HashTable;

static void op(int tid, const char *line, char *out, size_t n)
{
	char c;
	unsigned long k = 0, v = 0;
	(void)tid;
	if (sscanf(line, " %c %lx %lx", &c, &k, &v) < 2) {
		snprintf(out, n, "bad line\n");
		return;
	}
	Key_t key = k;
	switch (c) {
	case 'i':
		D_RW(HashTable)->Insert(pop, key, (Value_t)(uintptr_t)v);
		snprintf(out, n, "i %lx\n", k);
		break;
	case 'g':
		snprintf(out, n, "g %lx %lx\n", k, (unsigned long)(uintptr_t)D_RW(HashTable)->Get(key));
		break;
	default: snprintf(out, n, "bad op %c\n", c);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s POOL [INITIAL_SIZE] < workload\n", argv[0]);
		return 2;
	}
	size_t initialSize = argc > 2 ? strtoul(argv[2], NULL, 0) : 1024;
	if (access(argv[1], 0) != 0) {
		pop = pmemobj_create(argv[1], "CCEH", POOL_SIZE, 0666);
		if (!pop) {
			perror("pmemobj_create");
			return 1;
		}
		HashTable = POBJ_ROOT(pop, CCEH);
		D_RW(HashTable)->initCCEH(pop, initialSize);
	} else {
		pop = pmemobj_open(argv[1], "CCEH");
		if (!pop) {
			perror("pmemobj_open");
			return 1;
		}
		HashTable = POBJ_ROOT(pop, CCEH);
		if (D_RO(HashTable)->crashed)
			D_RW(HashTable)->Recovery(pop);
	}
	pmrace_run(op, NULL);
	D_RW(HashTable)->crashed = false;
	pmemobj_persist(pop, (char *)&D_RO(HashTable)->crashed, sizeof(bool));
	pmemobj_close(pop);
	return 0;
}
