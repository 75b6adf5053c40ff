/* ext.c: "uninstrumented" code: writes PM without telling scry. */
#include <stddef.h>

void ext_write(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('A' + i % 26);
}
