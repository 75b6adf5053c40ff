/* Flush and fence intrinsics, non-temporal stores, atomics, mem intrinsics. */
#include <immintrin.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

void flushes(char *p) {
	_mm_clflush(p); // want: flush
	_mm_clflushopt(p + 64); // want: flush
	_mm_clwb(p + 128); // want: flush
	_mm_sfence(); // want: fence
	_mm_mfence(); // want: fence
}

void streams(long long *p, int *q, long long v) {
	_mm_stream_si64(p, v); // want: nt-store
	_mm_stream_si32(q, (int)v); // want: nt-store
}

long atomics(_Atomic long *a, long *b, long v) {
	long old = atomic_fetch_add(a, v); // want: rmw
	__sync_bool_compare_and_swap(b, old, v); // want: rmw
	atomic_thread_fence(memory_order_seq_cst); // want: fence
	atomic_thread_fence(memory_order_acquire);
	return old;
}

void copies(char *dst, const char *src, size_t n) {
	memcpy(dst, src, n); // want: range
	memmove(dst + 1, dst, n); // want: range
	memset(dst, 0, n); // want: range
}

void plain(long *p, long v) {
	long local[4] = {0};
	local[v & 3] = v; // want-none
	p[0] = v + local[1]; // want: store
	p[1] = p[2] * 3; // want: store load
}
