//go:build ignore

/*
 * region.c: PM regions, their shadow copies, and external-write detection.
 *
 * Every region keeps a shadow: an anonymous MAP_NORESERVE mapping of the same length holding the
 * bytes the trace says the region holds (docs/trace-format.md, "Semantics": replaying STORE,
 * NT_STORE and EXTERNAL_WRITE over zeros gives the region's bytes). Instrumented stores update it.
 *
 * Around calls into code scry did not instrument (ext calls, libpmemobj calls) a *protection
 * window* write-protects the regions (PROT_READ). A write by that code faults; the SIGSEGV
 * handler records the page as dirty and makes it writable. When the window closes, each dirty
 * page is compared with the shadow and the changed bytes become EXTERNAL_WRITE records with the
 * call's site. Windows left open by a longjmp (PMDK aborts) are closed at the next callback of
 * the thread whose frame is not below the window's. As a safety net, REGION_UNMAP and exit
 * compare whole regions (only pages holding file data, found with SEEK_DATA/SEEK_HOLE, or resident
 * pages with mincore) and record differences with site 0.
 *
 * Multi-threading: the region table, the windows and the shadows are guarded by the trace lock.
 * Protection is global, so bytes another thread writes with uninstrumented code during a window
 * are attributed to that window's call: attribution is exact only for single-threaded programs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
};

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
static void diff_page(struct run *u, const unsigned char *cur, uint64_t off, uint64_t n)
{
	unsigned char *sh = u->r->shadow + off;
	if (memcmp(cur, sh, n) == 0)
		return;
	uint64_t i = 0;
	while (i < n) {
		/* Skip equal 8-byte words quickly. */
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
		run_add(u, off + s, off + last + 1);
		i = last + 1;
	}
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

/* Calls diff_span over the parts of the region that may hold data: the file's data extents when
 * the file is known (holes are never read), else the resident pages (mincore), else all. */
static void diff_region(struct run *u, const unsigned char *cur, int fd, int skip_zero)
{
	struct rt_region *r = u->r;
	uint64_t len = r->end - r->base;
	int own = -1;
	if (fd < 0 && r->path)
		fd = own = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		uint64_t pos = r->file_off, stop = r->file_off + len;
		int ok = 1;
		while (pos < stop) {
			off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
			if (d < 0) {
				if (errno != ENXIO)
					ok = 0;
				break;
			}
			off_t h = lseek(fd, d, SEEK_HOLE);
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
		if (own >= 0)
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

/* ---------------------------------------------------------------- map / unmap */

void pm_add(uintptr_t base, uint64_t len, const char *path, int fd, uint64_t file_off, uint32_t site,
	    int created, int writable)
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
	void *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sh == MAP_FAILED) {
		rt_warn("cannot allocate the shadow of a %llu-byte PM region; not traced", (unsigned long long)len);
		goto out;
	}
	struct rt_region *r = &g_regions[slot];
	r->id = g_next_region++;
	r->base = base;
	r->end = base + len;
	r->file_off = file_off;
	r->writable = writable;
	char abs[PATH_MAX];
	r->path = path ? strdup(realpath(path, abs) ? abs : path) : NULL;
	r->shadow = sh;
	rec_region_map_locked(r->id, base, len, file_off, r->path, site, created ? SCRY_REGION_CREATED : 0);
	/* Initial content: the non-zero bytes now in the region. */
	struct run u = {.r = r, .site = site, .flags = SCRY_EXT_INITIAL, .gap = 256};
	diff_region(&u, (const unsigned char *)base, fd, 1);
	run_emit(&u);
	if (slot == g_used)
		__atomic_store_n(&g_used, g_used + 1, __ATOMIC_RELEASE);
	atomic_store_explicit(&r->active, 1, memory_order_release);
	atomic_fetch_add(&g_nregions, 1);
	hull_update();
out:
	rt_unlock();
	rt_self.in_rt = 0;
}

