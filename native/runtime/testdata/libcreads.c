/* libcreads.c: reads of PM by libc functions, with the hooks the pass would emit (strcmp,
 * strncmp, memcmp, strlen, and __scry_format_loads after a printf). Usage: libcreads POOL
 * (mapped as PM through SCRY_PM_GLOBS). Each site's line is the case's number. */
#include "common.h"

enum { S_MMAP, S_CMP, S_NCMP, S_MEMCMP, S_LEN, S_FMT, S_POS, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "mmap"),
	SITE(SCRY_SITE_LIBCALL, "main", 2, "strcmp"),
	SITE(SCRY_SITE_LIBCALL, "main", 3, "strncmp"),
	SITE(SCRY_SITE_LIBCALL, "main", 4, "memcmp"),
	SITE(SCRY_SITE_LIBCALL, "main", 5, "strlen"),
	SITE(SCRY_SITE_LIBCALL, "main", 6, "printf"),
	SITE(SCRY_SITE_LIBCALL, "main", 7, "printf"),
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	uint32_t b = __scry_register_module(sites, N_SITES);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0 || pwrite(fd, "apple", 6, 0) != 6 || pwrite(fd, "0123456789", 10, 64) != 10 ||
	    pwrite(fd, "tail", 5, 128) != 5)
		return 100;
	char *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	__scry_post_mmap(b + S_MMAP, pm, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 100;
	int r = strcmp(pm, "apply"); /* differs at byte 4: 5 bytes read */
	__scry_post_strcmp(b + S_CMP, r, pm, "apply");
	r = strncmp(pm, "apple", 3); /* 3 bytes */
	__scry_post_strncmp(b + S_NCMP, r, pm, "apple", 3);
	r = memcmp(pm + 64, "012345X", 7); /* differs at byte 6: 7 bytes */
	__scry_post_memcmp(b + S_MEMCMP, r, pm + 64, "012345X", 7);
	size_t n = strlen(pm); /* 5 and the terminator */
	__scry_post_strlen(b + S_LEN, n, pm);
	/* Every kind of argument before the strings: the walk must find both %s. */
	printf("%*d %.3s %lld %Lf %zu %% %p %hhd %s|\n", 4, 7, pm, 12345678901LL, (long double)1.5, (size_t)9, (void *)pm, 3, pm + 128);
	__scry_format_loads(b + S_FMT, "%*d %.3s %lld %Lf %zu %% %p %hhd %s|\n", 4, 7, pm, 12345678901LL, (long double)1.5,
			    (size_t)9, (void *)pm, 3, pm + 128);
	/* A positional argument: the arguments cannot be located, nothing is recorded. */
	__scry_format_loads(b + S_POS, "%2$s %1$s\n", pm, pm + 128);
	munmap(pm, 4096);
	return 0;
}
