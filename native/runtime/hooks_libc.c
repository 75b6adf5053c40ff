//go:build ignore

/*
 * hooks_libc.c: hooks of libc functions (scry_hooks.def): PM mappings made by the program itself
 * (mmap of a file matching $SCRY_PM_GLOBS -> REGION_MAP; munmap -> REGION_UNMAP), operation
 * boundaries (a line read from standard input -> OP_END of the previous operation, OP_BEGIN of the
 * next; end of input -> OP_END), and libc copy functions writing PM (-> STORE of the bytes written,
 * LOAD of a PM source), and what the program prints on its standard output through puts, fputs,
 * printf, fprintf, dprintf, fwrite, putchar, fputc and putc (-> OUTPUT of the printing thread,
 * while tracing: what each operation printed). docs/trace-format.md describes the records. Before a read of standard input,
 * convergence (converge.c) may hash the pool and stop the process, also when inert.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>
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
	(void)site;
	if (stream == stdin)
		converge_stdin_read();
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
	(void)site, (void)lineptr, (void)n;
	if (stream == stdin)
		converge_stdin_read();
}

void __scry_post_getline(uint32_t site, ssize_t ret, char **lineptr, size_t *n, FILE *stream)
{
	(void)site, (void)n;
	HOOK_ENTER();
	if (stream == stdin)
		op_line(ret >= 0 && lineptr ? *lineptr : NULL, ret >= 0 ? (size_t)ret : 0);
	HOOK_LEAVE();
}

/* getdelim(3) with any delimiter: a record of standard input is an operation, as a line is. */
void __scry_pre_getdelim(uint32_t site, char **lineptr, size_t *n, int delim, FILE *stream)
{
	(void)delim;
	__scry_pre_getline(site, lineptr, n, stream);
}

void __scry_post_getdelim(uint32_t site, ssize_t ret, char **lineptr, size_t *n, int delim, FILE *stream)
{
	(void)delim;
	__scry_post_getline(site, ret, lineptr, n, stream);
}

void __scry_pre___getdelim(uint32_t site, char **lineptr, size_t *n, int delim, FILE *stream)
{
	(void)delim;
	__scry_pre_getline(site, lineptr, n, stream);
}

void __scry_post___getdelim(uint32_t site, ssize_t ret, char **lineptr, size_t *n, int delim, FILE *stream)
{
	(void)delim;
	__scry_post_getline(site, ret, lineptr, n, stream);
}

void __scry_pre_read(uint32_t site, int fd, void *buf, size_t count)
{
	(void)site;
	if (fd == 0)
		converge_stdin_read();
	lazy_prepare_write(buf, count);
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
	else if (fd > 0)
		rec_sock_read(fd, buf, ret);
	HOOK_LEAVE();
}

/* recv(2): as read(2) (a request of a server in client mode, rec_sock_read). */
void __scry_pre_recv(uint32_t site, int fd, void *buf, size_t count, int flags)
{
	(void)site, (void)fd, (void)flags;
	lazy_prepare_write(buf, count);
	unprotect_dest(buf, count);
}

void __scry_post_recv(uint32_t site, ssize_t ret, int fd, void *buf, size_t count, int flags)
{
	(void)count, (void)flags;
	HOOK_ENTER_NOCHECK();
	pm_store_then_check(buf, ret > 0 ? (uint64_t)ret : 0, __builtin_frame_address(0));
	if (ret > 0)
		pm_record_range(SCRY_EV_STORE, site, buf, (uint64_t)ret);
	rec_sock_read(fd, buf, ret);
	HOOK_LEAVE();
}

/* write(2), send(2), sendmsg(2), writev(2): a server's answer in client mode (rec_sock_write);
 * nothing otherwise. */
void __scry_pre_write(uint32_t site, int fd, const void *buf, size_t count)
{
	(void)site, (void)fd, (void)buf, (void)count;
}

void __scry_post_write(uint32_t site, ssize_t ret, int fd, const void *buf, size_t count)
{
	(void)site, (void)buf, (void)count;
	rec_sock_write(fd, ret);
}

void __scry_pre_send(uint32_t site, int fd, const void *buf, size_t count, int flags)
{
	(void)site, (void)fd, (void)buf, (void)count, (void)flags;
}

