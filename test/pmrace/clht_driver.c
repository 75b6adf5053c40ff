/*
 * clht_driver.c: scry's two-thread driver for P-CLHT (RECIPE, with PMRace's patch), in place of
 * PMRace's P-CLHT/driver.cpp (test/pmrace/pmrace.sh says why). Like PMRace's driver it opens or
 * creates the pool named by PMEM_POOL through clht_create(2) (set here from argv[1]), gives each
 * thread clht_gc_thread_init, and runs PMRace's commands, keys and values in hex:
 *   i K V  clht_put      prints "i K <returned int>"
 *   u K V  clht_update   prints "u K <returned int>"
 *   d K    clht_remove   prints "d K <removed value>"
 *   g K    clht_get      prints "g K <value>"
 * Usage: clht_driver POOL < workload
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "clht_lb_res.h"
#include "pmrace_rounds.h"

static clht_t *ht;

static void init(int tid) { clht_gc_thread_init(ht, tid); }

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
	case 'i': snprintf(out, n, "i %lx %d\n", k, clht_put(ht, k, v)); break;
	case 'u': snprintf(out, n, "u %lx %d\n", k, clht_update(ht, k, v)); break;
	case 'd': snprintf(out, n, "d %lx %lx\n", k, (unsigned long)clht_remove(ht, k)); break;
	case 'g': snprintf(out, n, "g %lx %lx\n", k, (unsigned long)clht_get(ht, k)); break;
	default: snprintf(out, n, "bad op %c\n", c);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL < workload\n", argv[0]);
		return 2;
	}
	setenv("PMEM_POOL", argv[1], 1);
	ht = clht_create(2);
	if (!ht)
		return 1;
	pmrace_run(op, init);
	return 0;
}
