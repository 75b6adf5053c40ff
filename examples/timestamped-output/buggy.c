// timestamped-output (buggy): the `ordering` key-value store, but every reply starts with the
// time in nanoseconds, the process id and a request id drawn from rand() seeded with both, as
// servers log their requests: `[1764111071.123456789 pid 4242 req 5a0c31f2] 1 = 10`. No two
// runs print the same line, crash or no crash. `set K V` writes the value and the token, then
// writes both lines back with clwb and ONE sfence; `get K` prints the value of a valid record.
//
// Before it judges a crash state whose re-execution prints something no legal outcome printed,
// scry runs each legal outcome a second time on the same consistent image and leaves out of
// the comparison the fields that differ between the two runs (here the time, the pid and the
// request id), and only those: the rest of each line is still compared. So the real bug is
// still found: at the crash point before the sfence the token's line may reach PM while the
// value's line does not, and the later `get 1` then prints `... 1 = 0` where the legal
// outcomes print `... 1 = 10` (committed) or `... 1: not found` (rolled back): an ordering
// violation at the sfence. As in `ordering`, the guarded read also gives an mpb-violation at
// the token store.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "example.h"

#define POOL_SIZE 4096
#define NKEYS 16

struct record {
	_Alignas(64) uint64_t value; /* cache line 2K */
	_Alignas(64) uint64_t valid; /* cache line 2K+1: the token guarding value */
};

/* stamp prints the start of a reply: the time, the pid and a random request id. */
static void stamp(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("[%ld.%09ld pid %d req %08x] ", (long)ts.tv_sec, ts.tv_nsec, (int)getpid(), (unsigned)rand());
}

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K, K < %d", NKEYS);
	struct timespec seed;
	clock_gettime(CLOCK_REALTIME, &seed);
	srand((unsigned)(seed.tv_nsec ^ getpid()));

	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v; // property MPB before "record"
			r->valid = 1; // want "mpb-violation"; property MPB after "record"
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence(); // want "ordering-violation"
			stamp();
			printf("%lu set\n", k);
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			stamp();
			if (r->valid)
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
