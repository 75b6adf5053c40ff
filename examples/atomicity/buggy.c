// atomicity (buggy): two account balances in raw PM (libpmem's pmem_map_file, 4 KiB), each on its
// own cache line, starting at 0 (balances are signed; the total is always 0). `transfer A B N`
// moves N from account A to account B in two steps, each made durable on its own: the debit is
// written back with clflush (durable at once under x86 persistency, no fence needed), then the
// credit with clwb + sfence. `print` prints the balances and their total.
//
// The trace oracles see nothing: every store is durable before the next operation. The bug is
// only visible after a crash: the operation is not failure-atomic. Two crash points show it. Before
// the clflush, the debit may already have reached PM by an eviction while the credit is not even
// written; before the sfence, the debit is durable and the credit is pending. In both, the state
// where the credit has not persisted (a program-order prefix: no reordering needed) leaves the
// money debited and never credited, so the later `print` shows a total of -N, unlike both legal
// outcomes (transfer committed or rolled back, total 0): one atomicity violation, one root cause
// (the transfer's path is not failure-atomic), located at the first crash point that fails, with
// the other as a variant (a fix must cover both windows: a log, as the fixed twin has).
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
	_Alignas(64) int64_t balance; /* one cache line per account */
};

int main(int argc, char *argv[])
{
	struct bank *acct = example_pmem(argc, argv, POOL_SIZE, "transfer A B N | print, A, B < %d", NACCOUNTS);

	char line[256];
	unsigned a, b;
	long n;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "transfer %u %u %ld", &a, &b, &n) == 3 && a < NACCOUNTS &&
		    b < NACCOUNTS && a != b) {
			volatile int64_t *from = &acct[a].balance, *to = &acct[b].balance;
			*from -= n;
			_mm_clflush((void *)from); // want "atomicity-violation"
			*to += n;
			_mm_clwb((void *)to);
			_mm_sfence();
		} else if (line[0] == 'p') {
			int64_t total = 0;
			for (unsigned i = 0; i < NACCOUNTS; i++) {
				volatile int64_t *bal = &acct[i].balance;
				printf("account %u: %ld\n", i, (long)*bal);
				total += *bal;
			}
			printf("total: %ld\n", (long)total);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(acct, POOL_SIZE);
	return 0;
}
