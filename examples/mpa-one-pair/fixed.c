// mpa-one-pair (fixed): the record of the buggy twin, with field a made durable before the other
// nine are written (clwb + sfence), as `get`'s guarded read needs. The other nine are still
// written back behind one sfence: scry still infers, from `scan`'s chain of guarded reads, that
// they must persist in order and together, and reports the stores that break those properties
// (mpb-violation, mpa-violation). No crash state that breaks them makes the program fail (`scan`
// prints nothing that depends on them), so every one stays a warning.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define POOL_SIZE 8192
#define NKEYS 4

struct record {
	_Alignas(64) uint64_t a;
	_Alignas(64) uint64_t b;
	_Alignas(64) uint64_t c;
	_Alignas(64) uint64_t d;
	_Alignas(64) uint64_t e;
	_Alignas(64) uint64_t f;
	_Alignas(64) uint64_t g;
	_Alignas(64) uint64_t h;
	_Alignas(64) uint64_t i;
	_Alignas(64) uint64_t j;
};

int main(int argc, char *argv[])
{
	struct record *recs = example_pmem(argc, argv, POOL_SIZE, "set K V | get K | scan, K < %d, V > 0", NKEYS);
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS && v > 0) {
			volatile struct record *r = &recs[k];
			r->a = v;
			_mm_clwb((void *)&r->a);
			_mm_sfence();
			r->b = 1;
			r->c = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->d = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->e = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->f = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->g = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->h = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->i = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->j = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			for (int n = 1; n < 10; n++)
				_mm_clwb((char *)r + 64 * n);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->b)
				printf("%lu = %lu\n", k, (unsigned long)r->a);
			else
				printf("%lu: not found\n", k);
		} else if (line[0] == 's') {
			/* Walks the chain of fields; what it finds is not printed. */
			volatile uint64_t sum = 0;
			for (k = 0; k < NKEYS; k++) {
				volatile struct record *r = &recs[k];
				if (r->c)
					sum += r->b;
				if (r->d)
					sum += r->c;
				if (r->e)
					sum += r->d;
				if (r->f)
					sum += r->e;
				if (r->g)
					sum += r->f;
				if (r->h)
					sum += r->g;
				if (r->i)
					sum += r->h;
				if (r->j)
					sum += r->i;
				if (r->a)
					sum += r->j;
			}
			printf("scanned\n");
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(recs, POOL_SIZE);
	return 0;
}
