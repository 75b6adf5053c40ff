/* crash.c: stores to PM until killed (mode "loop", for SIGKILL and SIGTERM) or aborts after
 * 100000 stores (mode "abort"). In mode loop it says "ready" after 100000 stores, makes 100000
 * more (several of the runtime's 1 MiB trace buffers, so that the first 100000 reach the file)
 * and then waits for its signal: the trace stays a few MiB however long the test takes to see
 * them on disk (an endless loop wrote gigabytes on a loaded machine, and the test reading them
 * back ran out of memory).
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
		if (i == 200000)
			for (;;)
				pause();
	}
}
