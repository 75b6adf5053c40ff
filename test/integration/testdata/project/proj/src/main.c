// A program of a project (proj/, with its own include/) that uses a header-only library
// installed under another prefix (prefix/include/kvlib.h). TestProjectCode checks where each
// unpersisted store is reported: the library's store at the program's calls, the project's
// own header at its own line, and one store of a helper that two of its three callers leave
// unpersisted once, at the store, with both callers listed.
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>

#include "kvlib.h"
#include "own.h"

struct root {
	_Alignas(64) uint64_t a;
	_Alignas(64) uint64_t b;
	_Alignas(64) uint64_t c;
	_Alignas(64) uint64_t d;
	_Alignas(64) uint64_t e;
	_Alignas(64) uint64_t f;
};

__attribute__((noinline)) static void store_word(volatile uint64_t *p, uint64_t v)
{
	*p = v; // one finding, callers: lines 38 and 39
}

int main(int argc, char *argv[])
{
	size_t len;
	int is_pmem;
	if (argc < 2)
		return 2;
	struct root *r = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!r)
		return 1;
	kv_put(&r->a, 1); // a finding here, not in kvlib.h
	kv_put(&r->b, 2); // and one here
	store_word(&r->c, 3);
	store_word(&r->d, 4);
	store_word(&r->e, 5);
	pmem_persist(&r->e, sizeof r->e);
	own_put(&r->f, 6);
	pmem_unmap(r, len);
	return 0;
}
