// missing-fence (buggy): a value is written to a raw memory-mapped file and written back with
// clwb (compiler intrinsic), but no sfence follows: clwb's write-back is only guaranteed complete
// at the next fence, and the program unmaps the file without one.
// scry: pm *.pool
// scry: args {pool}
#include <immintrin.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

int main(int argc, char *argv[])
{
	volatile uint64_t *counter = example_mmap(argc, argv, 4096, NULL);

	*counter = 7; // want "unpersisted-store"
	_mm_clwb((void *)counter);
	/* missing: _mm_sfence(); */

	munmap((void *)counter, 4096);
	return 0;
}
