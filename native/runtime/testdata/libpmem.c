/* libpmem.c: a libpmem program with the hooks the pass would emit around each call.
 * Usage: libpmem POOL */
#include <libpmem.h>

#include "common.h"

enum { S_MAP, S_CPY, S_SET, S_DRAIN, S_FLUSH, S_UNMAP, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "pmem_map_file"),
	SITE(SCRY_SITE_LIBCALL, "main", 2, "pmem_memcpy_persist"),
	SITE(SCRY_SITE_LIBCALL, "main", 3, "pmem_memset_nodrain"),
	SITE(SCRY_SITE_LIBCALL, "main", 4, "pmem_drain"),
	SITE(SCRY_SITE_LIBCALL, "main", 5, "pmem_flush"),
	SITE(SCRY_SITE_LIBCALL, "main", 6, "pmem_unmap"),
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	uint32_t b = __scry_register_module(sites, N_SITES);
	size_t mapped = 0;
	int is_pmem = 0;
	__scry_pre_pmem_map_file(b + S_MAP, argv[1], 1 << 20, PMEM_FILE_CREATE, 0644, &mapped, &is_pmem);
	char *pm = pmem_map_file(argv[1], 1 << 20, PMEM_FILE_CREATE, 0644, &mapped, &is_pmem);
	__scry_post_pmem_map_file(b + S_MAP, pm, argv[1], 1 << 20, PMEM_FILE_CREATE, 0644, &mapped, &is_pmem);
	if (!pm) {
		perror("pmem_map_file");
		return 100;
	}
	void *r = pmem_memcpy_persist(pm + 1000, "persistent", 10);
	__scry_post_pmem_memcpy_persist(b + S_CPY, r, pm + 1000, "persistent", 10);
	r = pmem_memset_nodrain(pm + 5000, 0x5a, 200);
	__scry_post_pmem_memset_nodrain(b + S_SET, r, pm + 5000, 0x5a, 200);
	pmem_drain();
	__scry_post_pmem_drain(b + S_DRAIN);
	pmem_flush(pm + 70, 1);
	__scry_post_pmem_flush(b + S_FLUSH, pm + 70, 1);
	__scry_pre_pmem_unmap(b + S_UNMAP, pm, mapped);
	int rc = pmem_unmap(pm, mapped);
	__scry_post_pmem_unmap(b + S_UNMAP, rc, pm, mapped);
	return 0;
}
