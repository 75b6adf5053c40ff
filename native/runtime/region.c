//go:build ignore

/*
 * region.c: PM regions, their shadow copies, and external-write detection.
 *
 * Every region keeps a shadow: an anonymous MAP_NORESERVE mapping of the same length holding the
 * bytes the trace says the region holds (docs/trace-format.md, "Semantics": replaying STORE,
 * NT_STORE and EXTERNAL_WRITE over zeros gives the region's bytes). Instrumented stores update it.
 *
 * Initial content. When the region is a MAP_SHARED mapping of a regular file (pools, pmem_map_file,
 * --pm globs), REGION_MAP's initial EXTERNAL_WRITEs are read from the file with pread, over the
 * data extents SEEK_DATA/SEEK_HOLE list (listed before reading: reading may turn neighbouring
 * unwritten extents into "data"), all-zero pages skipped. The program's mapping is never read:
 * reading it would populate every page table entry, and mprotect's cost grows with them. Other
 * regions (scry_register_pm without a file, PMEM_FILE_TMPFILE) are read through the mapping,
 * resident pages only (mincore).
 *
 * Write protection ("protected by default"). A writable region is PROT_READ from REGION_MAP on,
 * except for the set W of pages made writable since the last protection: a write to a protected
 * page faults, the SIGSEGV handler adds the page to W and makes it writable (one mprotect of one
 * page). Outside windows that is all: the write comes from instrumented code, whose callback
 * puts the bytes in the shadow. Around calls into code scry did not instrument (libpmemobj calls,
 * and ext calls whose callee is not an instrumented function -- the pass registers every
 * function it instruments, __scry_register_functions -- and that get a PM pointer or are in
 * libpmem/libpmemobj) a *protection window* opens: W is write-protected again (its pages coalesced
 * into ranges; whole regions in one call when W holds more than RT_W_WHOLE pages) and emptied.
 * Every page the call writes then faults into W. When the window closes, each page of W is
 * compared with the shadow and the changed bytes become EXTERNAL_WRITE records with the call's
 * site; the pages stay writable (a nested window's close needs no re-protection: the enclosing
 * window's own comparison covers W again). So a page costs one fault and one re-protection per
 * window that writes it, and nothing while only instrumented code writes it; a window costs
 * nothing when W is empty. Windows left open by a longjmp (PMDK aborts) are closed at the next
 * callback of the thread whose frame is not below the window's. W is a list (RT_MAX_W pages) plus
 * a bitmap per region; past RT_MAX_W pages, or when mprotect fails (vm.max_map_count), the
 * region becomes wholly writable (all_w: one VMA again) and windows compare it whole until the
 * next protection, so the VMAs that per-page protection splits stay below ~2 * RT_MAX_W.
 *
 * Kernel writes. The kernel cannot write into a protected page (EFAULT): the hooks of read,
 * fgets, memcpy, memmove and memset make their destination writable first (pm_unprotect_range),
 * and so does the post hook of pmemobj_tx_add_range* for small added ranges (saves the fault of
 * the program's next store).
 *
 * Safety net. REGION_UNMAP and exit compare whole regions (the file with pread, over its data
 * extents, for file mappings; else through the mapping) and record differences with site 0;
 * after pmemobj_close the pool file is compared again (flag persisted, the close's site).
 *
 * Multi-threading: the region table, the windows, W and the shadows are guarded by the trace
 * lock, which the SIGSEGV handler takes too (the runtime never writes PM, so a faulting thread
 * never holds it). Protection is global, so bytes another thread writes with uninstrumented code
 * during a window are attributed to that window's call: attribution is exact only for
 * single-threaded programs. The windows of all threads share one array, in the order they
 * opened; a window closes with the windows its own thread opened after it, never another
 * thread's, so that a call still running keeps noting what it flushes until its own close.
 *
 * Limitations:
 *   - System calls other than read (and the hooked libc functions) that write into PM (pread,
 *     recv, fread's direct reads, ...) fail with EFAULT on a protected page, and so do such
 *     calls made by uninstrumented code inside a window (as before protection became the
 *     default).
 *   - Writes by uninstrumented code outside any window (a call the pass did not wrap) fault like
 *     instrumented ones and are taken for them: they reach the trace at the next safety net
 *     (unmap or exit) with site 0, as before.
 *   - A region not starting on a page boundary (scry_register_pm of arbitrary memory) is never
 *     protected: uninstrumented writes to it are found only by the safety net; the last partial
 *     page of a region is never protected either.
 *   - The program's own mprotect of PM, and writes to the file through another mapping or
 *     write(2), are not seen by the window mechanism (the safety net compares the file).
 *   - A region closed by unmap is made writable again first (libpmemobj writes while closing).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

struct rt_region g_regions[RT_MAX_REGIONS];
_Atomic int g_nregions;
_Atomic int g_nwin;
uintptr_t __scry_pm_lo = UINTPTR_MAX;
uintptr_t __scry_pm_hi = 0;

static _Atomic int g_hint;      /* index of the last region found */
static int g_used;              /* slots in use: g_regions[0..g_used) */
static int g_closing[RT_MAX_REGIONS]; /* slot reserved by pm_remove_begin */
static uint32_t g_next_region = 1;

struct rt_region *pm_find(uintptr_t a)
{
	int h = atomic_load_explicit(&g_hint, memory_order_relaxed);
	struct rt_region *r = &g_regions[h];
	if (RT_LIKELY(atomic_load_explicit(&r->active, memory_order_acquire) && a >= r->base && a < r->end))
		return r;
	int n = __atomic_load_n(&g_used, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++) {
		r = &g_regions[i];
		if (atomic_load_explicit(&r->active, memory_order_acquire) && a >= r->base && a < r->end) {
			atomic_store_explicit(&g_hint, i, memory_order_relaxed);
			return r;
		}
	}
	return NULL;
}

/* Recomputes the hull globals the pass's inline filter reads. Lock held. */
static void hull_update(void)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (!atomic_load(&r->active))
			continue;
		if (r->base < lo)
			lo = r->base;
		if (r->end > hi)
			hi = r->end;
	}
	__atomic_store_n(&__scry_pm_lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&__scry_pm_hi, hi, __ATOMIC_RELAXED);
}

void pm_for_each(uintptr_t addr, uint64_t len, void (*fn)(struct rt_region *, uintptr_t, uint64_t, void *),
		 void *arg)
{
	uintptr_t end = addr + len < addr ? UINTPTR_MAX : addr + len;
	while (addr < end) {
		struct rt_region *r = pm_find(addr);
		if (r) {
			uintptr_t e = end < r->end ? end : r->end;
			fn(r, addr, e - addr, arg);
			addr = e;
			continue;
		}
		/* Skip to the next region start inside the range, if any. */
		uintptr_t next = end;
		for (int i = 0; i < g_used; i++) {
			struct rt_region *q = &g_regions[i];
			if (atomic_load(&q->active) && q->base > addr && q->base < next)
				next = q->base;
		}
		addr = next;
	}
}

struct range_arg {
	int kind;
	uint32_t site;
};

