//go:build ignore

/*
 * lazy.c: lazy crash-state exploration, the runtime's side (docs/lazy-exploration.md, "The
 * runtime's side"). Source: Jaaru (Gorjiara, Xu, Demsky; ASPLOS'21), §3-4: run the continuation
 * of a crash point once, on an image whose undetermined cache lines are marked, and branch only
 * when the run first touches such a line, one branch per content the line can have.
 *
 * Why page protection. libpmemobj (uninstrumented) reads the pool itself, pmemobj_open's lane
 * recovery first; the pass's load hook would not see those reads. So the runtime removes every
 * access right (PROT_NONE) from the pages holding undetermined lines and resolves a line on the
 * SIGSEGV its first access raises, whoever makes it: the program, libpmemobj, libc's memcpy. It
 * learns of the pool's mappings by defining mmap, mmap64 and munmap in the executable (exported
 * by scry_rt.dynlist, so that libpmem's calls bind to them too); they make the system call
 * themselves, and do nothing else unless SCRY_LAZY is set.
 *
 * The contract with scry (pm/explore writes the table and reads the results):
 *
 * SCRY_LAZY=D names a fresh directory. It is read at the first mmap after the runtime's start or
 * after the fork server's child took its run's environment (lazy_reset); the runtime must be
 * inert (SCRY_INERT=1). D/table, little-endian:
 *     "SCRYLZY1", u32 timeout_ms (per leaf, from its fork; 0 none), u32 nfiles,
 *     nfiles x {u32 len, len bytes: absolute path of a working copy},
 *     u32 nlines, nlines x {u32 file, u64 offset (a multiple of 64), u32 nvalues (>= 2),
 *                           nvalues x 64 bytes: the line's possible contents, in scry's order}
 * lines sorted by (file, offset), unique. The working copy holds, on every listed line, the
 * content of the fully persisted state (one of the values).
 *
 * A successful mapping of a file whose (st_dev, st_ino) is a working copy's, shared or private,
 * is tracked until it is unmapped, and each of its pages holding an unresolved listed line gets
 * PROT_NONE (its own protection is remembered). On a fault at address A in such a page, every
 * unresolved listed line overlapping [A, A+64) is resolved, in address order, by branching:
 *
 *   The process becomes a coordinator: it appends "inner PID" to D/results, snapshots the
 *   working copies and its standard input's offset, blocks the program's signals, and for each
 *   value index i in turn restores them, forks (_Fork: the coordinator runs inside a signal
 *   handler), waits for the child and appends "leaf PID STATUS TIMEDOUT CHOICES" for it (not for
 *   a child that became a coordinator itself). Then it _exits(0): it never runs the program
 *   again, so within a lazy run one process at a time runs the program and owns the working
 *   copies and standard input's offset.
 *
 *   The child appends (line, i) to its choices, arms a timer that sends it SIGKILL timeout_ms
 *   from now (deleted if it becomes a coordinator in turn), takes D/PID.out and D/PID.err as
 *   standard output and error, each starting with a copy of what fd 1 / fd 2 held (libc's
 *   unflushed buffers, duplicated by fork, land there too), writes value i into the line and
 *   marks it resolved. Returning from the fault, a page with no unresolved line left gets its
 *   protection back; a page that still has some is opened for one instruction (the trap flag:
 *   the SIGTRAP after it protects the page again).
 *
 * D/results, one write(2) per line with O_APPEND:
 *     inner PID
 *     leaf PID STATUS TIMEDOUT CHOICES   STATUS as waitpid gives it; TIMEDOUT 1 when the child
 *                                        died of SIGKILL after running timeout_ms or more;
 *                                        CHOICES "LINE:VALUE,..." in resolution order ("-": none)
 *     abort PID REASON                   lazy branching is impossible (standard input not
 *                                        seekable, standard output or error not a regular file,
 *                                        more than one thread, fork failed, table unreadable or
 *                                        malformed, no snapshot, a system call wrote a working
 *                                        copy); the process then _exits(125)
 * A run that touches no listed line never branches and leaves D/results absent.
 *
 * Beyond the contract: children reopen the program's regular files (own_fds) and track their
 * writes to the working copies, so that restoring touches only the pages written (snapshot());
 * the read(2) hook opens the pages it will write (lazy_prepare_write). The docs' section lists
 * the limits.
 *
 * Everything the fault handler does is async-signal-safe: system calls, memcpy and memcmp,
 * memory taken with the mmap system call when the table is read (never malloc, never stdio).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt.h"

#define LZ_MAGIC "SCRYLZY1"
#define LZ_MAX_MAPS 64
#define LZ_MAX_PENDING 16
#define LZ_EFLAGS_TF 0x100

struct lz_line {
	uint32_t file;
	uint32_t nvalues;
	uint64_t off;                 /* byte offset of the cache line in its file */
	const unsigned char *values;  /* nvalues x RT_LINE bytes, inside the table's copy */
};

struct lz_file {
	const char *path;     /* absolute, NUL-terminated */
	dev_t dev;
	ino_t ino;
	int fd;               /* the working copy, read-write */
	uint32_t first, end;  /* its lines: g_lines[first..end) */
	/* The coordinator's snapshot (snapshot() below): view, a shared mapping of the file; base,
	 * shared anonymous memory where a page's content at the first branch is saved before the
	 * first write to it; page[i], the content page i is to have (in base, or a page copied by a
	 * nested coordinator). size bytes. */
	unsigned char *view, *base;
	unsigned char **page;
	uint64_t *saved; /* shared: one bit per page of base that holds the snapshot's content */
	uint64_t size;
};

struct lz_map {
	int active;
	int prot;     /* the mapping's own protection */
	int shared;   /* MAP_SHARED: the file's page cache is what the mapping shows */
	uint32_t file;
	uintptr_t base, end; /* page-aligned */
	uint64_t off;        /* file offset of base */
};

enum { LZ_UNKNOWN = 0, LZ_OFF = 1, LZ_ON = 2 };
static int g_lz;              /* SCRY_LAZY looked at (LZ_ON: the table is loaded) */
static char g_dir[PATH_MAX];  /* D */
static uint32_t g_timeout_ms, g_nfiles, g_nlines;
static struct lz_file *g_files;
static struct lz_line *g_lines;
static unsigned char *g_resolved; /* one byte per line */
static uint32_t *g_choices;       /* pairs (line, value) resolved by this process and its parents */
static uint32_t g_nchoices;
/* Shared with every process of the run: g_inner[d] is the pid of the child at depth d (d
 * choices) that became a coordinator, so that its parent writes no leaf record for it. */
