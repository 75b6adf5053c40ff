// mutual-guard (buggy): a two-way index in libpmemobj's root object: fwd[name] is the id bound to
// a name, rev[id] the name bound to an id (names and ids 1..7, 0: unbound). The readers use each
// side to guard the other: by_name() reads fwd[name] and, only when it is bound, rev[id] to check
// the binding; by_id() reads rev[id] and, only when bound, fwd[name]. bind() writes fwd and rev,
// then flushes both and drains once (pmemobj_flush, pmemobj_flush, pmemobj_drain).
//
// Each reader gives a must-persist-before property (a load control dependent on another load,
// dissertation §5.3): by_name() says the rev store must persist before the fwd store, by_id() the
// opposite. Together they form a cycle in the graph of MPB properties, which no order of the two
// stores can satisfy: the stores must persist atomically (MPA, the strongly connected component,
// §5.2.5). bind() lets either store reach PM without the other (the two lines are written back in
// any order before the drain), so a crash there leaves the index broken: an mpa-violation, located
// at the later store of the pair (rev), and an mpb-violation there too (fwd must persist before
// rev, and the rev store can persist while fwd is not yet durable). Every store is durable at
// exit: no trace oracle fires.
//
// scry's trace check pairs an MPB property's later store only with earlier stores of the same
// operation (docs/inference.md): a bind() that persisted fwd completely before even writing rev
// would break the index the same way, but only crash exploration reports that shape.
//
// main() runs a fixed sequence of operations, each bracketed by scry_op_begin/scry_op_end
// (<scry.h>), so that properties are checked within one operation.
// scry: args {pool}
// scry: exact-properties MPB MPA
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>

#include <scry.h> /* `scry cc` adds its include directory */

#include "example.h"

#define N 8

struct index {
	uint64_t fwd[N]; /* name -> id */
	uint64_t rev[N]; /* id -> name */
};

POBJ_LAYOUT_BEGIN(index);
POBJ_LAYOUT_ROOT(index, struct index);
POBJ_LAYOUT_END(index);

static PMEMobjpool *pop;
static struct index *ix;

static void bind(uint64_t name, uint64_t id)
{
	ix->fwd[name] = id; // property MPB,RO3 after "rev-fwd"; property MPB,RO3 before "fwd-rev"; property MPA member "pair"
	ix->rev[id] = name; // want "mpa-violation mpb-violation"; property MPB,RO3 before "rev-fwd"; property MPB,RO3 after "fwd-rev"; property MPA member "pair"
	pmemobj_flush(pop, &ix->fwd[name], sizeof ix->fwd[name]);
	pmemobj_flush(pop, &ix->rev[id], sizeof ix->rev[id]);
	pmemobj_drain(pop);
}

static void by_name(uint64_t name)
{
	uint64_t id = ix->fwd[name];
	if (id != 0) {
		uint64_t back = ix->rev[id]; /* guarded by fwd[name] */
		printf("name %lu: id %lu%s\n", (unsigned long)name, (unsigned long)id,
		       back == name ? "" : " (index broken)");
	} else {
		printf("name %lu: unbound\n", (unsigned long)name);
	}
}

static void by_id(uint64_t id)
{
	uint64_t name = ix->rev[id];
	if (name != 0) {
		uint64_t back = ix->fwd[name]; /* guarded by rev[id] */
		printf("id %lu: name %lu%s\n", (unsigned long)id, (unsigned long)name,
		       back == id ? "" : " (index broken)");
	} else {
		printf("id %lu: unbound\n", (unsigned long)id);
	}
}

int main(int argc, char *argv[])
{
	pop = example_pmemobj(argc, argv, POBJ_LAYOUT_NAME(index), NULL);
	TOID(struct index) root = POBJ_ROOT(pop, struct index);
	ix = D_RW(root);

	SCRY_OP_BEGIN("bind 1 5");
	bind(1, 5);
	SCRY_OP_BEGIN("bind 2 6");
	bind(2, 6);
	SCRY_OP_BEGIN("name 1");
	by_name(1);
	SCRY_OP_BEGIN("id 6");
	by_id(6);
	SCRY_OP_BEGIN("name 3");
	by_name(3);
	SCRY_OP_BEGIN("id 7");
	by_id(7);
	SCRY_OP_END();

	pmemobj_close(pop);
	return 0;
}
