/* access.c: one memory access per marked line, whose site's access TestAccess checks. */
#include <stdatomic.h>

void accesses(long *p, volatile long *v, _Atomic long *a, long *out)
{
	long x = *p; /* plain-load */
	*p = x + 1; /* plain-store */
	long y = *v; /* volatile-load */
	*v = y + 2; /* volatile-store */
	long r = atomic_load_explicit(a, memory_order_relaxed); /* relaxed-load */
	long q = atomic_load_explicit(a, memory_order_acquire); /* acquire-load */
	long c = atomic_load_explicit(a, memory_order_consume); /* consume-load */
	atomic_store_explicit(a, r, memory_order_release); /* release-store */
	atomic_store_explicit(a, q, memory_order_relaxed); /* relaxed-store */
	atomic_store_explicit(a, c, memory_order_seq_cst); /* seqcst-store */
	long s = atomic_load_explicit(a, memory_order_seq_cst); /* seqcst-load */
	long f = atomic_fetch_add_explicit(a, 1, memory_order_acq_rel); /* acqrel-rmw */
	long e = 0;
	atomic_compare_exchange_strong_explicit(a, &e, 5, memory_order_release, memory_order_relaxed); /* release-cas */
	long g = atomic_fetch_add_explicit(a, 1, memory_order_relaxed); /* relaxed-rmw */
	long h = atomic_fetch_add(a, 1); /* seqcst-rmw */
	*out = x + y + s + f + e + g + h; /* out-store */
}