static void record_piece(struct rt_region *r, uintptr_t a, uint64_t n, void *argp)
{
	struct range_arg *arg = argp;
	rt_lock();
	if (atomic_load(&r->active)) {
		if (arg->kind == SCRY_EV_LOAD) {
			rec_mem_locked(arg->kind, arg->site, a, (const void *)a, n);
		} else {
			unsigned char *sh = r->shadow + (a - r->base);
			memcpy(sh, (const void *)a, n);
			rec_mem_locked(arg->kind, arg->site, a, sh, n);
		}
	}
	rt_unlock();
}

static void shadow_piece(struct rt_region *r, uintptr_t a, uint64_t n, void *arg)
{
	(void)arg;
	rt_lock();
	if (atomic_load(&r->active))
		memcpy(r->shadow + (a - r->base), (const void *)a, n);
	rt_unlock();
}

void pm_store_then_check(const void *addr, uint64_t len, void *frame)
{
	if (RT_LIKELY(atomic_load_explicit(&g_nwin, memory_order_relaxed) == 0))
		return;
	if (len)
		pm_for_each((uintptr_t)addr, len, shadow_piece, NULL);
	win_close_stale(frame);
}

void pm_record_range(int kind, uint32_t site, const void *addr, uint64_t len)
{
	if (len == 0 || !pm_any())
		return;
	if (kind == SCRY_EV_LOAD && g_no_loads)
		return;
	struct range_arg arg = {kind, site};
	pm_for_each((uintptr_t)addr, len, record_piece, &arg);
}

/* ---------------------------------------------------------------- diffs */

/* A run of changed bytes being accumulated into one EXTERNAL_WRITE (region offsets [s, e)). */
struct run {
	struct rt_region *r;
	uint64_t s, e;
	uint32_t site;
	uint8_t flags;
	uint32_t gap; /* equal bytes allowed inside one record */
	int check;    /* set outside when a changed byte lies outside the ranges pm_note_write noted */
	int outside;
};

static int fr_covers(uintptr_t a, uintptr_t e);

#define RUN_MAX (1u << 20)

static void run_emit(struct run *u)
{
	if (u->e > u->s)
		rec_ext_locked(u->site, u->r->base + u->s, u->r->shadow + u->s, u->e - u->s, u->flags);
	u->s = u->e = 0;
}

static void run_add(struct run *u, uint64_t s, uint64_t e)
{
	if (u->e > u->s && s >= u->e && s - u->e <= u->gap)
		u->e = e;
	else {
		run_emit(u);
		u->s = s;
		u->e = e;
	}
	if (u->e - u->s >= RUN_MAX)
		run_emit(u);
}

/* Compares one page (region offset off, n bytes) of cur with the shadow; changed bytes are copied
 * into the shadow and added to the run. */
static int diff_page(struct run *u, const unsigned char *cur, uint64_t off, uint64_t n)
{
	unsigned char *sh = u->r->shadow + off;
	if (memcmp(cur, sh, n) == 0)
		return 0;
	uint64_t i = 0;
	while (i < n) {
		/* Skip equal 64-byte lines, then equal 8-byte words. */
		while (i + 64 <= n) {
			uint64_t x = 0;
			for (int k = 0; k < 64; k += 8) {
				uint64_t a, b;
				memcpy(&a, cur + i + k, 8);
				memcpy(&b, sh + i + k, 8);
				x |= a ^ b;
			}
			if (x)
				break;
			i += 64;
		}
		while (i + 8 <= n) {
			uint64_t a, b;
			memcpy(&a, cur + i, 8);
			memcpy(&b, sh + i, 8);
			if (a != b)
				break;
			i += 8;
		}
		while (i < n && cur[i] == sh[i])
			i++;
		if (i >= n)
			break;
		uint64_t s = i, last = i;
		while (i < n && i - last <= u->gap) {
			if (cur[i] != sh[i])
				last = i;
			i++;
		}
		memcpy(sh + s, cur + s, last + 1 - s);
		if (u->check && !u->outside && !fr_covers(u->r->base + off + s, u->r->base + off + last + 1))
			u->outside = 1;
		run_add(u, off + s, off + last + 1);
		i = last + 1;
	}
	return 1;
}

