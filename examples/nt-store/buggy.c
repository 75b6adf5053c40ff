// nt-store (buggy): a log entry is written to a raw memory-mapped file with a non-temporal store
// (movnti, the _mm_stream_si64 intrinsic), which bypasses the cache, and no sfence follows. A
// non-temporal store is durable only at its thread's next fence on every platform: under ADR
// its write-combining buffer is not in the persistence domain, and eADR, which makes the caches
// persistent, does not help a store that never went through them. The header, an ordinary
// store, needs a flush under ADR only: on an eADR platform it is durable once visible.
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

	l->header = 1; // want "unpersisted-store"; profiles adr
	_mm_stream_si64(&l->entry, 42); // want "unpersisted-store"; profiles adr,eadr
	/* missing: _mm_clwb(&l->header); _mm_sfence(); */

	munmap(l, 4096);
	return 0;
}
