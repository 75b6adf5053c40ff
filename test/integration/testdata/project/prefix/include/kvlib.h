/* kvlib.h: a tiny header-only library, installed under a prefix of its own (not the project's):
 * its store is the program's when the program calls it, so findings go to the call's line. */
#ifndef KVLIB_H
#define KVLIB_H
#include <stdint.h>

static inline void kv_put(volatile uint64_t *slot, uint64_t v)
{
	*slot = v; /* never persisted: the caller's job */
}
#endif
