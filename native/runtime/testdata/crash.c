/* crash.c: stores to PM forever (mode "loop", for SIGKILL) or then aborts (mode "abort").
 * Usage: crash POOL loop|abort */
#include "common.h"

void scry_register_pm(void *base, size_t length, const char *path);

static const struct scry_site sites[] = {SITE(SCRY_SITE_STORE, "main", 5, "")};

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	uint32_t b = __scry_register_module(sites, 1);
	size_t len = 1 << 16;
	char *pm = map_file(argv[1], len, NULL, 0);
	scry_register_pm(pm, len, argv[1]);
	for (uint64_t i = 0;; i++) {
		uint64_t *p = (uint64_t *)(pm + (i * 8) % len);
		*p = i;
		__scry_store(b, p, 8);
		if (i == 100000) {
			if (strcmp(argv[2], "abort") == 0)
				abort();
			printf("ready\n");
			fflush(stdout);
		}
	}
}