static int page_is_zero(const unsigned char *p, uint64_t n)
{
	for (uint64_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w)
			return 0;
	}
	for (uint64_t i = n & ~7ull; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Diffs region offsets [lo, hi) of cur (cur points at region offset 0) page by page. */
static void diff_span(struct run *u, const unsigned char *cur, uint64_t lo, uint64_t hi, int skip_zero)
{
	uint64_t len = u->r->end - u->r->base;
	lo &= ~(uint64_t)(RT_PAGE - 1);
	if (hi > len)
		hi = len;
	for (uint64_t off = lo; off < hi; off += RT_PAGE) {
		uint64_t n = hi - off < RT_PAGE ? hi - off : RT_PAGE;
		if (skip_zero && page_is_zero(cur + off, n))
			continue;
		diff_page(u, cur + off, off, n);
	}
}

/* Opens the region's file for reading: a new open file description (lseek on the program's own
 * descriptor would move its file position). fd >= 0: the program's descriptor of the file, else
 * the path. When the region knows its file's identity, a file that is not it (renamed over the
 * path since) is refused. Returns -1 on failure. Async-signal-safe. */
static int open_region_file(struct rt_region *r, int fd)
{
	int own = -1;
	if (fd >= 0) {
		char link[32] = "/proc/self/fd/";
		char digits[12];
		int n = 0;
		unsigned v = (unsigned)fd;
		do
			digits[n++] = (char)('0' + v % 10);
		while ((v /= 10) && n < 11);
		size_t l = strlen(link);
		while (n > 0)
			link[l++] = digits[--n];
		link[l] = 0;
		own = open(link, O_RDONLY | O_CLOEXEC);
	}
	if (own < 0 && r->path)
		own = open(r->path, O_RDONLY | O_CLOEXEC);
	if (own < 0)
		return -1;
	/* No readahead: on file systems that report pages in the page cache of unwritten
	 * (fallocated) extents as data for SEEK_DATA, reading ahead would turn the whole file into
	 * "data" for the next scan. */
	posix_fadvise(own, 0, 0, POSIX_FADV_RANDOM);
	if (r->file && r->ino) {
		struct stat st;
		if (fstat(own, &st) != 0 || st.st_dev != r->dev || st.st_ino != r->ino) {
			close(own);
			return -1;
		}
	}
	return own;
}

/* Calls diff_span over the parts of the region that may hold data: the file's data extents when
 * the file is known (holes are never read), else the resident pages (mincore), else all. cur is
 * read through the mapping: prefer diff_file for regions that are file mappings. */
static void diff_region(struct run *u, const unsigned char *cur, int fd, int skip_zero)
{
	struct rt_region *r = u->r;
	uint64_t len = r->end - r->base;
	int own = open_region_file(r, fd);
	if (own >= 0) {
		uint64_t pos = r->file_off, stop = r->file_off + len;
		int ok = 1;
		while (pos < stop) {
			off_t d = lseek(own, (off_t)pos, SEEK_DATA);
			if (d < 0) {
				if (errno != ENXIO)
					ok = 0;
				break;
			}
			off_t h = lseek(own, d, SEEK_HOLE);
			if (h < 0) {
				ok = 0;
				break;
			}
			uint64_t ds = (uint64_t)d, he = (uint64_t)h;
			if (ds >= stop)
				break;
			if (he > stop)
				he = stop;
			diff_span(u, cur, ds - r->file_off, he - r->file_off + RT_PAGE - 1, skip_zero);
			pos = he;
		}
		close(own);
		if (ok)
			return;
		/* SEEK_DATA unsupported: fall through to a full scan. */
		diff_span(u, cur, 0, len, skip_zero);
		return;
	}
	if (cur == (const unsigned char *)r->base) {
		static unsigned char vec[16384];
		for (uint64_t off = 0; off < len; off += (uint64_t)sizeof vec * RT_PAGE) {
			uint64_t n = len - off < (uint64_t)sizeof vec * RT_PAGE ? len - off : (uint64_t)sizeof vec * RT_PAGE;
			if (mincore((void *)(r->base + off), n, vec) < 0) {
				diff_span(u, cur, off, off + n, skip_zero);
				continue;
			}
			for (uint64_t p = 0; p < (n + RT_PAGE - 1) / RT_PAGE; p++)
				if (vec[p] & 1)
					diff_span(u, cur, off + p * RT_PAGE, off + (p + 1) * RT_PAGE, skip_zero);
		}
		return;
	}
	diff_span(u, cur, 0, len, skip_zero);
}

/* Buffer of diff_file (lock held while it is used). */
static unsigned char g_iobuf[1u << 18];

/* Compares the region's file (its bytes at file_off, read with pread: the program's mapping is
 * never touched, so no page of it gets populated) with the shadow, over the file's data extents
 * (skip_zero: all-zero pages are skipped too, for the initial content). Returns 0 when the file
 * cannot be read (not a regular file, a different file, shorter than the region): the caller
 * falls back. Async-signal-safe. */
static int diff_file(struct run *u, int fd, int skip_zero)
{
	struct rt_region *r = u->r;
	if (!r->file)
		return 0;
	uint64_t len = r->end - r->base;
	int own = open_region_file(r, fd);
	if (own < 0)
		return 0;
	struct stat st;
	if (fstat(own, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < r->file_off + len) {
		close(own);
		return 0;
	}
	/* The data extents, listed before anything is read: reading may bring neighbouring pages
	 * of unwritten extents into the page cache (readahead, large folios), and some file
	 * systems then report those as data. */
	static uint64_t ext[2 * 512];
	int next = 0;
	uint64_t pos = r->file_off, stop = r->file_off + len;
	while (pos < stop) {
		uint64_t ds, he;
		off_t d = lseek(own, (off_t)pos, SEEK_DATA);
		if (d < 0) {
			if (errno == ENXIO)
				break;
			ds = pos, he = stop; /* SEEK_DATA unsupported: all is data */
		} else {
			off_t h = lseek(own, d, SEEK_HOLE);
			ds = (uint64_t)d;
			he = h < 0 ? stop : (uint64_t)h;
		}
		if (ds >= stop)
			break;
		if (he > stop)
			he = stop;
		if (next == (int)(sizeof ext / sizeof ext[0]) / 2) { /* too many: the rest is data */
			ext[2 * next - 1] = stop;
			break;
		}
		ext[2 * next] = ds;
		ext[2 * next + 1] = he;
		next++;
		pos = he;
	}
	for (int x = 0; x < next; x++) {
		uint64_t ds = ext[2 * x], he = ext[2 * x + 1];
		/* Region offsets [lo, hi), whole pages. */
		uint64_t lo = (ds - r->file_off) & ~(uint64_t)(RT_PAGE - 1);
		uint64_t hi = he - r->file_off;
		hi = hi + RT_PAGE - 1 < hi ? len : (hi + RT_PAGE - 1) & ~(uint64_t)(RT_PAGE - 1);
		if (hi > len)
			hi = len;
		while (lo < hi) {
			uint64_t want = hi - lo < sizeof g_iobuf ? hi - lo : sizeof g_iobuf;
			uint64_t got = 0;
			while (got < want) {
				ssize_t n = pread(own, g_iobuf + got, want - got, (off_t)(r->file_off + lo + got));
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0)
					break;
				got += (uint64_t)n;
			}
			if (got < want) {
				/* A read error (a short file was refused above). What was compared so
				 * far is in the shadow: the caller's fallback finds nothing twice. */
				close(own);
				return 0;
			}
			for (uint64_t i = 0; i < want; i += RT_PAGE) {
				uint64_t n = want - i < RT_PAGE ? want - i : RT_PAGE;
				if (skip_zero && page_is_zero(g_iobuf + i, n))
					continue;
				diff_page(u, g_iobuf + i, lo + i, n);
			}
			lo += want;
		}
	}
	close(own);
	return 1;
}

/* The whole region compared with the shadow: its file when it is a file mapping, else through
 * the mapping. */
static void diff_whole(struct run *u, int skip_zero)
{
	if (!diff_file(u, -1, skip_zero))
		diff_region(u, (const unsigned char *)u->r->base, -1, skip_zero);
}

/* ---------------------------------------------------------------- write protection */

/*
 * Page states. A page of a writable region is protected (PROT_READ) or listed: writable, with its
 * bit set in the region's wbits, and in exactly one of three lists:
 *   W  pages made writable since the last window opened, by a fault (pm_handle_fault) or for the
 *      kernel and the program's next stores (pm_unprotect_range);
 *   V  watched pages: pages a window changed, kept writable and compared whole with the shadow
 *      at the close of every window;
 *   P  pages left writable for the program: compared at a window's close only over the ranges
 *      the call wrote or flushed through libpmem, or over the objects it created (below).
 * A region whose pages cannot be listed (g_w full, an mprotect failure) is marked all_w: wholly
 * writable, compared whole by every window, wholly re-protected. Everything here runs under the
 * trace lock, the SIGSEGV handler included.
 *
 * When a window opens, W is emptied: a page that a window changed enters V (RT_MAX_V of them; the
 * least recently changed one leaves); the other pages of W, and the pages of V on which no window
 * made an unexplained change (below) for RT_V_IDLE windows, go to P when the window trusts
 * libpmem, else they and every page of P are protected again. A page on which a libpmemobj call
 * made an unexplained change never goes to P. When P would exceed RT_MAX_P pages, its regions are
 * protected whole, one mprotect each.
 *
 * Why. A program driving libpmemobj alternates its stores with library calls that write a few
 * pages again and again (the lane's undo log, the heap's metadata), and it writes, between two
 * calls, pages that the library then leaves alone (the objects it added to its transaction).
 * Protecting every written page at every window and taking its fault in the next one cost two
 * mprotect calls and a signal per page and window, most of a traced operation's cost, growing
 * with the VMAs the pool's mapping splits into (docs/performance.md, "Tracing cost").
 *
 * Trusting libpmem. libpmemobj makes the bytes it writes to a pool durable through libpmem: plain
 * stores followed by pmem_persist, pmem_flush, pmem_msync or pmem_deep_flush, or pmem_memcpy,
 * pmem_memmove, pmem_memset. The runtime defines those functions in the instrumented program
 * (hooks_pmem.c), where the dynamic linker binds libpmemobj's calls to them, and each notes its
 * range while a window is open (pm_note_write); the hooks of the allocating calls note the object
 * they return, header included (the zeroing of a transactional allocation is made durable at the
 * commit only). A window around a hooked libpmemobj call compares, at its close, the pages of W
 * and V whole and the pages of P over the noted ranges. A change on a page compared whole that no
 * noted range covers is unexplained: libpmemobj writes some bytes without making them durable in
 * the same call (the pool descriptor's run-time fields, the generation number of an overflow undo
 * log, its statistics); such a page is kept in V, or protected, never in P. So the one write this
 * misses is an unexplained write to a page of P, one the program wrote and no libpmemobj call has
 * changed unexplained before: the comparisons at unmap and exit still find it (site 0). Trust
 * starts once a libpmemobj window noted a range, and ends for the rest of the run when more than
 * RT_MAX_U pages had unexplained changes. Windows around other uninstrumented code (their writes
 * are not made durable through libpmem), windows nested in one of them, and every window before
 * trust or after its end protect P first, as every window did before P existed.
 */
#define RT_MAX_W 2048   /* pages listed in W; beyond, their region becomes all_w */
#define RT_W_WHOLE 256  /* more pages than this in W: a window protects whole regions */
#define RT_MAX_V 16     /* watched pages (V) */
#define RT_V_IDLE 64    /* windows without a change after which a page leaves V */
#define RT_MAX_P 4096   /* pages in P */
#define RT_MAX_FR 256   /* ranges noted by pm_note_write between two comparisons */
static uintptr_t g_w[RT_MAX_W];
static size_t g_nw;
struct vpage {
	uintptr_t page;
	uint64_t changed; /* g_wclock when it entered V or a window last made an unexplained change
			   * on it (any change, for windows that note no ranges) */
};
static struct vpage g_v[RT_MAX_V];
static size_t g_nv;
static uintptr_t g_p[RT_MAX_P];
static size_t g_np;
static uint64_t g_wclock; /* windows opened so far */
/* Pages of W that a window changed (candidates for V, at the next protection). */
static uintptr_t g_adm[RT_MAX_V];
static size_t g_nadm;
/* Ranges [a, e) libpmem was asked to write or flush since the last comparison. */
static struct {
	uintptr_t a, e;
} g_fr[RT_MAX_FR];
static size_t g_nfr;
static int g_fr_over; /* more than RT_MAX_FR: every page of P is compared */
static int g_trust;   /* 0 not yet, 1 libpmemobj's writes are made durable through libpmem, -1 refuted */
/* Pages on which a libpmemobj call made an unexplained change: never in P. */
#define RT_MAX_U 64
static uintptr_t g_u[RT_MAX_U];
static size_t g_nu;
/* Scratch list of pages (lock held): to protect, or to compare. */
static uintptr_t g_plist[RT_MAX_W + RT_MAX_V + RT_MAX_P];
static _Atomic uint32_t g_close_epoch; /* regions closed so far (see pm_handle_fault) */
/* Counters, printed at exit with SCRY_RT_STATS=1 (pm_final_check). */
static struct {
	uint64_t windows, trusted, faults, compared, mprotects, whole, ranged;
} g_stats;

static inline uint64_t page_index(const struct rt_region *r, uintptr_t page)
{
	return (page - r->base) / RT_PAGE;
}

static inline int wbit(const struct rt_region *r, uintptr_t page)
{
	uint64_t i = page_index(r, page);
	return (int)((r->wbits[i / 64] >> (i % 64)) & 1);
}

static inline void wbit_set(struct rt_region *r, uintptr_t page)
{
	uint64_t i = page_index(r, page);
	r->wbits[i / 64] |= 1ull << (i % 64);
}

static inline void wbit_clear(struct rt_region *r, uintptr_t page)
{
	uint64_t i = page_index(r, page);
	r->wbits[i / 64] &= ~(1ull << (i % 64));
}

/* End of the part of r that is ever protected: its whole pages (a partial last page may hold
 * bytes that are not PM, which must never fault). */
static inline uintptr_t prot_end(const struct rt_region *r)
{
	return r->base + ((r->end - r->base) & ~(uint64_t)(RT_PAGE - 1));
}

static uint64_t wbits_size(uint64_t len)
{
	uint64_t pages = (len + RT_PAGE - 1) / RT_PAGE;
	return (pages + 63) / 64 * 8;
}

/* Makes the whole region writable (all_w). Returns 0 when mprotect failed. */
static int region_all_writable(struct rt_region *r)
{
	if (prot_end(r) > r->base && mprotect((void *)r->base, prot_end(r) - r->base, PROT_READ | PROT_WRITE) < 0)
		return 0;
	r->all_w = 1;
	return 1;
}

/* The page is writable now: adds it to W. */
static void w_add(struct rt_region *r, uintptr_t page)
{
	wbit_set(r, page);
	if (g_nw < RT_MAX_W)
		g_w[g_nw++] = page;
	else
		region_all_writable(r); /* too many pages to list (and as many VMAs): whole region */
}

/* Makes pages [p, e) of r writable, adding them to W. Pages already listed are left alone
 * unless force (a fault on such a page: another thread's fault made it writable meanwhile, or
 * something else protected it; mprotect again so that the access cannot fault forever).
 * Returns 0 when they could not be made writable. */
static int make_writable(struct rt_region *r, uintptr_t p, uintptr_t e, int force)
{
	if (p < r->base)
		p = r->base;
	if (e > prot_end(r))
		e = prot_end(r);
	if (p >= e)
		return !force; /* never protected: a fault there is not ours */
	if (!force) {
		if (r->all_w)
			return 1;
		while (p < e && wbit(r, p))
			p += RT_PAGE;
		while (e > p && wbit(r, e - RT_PAGE))
			e -= RT_PAGE;
		if (p >= e)
			return 1;
	}
	g_stats.mprotects++;
	if (mprotect((void *)p, e - p, PROT_READ | PROT_WRITE) < 0)
		/* Out of VMAs (vm.max_map_count) or memory: the whole region, one VMA again (a
		 * window's diff then compares all of it). */
		return region_all_writable(r);
	for (uintptr_t q = p; q < e && !r->all_w; q += RT_PAGE)
		if (!wbit(r, q))
			w_add(r, q);
	return 1;
}

static int cmp_uptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of page p in V, or -1. */
static int v_find(uintptr_t p)
{
	for (size_t i = 0; i < g_nv; i++)
		if (g_v[i].page == p)
			return (int)i;
	return -1;
}

/* The region of page p when p is listed (writable, in W, V or P) in an active region that is
 * protected page by page; else NULL. */
static struct rt_region *listed_region(uintptr_t p)
{
	struct rt_region *r = pm_find(p);
	if (!r || !r->writable || r->all_w || !wbit(r, p))
		return NULL;
	return r;
}

/* Drops from V and P the pages that are no longer listed (their region closed, or was protected
 * whole). */
static void lists_prune(void)
{
	size_t k = 0;
	for (size_t i = 0; i < g_nv; i++)
		if (listed_region(g_v[i].page))
			g_v[k++] = g_v[i];
	g_nv = k;
	k = 0;
	for (size_t i = 0; i < g_np; i++)
		if (listed_region(g_p[i]))
			g_p[k++] = g_p[i];
	g_np = k;
}

static int u_has(uintptr_t p)
{
	for (size_t i = 0; i < g_nu; i++)
		if (g_u[i] == p)
			return 1;
	return 0;
}

/* Is p in the sorted g_plist[0..n)? */
static int plist_has(uintptr_t p, size_t n)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g_plist[mid] == p)
			return 1;
		if (g_plist[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Sorts g_plist[0..n), without duplicates; returns the new length. */
static size_t plist_sort(size_t n)
{
	if (n < 2)
		return n;
	if (n <= 32) {
		for (size_t i = 1; i < n; i++) {
			uintptr_t x = g_plist[i];
			size_t j = i;
			for (; j > 0 && g_plist[j - 1] > x; j--)
				g_plist[j] = g_plist[j - 1];
			g_plist[j] = x;
		}
	} else {
		qsort(g_plist, n, sizeof g_plist[0], cmp_uptr);
	}
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (g_plist[i] != g_plist[k - 1])
			g_plist[k++] = g_plist[i];
	return k;
}

/* Write-protects the pages g_plist[0..n) that are still listed, coalesced into ranges. */
static void protect_list(size_t n)
{
	n = plist_sort(n);
	struct rt_region *rr = NULL;
	uintptr_t s = 0, e = 0;
	for (size_t i = 0; i < n; i++) {
		uintptr_t p = g_plist[i];
		struct rt_region *r = listed_region(p);
		if (!r)
			continue;
		wbit_clear(r, p);
		if (r == rr && p == e) {
			e += RT_PAGE;
			continue;
		}
		if (e > s)
			mprotect((void *)s, e - s, PROT_READ), g_stats.mprotects++;
		rr = r, s = p, e = p + RT_PAGE;
	}
	if (e > s)
		mprotect((void *)s, e - s, PROT_READ), g_stats.mprotects++;
}

/* Protects whole every writable region marked all_w (its pages leave W, V and P). */
static void protect_whole_regions(void)
{
	int pruned = 0;
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (!atomic_load(&r->active) || !r->writable || !r->all_w)
			continue;
		g_stats.whole++;
		if (prot_end(r) > r->base && mprotect((void *)r->base, prot_end(r) - r->base, PROT_READ) < 0)
			continue; /* stays all_w: compared whole by every window */
		memset(r->wbits, 0, wbits_size(r->end - r->base));
		r->all_w = 0;
		pruned = 1;
	}
	if (pruned)
		lists_prune();
}

/* A window opens (the state machine of the comment above). trust: the window may rely on
 * pm_note_write for the pages of P. */
static void protect_w(int trust)
{
	g_wclock++;
	if (g_nw > RT_W_WHOLE || (trust && g_np + g_nw + g_nv > RT_MAX_P)) {
		/* Many pages: protecting whole regions costs one call each. */
		for (size_t i = 0; i < g_nw; i++) {
			struct rt_region *r = pm_find(g_w[i]);
			if (r && r->writable)
				r->all_w = 1;
		}
		for (size_t i = 0; i < g_np; i++) {
			struct rt_region *r = pm_find(g_p[i]);
			if (r && r->writable)
				r->all_w = 1;
		}
	}
	protect_whole_regions();
	size_t np = 0;
	if (!trust) {
		for (size_t i = 0; i < g_np; i++)
			g_plist[np++] = g_p[i];
		g_np = 0;
	}
	/* Leaving V or W without entering V: to P when trusted, else protected. */
#define RT_RELEASE(page)                          \
	do {                                      \
		if (trust && g_np < RT_MAX_P &&   \
		    !u_has(page))                 \
			g_p[g_np++] = (page);     \
		else                              \
			g_plist[np++] = (page);   \
	} while (0)
	size_t k = 0;
	for (size_t i = 0; i < g_nv; i++) {
		if (!listed_region(g_v[i].page))
			continue;
		if (g_wclock - g_v[i].changed > RT_V_IDLE)
			RT_RELEASE(g_v[i].page);
		else
			g_v[k++] = g_v[i];
	}
	g_nv = k;
	for (size_t i = 0; i < g_nw; i++) {
		uintptr_t p = g_w[i];
		if (!listed_region(p) || v_find(p) >= 0)
			continue;
		int adm = 0;
		for (size_t j = 0; j < g_nadm && !adm; j++)
			adm = g_adm[j] == p;
		if (!adm) {
			RT_RELEASE(p);
			continue;
		}
		if (g_nv < RT_MAX_V) {
			g_v[g_nv++] = (struct vpage){p, g_wclock};
			continue;
		}
		size_t lru = 0;
		for (size_t j = 1; j < g_nv; j++)
			if (g_v[j].changed < g_v[lru].changed)
				lru = j;
		if (g_v[lru].changed < g_wclock) {
			RT_RELEASE(g_v[lru].page);
			g_v[lru] = (struct vpage){p, g_wclock};
		} else {
			RT_RELEASE(p);
		}
	}
#undef RT_RELEASE
	g_nw = 0;
	g_nadm = 0;
	protect_list(np);
}

int pm_handle_fault(void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	uint32_t epoch = atomic_load(&g_close_epoch);
	/* The runtime never writes PM itself, so a fault with the lock held on this thread is not
	 * expected; do not deadlock on it. */
	int mine = rt_lock_mine();
	if (!mine)
		rt_lock();
	int ok = 0;
	struct rt_region *r = pm_find(a);
	if (!r || !atomic_load(&r->active)) {
		/* A region closed (and made writable) between the fault and now: retry the access.
		 * If it faults again, the epoch will not have moved and the fault is not ours. */
		ok = atomic_load(&g_close_epoch) != epoch;
	} else if (r->writable) {
		uintptr_t page = a & ~(uintptr_t)(RT_PAGE - 1);
		g_stats.faults++;
		ok = make_writable(r, page, page + RT_PAGE, 1);
	}
	if (!mine)
		rt_unlock();
	return ok;
}

static void unprotect_piece(struct rt_region *r, uintptr_t a, uint64_t n, void *arg)
{
	(void)arg;
	rt_lock();
	if (atomic_load(&r->active) && r->writable) {
		uintptr_t p = a & ~(uintptr_t)(RT_PAGE - 1);
		uintptr_t e = (a + n + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
		make_writable(r, p, e, 0);
	}
	rt_unlock();
}

void pm_unprotect_range(void *addr, uint64_t len)
{
	if (len == 0 || !pm_any())
		return;
	pm_for_each((uintptr_t)addr, len, unprotect_piece, NULL);
}

/* ---------------------------------------------------------------- map / unmap */

void pm_add(uintptr_t base, uint64_t len, const char *path, int fd, uint64_t file_off, uint32_t site,
	    int created, unsigned flags)
{
	if (len == 0 || !rt_init())
		return;
	rt_self.in_rt = 1;
	rt_lock();
	int slot = -1;
	for (int i = 0; i < g_used; i++) {
		if (atomic_load(&g_regions[i].active) && base < g_regions[i].end && g_regions[i].base < base + len) {
			rt_warn("region %p+%llu overlaps a mapped PM region; ignored", (void *)base,
				(unsigned long long)len);
			goto out;
		}
		if (!atomic_load(&g_regions[i].active) && !g_closing[i] && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		if (g_used == RT_MAX_REGIONS) {
			static int warned;
			if (!warned++)
				rt_warn("more than %d PM regions; the rest are not traced", RT_MAX_REGIONS);
			goto out;
		}
		slot = g_used;
	}
	static int trust_read;
	if (!trust_read) {
		/* SCRY_TRUST_LIBPMEM=0: every window protects P (region.c's comment, "Trusting
		 * libpmem"); the trace is the same, only slower. */
		const char *tl = getenv("SCRY_TRUST_LIBPMEM");
		if (tl && strcmp(tl, "0") == 0)
			g_trust = -1;
		trust_read = 1;
	}
	void *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sh == MAP_FAILED) {
		rt_warn("cannot allocate the shadow of a %llu-byte PM region; not traced", (unsigned long long)len);
		goto out;
	}
	void *wb = mmap(NULL, wbits_size(len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (wb == MAP_FAILED) {
		munmap(sh, len);
		rt_warn("cannot allocate the page bitmap of a %llu-byte PM region; not traced", (unsigned long long)len);
		goto out;
	}
	struct rt_region *r = &g_regions[slot];
	r->id = g_next_region++;
	r->base = base;
	r->end = base + len;
	r->file_off = file_off;
	r->writable = (flags & PM_WRITABLE) != 0;
	r->file = (flags & PM_FILE) != 0;
	r->dev = 0;
	r->ino = 0;
	r->all_w = 1; /* writable until protected below */
	r->wbits = wb;
	char abs[PATH_MAX];
	r->path = path ? strdup(realpath(path, abs) ? abs : path) : NULL;
	r->shadow = sh;
	if (r->file) {
		int f = open_region_file(r, fd);
		struct stat st;
		if (f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode)) {
			r->dev = st.st_dev;
			r->ino = st.st_ino;
		} else {
			r->file = 0;
		}
		if (f >= 0)
			close(f);
	}
	rec_region_map_locked(r->id, base, len, file_off, r->path, site, created ? SCRY_REGION_CREATED : 0);
	/* Initial content: the non-zero bytes now in the region, read from the file when it is a
	 * file mapping (reading the mapping would populate every page table entry of it, and
	 * mprotect costs grow with them). */
	struct run u = {.r = r, .site = site, .flags = SCRY_EXT_INITIAL, .gap = 256};
	if (!diff_file(&u, fd, 1))
		diff_region(&u, (const unsigned char *)base, fd, 1);
	run_emit(&u);
	/* Protected by default from now on (see protect_w). A region that does not start on a
	 * page boundary (scry_register_pm of any memory) is never protected. */
	if (r->writable && base % RT_PAGE != 0) {
		static int warned;
		if (!warned++)
			rt_warn("PM region %p does not start on a page boundary: writes by uninstrumented code "
				"to it are found only at unmap and exit", (void *)base);
		r->writable = 0;
	}
	if (r->writable && (prot_end(r) == base || mprotect((void *)base, prot_end(r) - base, PROT_READ) == 0))
		r->all_w = 0;
	if (slot == g_used)
		__atomic_store_n(&g_used, g_used + 1, __ATOMIC_RELEASE);
	atomic_store_explicit(&r->active, 1, memory_order_release);
	atomic_fetch_add(&g_nregions, 1);
	hull_update();
out:
	rt_unlock();
	rt_self.in_rt = 0;
}

/* Safety net then deactivation; lock held. The slot stays reserved if !unmap_rec. The region is
 * left writable: the program (or the library closing it) may still write it. */
static void region_close_locked(int i, uint32_t site, int unmap_rec)
{
	struct rt_region *r = &g_regions[i];
	struct run u = {.r = r, .site = 0, .flags = 0, .gap = 16};
	diff_whole(&u, 0);
	run_emit(&u);
	if (r->writable && !r->all_w)
		region_all_writable(r);
	r->all_w = 1;
	atomic_store(&r->active, 0);
	lists_prune();
	atomic_fetch_add(&g_close_epoch, 1);
	atomic_fetch_sub(&g_nregions, 1);
	hull_update();
	if (unmap_rec) {
		rec_region_unmap_locked(r->id, site);
		munmap(r->shadow, r->end - r->base);
		munmap(r->wbits, wbits_size(r->end - r->base));
		free(r->path);
		r->shadow = NULL;
		r->wbits = NULL;
		r->path = NULL;
	}
}

void pm_remove(uintptr_t addr, uint64_t len, uint32_t site)
{
	if (!pm_any())
		return;
	if (atomic_load(&g_nwin) > 0)
		win_close(1);
	rt_self.in_rt = 1;
	rt_lock();
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (!atomic_load(&r->active))
			continue;
		int hit = len ? (r->base < addr + len && addr < r->end) : (r->base == addr);
		if (!hit)
			continue;
		if (len && (addr > r->base || addr + len < r->end)) {
			static int warned;
			if (!warned++)
				rt_warn("partial unmap of a PM region: the whole region is treated as unmapped");
		}
		region_close_locked(i, site, 1);
	}
	rt_unlock();
	rt_self.in_rt = 0;
}

int pm_remove_begin(uintptr_t base)
{
	if (!pm_any())
		return -1;
	if (atomic_load(&g_nwin) > 0)
		win_close(1);
	int idx = -1;
	rt_self.in_rt = 1;
	rt_lock();
	for (int i = 0; i < g_used; i++) {
		if (atomic_load(&g_regions[i].active) && g_regions[i].base == base) {
			region_close_locked(i, 0, 0);
			g_closing[i] = 1;
			idx = i;
			break;
		}
	}
	rt_unlock();
	rt_self.in_rt = 0;
	return idx;
}

void pm_remove_finish(int idx, uint32_t site)
{
	if (idx < 0)
		return;
	rt_self.in_rt = 1;
	rt_lock();
	struct rt_region *r = &g_regions[idx];
	uint64_t len = r->end - r->base;
	/* Bytes the library wrote while closing: compare the file itself with the shadow. */
	struct run u = {.r = r, .site = site, .flags = SCRY_EXT_PERSISTED, .gap = 16};
	if (!diff_file(&u, -1, 0)) {
		int fd = r->path ? open(r->path, O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			struct stat st;
			if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= r->file_off + len) {
				void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)r->file_off);
				if (m != MAP_FAILED) {
					diff_region(&u, m, fd, 0);
					run_emit(&u);
					munmap(m, len);
				}
			}
			close(fd);
		}
	}
	run_emit(&u);
	rec_region_unmap_locked(r->id, site);
	munmap(r->shadow, len);
	munmap(r->wbits, wbits_size(len));
	free(r->path);
	r->shadow = NULL;
	r->wbits = NULL;
	r->path = NULL;
	g_closing[idx] = 0;
	rt_unlock();
	rt_self.in_rt = 0;
}

