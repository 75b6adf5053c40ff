/*
 * ex_common.h -- the few helpers PMDK's examples take from PMDK's source tree
 * (src/examples/ex_common.h), which Debian's libpmemobj-dev does not ship. Written for scry from
 * what the examples use: file_exists, CREATE_MODE_RW, find_last_set_64, MIN and MAX. POSIX only.
 */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/* Mode of pool files the examples create: read and write for the owner. */
#define CREATE_MODE_RW (S_IWUSR | S_IRUSR)

/* file_exists -- 0 when file exists, -1 (errno set) otherwise, like access(2). */
static inline int
file_exists(char const *file)
{
	return access(file, F_OK);
}

/* find_last_set_64 -- position of the most significant set bit of val, -1 when val is 0. */
static inline int
find_last_set_64(uint64_t val)
{
	if (val == 0)
		return -1;
	return 64 - __builtin_clzll(val) - 1;
}

#ifdef __cplusplus
}
#endif

#endif /* EX_COMMON_H */
