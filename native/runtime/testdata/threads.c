/* threads.c: four threads store to their own slice of PM. Usage: threads POOL */
#include <pthread.h>

#include "common.h"

void scry_register_pm(void *base, size_t length, const char *path);

static const struct scry_site sites[] = {SITE(SCRY_SITE_STORE, "worker", 1, "")};
static uint32_t B;
static char *pm;

#define N 4
#define PER 10000

static void *worker(void *arg)
{
	uintptr_t k = (uintptr_t)arg;
	for (uint64_t i = 0; i < PER; i++) {
		uint64_t *p = (uint64_t *)(pm + k * PER * 8 + i * 8);
		*p = k << 32 | i;
		__scry_store(B, p, 8);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	B = __scry_register_module(sites, 1);
	size_t len = 1 << 20;
	pm = map_file(argv[1], len, NULL, 0);
	scry_register_pm(pm, len, argv[1]);
	pthread_t th[N];
	for (uintptr_t k = 0; k < N; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	for (int k = 0; k < N; k++)
		pthread_join(th[k], NULL);
	return 0;
}