/* ---------------------------------------------------------------- protection windows */

struct win {
	uint32_t site;
	uint8_t flags;  /* EXTERNAL_WRITE flags for what the call wrote */
	int kind;       /* WIN_EXT, WIN_PMDK (a libpmemobj call) */
	int trust;      /* relies on pm_note_write for P (protect_w) */
	int tx;         /* libpmemobj tx call: watch for a transition to ONABORT */
	int stage;      /* pmemobj_tx_stage() when the window opened */
	uint32_t tid;
	uintptr_t frame;
	uint32_t id;    /* the token win_open returned: windows of other threads may close first */
};
#define RT_MAX_WIN 32
#define RT_FRAME_SLACK 128
static struct win g_win[RT_MAX_WIN];
static uint32_t g_win_seq; /* the last window id given (lock held) */


void pm_note_write(const void *addr, size_t len)
{
	if (RT_LIKELY(atomic_load_explicit(&g_nwin, memory_order_relaxed) == 0) || len == 0)
		return;
	uintptr_t a = (uintptr_t)addr, e = a + len < a ? UINTPTR_MAX : a + len;
	if (e <= __atomic_load_n(&__scry_pm_lo, __ATOMIC_RELAXED) || a >= __atomic_load_n(&__scry_pm_hi, __ATOMIC_RELAXED))
		return;
	rt_lock();
	if (atomic_load_explicit(&g_nwin, memory_order_relaxed) > 0) {
		if (g_nfr < RT_MAX_FR) {
			g_fr[g_nfr].a = a;
			g_fr[g_nfr].e = e;
			g_nfr++;
		} else {
			g_fr_over = 1;
		}
	}
	rt_unlock();
}

