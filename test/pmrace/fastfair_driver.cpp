/*
 * fastfair_driver.cpp: scry's two-thread driver for FAST_FAIR's concurrent_pmdk (DICL/FAST_FAIR,
 * with PMRace's patch), in place of PMRace's concurrent_pmdk/src/test.cpp (test/pmrace/pmrace.sh
 * says why). PMRace's driver removes the pool and creates it afresh on every run (layout "btree",
 * root constructor); here the pool is created when the file does not exist and opened otherwise,
 * so that scry can re-run the program on a crash image; then (PMRACE_REOPEN) it calls
 * btree::pmrace_reopen, which pmrace.sh adds to btree.h: every page keeps a pointer to a DRAM
 * pthread_rwlock_t and the root the pool pointer, both stale in a new process. Commands (PMRace's letters, keys in hex):
 *   i K V  btree_insert (the value V is stored as the 8-byte pointer value V, as Durinn's driver
 *          does; PMRace's driver stored a pointer to a string it then freed)   prints "i K"
 *   d K    btree_delete                                                         prints "d K"
 *   s K    btree_search                                                         prints "s K <value>"
 * Usage: fastfair_driver POOL < workload
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "btree.h"
#include "pmrace_rounds.h"

#define POOL_SIZE (8 * 1024 * 1024UL) /* PMRace: 32 MiB; smaller pools reopen faster */

static TOID(btree) bt;

static void op(int tid, const char *line, char *out, size_t n)
{
	char c;
	unsigned long k = 0, v = 0;
	(void)tid;
	if (sscanf(line, " %c %lx %lx", &c, &k, &v) < 2) {
		snprintf(out, n, "bad line\n");
		return;
	}
	switch (c) {
	case 'i':
		D_RW(bt)->btree_insert((entry_key_t)k, (char *)(uintptr_t)v);
		snprintf(out, n, "i %lx\n", k);
		break;
	case 'd':
		D_RW(bt)->btree_delete((entry_key_t)k);
		snprintf(out, n, "d %lx\n", k);
		break;
	case 's':
		snprintf(out, n, "s %lx %lx\n", k, (unsigned long)(uintptr_t)D_RW(bt)->btree_search((entry_key_t)k));
		break;
	default: snprintf(out, n, "bad op %c\n", c);
	}
}

int main(int argc, char **argv)
{
	PMEMobjpool *pop;
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL < workload\n", argv[0]);
		return 2;
	}
	if (access(argv[1], F_OK) != 0) {
		pop = pmemobj_create(argv[1], "btree", POOL_SIZE, 0666);
		if (!pop) {
			perror("pmemobj_create");
			return 1;
		}
		bt = POBJ_ROOT(pop, btree);
		D_RW(bt)->constructor(pop);
	} else {
		pop = pmemobj_open(argv[1], "btree");
		if (!pop) {
			perror("pmemobj_open");
			return 1;
		}
		bt = POBJ_ROOT(pop, btree);
#ifdef PMRACE_REOPEN
		D_RW(bt)->pmrace_reopen(pop); /* pmrace.sh adds it to btree.h */
#endif
	}
	pmrace_run(op, NULL);
	pmemobj_close(pop);
	return 0;
}
