// atomicity (fixed): the same two balances, with `transfer` made failure-atomic by a redo log on
// one cache line: the new balances and a commit flag are written to the log (same line, so they
// persist in program order: the flag never persists before the values), clwb + sfence (the commit
// point); then the balances are written, clwb + sfence; then the flag is cleared, clwb + sfence.
// At start-up, a log whose flag is set is applied again (recovery).
//
// Why no crash state fails: before the first sfence the log line persists a prefix of its three
// stores; unless the flag is in it the balances are untouched (rolled back), and if it is, the
// values are too and recovery applies them (committed). At the second sfence the committed log
// is durable, so whatever subset of the balance lines persisted, recovery rewrites both
// (committed). At the third, the flag set or cleared both give the new balances (committed).
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 4096
#define NACCOUNTS 2

struct bank {
	_Alignas(64) int64_t balance[NACCOUNTS][8]; /* balance[i][0]: one cache line per account */
	_Alignas(64) struct {
		int64_t value[NACCOUNTS]; /* the new balances */
		uint64_t committed;       /* same cache line: persists after the values */
	} log;
};

/* Writes the logged balances back and clears the log, each step durable. */
static void apply_log(volatile struct bank *bk)
{
	for (unsigned i = 0; i < NACCOUNTS; i++) {
		bk->balance[i][0] = bk->log.value[i];
		_mm_clwb((void *)&bk->balance[i][0]);
	}
	_mm_sfence();
	bk->log.committed = 0;
	_mm_clwb((void *)&bk->log);
	_mm_sfence();
}

int main(int argc, char *argv[])
{
	volatile struct bank *bk = example_pmem(argc, argv, POOL_SIZE, "transfer A B N | print, A, B < %d", NACCOUNTS);
	if (bk->log.committed) /* recovery: redo a committed transfer */
		apply_log(bk);

	char line[256];
	unsigned a, b;
	long n;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "transfer %u %u %ld", &a, &b, &n) == 3 && a < NACCOUNTS &&
		    b < NACCOUNTS && a != b) {
			int64_t value[NACCOUNTS];
			for (unsigned i = 0; i < NACCOUNTS; i++)
				value[i] = bk->balance[i][0];
			value[a] -= n;
			value[b] += n;
			for (unsigned i = 0; i < NACCOUNTS; i++)
				bk->log.value[i] = value[i];
			bk->log.committed = 1;
			_mm_clwb((void *)&bk->log);
			_mm_sfence();
			apply_log(bk);
		} else if (line[0] == 'p') {
			int64_t total = 0;
			for (unsigned i = 0; i < NACCOUNTS; i++) {
				printf("account %u: %ld\n", i, (long)bk->balance[i][0]);
				total += bk->balance[i][0];
			}
			printf("total: %ld\n", (long)total);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap((void *)bk, POOL_SIZE);
	return 0;
}