/* Does one range noted since the last comparison cover [a, e)? */
static int fr_covers(uintptr_t a, uintptr_t e)
{
	if (g_fr_over)
		return 1;
	for (size_t i = 0; i < g_nfr; i++)
		if (g_fr[i].a <= a && e <= g_fr[i].e)
			return 1;
	return 0;
}

/* Records as EXTERNAL_WRITEs of window w what changed on the pages the call can have written:
 * those of W (a protected page faults first), of V, and of P inside the ranges the call wrote or
 * flushed through libpmem (every page of P when there were too many); regions that are all_w are
 * compared whole. The program's own stores are already in the shadow, so what differs was
 * written by the call. Lock held (the fault handler takes it too). Checks the trust in libpmem
 * (protect_w) on the pages that faulted in a libpmemobj call. */
static void collect(const struct win *w)
{
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (!atomic_load(&r->active) || !r->writable || !r->all_w)
			continue;
		struct run u = {.r = r, .site = w->site, .flags = w->flags, .gap = 16};
		diff_whole(&u, 0);
		run_emit(&u);
	}
	size_t n = 0;
	for (size_t i = 0; i < g_nw; i++)
		g_plist[n++] = g_w[i];
	for (size_t i = 0; i < g_nv; i++)
		g_plist[n++] = g_v[i].page;
	int all_p = g_fr_over;
	uint64_t ranged = 0;
	for (size_t i = 0; i < g_nfr && !all_p; i++) {
		ranged += (g_fr[i].e - (g_fr[i].a & ~(uintptr_t)(RT_PAGE - 1)) + RT_PAGE - 1) / RT_PAGE;
		all_p = ranged > g_np + RT_MAX_V;
	}
	if (all_p)
		for (size_t i = 0; i < g_np; i++)
			g_plist[n++] = g_p[i];
	n = plist_sort(n);
	struct run u = {.r = NULL, .site = w->site, .flags = w->flags, .gap = 16};
	for (size_t i = 0; i < n; i++) {
		uintptr_t p = g_plist[i];
		struct rt_region *r = listed_region(p);
		if (!r)
			continue;
		if (u.r != r) {
			if (u.r)
				run_emit(&u);
			u.r = r;
			u.s = u.e = 0;
		}
		uint64_t off = p - r->base;
		uint64_t len = r->end - r->base;
		g_stats.compared++;
		u.check = w->kind == WIN_PMDK;
		u.outside = 0;
		if (!diff_page(&u, (const unsigned char *)p, off, len - off < RT_PAGE ? len - off : RT_PAGE))
			continue;
		int v = v_find(p);
		if (v >= 0) {
			/* Probation: a page of V stays while windows change it outside the ranges
			 * they noted. */
			if (!u.check || u.outside)
				g_v[v].changed = g_wclock;
		} else if (g_nadm < RT_MAX_V) {
			g_adm[g_nadm++] = p;
		}
		if (u.check && u.outside && g_trust >= 0 && !u_has(p)) {
			/* The library wrote this page and did not make it durable through libpmem. */
			if (g_nu < RT_MAX_U)
				g_u[g_nu++] = p;
			else
				g_trust = -1;
		}
	}
	if (u.r)
		run_emit(&u);
	u.check = 0;
	/* The other listed pages (P) inside the noted ranges: only the ranges' cache lines. */
	for (size_t i = 0; i < g_nfr && !all_p; i++) {
		uintptr_t a = g_fr[i].a, e = g_fr[i].e;
		for (uintptr_t p = a & ~(uintptr_t)(RT_PAGE - 1); p < e; p += RT_PAGE) {
			struct rt_region *r = listed_region(p);
			if (!r || plist_has(p, n))
				continue;
			uintptr_t s0 = (a > p ? a : p) & ~(uintptr_t)(RT_LINE - 1);
			uintptr_t e0 = e < p + RT_PAGE ? (e + RT_LINE - 1) & ~(uintptr_t)(RT_LINE - 1) : p + RT_PAGE;
			if (e0 > r->end)
				e0 = r->end;
			if (u.r != r) {
				if (u.r)
					run_emit(&u);
				u.r = r;
				u.s = u.e = 0;
			}
			g_stats.ranged++;
			diff_page(&u, (const unsigned char *)s0, s0 - r->base, e0 - s0);
		}
	}
	if (u.r)
		run_emit(&u);
	if (g_trust == 0 && w->kind == WIN_PMDK && (g_nfr > 0 || g_fr_over))
		g_trust = 1;
	g_nfr = 0;
	g_fr_over = 0;
}

