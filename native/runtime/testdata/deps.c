/* deps.c: dependence facts registered with the sites of three modules, and activations driven by
 * hand with __scry_call / __scry_ret, as the pass would. Each store writes its own number (1..8)
 * so the test can find it. Usage: deps POOL */
#include "common.h"

void scry_register_pm(void *base, size_t length, const char *path);

static const struct scry_site m1[] = {
	SITE(SCRY_SITE_STORE, "f", 1, ""),
	SITE(SCRY_SITE_LOAD, "f", 2, ""),
	SITE(SCRY_SITE_BRANCH, "f", 3, ""),
};
/* Two invalid facts (an index out of the table, an unknown kind) are left out of the record. */
static const struct scry_dep d1[] = {
	{1, 2, SCRY_DEP_CONTROL}, {2, 1, SCRY_DEP_VALUE}, {0, 1, SCRY_DEP_ADDRESS},
	{0, 7, SCRY_DEP_VALUE},   {0, 1, 9},
};
static const struct scry_site m2[] = {
	SITE(SCRY_SITE_CALL, "g", 4, "f"),
	SITE(SCRY_SITE_STORE, "g", 5, ""),
};
static const struct scry_dep d2[] = {{1, 0, SCRY_DEP_VALUE}};

static uint64_t *pm;
static uint32_t S; /* the store site */

static void store(uint64_t v)
{
	pm[v] = v;
	__scry_store(S, &pm[v], 8);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	__scry_register_module_deps(m1, 3, d1, 5);
	uint32_t b2 = __scry_register_module_deps(m2, 2, d2, 1);
	__scry_register_module_deps(m2, 2, NULL, 0); /* no DEPS record */
	uint32_t call = b2;
	S = b2 + 1;
	pm = map_file(argv[1], 4096, NULL, 0);
	scry_register_pm(pm, 4096, argv[1]);

	uint32_t d0 = __scry_enter();
	store(1); /* [] */
	__scry_call(d0, call); /* serial 1 */
	uint32_t d1 = __scry_enter();
	store(2); /* [1] */
	__scry_call(d1, call); /* serial 2 */
	store(3); /* [1 2] */
	__scry_ret(d1);
	store(4); /* [1] again */
	__scry_call(d1, call); /* serial 3: an activation without events */
	__scry_ret(d1);
	store(5); /* [1], no FRAME record needed */
	__scry_ret(d0);
	store(6); /* [] */
	for (uint32_t i = 0; i < 300; i++)
		__scry_call(i, call); /* serials 4..303; the first 256 are named */
	store(7); /* [4 .. 259] */
	__scry_ret(0);
	store(8); /* [] */
	return 0;
}
