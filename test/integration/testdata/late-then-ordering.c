/* late-then-ordering.c: a store made durable late, then an ordering bug, for TestReplayAssumedLate.
 * "late K V" writes line 0 back and fences, and only then stores vals[K] (pending: the next
 * "late" writes it back). "pair V" stores data, then its valid flag on another line, and writes
 * both back under one sfence: the flag may persist without the data, and "get" prints 0 (99 without the flag).
 * "fence" fences twice. With the late store assumed durable from the next operation on (scry's
 * default), the second fence of a "fence" right after a "late" has nothing pending and is no
 * crash point, so the crash points that follow are numbered differently from a literal walk. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

int main(int argc, char *argv[])
{
	volatile uint64_t *p = example_pmem(argc, argv, 4096, "late K V | fence | pair V | get, K < 8");
	volatile uint64_t *vals = p, *data = p + 8, *valid = p + 16; /* three cache lines */
	char line[64];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "late %lu %lu", &k, &v) == 2 && k < 8) {
			_mm_clwb((void *)vals);
			_mm_sfence();
			vals[k] = v;
		} else if (sscanf(line, "pair %lu", &v) == 1) {
			*data = v;
			*valid = 1;
			_mm_clwb((void *)data);
			_mm_clwb((void *)valid);
			_mm_sfence();
		} else if (strncmp(line, "fence", 5) == 0) {
			_mm_sfence();
			_mm_sfence();
		} else if (strncmp(line, "get", 3) == 0) {
			printf("%lu %lu\n", (unsigned long)vals[1], *valid ? (unsigned long)*data : 99UL);
		}
	}
	return 0;
}