uint32_t win_open(uint32_t site, uint8_t ext_flags, int kind, int tx, void *frame)
{
	if (!pm_any())
		return 0;
	int stage = tx ? obj_tx_stage() : -1;
	rt_lock();
	int n = atomic_load(&g_nwin);
	if (n >= RT_MAX_WIN) {
		rt_unlock();
		return 0;
	}
	if (n > 0)
		collect(&g_win[n - 1]); /* what the enclosing call wrote so far */
	int trust = kind == WIN_PMDK && g_trust > 0 && (n == 0 || g_win[n - 1].trust);
	if (++g_win_seq == 0)
		g_win_seq = 1;
	g_win[n] = (struct win){site, ext_flags, kind, trust, tx, stage, rt_gettid(), (uintptr_t)frame, g_win_seq};
	g_stats.windows++;
	g_stats.trusted += (uint64_t)trust;
	atomic_store(&g_nwin, n + 1);
	protect_w(trust);
	rt_unlock();
	return g_win_seq;
}

/* The index of the open window whose id is token, or -1 (it was closed). Lock held. */
static int win_find(uint32_t token)
{
	int n = atomic_load(&g_nwin);
	for (int i = n - 1; i >= 0; i--)
		if (g_win[i].id == token)
			return i;
	return -1;
}

