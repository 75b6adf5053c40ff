// fresh-node (fixed): a persistent linked list (raw PM, libpmem) built the way FAST_FAIR builds a
// new root or a split sibling and WOART a new node: `add K V` takes the next free node of an
// arena, fills it (a copy of a blank node, then its value, key and link: stores that rewrite
// bytes of the copy before anything is written back), writes the whole node back and fences,
// and only then publishes it: the list head in the header, written back and fenced. `get K`
// walks the list from the head.
//
// Until the head points to it, nothing reaches the node: a crash that persists some of its
// fields and not others leaves a node no reader can see. scry's trace analyses still see
// patterns: `get` reads a node's fields only after the link that leads to it and the key that
// matches, so inference asks for the node's fields to persist in an order and together
// (must-persist-before, must-persist-atomically: mpb-violation, mpa-violation at the link), and the
// field stores rewrite the blank copy before it was durable (overwritten-unpersisted). All are
// tested with crashes: every state that breaks the fields' order passes (the node is not
// published yet), and the blank copy's bytes are durable before any later operation, so no crash
// state can lose them. They stay warnings; nothing is a correctness finding.
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
			write_back(n, sizeof *n);
			_mm_sfence();
			p->used++;
			p->head = p->used;
			write_back(&p->head, sizeof p->head);
			_mm_sfence();
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
