/* valgrind.c: Valgrind client requests as the pass passes them to __scry_client_request (the
 * request's six words and its default result): pmemcheck's become records, every request
 * answers its default. Usage: valgrind POOL */
#include "common.h"

#define PMC(n) (0x50430000u + (n))

void scry_unregister_pm(void *base);

enum { S_REQ, S_STORE, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "VALGRIND_DO_CLIENT_REQUEST"),
	SITE(SCRY_SITE_STORE, "main", 2, ""),
};

static uint32_t b;
static int bad;

/* One request; exits the check with status 101 when its result is not the default. */
static void req(uint64_t code, const void *a1, uint64_t a2, uint64_t a3, uint64_t dflt)
{
	uint64_t args[6] = {code, (uint64_t)(uintptr_t)a1, a2, a3, 0, 0};
	uint64_t got = __scry_client_request(b + S_REQ, args, dflt);
	if (got != dflt) {
		fprintf(stderr, "request %#llx: %llu, want the default %llu\n", (unsigned long long)code,
			(unsigned long long)got, (unsigned long long)dflt);
		bad = 1;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	b = __scry_register_module(sites, N_SITES);
	size_t len = 1 << 16;
	char *pm = map_file(argv[1], len, NULL, 0);
	char local[8];

	req(PMC(0), pm, len, 0, 0);           /* REGISTER_PMEM_MAPPING: a new region */
	req(PMC(2), pm + 64, 8, 0, 0);        /* REMOVE_PMEM_MAPPING: PM_EXCLUDE */
	pm[64] = 1;                           /* not PM for the replay, still recorded */
	__scry_store(b + S_STORE, pm + 64, 1);
	req(PMC(0), pm + 64, 8, 0, 0);        /* REGISTER_PMEM_MAPPING in a region: PM_EXCLUDE include */
	req(PMC(5), pm + 60, 10, 0, 0);       /* DO_FLUSH: lines 0 and 64 */
	req(PMC(6), 0, 0, 0, 0);              /* DO_FENCE */
	req(PMC(17), pm + 128, 16, 0, 0);     /* SET_CLEAN */
	req(PMC(28), pm + 256, 64, 0, 0);     /* ADD_TO_GLOBAL_TX_IGNORE */
	req(PMC(22), pm, 8, 0, 0);            /* ADD_TO_TX outside a transaction: nothing */
	req(PMC(23), (void *)1, (uint64_t)(uintptr_t)pm, 8, 0); /* ADD_TO_TX_N: nothing either */
	req(PMC(2), local, 8, 0, 0);          /* REMOVE_PMEM_MAPPING of memory that is not PM: nothing */
	req(PMC(3), pm, 8, 0, 5);             /* CHECK_IS_PMEM_MAPPING: the default */
	req(PMC(18), 0, 0, 0, 0);             /* START_TX, END_TX, REMOVE_FROM_TX, DEEP_SYNC: nothing */
	req(PMC(20), 0, 0, 0, 0);
	req(PMC(24), pm, 8, 0, 0);
	req(PMC(31), pm, 8, 0, 0);
	req(0x1001, 0, 0, 0, 0);              /* RUNNING_ON_VALGRIND: 0 */
	req(0x4d430002, pm, 8, 0, 9);         /* memcheck's MAKE_MEM_DEFINED: the default */
	req(0x48470000, pm, 8, 0, 3);         /* a helgrind request: the default */
	if (__scry_client_request(b + S_REQ, NULL, 4) != 4)
		bad = 1;
	scry_unregister_pm(pm);
	return bad ? 101 : 0;
}
