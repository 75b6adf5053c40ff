/* A program that declares hooked library functions with types other than the library's: such
 * calls must not be hooked (the hooks would get the wrong arguments), and the pass counts them. */
#include <stddef.h>

int pmem_persist(void *addr); /* libpmem: void pmem_persist(const void *addr, size_t len) */
long pmem_drain(long how);    /* libpmem: void pmem_drain(void) */
void pmem_flush(const void *addr, size_t len); /* the library's own type: hooked */

int use(char *p) {
	pmem_flush(p, 8); // want: libcall=pmem_flush
	pmem_drain(1); // want: call=pmem_drain
	return pmem_persist(p); // want: call=pmem_persist
}