/* Closes window token and the windows its thread opened after it (calls nested in its call,
 * left by a longjmp), innermost first, each recording what its call wrote (collect). The
 * windows of other threads stay open, wherever they are in g_win: a thread's call that began
 * inside another thread's window and is still running must keep noting the ranges it flushes
 * (pm_note_write notes only while a window is open) until its own window closes; closing it with
 * the other thread's left its writes to pages of P unrecorded until some later comparison. */
void win_close(uint32_t token)
{
	if (token == 0)
		return;
	int stage = -2;
	rt_lock();
	for (;;) {
		int k = win_find(token);
		if (k < 0)
			break;
		int n = atomic_load(&g_nwin);
		uint32_t me = g_win[k].tid;
		int i = n - 1;
		while (i > k && g_win[i].tid != me)
			i--;
		struct win *w = &g_win[i];
		if (w->tx && w->stage == 1 /* TX_STAGE_WORK */) {
			if (stage == -2) {
				rt_unlock();
				stage = obj_tx_stage();
				rt_lock();
				continue; /* other threads may have opened or closed windows meanwhile */
			}
			if (stage == 3 /* TX_STAGE_ONABORT */) {
				uint32_t site = w->site;
				w->tx = 0; /* reported once */
				rt_unlock();
				int err = obj_tx_errno();
				rt_lock();
				rec_tx_abort_locked(site, (uint64_t)(err < 0 ? 0 : err));
				continue;
			}
		}
		collect(w);
		n = atomic_load(&g_nwin);
		memmove(&g_win[i], &g_win[i + 1], (size_t)(n - 1 - i) * sizeof g_win[0]);
		atomic_store(&g_nwin, n - 1);
		if (i == k)
			break;
	}
	/* The pages written stay writable (and in W): an enclosing window's own diff covers them
	 * again; the next window to open protects them. */
	rt_unlock();
}

