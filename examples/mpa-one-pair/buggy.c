// mpa-one-pair (buggy): a record of ten fields, each on its own cache line, that `set K` writes one
// statement each and writes back with clwb, all behind ONE sfence. `get K` prints field a when
// field b is set (the record's one real guarded read: a must persist before b); `scan` reads the
// fields along a chain of guarded reads (if c then b, if d then c, ..., if a then j), only to add
// them up, and prints nothing that depends on them.
//
// From those reads scry infers a must-persist-before property for every link of the chain and,
// since the chain is a cycle, one must-persist-atomically property over all ten fields: each of
// the ten stores in flight with the others outside a transaction breaks it (mpa-violation), and
// the links break their must-persist-before properties (mpb-violation). One pair matters: b
// persisted without a makes `get` print a value never written (ordering-violation at the
// sfence). scry confirms each finding by its own pair of stores: a state that breaks the pair must
// fail, the same state without the store persisted too early must pass, and the state with every
// earlier store persisted but the pair's must fail again. Only the findings at b, whose pair is
// (a, b), are confirmed; the other eight fields' findings stay warnings: the states that break
// their pairs recover, or fail only because of (a, b).
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
			r->b = 1; // want "mpa-violation mpb-violation"
			r->c = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->d = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->e = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->f = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->g = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->h = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->i = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			r->j = 1; // want "mpa-violation:unconfirmed mpb-violation:unconfirmed"
			for (int n = 0; n < 10; n++)
				_mm_clwb((char *)r + 64 * n);
			_mm_sfence(); // want "ordering-violation"
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
