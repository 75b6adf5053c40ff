/* mmapglob.c: PM mapped with plain mmap, recognised through $SCRY_PM_GLOBS; a second mapping of
 * a file the globs do not match is not PM; read(2) into a PM page never written before (so
 * write-protected by the runtime) must not fail with EFAULT. Usage: mmapglob PMFILE OTHERFILE */
#include "common.h"

enum { S_MMAP, S_STORE, S_MUNMAP, S_READ, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "mmap"),
	SITE(SCRY_SITE_STORE, "main", 2, ""),
	SITE(SCRY_SITE_LIBCALL, "main", 3, "munmap"),
	SITE(SCRY_SITE_LIBCALL, "main", 4, "read"),
};

static char *map(uint32_t site, const char *path, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0 || pwrite(fd, "init", 4, 100) != 4)
		exit(100);
	__scry_pre_mmap(site, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	__scry_post_mmap(site, p, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		exit(100);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	uint32_t b = __scry_register_module(sites, N_SITES);
	size_t len = 1 << 16;
	char *pm = map(b + S_MMAP, argv[1], len);
	char *other = map(b + S_MMAP, argv[2], len);
	pm[10] = 1;
	__scry_store(b + S_STORE, pm + 10, 1);
	other[10] = 1;
	__scry_store(b + S_STORE, other + 10, 1); /* not PM: not recorded */
	int fds[2];
	if (pipe(fds) < 0 || write(fds[1], "kernel", 6) != 6)
		return 101;
	char *dst = pm + 2 * 4096 + 5;
	__scry_pre_read(b + S_READ, fds[0], dst, 6);
	ssize_t n = read(fds[0], dst, 6);
	__scry_post_read(b + S_READ, n, fds[0], dst, 6);
	if (n != 6) {
		perror("read into PM");
		return 102;
	}
	pm[11] = 2; /* unrecorded: found at munmap */
	__scry_pre_munmap(b + S_MUNMAP, pm, len);
	int rc = munmap(pm, len);
	__scry_post_munmap(b + S_MUNMAP, rc, pm, len);
	return 0;
}
