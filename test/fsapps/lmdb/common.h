/* Shared by the LMDB driver and checker: the keys each phase writes, the map's size and the value
 * each key holds. */
#include <stdio.h>
#include <string.h>

enum { NKEYS = 3, VALUE_SIZE = 200, MAP_SIZE = 1 << 20 };

static void value_of(const char *key, char *val)
{
	size_t n = 0;
	while (n < VALUE_SIZE) {
		int w = snprintf(val + n, VALUE_SIZE - n, "value-of-%s;", key);
		if (w < 0 || (size_t)w >= VALUE_SIZE - n)
			break;
		n += (size_t)w;
	}
	memset(val + n, '.', VALUE_SIZE - n);
}