/* Safety net then deactivation; lock held. The slot stays reserved if keep. */
static void region_close_locked(int i, uint32_t site, int unmap_rec)
{
	struct rt_region *r = &g_regions[i];
	struct run u = {.r = r, .site = 0, .flags = 0, .gap = 16};
	diff_region(&u, (const unsigned char *)r->base, -1, 0);
	run_emit(&u);
	atomic_store(&r->active, 0);
	atomic_fetch_sub(&g_nregions, 1);
	hull_update();
	if (unmap_rec) {
		rec_region_unmap_locked(r->id, site);
		munmap(r->shadow, r->end - r->base);
		free(r->path);
		r->shadow = NULL;
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
	int fd = r->path ? open(r->path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= r->file_off + len) {
			void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)r->file_off);
			if (m != MAP_FAILED) {
				struct run u = {.r = r, .site = site, .flags = SCRY_EXT_PERSISTED, .gap = 16};
				diff_region(&u, m, fd, 0);
				run_emit(&u);
				munmap(m, len);
			}
		}
		close(fd);
	}
	rec_region_unmap_locked(r->id, site);
	munmap(r->shadow, len);
	free(r->path);
	r->shadow = NULL;
	r->path = NULL;
	g_closing[idx] = 0;
	rt_unlock();
	rt_self.in_rt = 0;
}

/* ---------------------------------------------------------------- protection windows */

struct win {
	uint32_t site;
	uint8_t flags;  /* EXTERNAL_WRITE flags for what the call wrote */
	int kind;
	int tx;         /* libpmemobj tx call: watch for a transition to ONABORT */
	int stage;      /* pmemobj_tx_stage() when the window opened */
	uint32_t tid;
	uintptr_t frame;
};
#define RT_MAX_WIN 32
#define RT_FRAME_SLACK 128
static struct win g_win[RT_MAX_WIN];

#define RT_MAX_DIRTY 65536
static uintptr_t g_dirty[RT_MAX_DIRTY];
static _Atomic size_t g_ndirty;
static _Atomic int g_dirty_overflow;

static void protect_all(int prot)
{
	for (int i = 0; i < g_used; i++) {
		struct rt_region *r = &g_regions[i];
		if (atomic_load(&r->active) && r->writable)
			mprotect((void *)r->base, r->end - r->base, prot);
	}
}

int pm_handle_fault(void *addr)
{
	struct rt_region *r = pm_find((uintptr_t)addr);
	if (!r || !r->writable)
		return 0;
	uintptr_t page = (uintptr_t)addr & ~(uintptr_t)(RT_PAGE - 1);
	size_t i = atomic_fetch_add(&g_ndirty, 1);
	if (i < RT_MAX_DIRTY)
		g_dirty[i] = page;
	else
		atomic_store(&g_dirty_overflow, 1);
	if (mprotect((void *)page, RT_PAGE, PROT_READ | PROT_WRITE) < 0)
		return 0;
	return 1;
}

static int cmp_uptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* Records the dirty pages as EXTERNAL_WRITEs of window w. Lock held. */
static void collect_dirty(const struct win *w)
{
	size_t n = atomic_load(&g_ndirty);
	if (atomic_exchange(&g_dirty_overflow, 0)) {
		/* Too many pages to list: compare every region. */
		for (int i = 0; i < g_used; i++) {
			if (!atomic_load(&g_regions[i].active))
				continue;
			struct run u = {.r = &g_regions[i], .site = w->site, .flags = w->flags, .gap = 16};
			diff_region(&u, (const unsigned char *)g_regions[i].base, -1, 0);
			run_emit(&u);
		}
		atomic_store(&g_ndirty, 0);
		return;
	}
	if (n == 0)
		return;
	if (n > RT_MAX_DIRTY)
		n = RT_MAX_DIRTY;
	qsort(g_dirty, n, sizeof g_dirty[0], cmp_uptr);
	struct run u = {.r = NULL, .site = w->site, .flags = w->flags, .gap = 16};
	uintptr_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		uintptr_t p = g_dirty[i];
		if (p == prev)
			continue;
		prev = p;
		struct rt_region *r = pm_find(p);
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
		diff_page(&u, (const unsigned char *)p, off, len - off < RT_PAGE ? len - off : RT_PAGE);
	}
	if (u.r)
		run_emit(&u);
	/* Pages that faulted while we diffed stay listed for the next collection. */
	size_t expect = atomic_load(&g_ndirty);
	if (expect == n || expect > RT_MAX_DIRTY) {
		atomic_store(&g_ndirty, 0);
	} else {
		memmove(g_dirty, g_dirty + n, (expect - n) * sizeof g_dirty[0]);
		atomic_store(&g_ndirty, expect - n);
	}
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
		collect_dirty(&g_win[n - 1]); /* what the enclosing call wrote so far */
	g_win[n] = (struct win){site, ext_flags, kind, tx, stage, rt_gettid(), (uintptr_t)frame};
	atomic_store(&g_nwin, n + 1);
	protect_all(PROT_READ);
	rt_unlock();
	return (uint32_t)n + 1;
}

