// timestamped-output (fixed): the same store, every reply still starting with the time, the
// pid and a random request id, with the value made durable before the token is written: `set K
// V` writes the value, clwb + sfence, then the token, clwb + sfence. No crash state has the
// token without its value, and the fields that differ between two runs without a crash (the
// time, the pid, the request id) are not compared: scry reports nothing.
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
			_mm_clwb((void *)&r->value);
			_mm_sfence();
			r->valid = 1; // property MPB after "record"
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
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
