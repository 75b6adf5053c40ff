// nt-store (fixed): the header is written back with clwb and one sfence orders it and the
// non-temporal store: both are durable before the file is unmapped, under ADR and under eADR.
// (Under eADR alone the clwb is unnecessary; checked under both, it is not reported.)
// scry: pm *.pool
// scry: args {pool}
// scry: persistency all
#include <immintrin.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

struct log {
	_Alignas(64) uint64_t header; /* cache line 0 */
	_Alignas(64) long long entry; /* cache line 1 */
};

int main(int argc, char *argv[])
{
	struct log *l = example_mmap(argc, argv, 4096, NULL);

	l->header = 1;
	_mm_stream_si64(&l->entry, 42);
	_mm_clwb(&l->header);
	_mm_sfence();

	munmap(l, 4096);
	return 0;
}
