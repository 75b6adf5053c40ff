/* Library calls: hooked PMDK and libc functions, external calls, indirect calls. */
#include <libpmem.h>
#include <libpmemobj.h>
#include <stdio.h>
#include <string.h>

struct root { char buf[64]; long n; };

extern void ext_fill(char *p, int n); /* defined elsewhere: not instrumented here */
void (*fill_fn)(char *, int);

long use_pmdk(PMEMobjpool *pop, char *dst, const char *src, int n) {
	PMEMoid oid = pmemobj_root(pop, sizeof(struct root)); // want: libcall=pmemobj_root
	struct root *r = pmemobj_direct(oid);
	pmemobj_tx_add_range(oid, 0, sizeof(struct root)); // want: libcall=pmemobj_tx_add_range
	r->n = n; // want: store
	pmem_persist(&r->n, sizeof(r->n)); // want: libcall=pmem_persist
	ext_fill(r->buf, n); // want: call=ext_fill
	fill_fn(r->buf, n); // want: call
	snprintf(dst, 8, "%d", n); // want: libcall=snprintf
	return (long)strlen(src) + r->n; // want: load
}
