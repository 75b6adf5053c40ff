/* obj.c: a libpmemobj program with the hooks the pass would emit: create a pool, a committed
 * transaction, an aborted one, an atomic allocation, close. Usage: obj POOL */
#include <libpmemobj.h>

#include "common.h"

enum { S_CREATE, S_ROOT, S_BEGIN, S_ADD, S_STORE, S_ALLOC, S_PROCESS, S_END, S_ABORT, S_ZALLOC, S_CLOSE, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "pmemobj_create"),
	SITE(SCRY_SITE_LIBCALL, "main", 2, "pmemobj_root"),
	SITE(SCRY_SITE_LIBCALL, "main", 3, "pmemobj_tx_begin"),
	SITE(SCRY_SITE_LIBCALL, "main", 4, "pmemobj_tx_add_range_direct"),
	SITE(SCRY_SITE_STORE, "main", 5, ""),
	SITE(SCRY_SITE_LIBCALL, "main", 6, "pmemobj_tx_alloc"),
	SITE(SCRY_SITE_LIBCALL, "main", 7, "pmemobj_tx_process"),
	SITE(SCRY_SITE_LIBCALL, "main", 8, "pmemobj_tx_end"),
	SITE(SCRY_SITE_LIBCALL, "main", 9, "pmemobj_tx_abort"),
	SITE(SCRY_SITE_LIBCALL, "main", 10, "pmemobj_zalloc"),
	SITE(SCRY_SITE_LIBCALL, "main", 11, "pmemobj_close"),
};
static uint32_t B;

struct root {
	uint64_t a, b;
	PMEMoid obj;
};

static void store64(uint64_t *p, uint64_t v)
{
	*p = v;
	__scry_store(B + S_STORE, p, 8);
}

/* One transaction: add root, set a and b, allocate; commit or abort. */
static void tx(PMEMobjpool *pop, struct root *rt, uint64_t v, int abort_it)
{
	jmp_buf env;
	if (setjmp(env) == 0) {
		__scry_pre_pmemobj_tx_begin(B + S_BEGIN, pop, env);
		int rc = pmemobj_tx_begin(pop, env, TX_PARAM_NONE);
		__scry_post_pmemobj_tx_begin(B + S_BEGIN, rc, pop, env);
		__scry_pre_pmemobj_tx_add_range_direct(B + S_ADD, rt, sizeof *rt);
		rc = pmemobj_tx_add_range_direct(rt, sizeof *rt);
		__scry_post_pmemobj_tx_add_range_direct(B + S_ADD, rc, rt, sizeof *rt);
		store64(&rt->a, v);
		store64(&rt->b, v * 2);
		__scry_pre_pmemobj_tx_alloc(B + S_ALLOC, 100, 1);
		PMEMoid o = pmemobj_tx_alloc(100, 1);
		__scry_post_pmemobj_tx_alloc(B + S_ALLOC, o.pool_uuid_lo, o.off, 100, 1);
		rt->obj = o;
		__scry_store(B + S_STORE, &rt->obj, sizeof rt->obj);
		if (abort_it) {
			__scry_pre_pmemobj_tx_abort(B + S_ABORT, 42);
			pmemobj_tx_abort(42); /* longjmps */
		}
	}
	while (pmemobj_tx_stage() != TX_STAGE_NONE) {
		__scry_pre_pmemobj_tx_process(B + S_PROCESS);
		pmemobj_tx_process();
		__scry_post_pmemobj_tx_process(B + S_PROCESS);
	}
	__scry_pre_pmemobj_tx_end(B + S_END);
	int rc = pmemobj_tx_end();
	__scry_post_pmemobj_tx_end(B + S_END, rc);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	B = __scry_register_module(sites, N_SITES);
	__scry_pre_pmemobj_create(B + S_CREATE, argv[1], "scrytest", PMEMOBJ_MIN_POOL, 0644);
	PMEMobjpool *pop = pmemobj_create(argv[1], "scrytest", PMEMOBJ_MIN_POOL, 0644);
	__scry_post_pmemobj_create(B + S_CREATE, pop, argv[1], "scrytest", PMEMOBJ_MIN_POOL, 0644);
	if (!pop) {
		fprintf(stderr, "pmemobj_create: %s\n", pmemobj_errormsg());
		return 100;
	}
	__scry_pre_pmemobj_root(B + S_ROOT, pop, sizeof(struct root));
	PMEMoid root = pmemobj_root(pop, sizeof(struct root));
	__scry_post_pmemobj_root(B + S_ROOT, root.pool_uuid_lo, root.off, pop, sizeof(struct root));
	struct root *rt = pmemobj_direct(root);

	tx(pop, rt, 7, 0);
	tx(pop, rt, 9, 1);

	PMEMoid z;
	__scry_pre_pmemobj_zalloc(B + S_ZALLOC, pop, &z, 64, 2);
	int rc = pmemobj_zalloc(pop, &z, 64, 2);
	__scry_post_pmemobj_zalloc(B + S_ZALLOC, rc, pop, &z, 64, 2);

	printf("a=%llu b=%llu\n", (unsigned long long)rt->a, (unsigned long long)rt->b);
	__scry_pre_pmemobj_close(B + S_CLOSE, pop);
	pmemobj_close(pop);
	__scry_post_pmemobj_close(B + S_CLOSE, pop);
	return 0;
}
