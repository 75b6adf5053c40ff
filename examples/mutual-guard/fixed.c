// mutual-guard (fixed): the same two-way index, with bind() writing both sides in one libpmemobj
// transaction that adds both to its undo log (pmemobj_tx_add_range_direct): a crash before the
// commit rolls both back, and at the commit both are durable together. The inferred properties
// are the same (the readers have not changed): the MPA pair holds, since both stores are
// protected by the same transaction, and so do the two MPB properties, since both stores persist
// at one commit. No finding.
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
	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(&ix->fwd[name], sizeof ix->fwd[name]);
		pmemobj_tx_add_range_direct(&ix->rev[id], sizeof ix->rev[id]);
		ix->fwd[name] = id; // property MPB,RO3 after "rev-fwd"; property MPB,RO3 before "fwd-rev"; property MPA member "pair"
		ix->rev[id] = name; // property MPB,RO3 before "rev-fwd"; property MPB,RO3 after "fwd-rev"; property MPA member "pair"
	} TX_END
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
