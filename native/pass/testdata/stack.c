/* Stores that never write PM are no sites: into locals, globals, errno, byval arguments, and
 * through the pointer arguments of static functions that every call passes a local or null
 * (recursive calls passing it on).
 * A copy into such memory from memory that may be PM is a load site; a copy into memory that may
 * be PM stays a range site. */
#include <errno.h>
#include <string.h>

struct item {
	long key;
	void *value;
	long pad;
};

struct item global_item;
void sink(struct item *); /* the locals escape, so the copies stay copies at -O2 */

void into_local(struct item *pm, int i) {
	struct item sep = pm[i]; // want: load want-not: range store
	sink(&sep);
}

void into_global(struct item *pm, int i) {
	global_item = pm[i]; // want: load want-not: range store
}

void local_to_local(const struct item *in) {
	struct item a, b;
	memcpy(&a, in, sizeof a);
	memset(&b, 0, sizeof b); // want-none
	memcpy(&b, &a, sizeof a); // want-none
	sink(&b);
}

void either_local(struct item *pm, int c, size_t n) {
	struct item a, b;
	memcpy(c ? &a : &b, pm, n); // want: load want-not: range
	sink(&a);
	sink(&b);
}

void into_byval(struct item it, const struct item *pm) {
	it = *pm; // want: load want-not: range store
	sink(&it);
}

void local_or_pm(struct item *pm, const struct item *src, int c, size_t n) {
	struct item a;
	memcpy(c ? &a : pm, src, n); // want: range
	sink(&a);
}

void into_pm(struct item *pm, int i) {
	pm[i] = pm[i + 1]; // want: range
}

/* find_slot's p points to its caller's local in every call, itself included; maybe_null's parent
 * to a local or nowhere; maybe_local's q not, since one caller passes memory that may be PM. */
static __attribute__((noinline)) int find_slot(const long *keys, int n, long key, int *p) {
	for (int i = 0; i < n; i++) {
		*p = i; // want-not: store
		if (keys[i] >= key) // want: load
			return i == 0 || n < 2 ? i : find_slot(keys + 1, n - 1, key, p);
	}
	return -1;
}

static __attribute__((noinline)) void maybe_local(int *q, int v) {
	*q = v; // want: store
}

static __attribute__((noinline)) void maybe_null(int *parent, int v) {
	if (parent)
		*parent = v; // want-not: store
}

int slots(const long *keys, int n, long key, int *pm) {
	int slot = 0, other = 0;
	int r = find_slot(keys, n, key, &slot);
	maybe_null(&slot, r);
	maybe_null(0, r);
	maybe_local(&other, r);
	maybe_local(pm, r);
	if (r < 0)
		errno = EINVAL; // want-not: store
	return slot + other;
}
