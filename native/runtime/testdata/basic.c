/* basic.c: stores, flushes, fences, a range store, an atomic, an external write, operations read
 * from stdin and a store scry never heard of (found at exit), on a file registered with
 * scry_register_pm. Exits with status 3. Usage: basic POOL < lines */
#include "common.h"

void scry_register_pm(void *base, size_t length, const char *path);
void ext_write(char *p, size_t n);

enum { S_STORE, S_FLUSH, S_FENCE, S_PERSIST, S_MEMCPY, S_RMW, S_EXT, S_CALL, S_FGETS, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_STORE, "setter", 10, ""),
	SITE(SCRY_SITE_FLUSH, "main", 11, ""),
	SITE(SCRY_SITE_FENCE, "main", 12, ""),
	SITE(SCRY_SITE_LIBCALL, "main", 13, "pmem_persist"),
	SITE(SCRY_SITE_LIBCALL, "main", 14, "memcpy"),
	SITE(SCRY_SITE_RMW, "main", 15, ""),
	SITE(SCRY_SITE_CALL, "main", 16, "ext_write"),
	SITE(SCRY_SITE_CALL, "main", 17, "setter"),
	SITE(SCRY_SITE_LIBCALL, "main", 18, "fgets"),
};
static uint32_t B;

static void setter(char *pm)
{
	uint32_t depth = __scry_enter();
	(void)depth;
	uint64_t v = 0x1122334455667788ull;
	memcpy(pm + 64, &v, 8);
	__scry_store(B + S_STORE, pm + 64, 8);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	B = __scry_register_module(sites, N_SITES);
	size_t len = 1 << 20;
	char *pm = map_file(argv[1], len, "hello", 8192);
	scry_register_pm(pm, len, argv[1]);

	uint32_t depth = __scry_enter();
	__scry_call(depth, B + S_CALL);
	setter(pm);
	__scry_ret(depth);

	__scry_flush(B + S_FLUSH, pm + 64, SCRY_FLUSH_CLWB);
	__scry_fence(B + S_FENCE, SCRY_FENCE_SFENCE);
	__scry_post_pmem_persist(B + S_PERSIST, pm + 100, 100); /* lines 64, 128, 192 */

	memcpy(pm + 300, "abc", 3);
	__scry_post_memcpy(B + S_MEMCPY, pm + 300, pm + 300, "abc", 3);

	__atomic_fetch_add((uint64_t *)(pm + 512), 5, __ATOMIC_SEQ_CST);
	__scry_rmw(B + S_RMW, pm + 512, 8);

	uint32_t tok = __scry_ext_pre(B + S_EXT, (const void *)ext_write, pm + 4096, NULL, NULL, NULL);
	ext_write(pm + 4096, 300);
	__scry_ext_post(B + S_EXT, tok);

	/* Not PM: nothing recorded. */
	uint64_t local = 1;
	__scry_store(B + S_STORE, &local, 8);

	char line[256];
	char *r;
	do {
		r = fgets(line, sizeof line, stdin);
		__scry_post_fgets(B + S_FGETS, r, line, sizeof line, stdin);
	} while (r);

	pm[20000] = 7; /* never reported: found by the exit-time comparison */
	exit(3);
}
