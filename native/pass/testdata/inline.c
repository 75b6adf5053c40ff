// A persistence helper inlined at two callers, both inlined into main at -O2 (TestInlinedChains:
// line numbers matter).
#include <immintrin.h>
#include <stdint.h>

struct rec { uint64_t a, b; };
static inline void persist(void *p) { _mm_clflush(p); _mm_sfence(); }
void sink(struct rec *);

static void set_a(struct rec *r) { r->a = 1; persist(&r->a); }
static void set_b(struct rec *r) { r->b = 2; persist(&r->b); }

int main(void) {
	static struct rec r;
	set_a(&r);
	set_b(&r);
	sink(&r);
	return 0;
}