void __scry_post_send(uint32_t site, ssize_t ret, int fd, const void *buf, size_t count, int flags)
{
	(void)site, (void)buf, (void)count, (void)flags;
	rec_sock_write(fd, ret);
}

void __scry_pre_sendmsg(uint32_t site, int fd, const void *msg, int flags)
{
	(void)site, (void)fd, (void)msg, (void)flags;
}

void __scry_post_sendmsg(uint32_t site, ssize_t ret, int fd, const void *msg, int flags)
{
	(void)site, (void)msg, (void)flags;
	rec_sock_write(fd, ret);
}

void __scry_pre_writev(uint32_t site, int fd, const void *iov, int iovcnt)
{
	(void)site, (void)fd, (void)iov, (void)iovcnt;
}

void __scry_post_writev(uint32_t site, ssize_t ret, int fd, const void *iov, int iovcnt)
{
	(void)site, (void)iov, (void)iovcnt;
	rec_sock_write(fd, ret);
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

/* ---------------------------------------------------------------- reads by libc */

/* LOADs of the PM bytes a libc call read from each of its arguments, so that what depends on a
 * comparison's result (`if (strcmp(key, slot->key) == 0) ...`) is guarded by the stores of the
 * bytes it compared (docs/inference.md). n bytes from a, and from b when b is not NULL. */
static void read_post(uint32_t site, const void *a, const void *b, size_t n)
{
	if (!pm_any() || g_no_loads || n == 0)
		return;
	HOOK_ENTER_NOCHECK();
	if (a)
		pm_record_range(SCRY_EV_LOAD, site, a, n);
	if (b)
		pm_record_range(SCRY_EV_LOAD, site, b, n);
	HOOK_LEAVE();
}

/* The bytes a comparison of two strings of at most max bytes reads: up to the first difference
 * or terminator, inclusive. */
static size_t str_compared(const char *a, const char *b, size_t max)
{
	size_t i = 0;
	while (i < max && a[i] == b[i] && a[i] != 0)
		i++;
	return i < max ? i + 1 : max;
}

/* The bytes a comparison of two n-byte buffers reads: up to the first difference, inclusive. */
static size_t mem_compared(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i = 0;
	while (i < n && x[i] == y[i])
		i++;
	return i < n ? i + 1 : n;
}

void __scry_pre_strcmp(uint32_t site, const char *s1, const char *s2) { (void)site, (void)s1, (void)s2; }
void __scry_post_strcmp(uint32_t site, int ret, const char *s1, const char *s2)
{
	(void)ret;
	if (pm_any() && s1 && s2)
		read_post(site, s1, s2, str_compared(s1, s2, (size_t)-1));
}

void __scry_pre_strncmp(uint32_t site, const char *s1, const char *s2, size_t n) { (void)site, (void)s1, (void)s2, (void)n; }
void __scry_post_strncmp(uint32_t site, int ret, const char *s1, const char *s2, size_t n)
{
	(void)ret;
	if (pm_any() && s1 && s2)
		read_post(site, s1, s2, str_compared(s1, s2, n));
}

void __scry_pre_memcmp(uint32_t site, const void *s1, const void *s2, size_t n) { (void)site, (void)s1, (void)s2, (void)n; }
void __scry_post_memcmp(uint32_t site, int ret, const void *s1, const void *s2, size_t n)
{
	(void)ret;
	if (pm_any() && s1 && s2)
		read_post(site, s1, s2, mem_compared(s1, s2, n));
}

void __scry_pre_bcmp(uint32_t site, const void *s1, const void *s2, size_t n) { (void)site, (void)s1, (void)s2, (void)n; }
void __scry_post_bcmp(uint32_t site, int ret, const void *s1, const void *s2, size_t n)
{
	(void)ret;
	if (pm_any() && s1 && s2)
		read_post(site, s1, s2, mem_compared(s1, s2, n));
}

void __scry_pre_strlen(uint32_t site, const char *s) { (void)site, (void)s; }
void __scry_post_strlen(uint32_t site, size_t ret, const char *s)
{
	read_post(site, s, NULL, ret + 1);
}

void __scry_pre_strnlen(uint32_t site, const char *s, size_t maxlen) { (void)site, (void)s, (void)maxlen; }
void __scry_post_strnlen(uint32_t site, size_t ret, const char *s, size_t maxlen)
{
	read_post(site, s, NULL, ret < maxlen ? ret + 1 : maxlen);
}

/* What the program prints on its standard output, while tracing, as OUTPUT records of the
 * printing thread: the replay attributes them to its operation, and crash exploration compares
 * what each completed operation printed with what it prints in the linearizations it tries
 * (durable linearizability's responses: pm/explore/oracles.go). puts and fputs are recorded in
 * their post hooks; a printf-like call only leaves its site in g_out_site, and
 * __scry_format_loads, which the pass calls right after it with the same arguments, formats and
 * records the text. fwrite, putchar, fputc and putc (what a compiler makes of a printf or fprintf
 * of a constant string, "(null)\n" or "\n") are recorded in their post hooks too. What reaches the
 * output otherwise (write, std::cout, calls in uninstrumented code) is not recorded: the same
 * holds of every run it is compared with. */
static RT_TLS uint32_t g_out_site;

static int tracing(void) { return atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING; }

void __scry_pre_puts(uint32_t site, const char *s) { (void)site, (void)s; }
void __scry_post_puts(uint32_t site, int ret, const char *s)
{
	if (pm_any() && s)
		read_post(site, s, NULL, strlen(s) + 1);
	if (ret >= 0 && s && tracing()) {
		rec_output(site, 1, s, strlen(s));
		rec_output(site, 1, "\n", 1);
	}
}

void __scry_pre_fputs(uint32_t site, const char *s, FILE *stream) { (void)site, (void)s, (void)stream; }
void __scry_post_fputs(uint32_t site, int ret, const char *s, FILE *stream)
{
	if (pm_any() && s)
		read_post(site, s, NULL, strlen(s) + 1);
	if (ret >= 0 && s && stream == stdout && tracing())
		rec_output(site, 1, s, strlen(s));
}

void __scry_pre_fwrite(uint32_t site, const void *ptr, size_t size, size_t nmemb, FILE *stream)
{
	(void)site, (void)ptr, (void)size, (void)nmemb, (void)stream;
}
void __scry_post_fwrite(uint32_t site, size_t ret, const void *ptr, size_t size, size_t nmemb, FILE *stream)
{
	(void)nmemb;
	size_t n = ret * size; /* the bytes of the items written */
	if (pm_any() && ptr && n > 0)
		read_post(site, ptr, NULL, n);
	if (n > 0 && ptr && stream == stdout && tracing())
		rec_output(site, 1, ptr, n);
}

/* One character c written to stream (ret: the character, EOF on failure). */
static void output_char(uint32_t site, int ret, FILE *stream)
{
	if (ret != EOF && stream == stdout && tracing()) {
		char ch = (char)ret;
		rec_output(site, 1, &ch, 1);
	}
}
void __scry_pre_putchar(uint32_t site, int c) { (void)site, (void)c; }
void __scry_post_putchar(uint32_t site, int ret, int c)
{
	(void)c;
	output_char(site, ret, stdout);
}
void __scry_pre_fputc(uint32_t site, int c, FILE *stream) { (void)site, (void)c, (void)stream; }
void __scry_post_fputc(uint32_t site, int ret, int c, FILE *stream)
{
	(void)c;
	output_char(site, ret, stream);
}
void __scry_pre_putc(uint32_t site, int c, FILE *stream) { (void)site, (void)c, (void)stream; }
void __scry_post_putc(uint32_t site, int ret, int c, FILE *stream)
{
	(void)c;
	output_char(site, ret, stream);
}

void __scry_pre_printf(uint32_t site, const char *format) { (void)site, (void)format; }
void __scry_post_printf(uint32_t site, int ret, const char *format)
{
	(void)format;
	g_out_site = ret >= 0 && tracing() ? site : 0;
}
void __scry_pre_fprintf(uint32_t site, FILE *stream, const char *format) { (void)site, (void)stream, (void)format; }
void __scry_post_fprintf(uint32_t site, int ret, FILE *stream, const char *format)
{
	(void)format;
	g_out_site = ret >= 0 && stream == stdout && tracing() ? site : 0;
}
void __scry_pre_dprintf(uint32_t site, int fd, const char *format) { (void)site, (void)fd, (void)format; }
void __scry_post_dprintf(uint32_t site, int ret, int fd, const char *format)
{
	(void)format;
	g_out_site = ret >= 0 && fd == 1 && tracing() ? site : 0;
}

/* Records what the printf-like call at site printed: format over the same arguments. */
static void output_format(uint32_t site, const char *format, va_list ap)
{
	char buf[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(buf, sizeof buf, format, ap);
	if (n >= 0 && (size_t)n < sizeof buf) {
		rec_output(site, 1, buf, (size_t)n);
	} else if (n > 0) {
		char *p = malloc((size_t)n + 1);
		if (p) {
			vsnprintf(p, (size_t)n + 1, format, again);
			rec_output(site, 1, p, (size_t)n);
			free(p);
		}
	}
	va_end(again);
}

/* __scry_format_loads: walks a printf format as the C library does (C11 7.21.6.1 and glibc's
 * extensions: flags, `*` width and precision, the length modifiers hh h l ll L j z t q), consuming
 * each conversion's argument with its type, and records a LOAD of the bytes each %s reads from PM
 * (up to the terminator, or the precision). A positional argument (%1$s) or a conversion it does
 * not know stops the walk: the arguments after it cannot be located. */
void __scry_format_loads(uint32_t site, const char *format, ...)
{
	uint32_t out = g_out_site;
	g_out_site = 0;
	if (out && out == site && format) {
		va_list ap;
		va_start(ap, format);
		output_format(site, format, ap);
		va_end(ap);
	}
	if (!format || !pm_any() || g_no_loads)
		return;
	va_list ap;
	va_start(ap, format);
	for (const char *f = format; *f; f++) {
		if (*f != '%')
			continue;
		f++;
		if (*f == '%')
			continue;
		const char *d = f;
		while (*d >= '0' && *d <= '9')
			d++;
		if (*d == '$')
			break;
		while (*f && strchr("-+ #0'I", *f))
			f++;
		if (*f == '*') {
			(void)va_arg(ap, int);
			f++;
		} else {
			while (*f >= '0' && *f <= '9')
				f++;
		}
		long prec = -1;
		if (*f == '.') {
			f++;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				prec = 0;
				while (*f >= '0' && *f <= '9')
					prec = prec * 10 + (*f++ - '0');
			}
		}
		int len = 0; /* 'H' hh, 'h', 'l', 'q' ll, 'L', 'j', 'z', 't' */
		switch (*f) {
		case 'h':
			len = f[1] == 'h' ? 'H' : 'h';
			f += f[1] == 'h' ? 2 : 1;
			break;
		case 'l':
			len = f[1] == 'l' ? 'q' : 'l';
			f += f[1] == 'l' ? 2 : 1;
			break;
		case 'q': case 'L': case 'j': case 'z': case 't':
			len = *f++;
			break;
		}
		switch (*f) {
		case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': case 'c':
			if (len == 'l')
				(void)va_arg(ap, long);
			else if (len == 'q')
				(void)va_arg(ap, long long);
			else if (len == 'j')
				(void)va_arg(ap, intmax_t);
			else if (len == 'z')
				(void)va_arg(ap, size_t);
			else if (len == 't')
				(void)va_arg(ap, ptrdiff_t);
			else
				(void)va_arg(ap, int);
			break;
		case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
			if (len == 'L')
				(void)va_arg(ap, long double);
			else
				(void)va_arg(ap, double);
			break;
		case 'C':
			(void)va_arg(ap, wint_t);
			break;
		case 'p': case 'n': case 'S':
			(void)va_arg(ap, void *);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s || len == 'l')
				break;
			size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
			if (prec < 0 || n < (size_t)prec)
				n++; /* the terminator was read too */
			read_post(site, s, NULL, n);
			break;
		}
		case 'm':
			break;
		default:
			goto out;
		}
		if (!*f)
			break;
	}
out:
	va_end(ap);
}
