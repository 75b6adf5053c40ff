/* own.h: a header of the project itself: findings inside it stay here. */
#ifndef OWN_H
#define OWN_H
#include <stdint.h>

static inline void own_put(volatile uint64_t *slot, uint64_t v)
{
	*slot = v; /* a finding here: the project's own header */
}
#endif