void win_close_stale(void *frame)
{
	uintptr_t f = (uintptr_t)frame;
	uint32_t me = rt_gettid();
	uint32_t token = 0;
	rt_lock();
	int n = atomic_load(&g_nwin);
	for (int i = 0; i < n; i++) {
		if (g_win[i].tid == me && f + RT_FRAME_SLACK >= g_win[i].frame) {
			token = g_win[i].id;
			break;
		}
	}
	rt_unlock();
	if (token)
		win_close(token);
}

void pm_check_all_locked(void)
{
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (!atomic_load(&r->active))
			continue;
		struct run u = {.r = r, .site = 0, .flags = 0, .gap = 16};
		diff_whole(&u, 0);
		run_emit(&u);
	}
}

void pm_final_check(void)
{
	const char *st = getenv("SCRY_RT_STATS");
	if (st && *st && strcmp(st, "0") != 0) {
		char msg[256];
		int k = snprintf(msg, sizeof msg,
				 "scry: runtime: %llu windows (%llu trusting libpmem), %llu faults, %llu mprotect calls, "
				 "%llu whole-region protections, %llu pages compared whole and %llu in part\n",
				 (unsigned long long)g_stats.windows, (unsigned long long)g_stats.trusted,
				 (unsigned long long)g_stats.faults, (unsigned long long)g_stats.mprotects,
				 (unsigned long long)g_stats.whole, (unsigned long long)g_stats.compared,
				 (unsigned long long)g_stats.ranged);
		if (k > 0) {
			ssize_t w = write(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
			(void)w;
		}
	}
	if (atomic_load(&g_nwin) > 0)
		win_close(1);
	rt_lock();
	pm_check_all_locked();
	/* Nothing is recorded any more: leave the regions writable (later destructors, libraries'
	 * own finalisers may still write them). */
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (atomic_load(&r->active) && r->writable && !r->all_w)
			region_all_writable(r);
	}
	rt_unlock();
}

/* ---------------------------------------------------------------- instrumented functions */

/* The entry address of every function defined in an instrumented module, registered by the
 * pass's module constructors (__scry_register_functions): an open-addressing hash set, grown
 * under the trace lock. A call whose callee is in it runs instrumented code, whose PM stores are
 * traced already, so it needs no protection window. */
static uintptr_t *g_fn;     /* slots; 0 = empty */
static size_t g_fn_cap;     /* power of two, or 0 */
static size_t g_fn_n;

static size_t fn_hash(uintptr_t a) { return (size_t)((a >> 4) * 0x9E3779B97F4A7C15ull); }

static void fn_insert_locked(uintptr_t a)
{
	size_t m = g_fn_cap - 1;
	for (size_t i = fn_hash(a) & m;; i = (i + 1) & m) {
		if (g_fn[i] == a)
			return;
		if (!g_fn[i]) {
			g_fn[i] = a;
			g_fn_n++;
			return;
		}
	}
}

void __scry_register_functions(const void *const *fns, uint32_t n)
{
	rt_lock();
	if ((g_fn_n + n) * 2 >= g_fn_cap) {
		size_t cap = g_fn_cap ? g_fn_cap : 1024;
		while ((g_fn_n + n) * 2 >= cap)
			cap *= 2;
		uintptr_t *old = g_fn;
		size_t oldcap = g_fn_cap;
		uintptr_t *t = mmap(NULL, cap * sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED) {
			rt_unlock();
			rt_warn("cannot grow the table of instrumented functions; calls into them get windows");
			return;
		}
		g_fn = t;
		g_fn_cap = cap;
		g_fn_n = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				fn_insert_locked(old[i]);
		if (old)
			munmap(old, oldcap * sizeof *old);
	}
	for (uint32_t i = 0; i < n; i++)
		if (fns[i])
			fn_insert_locked((uintptr_t)fns[i]);
	rt_unlock();
}

int rt_is_instrumented(const void *callee)
{
	if (!callee)
		return 0;
	uintptr_t a = (uintptr_t)callee;
	int v = 0;
	rt_lock();
	if (g_fn_cap) {
		size_t m = g_fn_cap - 1;
		for (size_t i = fn_hash(a) & m; g_fn[i]; i = (i + 1) & m)
			if (g_fn[i] == a) {
				v = 1;
				break;
			}
	}
	rt_unlock();
	return v;
}

#define RT_CALLEE_CACHE 256
static const void *g_pmdk_key[RT_CALLEE_CACHE];
static unsigned char g_pmdk_val[RT_CALLEE_CACHE];

int rt_is_pmdk(const void *callee)
{
	if (!callee)
		return 0;
	size_t h = ((uintptr_t)callee >> 4) % RT_CALLEE_CACHE;
	rt_lock();
	if (g_pmdk_key[h] == callee) {
		int v = g_pmdk_val[h];
		rt_unlock();
		return v;
	}
	rt_unlock();
	Dl_info info;
	int v = 0;
	if (dladdr(callee, &info) && info.dli_fname && strstr(info.dli_fname, "/libpmem") != NULL)
		v = strstr(info.dli_fname, "/libpmemobj") != NULL ? 2 : 1;
	rt_lock();
	g_pmdk_key[h] = callee;
	g_pmdk_val[h] = (unsigned char)v;
	rt_unlock();
	return v;
}
