// fresh-node (buggy): the list of the fixed twin, with the node published in the same write-back
// as its contents: `add` stores the head, writes back the node's lines and the header together
// and fences once. A crash before that fence can persist the head and the node's key without its
// value: a later `get` of the key prints 0 (ordering-violation at the fence). The inferred
// property that the value persists before the head (mpb-violation at the head) is confirmed by
// those states: they fail, the same states with the head put in order (the node persisted before
// it) pass, and they fail again with only the value left behind. The one that the value persists
// before the arena counter stays a warning: the counter precedes the head on the header's cache
// line, so no twin can leave the counter behind without the head, and the states that persist
// the counter alone pass (the node is taken but unreachable). The properties inside the node stay
// warnings, as in the fixed twin: states that break them fail only when the head is persisted
// too, and then not because of them.
// scry: args {pool}
// scry: workload workload.txt
#include <immintrin.h>
#include <libpmem.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 8192
#define NNODES 16

struct node {
	_Alignas(64) uint64_t value; /* the node's first cache line */
	_Alignas(64) uint64_t key;   /* its second: key and link */
	uint64_t next;               /* index + 1 of the next node, 0: the end */
};

struct pool {
	_Alignas(64) uint64_t head; /* index + 1 of the first node, 0: empty */
	uint64_t used;              /* nodes taken from the arena */
	struct node nodes[NNODES];
};

static const struct node blank = {0};

static void write_back(volatile void *p, size_t n)
{
	for (size_t off = 0; off < n; off += 64)
		_mm_clwb((char *)p + off);
}

int main(int argc, char *argv[])
{
	struct pool *p = example_pmem(argc, argv, POOL_SIZE, "add K V | get K");
	char line[256];
	unsigned long k, v;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "add %lu %lu", &k, &v) == 2 && p->used < NNODES) {
			volatile struct node *n = &p->nodes[p->used];
			memcpy((void *)n, &blank, sizeof blank);
			n->value = v;      // want "overwritten-unpersisted:unconfirmed"
			n->key = k;        // want "overwritten-unpersisted:unconfirmed mpb-violation:unconfirmed"
			n->next = p->head; // want "overwritten-unpersisted:unconfirmed mpb-violation:unconfirmed mpa-violation:unconfirmed"
			p->used++;         // want "mpb-violation:unconfirmed"
			p->head = p->used; // want "mpb-violation"
			write_back(n, sizeof *n);
			write_back(&p->head, sizeof p->head);
			_mm_sfence(); // want "ordering-violation"
		} else if (sscanf(line, "get %lu", &k) == 1) {
			uint64_t i = p->head;
			while (i != 0 && p->nodes[i - 1].key != k)
				i = p->nodes[i - 1].next;
			if (i != 0)
				printf("%lu = %lu\n", k, (unsigned long)p->nodes[i - 1].value);
			else
				printf("%lu: not found\n", k);
		} else {
			fprintf(stderr, "bad operation: %s", line);
			return 1;
		}
	}
	pmem_unmap(p, POOL_SIZE);
	return 0;
}
