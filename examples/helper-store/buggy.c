// helper-store (buggy): a record's fields are all written through one small helper,
// put_word(p, v), as PM code often is. set() persists what the helper wrote; touch() and hit()
// do not, so their stores are never durable.
//
// One store is one finding: the helper's store is reported once, at the store, with the two
// callers that left it unpersisted as related `caller` locations (the call in set() is clean and
// is not listed). With a single wrong caller the finding would be reported at that caller's line
// instead (examples/inlined-helper).
// scry: args {pool}
// scry: opt -O0 -O2
#include <libpmem.h>
#include <stdint.h>

#include "example.h"

struct record {
	_Alignas(64) uint64_t value; /* cache line 0 */
	_Alignas(64) uint64_t stamp; /* cache line 1 */
	_Alignas(64) uint64_t hits;  /* cache line 2 */
};

__attribute__((noinline)) static void put_word(uint64_t *p, uint64_t v)
{
	*p = v; // want "unpersisted-store"
}

__attribute__((noinline)) static void set(struct record *r, uint64_t v)
{
	put_word(&r->value, v);
	pmem_persist(&r->value, sizeof r->value);
}

__attribute__((noinline)) static void touch(struct record *r, uint64_t t)
{
	put_word(&r->stamp, t); // related caller
}

__attribute__((noinline)) static void hit(struct record *r)
{
	put_word(&r->hits, r->hits + 1); // related caller
}

int main(int argc, char *argv[])
{
	struct record *r = example_pmem(argc, argv, 4096, NULL);
	set(r, 42);
	touch(r, 7);
	hit(r);
	pmem_unmap(r, 4096);
	return 0;
}