void win_close(uint32_t token)
{
	if (token == 0)
		return;
	int stage = -2;
	rt_lock();
	int n = atomic_load(&g_nwin);
	while (n >= (int)token) {
		struct win *w = &g_win[n - 1];
		if (w->tx && w->stage == 1 /* TX_STAGE_WORK */) {
			if (stage == -2) {
				rt_unlock();
				stage = obj_tx_stage();
				rt_lock();
				n = atomic_load(&g_nwin);
				if (n < (int)token)
					break;
				w = &g_win[n - 1];
			}
			if (stage == 3 /* TX_STAGE_ONABORT */) {
				rt_unlock();
				int err = obj_tx_errno();
				rt_lock();
				rec_tx_abort_locked(w->site, (uint64_t)(err < 0 ? 0 : err));
			}
		}
		collect_dirty(w);
		atomic_store(&g_nwin, --n);
	}
	if (n == 0) {
		protect_all(PROT_READ | PROT_WRITE);
	} else {
		protect_all(PROT_READ);
	}
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
			token = (uint32_t)i + 1;
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
		diff_region(&u, (const unsigned char *)r->base, -1, 0);
		run_emit(&u);
	}
}

void pm_final_check(void)
{
	if (atomic_load(&g_nwin) > 0)
		win_close(1);
	rt_lock();
	pm_check_all_locked();
	rt_unlock();
}

/* ---------------------------------------------------------------- instrumented modules */

#define RT_MAX_MODULES 64
static void *g_modules[RT_MAX_MODULES]; /* dli_fbase of each instrumented module */
static int g_nmodules;

void rt_add_module(const void *sites)
{
	Dl_info info;
	if (!dladdr(sites, &info) || !info.dli_fbase)
		return;
	rt_lock();
	int known = 0;
	for (int i = 0; i < g_nmodules; i++)
		known |= g_modules[i] == info.dli_fbase;
	if (!known && g_nmodules < RT_MAX_MODULES)
		g_modules[g_nmodules++] = info.dli_fbase;
	rt_unlock();
}

#define RT_CALLEE_CACHE 512
static const void *g_callee_key[RT_CALLEE_CACHE];
static unsigned char g_callee_val[RT_CALLEE_CACHE];

int rt_is_instrumented(const void *callee)
{
	if (!callee)
		return 0;
	size_t h = ((uintptr_t)callee >> 4) % RT_CALLEE_CACHE;
	rt_lock();
	if (g_callee_key[h] == callee) {
		int v = g_callee_val[h];
		rt_unlock();
		return v;
	}
	rt_unlock();
	Dl_info info;
	int v = 0;
	if (dladdr(callee, &info) && info.dli_fbase) {
		rt_lock();
		for (int i = 0; i < g_nmodules; i++)
			v |= g_modules[i] == info.dli_fbase;
		rt_unlock();
	}
	rt_lock();
	g_callee_key[h] = callee;
	g_callee_val[h] = (unsigned char)v;
	rt_unlock();
	return v;
}
