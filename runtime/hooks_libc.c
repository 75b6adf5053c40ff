//go:build ignore

/*
 * hooks_libc.c: hooks of libc functions (scry_hooks.def): PM mappings made by the program itself
 * (mmap of a file matching $SCRY_PM_GLOBS -> REGION_MAP; munmap -> REGION_UNMAP), operation
 * boundaries (a line read from standard input -> OP_END of the previous operation, OP_BEGIN of the
 * next; end of input -> OP_END), and libc copy functions writing PM (-> STORE of the bytes written,
 * LOAD of a PM source). docs/trace-format.md describes the records.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt.h"
#include "scry_hooks.h"


/* ---------------------------------------------------------------- mmap / munmap */

/* Does path match one of the colon-separated fnmatch globs of $SCRY_PM_GLOBS? */
static int pm_glob_match(const char *path)
{
	const char *globs = getenv("SCRY_PM_GLOBS");
	if (!globs || !*globs)
		return 0;
	char buf[4096];
	while (*globs) {
		const char *c = strchr(globs, ':');
		size_t n = c ? (size_t)(c - globs) : strlen(globs);
		if (n > 0 && n < sizeof buf) {
			memcpy(buf, globs, n);
			buf[n] = 0;
			if (fnmatch(buf, path, 0) == 0)
				return 1;
		}
		if (!c)
			break;
		globs = c + 1;
	}
	return 0;
}

static void mmap_post(uint32_t site, void *ret, size_t length, int prot, int flags, int fd, off_t offset)
{
	if (ret == MAP_FAILED || !(flags & MAP_SHARED) || fd < 0 || length == 0)
		return;
	if (!getenv("SCRY_PM_GLOBS") || !rt_init())
		return;
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	if (!pm_glob_match(path))
		return;
	rt_self.in_rt = 1;
	pm_add((uintptr_t)ret, length, path, fd, (uint64_t)offset, site, 0,
	       ((prot & PROT_WRITE) ? PM_WRITABLE : 0) | PM_FILE);
	rt_self.in_rt = 0;
}

void __scry_pre_mmap(uint32_t site, void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	(void)site, (void)addr, (void)length, (void)prot, (void)flags, (void)fd, (void)offset;
}

/* REGION_MAP and initial EXTERNAL_WRITEs for a shared mapping of a PM file. */
void __scry_post_mmap(uint32_t site, void *ret, void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	(void)addr;
	if (rt_self.in_rt)
		return;
	mmap_post(site, ret, length, prot, flags, fd, offset);
}

void __scry_pre_mmap64(uint32_t site, void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	(void)site, (void)addr, (void)length, (void)prot, (void)flags, (void)fd, (void)offset;
}

void __scry_post_mmap64(uint32_t site, void *ret, void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	(void)addr;
	if (rt_self.in_rt)
		return;
	mmap_post(site, ret, length, prot, flags, fd, offset);
}

/* EXTERNAL_WRITE (safety net) and REGION_UNMAP for the regions in the range, before the unmap. */
void __scry_pre_munmap(uint32_t site, void *addr, size_t length)
{
	HOOK_ENTER();
	pm_remove((uintptr_t)addr, length ? length : 1, site);
	HOOK_LEAVE();
}

void __scry_post_munmap(uint32_t site, int ret, void *addr, size_t length)
{
	(void)site, (void)ret, (void)addr, (void)length;
}

/* PM is write-protected (region.c): a buffer the kernel writes into (read(2)) must be made
 * writable before the call, else the system call fails with EFAULT. For copies it saves a
 * fault per page. */
static void unprotect_dest(void *dest, size_t n)
{
	if (!rt_ready() || !dest || n == 0 || !pm_any())
		return;
	rt_self.in_rt = 1;
	pm_unprotect_range(dest, n);
	rt_self.in_rt = 0;
}

/* ---------------------------------------------------------------- operations */

#define OP_TEXT_MAX 4096

/* A line read (trailing newline dropped; NULL at end of input): an operation, or the text of the
 * next operation a marker call begins (rec_op_line). */
static void op_line(const char *line, size_t n)
{
	if (!line) {
		rec_op_line(NULL, 0);
		return;
	}
	if (n > 0 && line[n - 1] == '\n')
		n--;
	if (n > 0 && line[n - 1] == '\r')
		n--;
	if (n > OP_TEXT_MAX)
		n = OP_TEXT_MAX;
	rec_op_line(line, n);
}

void __scry_pre_fgets(uint32_t site, char *s, int size, FILE *stream)
{
	(void)site, (void)stream;
	unprotect_dest(s, size > 0 ? (size_t)size : 0);
}

void __scry_post_fgets(uint32_t site, char *ret, char *s, int size, FILE *stream)
{
	(void)size;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(s, ret ? strlen(s) + 1 : 0, __builtin_frame_address(0));
	if (ret)
		pm_record_range(SCRY_EV_STORE, site, s, strlen(s) + 1);
	if (stream == stdin)
		op_line(ret, ret ? strlen(ret) : 0);
	HOOK_LEAVE();
}

void __scry_pre_getline(uint32_t site, char **lineptr, size_t *n, FILE *stream)
{
	(void)site, (void)lineptr, (void)n, (void)stream;
}

void __scry_post_getline(uint32_t site, ssize_t ret, char **lineptr, size_t *n, FILE *stream)
{
	(void)site, (void)n;
	HOOK_ENTER();
	if (stream == stdin)
		op_line(ret >= 0 && lineptr ? *lineptr : NULL, ret >= 0 ? (size_t)ret : 0);
	HOOK_LEAVE();
}

void __scry_pre_read(uint32_t site, int fd, void *buf, size_t count)
{
	(void)site, (void)fd;
	unprotect_dest(buf, count);
}

