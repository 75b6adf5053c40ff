// checksum: a key-value store whose records carry a checksum, so the order in which a record's
// lines persist does not matter. `set K V` writes the value and its checksum (one cache line) and
// the `valid` flag (another), then writes both back with ONE sfence; `get K` prints the value of a
// valid record whose checksum matches, else "not found".
//
// `get` reads the value only when `valid` is set, so scry infers that the value must persist
// before the flag (must-persist-before), which one sfence breaks: an mpb-violation. But a crash
// state with the flag persisted and the value not fails the checksum and reads as "not found",
// the rolled-back outcome: the program recovers, and the finding stays unconfirmed (each key is
// set once; overwriting a value in place would need a second copy).
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#define NKEYS 16
#define MAGIC 0x5bd1e9955bd1e995ull

struct record {
	_Alignas(64) uint64_t value;
	uint64_t sum;
	_Alignas(64) uint64_t valid;
};

int main(int argc, char *argv[])
{
	if (argc != 2)
		return 2;
	size_t len;
	int is_pmem;
	struct record *recs = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (recs == NULL) {
		perror(argv[1]);
		return 1;
	}
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "set %lu %lu", &k, &v) == 2 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			r->value = v;
			r->sum = v ^ MAGIC;
			r->valid = 1;
			_mm_clwb((void *)&r->value);
			_mm_clwb((void *)&r->valid);
			_mm_sfence();
		} else if (sscanf(line, "get %lu", &k) == 1 && k < NKEYS) {
			volatile struct record *r = &recs[k];
			if (r->valid && r->sum == (r->value ^ MAGIC))
				printf("%lu = %lu\n", k, (unsigned long)r->value);
			else
				printf("%lu: not found\n", k);
		}
	}
	pmem_unmap(recs, len);
	return 0;
}