static _Atomic uint32_t *g_inner;
static struct lz_map g_maps[LZ_MAX_MAPS];
static uintptr_t g_pending[LZ_MAX_PENDING]; /* pages opened for one instruction */
static int g_npending;
static int g_in_fault;  /* the fault handler runs (a fault on a listed line now is the runtime's own) */
static int g_timer = -1; /* the kernel's id of this leaf's SIGKILL timer */
/* Write tracking (restore() below): g_levels[k] is the level of the coordinator at depth k, in
 * shared memory; a process at depth d > 0 has levels 0..d-1 (g_nlevels == d) and marks in all
 * of them each page of a working copy it writes. g_inotify: the inotify instance of the latest
 * coordinator of this process (its own, or its parent's in a child), or -1. */
struct lz_level {
	_Atomic uint32_t overflow; /* a write no bit names: restore compares every page */
	uint64_t bits_words;       /* words at bits */
	uint64_t *npages;          /* per file: the pages the level has bits for */
	uint64_t *woff;            /* per file: its first word in bits */
	uint64_t *bits;
};
static struct lz_level **g_levels;
static uint32_t g_nlevels;
static int g_inotify = -1;
static unsigned char g_iobuf[1 << 16];

/* ---------------------------------------------------------------- system calls */

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* A line of text built without stdio (async-signal-safe). */
struct lz_buf {
	char b[512];
	size_t n;
};

static void buf_str(struct lz_buf *b, const char *s)
{
	while (*s && b->n < sizeof b->b - 1)
		b->b[b->n++] = *s++;
}