void __scry_post_read(uint32_t site, ssize_t ret, int fd, void *buf, size_t count)
{
	(void)count;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(buf, ret > 0 ? (uint64_t)ret : 0, __builtin_frame_address(0));
	if (ret > 0)
		pm_record_range(SCRY_EV_STORE, site, buf, (uint64_t)ret);
	if (fd == 0 && ret >= 0)
		op_line(ret > 0 ? buf : NULL, (size_t)ret);
	HOOK_LEAVE();
}

/* ---------------------------------------------------------------- copy functions */

/* STORE of dest[0..n) (and LOAD of a non-overlapping PM source). */
static void copy_post(uint32_t site, void *dest, const void *src, size_t n)
{
	if (!pm_any() || n == 0)
		return;
	uintptr_t d = (uintptr_t)dest, s = (uintptr_t)src;
	if (src && (s + n <= d || d + n <= s))
		pm_record_range(SCRY_EV_LOAD, site, src, n);
	pm_record_range(SCRY_EV_STORE, site, dest, n);
}

void __scry_pre_memcpy(uint32_t site, void *dest, const void *src, size_t n)
{
	(void)site, (void)src;
	unprotect_dest(dest, n);
}

void __scry_post_memcpy(uint32_t site, void *ret, void *dest, const void *src, size_t n)
{
	(void)ret;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(dest, n, __builtin_frame_address(0));
	copy_post(site, dest, src, n);
	HOOK_LEAVE();
}

void __scry_pre_memmove(uint32_t site, void *dest, const void *src, size_t n)
{
	(void)site, (void)src;
	unprotect_dest(dest, n);
}

void __scry_post_memmove(uint32_t site, void *ret, void *dest, const void *src, size_t n)
{
	(void)ret;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(dest, n, __builtin_frame_address(0));
	copy_post(site, dest, src, n);
	HOOK_LEAVE();
}

void __scry_pre_memset(uint32_t site, void *s, int c, size_t n)
{
	(void)site, (void)c;
	unprotect_dest(s, n);
}

void __scry_post_memset(uint32_t site, void *ret, void *s, int c, size_t n)
{
	(void)ret, (void)c;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(s, n, __builtin_frame_address(0));
	copy_post(site, s, NULL, n);
	HOOK_LEAVE();
}

void __scry_pre_strcpy(uint32_t site, char *dest, const char *src)
{
	(void)site, (void)dest, (void)src;
}

void __scry_post_strcpy(uint32_t site, char *ret, char *dest, const char *src)
{
	(void)ret, (void)src;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(dest, dest && pm_find((uintptr_t)dest) ? strlen(dest) + 1 : 0, __builtin_frame_address(0));
	if (pm_any() && dest)
		copy_post(site, dest, NULL, strlen(dest) + 1);
	HOOK_LEAVE();
}

void __scry_pre_strncpy(uint32_t site, char *dest, const char *src, size_t n)
{
	(void)site, (void)dest, (void)src, (void)n;
}

/* strncpy always writes exactly n bytes (padding with NULs). */
void __scry_post_strncpy(uint32_t site, char *ret, char *dest, const char *src, size_t n)
{
	(void)ret, (void)src;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(dest, n, __builtin_frame_address(0));
	copy_post(site, dest, NULL, n);
	HOOK_LEAVE();
}

/* strcat/strncat: the bytes from the old terminator to the new one. */
void __scry_pre_strcat(uint32_t site, char *dest, const char *src)
{
	(void)site, (void)src;
	rt_self.strcat_len = pm_any() && dest && pm_find((uintptr_t)dest) ? strlen(dest) : 0;
}

void __scry_post_strcat(uint32_t site, char *ret, char *dest, const char *src)
{
	(void)ret, (void)src;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(dest, dest && pm_find((uintptr_t)dest) ? strlen(dest) + 1 : 0, __builtin_frame_address(0));
	if (pm_any() && dest && pm_find((uintptr_t)dest)) {
		size_t old = rt_self.strcat_len, now = strlen(dest);
		if (now >= old)
			copy_post(site, dest + old, NULL, now - old + 1);
	}
	HOOK_LEAVE();
}

void __scry_pre_strncat(uint32_t site, char *dest, const char *src, size_t n)
{
	(void)n;
	__scry_pre_strcat(site, dest, src);
}

void __scry_post_strncat(uint32_t site, char *ret, char *dest, const char *src, size_t n)
{
	(void)n;
	__scry_post_strcat(site, ret, dest, src);
}

void __scry_pre_snprintf(uint32_t site, char *str, size_t size, const char *format)
{
	(void)site, (void)str, (void)size, (void)format;
}

/* snprintf writes min(ret + 1, size) bytes. */
void __scry_post_snprintf(uint32_t site, int ret, char *str, size_t size, const char *format)
{
	(void)format;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(str, ret >= 0 && size > 0 ? ((size_t)ret + 1 < size ? (size_t)ret + 1 : size) : 0, __builtin_frame_address(0));
	if (ret >= 0 && size > 0) {
		size_t n = (size_t)ret + 1 < size ? (size_t)ret + 1 : size;
		copy_post(site, str, NULL, n);
	}
	HOOK_LEAVE();
}

void __scry_pre_sprintf(uint32_t site, char *str, const char *format)
{
	(void)site, (void)str, (void)format;
}

void __scry_post_sprintf(uint32_t site, int ret, char *str, const char *format)
{
	(void)format;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(str, ret >= 0 ? (size_t)ret + 1 : 0, __builtin_frame_address(0));
	if (ret >= 0)
		copy_post(site, str, NULL, (size_t)ret + 1);
	HOOK_LEAVE();
}
