/* degrade.c: the runtime degrades deterministically (a PM region unmapped in part, which it can
 * only treat as unmapped as a whole) and must say so in the trace (a WARNING record), not only on
 * standard error. Usage: degrade PMFILE */
#include "common.h"

enum { S_MMAP, S_STORE, S_MUNMAP, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "mmap"),
	SITE(SCRY_SITE_STORE, "main", 2, ""),
	SITE(SCRY_SITE_LIBCALL, "main", 3, "munmap"),
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	uint32_t b = __scry_register_module(sites, N_SITES);
	size_t len = 1 << 16;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		return 100;
	__scry_pre_mmap(b + S_MMAP, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *pm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	__scry_post_mmap(b + S_MMAP, pm, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (pm == MAP_FAILED)
		return 100;
	pm[8192] = 1;
	__scry_store(b + S_STORE, pm + 8192, 1);
	__scry_pre_munmap(b + S_MUNMAP, pm, 4096); /* the first page only */
	int rc = munmap(pm, 4096);
	__scry_post_munmap(b + S_MUNMAP, rc, pm, 4096);
	return 0;
}