static void buf_u64(struct lz_buf *b, uint64_t v)
{
	char t[24];
	int k = 0;
	do
		t[k++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (k > 0 && b->n < sizeof b->b - 1)
		b->b[b->n++] = t[--k];
}

/* D/NAME into out (PATH_MAX bytes). */
static void dir_path(char *out, const char *name)
{
	struct lz_buf b = {.n = 0};
	buf_str(&b, g_dir);
	buf_str(&b, "/");
	buf_str(&b, name);
	size_t n = b.n < PATH_MAX - 1 ? b.n : PATH_MAX - 1;
	memcpy(out, b.b, n);
	out[n] = 0;
}

/* /proc/self/DIR/FD in b, NUL-terminated. */
static void proc_fd_path(struct lz_buf *b, const char *dir, int fd)
{
	b->n = 0;
	buf_str(b, "/proc/self/");
	buf_str(b, dir);
	buf_str(b, "/");
	buf_u64(b, (uint64_t)fd);
	b->b[b->n] = 0;
}

/* Appends one line (b, without its newline) to D/results with a single write. */
static void results_line(struct lz_buf *b)
{
	char path[PATH_MAX];
	dir_path(path, "results");
	b->b[b->n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	rt_full_write(fd, b->b, b->n);
	close(fd);
}

/* "abort PID REASON": lazy branching is impossible in this run. */
__attribute__((noreturn)) static void lz_abort(const char *reason, long err)
{
	struct lz_buf b = {.n = 0};
	buf_str(&b, "abort ");
	buf_u64(&b, (uint64_t)getpid());
	buf_str(&b, " ");
	buf_str(&b, reason);
	if (err) {
		buf_str(&b, " (errno ");
		buf_u64(&b, (uint64_t)err);
		buf_str(&b, ")");
	}
	if (g_dir[0])
		results_line(&b);
	_exit(125);
}

/* ---------------------------------------------------------------- the table */

struct lz_reader {
	const unsigned char *p, *end;
	int bad;
};

static uint32_t get_u32(struct lz_reader *r)
{
	if (r->bad || r->end - r->p < 4) {
		r->bad = 1;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}

static uint64_t get_u64(struct lz_reader *r)
{
	uint64_t lo = get_u32(r);
	return lo | (uint64_t)get_u32(r) << 32;
}

static const unsigned char *get_bytes(struct lz_reader *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *s = r->p;
	r->p += n;
	return s;
}

/* Memory for the table's structures: anonymous pages (never malloc: the table is read inside
 * an mmap call, which may come from anywhere). */
static void *lz_alloc(uint64_t n)
{
	void *p = sys_mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* A descriptor out of the program's usual range, so that it survives code that reuses low ones. */
static int high_fd(int fd)
{
	int h = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (h < 0)
		return fd;
	close(fd);
	return h;
}

/* Reads D/table; on any error writes the abort record and exits. */
static void lz_load(void)
{
	char path[PATH_MAX];
	dir_path(path, "table");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		lz_abort("the table is unreadable", errno);
	unsigned char *t = lz_alloc((uint64_t)st.st_size + 1);
	if (!t)
		lz_abort("no memory for the table", errno);
	for (off_t got = 0; got < st.st_size;) {
		ssize_t r = read(fd, t + got, (size_t)(st.st_size - got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			lz_abort("the table is unreadable", r < 0 ? errno : 0);
		got += r;
	}
	close(fd);
	struct lz_reader r = {t, t + st.st_size, 0};
	const unsigned char *magic = get_bytes(&r, 8);
	if (!magic || memcmp(magic, LZ_MAGIC, 8) != 0)
		lz_abort("malformed table: no SCRYLZY1 magic", 0);
	g_timeout_ms = get_u32(&r);
	g_nfiles = get_u32(&r);
	if (r.bad || g_nfiles == 0 || g_nfiles > 1024)
		lz_abort("malformed table: bad number of files", 0);
	g_files = lz_alloc(g_nfiles * sizeof *g_files);
	if (!g_files)
		lz_abort("no memory for the table", errno);
	for (uint32_t i = 0; i < g_nfiles; i++) {
		uint32_t n = get_u32(&r);
		const unsigned char *s = get_bytes(&r, n);
		if (!s || n == 0 || n >= PATH_MAX || memchr(s, 0, n) || s[0] != '/')
			lz_abort("malformed table: bad file path", 0);
		char *p = lz_alloc(n + 1);
		if (!p)
			lz_abort("no memory for the table", errno);
		memcpy(p, s, n);
		p[n] = 0;
		struct lz_file *f = &g_files[i];
		f->path = p;
		int wfd = open(p, O_RDWR | O_CLOEXEC);
		if (wfd < 0 || fstat(wfd, &st) < 0)
			lz_abort("a working copy of the table cannot be opened", errno);
		f->fd = high_fd(wfd);
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	g_nlines = get_u32(&r);
	if (r.bad || g_nlines > (uint64_t)(r.end - r.p) / 16)
		lz_abort("malformed table: bad number of lines", 0);
	g_lines = lz_alloc(((uint64_t)g_nlines + 1) * sizeof *g_lines);
	g_resolved = lz_alloc((uint64_t)g_nlines + 1);
	g_choices = lz_alloc(2 * ((uint64_t)g_nlines + 1) * sizeof *g_choices);
	g_levels = lz_alloc(((uint64_t)g_nlines + 2) * sizeof *g_levels);
	g_inner = sys_mmap(NULL, ((uint64_t)g_nlines + 2) * sizeof *g_inner, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!g_lines || !g_resolved || !g_choices || !g_levels || g_inner == MAP_FAILED)
		lz_abort("no memory for the table", errno);
	for (uint32_t i = 0; i < g_nlines; i++) {
		struct lz_line *l = &g_lines[i];
		l->file = get_u32(&r);
		l->off = get_u64(&r);
		l->nvalues = get_u32(&r);
		if (r.bad || l->file >= g_nfiles || l->off % RT_LINE != 0 || l->nvalues < 2)
			lz_abort("malformed table: bad line", 0);
		l->values = get_bytes(&r, (uint64_t)l->nvalues * RT_LINE);
		if (!l->values)
			lz_abort("malformed table: truncated", 0);
		if (i > 0 && (l->file < l[-1].file || (l->file == l[-1].file && l->off <= l[-1].off)))
			lz_abort("malformed table: lines not sorted by (file, offset) or not unique", 0);
	}
	if (r.p != r.end)
		lz_abort("malformed table: bytes after the last line", 0);
	for (uint32_t i = 0, j = 0; i < g_nfiles; i++) {
		g_files[i].first = j;
		while (j < g_nlines && g_lines[j].file == i)
			j++;
		g_files[i].end = j;
	}
}

/* First line of file f at an offset >= off. */
static uint32_t line_at(const struct lz_file *f, uint64_t off)
{
	uint32_t lo = f->first, hi = f->end;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g_lines[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does [off, off+len) of file f hold an unresolved listed line? */
static int unresolved_in(uint32_t file, uint64_t off, uint64_t len)
{
	const struct lz_file *f = &g_files[file];
	for (uint32_t i = line_at(f, off); i < f->end && g_lines[i].off < off + len; i++)
		if (!g_resolved[i])
			return 1;
	return 0;
}

static struct lz_map *map_of(uintptr_t addr)
{
	for (int i = 0; i < LZ_MAX_MAPS; i++)
		if (g_maps[i].active && addr >= g_maps[i].base && addr < g_maps[i].end)
			return &g_maps[i];
	return NULL;
}

/* Is this process tracking its writes to the working copies (a child of a coordinator)? */
static int tracking(void)
{
	return g_nlevels > 0 && g_nchoices > 0;
}

/* A mapping through which the program writes the file itself. */
static int writes_file(const struct lz_map *m)
{
	return m->shared && (m->prot & PROT_WRITE);
}

/* Marks page i of file in every level of this process, having saved its content first: call it
 * before the page is written. */
static void save_page(struct lz_file *f, uint64_t i);

static void mark_page(uint32_t file, uint64_t i)
{
	save_page(&g_files[file], i);
	for (uint32_t k = 0; k < g_nlevels; k++) {
		struct lz_level *lv = g_levels[k];
		if (i >= lv->npages[file])
			atomic_store(&lv->overflow, 1);
		else
			lv->bits[lv->woff[file] + i / 64] |= 1ull << (i % 64);
	}
}

/* Has this process written page i of file (in its parent's level, cleared at its fork)? */
static int page_written(uint32_t file, uint64_t i)
{
	const struct lz_level *lv = g_levels[g_nlevels - 1];
	return i >= lv->npages[file] || (lv->bits[lv->woff[file] + i / 64] >> (i % 64) & 1);
}

/* The protection page (of m) is to have: PROT_NONE while it holds an unresolved line; without
 * write access in a child until the child writes it (so that the write is marked); else the
 * mapping's own. */
static int page_prot(const struct lz_map *m, uintptr_t page)
{
	uint64_t off = m->off + (page - m->base);
	if (unresolved_in(m->file, off, RT_PAGE))
		return PROT_NONE;
	if (tracking() && writes_file(m) && !page_written(m->file, off / RT_PAGE))
		return m->prot & ~PROT_WRITE;
	return m->prot;
}

static void page_settle(const struct lz_map *m, uintptr_t page)
{
	mprotect((void *)page, RT_PAGE, page_prot(m, page));
}

/* Gives every page of m its protection (a new mapping, or a child's start). */
static void map_settle(const struct lz_map *m)
{
	int all = tracking() && writes_file(m) ? m->prot & ~PROT_WRITE : m->prot;
	if (all != m->prot && mprotect((void *)m->base, m->end - m->base, all) < 0)
		lz_abort("mprotect of a working copy's mapping failed", errno);
	const struct lz_file *f = &g_files[m->file];
	for (uint32_t i = line_at(f, m->off); i < f->end && g_lines[i].off < m->off + (m->end - m->base); i++) {
		if (g_resolved[i])
			continue;
		uintptr_t page = (m->base + (g_lines[i].off - m->off)) & ~(uintptr_t)(RT_PAGE - 1);
		if (mprotect((void *)page, RT_PAGE, PROT_NONE) < 0)
			lz_abort("mprotect of a working copy's mapping failed", errno);
	}
}

/* ---------------------------------------------------------------- mappings */

void lazy_reset(void)
{
	g_lz = LZ_UNKNOWN;
}

static void lz_init(void)
{
	const char *d = getenv("SCRY_LAZY");
	if (!d || !*d) {
		g_lz = LZ_OFF;
		return;
	}
	size_t n = strlen(d);
	if (n >= sizeof g_dir - 16) {
		g_lz = LZ_OFF;
		return;
	}
	memcpy(g_dir, d, n + 1);
	if (rt_init())
		lz_abort("SCRY_LAZY needs an inert runtime (SCRY_INERT=1): this run writes a trace", 0);
#if !defined(__x86_64__)
	lz_abort("lazy crash images need x86-64: they single-step an instruction with the trap flag", 0);
#endif
	lz_load();
	rt_take_signal(SIGSEGV);
	rt_take_signal(SIGTRAP);
	g_lz = LZ_ON;
}

/* An unused entry of g_maps (or the abort record). */
static struct lz_map *free_map(void)
{
	for (int i = 0; i < LZ_MAX_MAPS; i++)
		if (!g_maps[i].active)
			return &g_maps[i];
	lz_abort("more than 64 mappings of the working copies", 0);
}

/* Stops tracking [addr, addr+len): munmap, or a MAP_FIXED mapping over it. */
static void lz_untrack(uintptr_t addr, uint64_t len)
{
	uintptr_t lo = addr & ~(uintptr_t)(RT_PAGE - 1);
	uintptr_t hi = (addr + len + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
	for (int i = 0; i < LZ_MAX_MAPS; i++) {
		struct lz_map *m = &g_maps[i];
		if (!m->active || m->end <= lo || m->base >= hi)
			continue;
		struct lz_map right = *m;
		m->end = lo > m->base ? lo : m->base;
		m->active = m->end > m->base;
		if (hi < right.end) {
			right.off += hi - right.base;
			right.base = hi;
			*free_map() = right;
		}
	}
}

static void lz_mapped(void *p, size_t len, int prot, int flags, int fd, off_t off)
{
	if (g_lz == LZ_UNKNOWN)
		lz_init();
	if (g_lz != LZ_ON || len == 0)
		return;
	if (flags & MAP_FIXED)
		lz_untrack((uintptr_t)p, len);
	struct stat st;
	if ((flags & MAP_ANONYMOUS) || fd < 0 || fstat(fd, &st) < 0)
		return;
	uint32_t file = g_nfiles;
	for (uint32_t i = 0; i < g_nfiles; i++)
		if (g_files[i].dev == st.st_dev && g_files[i].ino == st.st_ino)
			file = i;
	if (file == g_nfiles)
		return;
	struct lz_map *m = free_map();
	*m = (struct lz_map){.active = 1, .prot = prot, .shared = (flags & MAP_SHARED) != 0, .file = file,
			     .base = (uintptr_t)p, .end = (uintptr_t)p + ((len + RT_PAGE - 1) & ~(uint64_t)(RT_PAGE - 1)),
			     .off = (uint64_t)off};
	map_settle(m);
}

/*
 * The program's (and its libraries') mmap, mmap64 and munmap: the system call, then the
 * tracking above when SCRY_LAZY is set. Weak, like the signal functions of writer.c: a program
 * defining one of these names keeps its own.
 */
__attribute__((weak)) void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = sys_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && g_lz != LZ_OFF) {
		int saved = errno;
		lz_mapped(p, len, prot, flags, fd, off);
		errno = saved;
	}
	return p;
}

__attribute__((weak)) void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

__attribute__((weak)) int munmap(void *addr, size_t len)
{
	int r = (int)syscall(SYS_munmap, addr, len);
	if (r == 0 && g_lz == LZ_ON)
		lz_untrack((uintptr_t)addr, len);
	return r;
}

/* ---------------------------------------------------------------- branching */

/*
 * The working copies' snapshot, exact and cheap to fork and to restore. The first coordinator
 * maps the file (view) and copies it into shared anonymous memory (base): fork copies no page
 * table entries for shared mappings, so a child costs the same whatever the pool's size.
 *
 * Restoring needs the pages that differ from the snapshot. A child tracks its writes: every
 * page of its shared writable mappings of a working copy starts without write access, and its
 * first write to one faults; the handler marks the page in the levels of every coordinator
 * above it and gives the page its access back. So after a child, its coordinator compares only
 * the pages its level names. What no bit can name makes the restore compare every page: a
 * write the program made with a system call (write, truncate: the coordinator's inotify watch
 * sees IN_MODIFY, which stores through a mapping never raise), a page beyond the level's size,
 * no inotify instance. A nested coordinator keeps the snapshot it inherited and copies into
 * private memory of its own only the pages that differ from what its parent expects (page[]),
 * found the same way: its own writes since its fork are its parent's level.
 */
static unsigned char *g_spare;   /* private pages for nested coordinators' copies */
static uint64_t g_spare_left;    /* pages left at g_spare */

static unsigned char *spare_page(void)
{
	if (g_spare_left == 0) {
		g_spare = lz_alloc(256 * RT_PAGE);
		if (!g_spare)
			lz_abort("the snapshot of a working copy could not be made", errno);
		g_spare_left = 256;
	}
	g_spare_left--;
	return g_spare + g_spare_left * RT_PAGE;
}

static size_t page_len(const struct lz_file *f, uint64_t i)
{
	uint64_t off = i * RT_PAGE;
	return f->size - off < RT_PAGE ? (size_t)(f->size - off) : RT_PAGE;
}

/* Calls fn(f, i) for every page i of f that lv names, or for every page when lv is NULL. */
static void each_page(struct lz_file *f, const struct lz_level *lv, uint32_t file, void (*fn)(struct lz_file *, uint64_t))
{
	uint64_t npages = (f->size + RT_PAGE - 1) / RT_PAGE;
	if (!lv) {
		for (uint64_t i = 0; i < npages; i++)
			fn(f, i);
		return;
	}
	uint64_t n = lv->npages[file] < npages ? lv->npages[file] : npages;
	for (uint64_t w = 0; w * 64 < n; w++)
		for (uint64_t b = lv->bits[lv->woff[file] + w]; b; b &= b - 1) {
			uint64_t i = w * 64 + (uint64_t)__builtin_ctzll(b);
			if (i < n)
				fn(f, i);
		}
}

static void take_page(struct lz_file *f, uint64_t i)
{
	if (memcmp(f->page[i], f->view + i * RT_PAGE, page_len(f, i)) != 0)
		f->page[i] = memcpy(spare_page(), f->view + i * RT_PAGE, page_len(f, i));
}

static void put_page(struct lz_file *f, uint64_t i)
{
	if (memcmp(f->page[i], f->view + i * RT_PAGE, page_len(f, i)) != 0)
		memcpy(f->view + i * RT_PAGE, f->page[i], page_len(f, i));
}

/* Did the inotify instance ino see a system call write the working copies (consuming the
 * events when drain is set)? A missing instance counts as yes. */
static int syscall_writes(int ino, int drain)
{
	if (ino < 0)
		return 1;
	if (!drain) {
		int n = 0;
		return ioctl(ino, FIONREAD, &n) < 0 || n > 0;
	}
	int seen = 0;
	for (;;) {
		ssize_t r = read(ino, g_iobuf, sizeof g_iobuf);
		if (r > 0) {
			seen = 1;
			continue;
		}
		return seen || (r < 0 && errno != EAGAIN && errno != EINTR);
	}
}

/* Saves page i of f into the base unless it holds the snapshot's content already. Unsaved pages
 * have not been written since the first branch (every store through a mapping marks, and so
 * saves, its page first; a system call's write makes the restore abort), so the file still holds
 * that content. */
static void save_page(struct lz_file *f, uint64_t i)
{
	if (!f->saved || i * RT_PAGE >= f->size || (f->saved[i / 64] >> (i % 64) & 1))
		return;
	memcpy(f->base + i * RT_PAGE, f->view + i * RT_PAGE, page_len(f, i));
	f->saved[i / 64] |= 1ull << (i % 64);
}

static void save_all(struct lz_file *f)
{
	for (uint64_t i = 0; i * RT_PAGE < f->size; i++)
		save_page(f, i);
}

static int all_saved(const struct lz_file *f)
{
	for (uint64_t i = 0; i * RT_PAGE < f->size; i++)
		if (!(f->saved[i / 64] >> (i % 64) & 1))
			return 0;
	return 1;
}

/* The pages to compare: those lv names, or every page (lv NULL) when the base has them all. */
static const struct lz_level *pages_to_compare(const struct lz_file *f, const struct lz_level *lv)
{
	if (lv || !f->page || all_saved(f))
		return lv;
	lz_abort("a system call wrote a working copy (write, truncate): its snapshot cannot be restored", 0);
}

/* The snapshot of file (index file) for the coordinator at depth. */
static void snapshot(struct lz_file *f, uint32_t file, uint32_t depth)
{
	struct stat st;
	if (fstat(f->fd, &st) < 0)
		lz_abort("the snapshot of a working copy could not be made", errno);
	uint64_t size = (uint64_t)st.st_size, npages = (size + RT_PAGE - 1) / RT_PAGE;
	if (f->page) {
		const struct lz_level *lv = g_levels[depth - 1];
		if (size != f->size || atomic_load(&lv->overflow) || syscall_writes(g_inotify, 0))
			lv = NULL;
		if (size != f->size)
			lz_abort("a system call changed a working copy's size: its snapshot cannot be restored", 0);
		each_page(f, pages_to_compare(f, lv), file, take_page);
		return;
	}
	/* The first branch: nothing is copied until a child writes. */
	f->size = size;
	if (size == 0)
		return;
	f->view = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	f->base = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	f->saved = sys_mmap(NULL, (npages + 63) / 64 * 8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	f->page = lz_alloc(npages * sizeof *f->page);
	if (f->view == MAP_FAILED || f->base == MAP_FAILED || f->saved == MAP_FAILED || !f->page)
		lz_abort("the snapshot of a working copy could not be made", errno);
	for (uint64_t i = 0; i < npages; i++)
		f->page[i] = f->base + i * RT_PAGE;
}

/* Puts the snapshot back: the pages that differ among those lv names (every page when lv is
 * NULL). */
static void restore(struct lz_file *f, uint32_t file, const struct lz_level *lv)
{
	struct stat st;
	if (fstat(f->fd, &st) < 0)
		lz_abort("a working copy could not be restored", errno);
	if ((uint64_t)st.st_size != f->size)
		lz_abort("a system call changed a working copy's size: its snapshot cannot be restored", 0);
	if (f->page)
		each_page(f, pages_to_compare(f, lv), file, put_page);
}

/* A new level for the coordinator at depth: one bit per page of each working copy. */
static struct lz_level *level_new(void)
{
	uint64_t words = 0;
	for (uint32_t f = 0; f < g_nfiles; f++)
		words += (g_files[f].size + 64 * RT_PAGE - 1) / (64 * RT_PAGE);
	uint64_t bytes = sizeof(struct lz_level) + (2 * (uint64_t)g_nfiles + words) * sizeof(uint64_t);
	struct lz_level *lv = sys_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lv == MAP_FAILED)
		lz_abort("no memory to track the children's writes", errno);
	lv->npages = (uint64_t *)(lv + 1);
	lv->woff = lv->npages + g_nfiles;
	lv->bits = lv->woff + g_nfiles;
	for (uint32_t f = 0, w = 0; f < g_nfiles; f++) {
		lv->npages[f] = (g_files[f].size + RT_PAGE - 1) / RT_PAGE;
		lv->woff[f] = w;
		w += (uint32_t)((lv->npages[f] + 63) / 64);
	}
	lv->bits_words = words;
	return lv;
}

/* An inotify instance watching the working copies for writes by system calls, or -1. */
static int watch_files(void)
{
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (uint32_t f = 0; ino >= 0 && f < g_nfiles; f++) {
		struct lz_buf p;
		proc_fd_path(&p, "fd", g_files[f].fd);
		if (inotify_add_watch(ino, p.b, IN_MODIFY) < 0) {
			close(ino);
			ino = -1;
		}
	}
	return ino;
}

/* Number of threads of this process (from /proc/self/status), or -1. */
static int thread_count(void)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, g_iobuf, sizeof g_iobuf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	g_iobuf[n] = 0;
	const char *t = strstr((const char *)g_iobuf, "\nThreads:");
	if (!t)
		return -1;
	t += 9;
	while (*t == ' ' || *t == '\t')
		t++;
	int v = 0;
	while (*t >= '0' && *t <= '9')
		v = v * 10 + (*t++ - '0');
	return v;
}

/* The conditions of branching (or the abort record). */
static void check_branchable(void)
{
	if (lseek(0, 0, SEEK_CUR) < 0 && errno != EBADF)
		lz_abort("standard input is not seekable", errno);
	for (int fd = 1; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			lz_abort(fd == 1 ? "standard output is not a regular file" : "standard error is not a regular file", 0);
	}
	if (thread_count() != 1)
		lz_abort("the process has more than one thread (fork copies one)", 0);
}

/* Copies what fd held (from its start) into D/PID.SUFFIX, then makes that file fd. */
static void take_output(int fd, const char *suffix)
{
	struct lz_buf b = {.n = 0};
	buf_u64(&b, (uint64_t)getpid());
	buf_str(&b, suffix);
	b.b[b.n] = 0;
	char path[PATH_MAX];
	dir_path(path, b.b);
	int out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		lz_abort("a leaf's output file cannot be created", errno);
	int src = fd;
	off_t pos = 0;
	for (;;) {
		ssize_t r = pread(src, g_iobuf, sizeof g_iobuf, pos);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EBADF && src == fd) {
			/* Opened write-only: read the same file through /proc. */
			struct lz_buf p;
			proc_fd_path(&p, "fd", fd);
			src = open(p.b, O_RDONLY | O_CLOEXEC);
			if (src < 0)
				lz_abort("standard output or error cannot be read back", errno);
			continue;
		}
		if (r <= 0)
			break;
		if (rt_full_write(out, g_iobuf, (size_t)r) < 0)
			lz_abort("a leaf's output file cannot be written", errno);
		pos += r;
	}
	if (src != fd)
		close(src);
	if (dup2(out, fd) < 0)
		lz_abort("a leaf's output file cannot be made its standard output or error", errno);
	close(out);
}

/*
 * The program's other open files. Children share the coordinator's open file descriptions: a
 * child's offset moves would carry over to its siblings, and a flock(2) lock the child releases
 * by closing its last descriptor would stay held by the coordinator's (libpmemobj flocks the pool
 * while it opens it, and opens it twice). So each child reopens every regular file it inherited
 * (other than standard input, output and error, and the runtime's own) into a description of its
 * own, at the same offset, with the same flags, and takes back the flock locks the coordinator
 * recorded at the branch and released on its side. POSIX record locks (fcntl) are not inherited
 * by fork: the coordinator releases its own so that the children can take them.
 */
#define LZ_MAX_FDS 256
static struct {
	int fd, lock; /* lock: LOCK_SH, LOCK_EX or 0 */
} g_fds[LZ_MAX_FDS];
static int g_nfds;

static int is_runtime_fd(int fd)
{
	for (uint32_t i = 0; i < g_nfiles; i++)
		if (g_files[i].fd == fd)
			return 1;
	return 0;
}

/* Calls fn(fd) for every open descriptor above 2 but the runtime's (from /proc/self/fd). */
static void each_fd(void (*fn)(int fd))
{
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	int fds[LZ_MAX_FDS], n = 0;
	for (;;) {
		long r = syscall(SYS_getdents64, dir, g_iobuf, sizeof g_iobuf);
		if (r <= 0)
			break;
		for (long p = 0; p < r;) {
			const char *name = (const char *)g_iobuf + p + 19;
			unsigned short reclen;
			memcpy(&reclen, g_iobuf + p + 16, sizeof reclen);
			p += reclen;
			int fd = 0, digits = 0;
			for (; *name >= '0' && *name <= '9'; name++, digits++)
				fd = fd * 10 + (*name - '0');
			if (digits > 0 && !*name && fd > 2 && fd != dir && !is_runtime_fd(fd) && n < LZ_MAX_FDS)
				fds[n++] = fd;
		}
	}
	close(dir);
	for (int i = 0; i < n; i++)
		fn(fds[i]);
}

static int is_regular(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* The flock lock held through fd's description, from /proc/self/fdinfo/FD. */
static int flock_of(int fd)
{
	struct lz_buf p;
	proc_fd_path(&p, "fdinfo", fd);
	int info = open(p.b, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return 0;
	ssize_t n = read(info, g_iobuf, sizeof g_iobuf - 1);
	close(info);
	if (n <= 0)
		return 0;
	g_iobuf[n] = 0;
	for (const char *l = strstr((const char *)g_iobuf, "lock:"); l; l = strstr(l + 5, "lock:")) {
		const char *eol = strchr(l, '\n');
		const char *fl = strstr(l, "FLOCK");
		if (!fl || (eol && fl > eol))
			continue;
		const char *w = strstr(fl, "WRITE");
		return w && (!eol || w < eol) ? LOCK_EX : LOCK_SH;
	}
	return 0;
}

static void record_fd(int fd)
{
	if (!is_regular(fd) || g_nfds == LZ_MAX_FDS)
		return;
	int lock = flock_of(fd);
	g_fds[g_nfds].fd = fd;
	g_fds[g_nfds++].lock = lock;
	if (lock)
		flock(fd, LOCK_UN);
	struct flock fl;
	memset(&fl, 0, sizeof fl);
	fl.l_type = F_UNLCK;
	fl.l_whence = SEEK_SET;
	fcntl(fd, F_SETLK, &fl);
}

/* In the coordinator, before its first child: the descriptors to reopen and their locks. */
static void record_fds(void)
{
	g_nfds = 0;
	each_fd(record_fd);
}

/* In a child: its own description for each recorded descriptor. */
static void own_fds(void)
{
	for (int i = 0; i < g_nfds; i++) {
		int fd = g_fds[i].fd;
		int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
		off_t pos = lseek(fd, 0, SEEK_CUR);
		if (fl < 0 || fdfl < 0)
			continue;
		struct lz_buf p;
		proc_fd_path(&p, "fd", fd);
		int nfd = open(p.b, (fl & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY)) | O_CLOEXEC);
		if (nfd < 0)
			continue;
		if (pos >= 0)
			lseek(nfd, pos, SEEK_SET);
		if (dup3(nfd, fd, (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
			close(nfd);
			continue;
		}
		close(nfd);
		if (g_fds[i].lock)
			flock(fd, g_fds[i].lock | LOCK_NB);
	}
}

static void timer_arm(void)
{
	if (g_timeout_ms == 0)
		return;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGKILL;
	int id;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id) < 0)
		lz_abort("the leaf's timer could not be created", errno);
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	its.it_value.tv_sec = g_timeout_ms / 1000;
	its.it_value.tv_nsec = (long)(g_timeout_ms % 1000) * 1000000L;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL) < 0)
		lz_abort("the leaf's timer could not be set", errno);
	g_timer = id;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void buf_choices(struct lz_buf *b, uint32_t line, uint32_t value)
{
	for (uint32_t k = 0; k < g_nchoices; k++) {
		buf_u64(b, g_choices[2 * k]);
		buf_str(b, ":");
		buf_u64(b, g_choices[2 * k + 1]);
		buf_str(b, ",");
	}
	buf_u64(b, line);
	buf_str(b, ":");
	buf_u64(b, value);
}

/*
 * Branches on line: returns in each child, one after the other, with the index of the value
 * the child is to see; the coordinator itself never returns.
 */
static uint32_t branch(uint32_t line)
{
	check_branchable();
	if (g_timer >= 0) {
		syscall(SYS_timer_delete, g_timer);
		g_timer = -1;
	}
	uint32_t depth = g_nchoices;
	atomic_store(&g_inner[depth], (uint32_t)getpid());
	struct lz_buf b = {.n = 0};
	buf_str(&b, "inner ");
	buf_u64(&b, (uint64_t)getpid());
	results_line(&b);
	for (uint32_t f = 0; f < g_nfiles; f++)
		snapshot(&g_files[f], f, depth);
	/* This coordinator's level and inotify instance (the parent's stays open, unread). */
	struct lz_level *lv = level_new();
	g_levels[depth] = lv;
	g_nlevels = depth + 1;
	g_inotify = watch_files();
	if (g_inotify < 0) /* no way to see system call writes: every page is compared */
		for (uint32_t f = 0; f < g_nfiles; f++)
			save_all(&g_files[f]);
	off_t in_off = lseek(0, 0, SEEK_CUR);
	/* libpmemobj maps pools MADV_DONTFORK: the children need them. */
	for (int i = 0; i < LZ_MAX_MAPS; i++)
		if (g_maps[i].active)
			madvise((void *)g_maps[i].base, g_maps[i].end - g_maps[i].base, MADV_DOFORK);
	/* The coordinator reaps its children itself, whatever the program did with SIGCHLD. */
	struct sigaction dfl, chld;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGCHLD, &dfl, &chld);
	/* Nor does it run the program's handlers, or die of the program's signals (an alarm, a
	 * leaf signalling its parent): it blocks every signal it can; each child unblocks them. */
	sigset_t all, mask;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &mask);
	record_fds();
	const struct lz_line *l = &g_lines[line];
	for (uint32_t i = 0; i < l->nvalues; i++) {
		if (i > 0) {
			int all = atomic_load(&lv->overflow) || syscall_writes(g_inotify, 1);
			for (uint32_t f = 0; f < g_nfiles; f++)
				restore(&g_files[f], f, all ? NULL : lv);
			syscall_writes(g_inotify, 1); /* the restore's own truncation */
		}
		memset(lv->bits, 0, lv->bits_words * sizeof *lv->bits);
		atomic_store(&lv->overflow, 0);
		if (in_off >= 0)
			lseek(0, in_off, SEEK_SET);
		atomic_store(&g_inner[depth + 1], 0);
		uint64_t t0 = now_ms();
		pid_t pid = _Fork();
		if (pid == 0) {
			sigaction(SIGCHLD, &chld, NULL);
			sigprocmask(SIG_SETMASK, &mask, NULL);
			g_choices[2 * depth] = line;
			g_choices[2 * depth + 1] = i;
			g_nchoices = depth + 1;
			for (int k = 0; k < LZ_MAX_MAPS; k++)
				if (g_maps[k].active)
					map_settle(&g_maps[k]);
			own_fds();
			timer_arm();
			take_output(1, ".out");
			take_output(2, ".err");
			return i;
		}
		if (pid < 0)
			lz_abort("fork failed", errno);
		int status = 0;
		pid_t w;
		while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (w < 0)
			lz_abort("waiting for a child failed", errno);
		uint64_t ran = now_ms() - t0;
		if (atomic_load(&g_inner[depth + 1]) == (uint32_t)pid)
			continue;
		int timedout = g_timeout_ms > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && ran >= g_timeout_ms;
		b.n = 0;
		buf_str(&b, "leaf ");
		buf_u64(&b, (uint64_t)pid);
		buf_str(&b, " ");
		buf_u64(&b, (uint64_t)(unsigned)status);
		buf_str(&b, timedout ? " 1 " : " 0 ");
		buf_choices(&b, line, i);
		results_line(&b);
	}
	_exit(0);
}

/* Writes value v of line into every view of it: the file (what shared mappings show), and each
 * private mapping through which the program sees it. */
static void resolve(uint32_t line, uint32_t v)
{
	const struct lz_line *l = &g_lines[line];
	const unsigned char *val = l->values + (uint64_t)v * RT_LINE;
	struct lz_file *f = &g_files[l->file];
	if (f->page && l->off + RT_LINE <= f->size) {
		/* Through the snapshot's view: no inotify event, a marked page. */
		mark_page(l->file, l->off / RT_PAGE);
		memcpy(f->view + l->off, val, RT_LINE);
	} else if (pwrite(f->fd, val, RT_LINE, (off_t)l->off) != RT_LINE) {
		lz_abort("writing a line's value into the working copy failed", errno);
	}
	g_resolved[line] = 1;
	for (int i = 0; i < LZ_MAX_MAPS; i++) {
		const struct lz_map *m = &g_maps[i];
		if (!m->active || m->shared || m->file != l->file || l->off < m->off ||
		    l->off - m->off >= m->end - m->base)
			continue;
		unsigned char *a = (unsigned char *)(m->base + (l->off - m->off));
		uintptr_t page = (uintptr_t)a & ~(uintptr_t)(RT_PAGE - 1);
		if (mprotect((void *)page, RT_PAGE, PROT_READ | PROT_WRITE) < 0)
			lz_abort("mprotect of a working copy's mapping failed", errno);
		memcpy(a, val, RT_LINE);
		page_settle(m, page);
	}
}

/* Branches on line, writes the child's value, and settles the line's page in every mapping of
 * its file. */
static void resolve_line(uint32_t line)
{
	resolve(line, branch(line));
	const struct lz_line *l = &g_lines[line];
	for (int k = 0; k < LZ_MAX_MAPS; k++) {
		const struct lz_map *mm = &g_maps[k];
		if (mm->active && mm->file == l->file && l->off >= mm->off && l->off - mm->off < mm->end - mm->base)
			page_settle(mm, (mm->base + (l->off - mm->off)) & ~(uintptr_t)(RT_PAGE - 1));
	}
}

struct lz_hit {
	uintptr_t addr;
	uint32_t line;
};

/* The unresolved listed lines overlapping [a, a+64), in address order (at most two per mapping). */
static int lines_at(uintptr_t a, struct lz_hit *hits, int max)
{
	int n = 0;
	for (int i = 0; i < LZ_MAX_MAPS; i++) {
		const struct lz_map *m = &g_maps[i];
		if (!m->active || m->end <= a || m->base >= a + RT_LINE)
			continue;
		uintptr_t lo = a > m->base ? a : m->base;
		uintptr_t hi = a + RT_LINE < m->end ? a + RT_LINE : m->end;
		uint64_t flo = m->off + (lo - m->base), fhi = m->off + (hi - m->base);
		const struct lz_file *f = &g_files[m->file];
		for (uint32_t k = line_at(f, flo >= RT_LINE ? flo - RT_LINE + 1 : 0); k < f->end && g_lines[k].off < fhi; k++) {
			if (g_resolved[k] || g_lines[k].off + RT_LINE <= flo)
				continue;
			int dup = 0;
			for (int j = 0; j < n; j++)
				dup |= hits[j].line == k;
			if (dup || n == max)
				continue;
			struct lz_hit h = {m->base + (g_lines[k].off - m->off), k};
			int j = n++;
			for (; j > 0 && hits[j - 1].addr > h.addr; j--)
				hits[j] = hits[j - 1];
			hits[j] = h;
		}
	}
	return n;
}

#if defined(__x86_64__)
/* SIGSEGV at a (uc: the interrupted context): 1 when it was a protected page of a working copy. */
static int on_fault(uintptr_t a, ucontext_t *uc)
{
	uintptr_t page = a & ~(uintptr_t)(RT_PAGE - 1);
	struct lz_map *m = map_of(a);
	if (!m)
		return 0;
	uint64_t off = m->off + (page - m->base);
	if (!unresolved_in(m->file, off, RT_PAGE)) {
		/* A child's first write to the page (page_prot): mark it, give the access back. */
		if (!tracking() || !writes_file(m) || !(uc->uc_mcontext.gregs[REG_ERR] & 2))
			return 0;
		mark_page(m->file, off / RT_PAGE);
		mprotect((void *)page, RT_PAGE, m->prot);
		return 1;
	}
	if (g_in_fault)
		lz_abort("the runtime touched a listed line inside its own fault handler", 0);
	g_in_fault = 1;
	struct lz_hit hits[8];
	int n = lines_at(a, hits, 8);
	for (int i = 0; i < n; i++)
		resolve_line(hits[i].line);
	if (unresolved_in(m->file, off, RT_PAGE)) {
		/* Other lines of the page are still undetermined: open it for one instruction. */
		if (g_npending == LZ_MAX_PENDING)
			lz_abort("too many pages opened for one instruction", 0);
		if (tracking() && writes_file(m))
			mark_page(m->file, off / RT_PAGE); /* the instruction may write it */
		mprotect((void *)page, RT_PAGE, m->prot);
		g_pending[g_npending++] = page;
		uc->uc_mcontext.gregs[REG_EFL] |= LZ_EFLAGS_TF;
	} else {
		page_settle(m, page);
	}
	g_in_fault = 0;
	return 1;
}

/* SIGTRAP after the instruction that ran on opened pages: protects them again. */
static int on_step(ucontext_t *uc)
{
	if (g_npending == 0)
		return 0;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)LZ_EFLAGS_TF;
	for (int i = 0; i < g_npending; i++) {
		const struct lz_map *m = map_of(g_pending[i]);
		if (m)
			page_settle(m, g_pending[i]);
	}
	g_npending = 0;
	return 1;
}

#else
/* Lazy mode never starts off x86-64 (lazy init aborts). */
static int on_fault(uintptr_t a, ucontext_t *uc)
{
	(void)a, (void)uc;
	return 0;
}
static int on_step(ucontext_t *uc)
{
	(void)uc, (void)g_pending, (void)g_npending, (void)lines_at;
	return 0;
}
#endif

void lazy_prepare_write(void *addr, size_t len)
{
	if (g_lz != LZ_ON || !addr || len == 0)
		return;
	uintptr_t a = (uintptr_t)addr, end = a + len;
	for (uintptr_t page = a & ~(uintptr_t)(RT_PAGE - 1); page < end; page += RT_PAGE) {
		struct lz_map *m = map_of(page);
		if (!m)
			continue;
		uint64_t off = m->off + (page - m->base);
		const struct lz_file *f = &g_files[m->file];
		g_in_fault = 1;
		for (uint32_t i = line_at(f, off); i < f->end && g_lines[i].off < off + RT_PAGE; i++)
			if (!g_resolved[i])
				resolve_line(i);
		g_in_fault = 0;
		if (tracking() && writes_file(m))
			mark_page(m->file, off / RT_PAGE);
		page_settle(m, page);
	}
}

int lazy_fault(int sig, siginfo_t *si, void *uc)
{
	if (g_lz != LZ_ON || !si || !uc)
		return 0;
	if (sig == SIGSEGV)
		return si->si_code == SEGV_ACCERR && on_fault((uintptr_t)si->si_addr, uc);
	if (sig == SIGTRAP)
		return on_step(uc);
	return 0;
}

/* The mark scry looks for before it asks a program for lazy runs (like the fork server's). */
__attribute__((used)) const char __scry_lazy_protocol[] = LZ_MAGIC;
