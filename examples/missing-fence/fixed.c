// missing-fence (fixed): clwb (compiler intrinsic) followed by sfence makes the value durable
// before the file is unmapped.
// scry: pm *.pool
// scry: args {pool}
#include <immintrin.h>
#include <stdint.h>
#include <sys/mman.h>

#include "example.h"

int main(int argc, char *argv[])
{
	volatile uint64_t *counter = example_mmap(argc, argv, 4096, NULL);

	*counter = 7;
	_mm_clwb((void *)counter);
	_mm_sfence();

	munmap((void *)counter, 4096);
	return 0;
}
