/* txsum.c: a libpmemobj pool holding a ring of 16 values, their count and their sum; "a V"
 * appends V in one transaction, "m V K" appends V, V+1, ..., V+K-1, each in a transaction of its
 * own (as mapcli's `n K` inserts its keys), "p" prints the count, the sum and whether the sum
 * matches the values. Every crash state of the fixed program recovers (PMDK's undo log) to the state before
 * or after its transaction, so its runs on crash images converge with a legal outcome's state
 * at their first read. -DBUGGY leaves the sum out of the transaction (no TX_ADD): a crash can
 * persist the new sum and roll the rest back, and "p" then prints a mismatch. */
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

struct root {
	uint64_t n, sum;
	uint64_t vals[16];
};

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	PMEMobjpool *pop = access(argv[1], F_OK) == 0 ? pmemobj_open(argv[1], "txsum")
						       : pmemobj_create(argv[1], "txsum", PMEMOBJ_MIN_POOL, 0600);
	if (!pop) {
		perror(argv[1]);
		return 1;
	}
	struct root *r = pmemobj_direct(pmemobj_root(pop, sizeof(struct root)));
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		unsigned long v, k = 1;
		if (sscanf(line, "a %lu", &v) == 1 || sscanf(line, "m %lu %lu", &v, &k) == 2) {
			for (unsigned long j = 0; j < k; j++, v++) {
				TX_BEGIN(pop) {
					pmemobj_tx_add_range_direct(&r->n, sizeof r->n);
					pmemobj_tx_add_range_direct(&r->vals[r->n % 16], sizeof r->vals[0]);
#ifndef BUGGY
					pmemobj_tx_add_range_direct(&r->sum, sizeof r->sum);
#endif
					r->vals[r->n % 16] = v;
					r->sum += v;
					r->n++;
				}
				TX_END
			}
		} else if (line[0] == 'p') {
			uint64_t s = 0;
			for (uint64_t i = 0; i < r->n && i < 16; i++)
				s += r->vals[i];
			printf("n=%lu sum=%lu %s\n", (unsigned long)r->n, (unsigned long)r->sum, s == r->sum ? "ok" : "MISMATCH");
		}
	}
	pmemobj_close(pop);
	return 0;
}
