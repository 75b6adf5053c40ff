//go:build ignore

/*
 * callbacks.c: the callbacks the scry LLVM pass emits (scry_abi.h) and the user API (scry.h).
 * Records are those of docs/trace-format.md; each callback names the ones it emits.
 */
#define _GNU_SOURCE
#include <string.h>

#include "rt.h"

/* Not including scry.h: it declares these weak, and the runtime's definitions must be strong. */
void scry_register_pm(void *base, size_t length, const char *path);
void scry_unregister_pm(void *base);
void scry_op_begin(const char *text);
void scry_op_end(void);

/* SITES and DEPS: registers a module's sites and dependence facts, returns the global id of
 * sites[0]. */
uint32_t __scry_register_module_deps(const struct scry_site *sites, uint32_t n, const struct scry_dep *deps,
				     uint32_t ndeps)
{
	rt_init();
	return rec_sites(sites, n, deps, ndeps);
}

/* SITES only. */
uint32_t __scry_register_module(const struct scry_site *sites, uint32_t n)
{
	return __scry_register_module_deps(sites, n, NULL, 0);
}

/* Scheduling points (sched.c): after each PM load, store, range store, flush and fence, and after
 * every atomic read-modify-write, PM or not. */

/* STORE / NT_STORE / LOAD of one access, with the bytes now in memory; updates the shadow. The
 * hot path: a region lookup, the lock, a few varints and a copy. Then, with point, a scheduling
 * point (sched.c; nothing but a branch without SCRY_SCHED). Returns whether addr is PM. */
static inline int mem_access(int kind, uint32_t site, const void *addr, uint64_t size, int point)
{
	uintptr_t a = (uintptr_t)addr;
	struct rt_region *r = pm_find(a);
	if (!r)
		return 0;
	rt_self.in_rt = 1;
	if (kind == SCRY_EV_LOAD)
		win_check(__builtin_frame_address(0));
	else
		pm_store_then_check(addr, size, __builtin_frame_address(0));
	if (RT_UNLIKELY(a + size > r->end || a + size < a)) {
		/* Straddles the region's end: record piece by piece. */
		pm_record_range(kind, site, addr, size);
	} else {
		rt_lock();
		if (RT_LIKELY(atomic_load_explicit(&r->active, memory_order_relaxed))) {
			if (kind == SCRY_EV_LOAD) {
				rec_mem_locked(kind, site, a, addr, size);
			} else {
				unsigned char *sh = r->shadow + (a - r->base);
				memcpy(sh, addr, size);
				rec_mem_locked(kind, site, a, sh, size);
			}
		}
		rt_unlock();
	}
	rt_self.in_rt = 0;
	if (point)
		sched_point(kind != SCRY_EV_LOAD);
	return 1;
}

/* LOAD (skipped with SCRY_NO_LOADS=1). */
void __scry_load(uint32_t site, const void *addr, uint64_t size)
{
	if (!rt_ready())
		return;
	if (RT_UNLIKELY(g_no_loads)) {
		/* Not recorded, still a scheduling point: the schedule does not depend on it. */
		if (RT_UNLIKELY(atomic_load_explicit(&g_sched_on, memory_order_relaxed)) && pm_find((uintptr_t)addr))
			sched_point_slow(0);
		return;
	}
	mem_access(SCRY_EV_LOAD, site, addr, size, 1);
}

/* STORE. */
void __scry_store(uint32_t site, const void *addr, uint64_t size)
{
	if (!rt_ready())
		return;
	mem_access(SCRY_EV_STORE, site, addr, size, 1);
}

/* NT_STORE. */
void __scry_nt_store(uint32_t site, const void *addr, uint64_t size)
{
	if (!rt_ready())
		return;
	mem_access(SCRY_EV_NT_STORE, site, addr, size, 1);
}

/* LOAD + STORE when addr is PM, then FENCE locked when any PM region is mapped; SYNC rmw when
 * addr is not PM and a second thread exists; then a scheduling point, PM or not: atomics are how
 * threads synchronize. */
void __scry_rmw(uint32_t site, const void *addr, uint64_t size)
{
	if (!rt_ready())
		return;
	int store = 0, pm = 0;
	if (pm_any()) {
		/* The locked instruction orders the flushes before it ahead of its own store (the FENCE
		 * comes between the LOAD and the STORE): a crash point before the FENCE is one before
		 * the instruction, never one where its store is visible and those flushes are not. */
		pm = pm_find((uintptr_t)addr) != NULL;
		if (pm && !g_no_loads)
			mem_access(SCRY_EV_LOAD, site, addr, size, 0);
		rt_self.in_rt = 1;
		rec_fence(site, SCRY_FENCE_LOCKED);
		rt_self.in_rt = 0;
		if (pm)
			store = mem_access(SCRY_EV_STORE, site, addr, size, 0);
	}
	/* Once a second thread exists, an RMW on memory that is not PM (a lock word, a counter) is
	 * a SYNC record: the replay's happens-before orders RMWs of one word (on PM, the LOAD and
	 * STORE above say as much). */
	if (RT_UNLIKELY(atomic_load_explicit(&g_sync_on, memory_order_relaxed)) && !pm)
		rec_sync(SCRY_SYNC_RMW, (uintptr_t)addr, site);
	if (RT_UNLIKELY(atomic_load_explicit(&g_sched_on, memory_order_relaxed)))
		sched_point_rmw(addr, store);
}

/* LOAD of the PM pieces of src (when it does not overlap dst), STORE of the PM pieces of dst. */
void __scry_memop(uint32_t site, void *dst, const void *src, uint64_t size)
{
	if (!rt_ready() || !pm_any() || size == 0)
		return;
	rt_self.in_rt = 1;
	pm_store_then_check(dst, size, __builtin_frame_address(0));
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
	if (src && !g_no_loads && (s + size <= d || d + size <= s))
		pm_record_range(SCRY_EV_LOAD, site, src, size);
	pm_record_range(SCRY_EV_STORE, site, dst, size);
	rt_self.in_rt = 0;
	if (RT_UNLIKELY(atomic_load_explicit(&g_sched_on, memory_order_relaxed))) {
		int store = pm_find(d) != NULL;
		if (store || (src && pm_find(s)))
			sched_point_slow(store);
	}
}

/* FLUSH of the line holding addr (the address as given) when it is PM. */
void __scry_flush(uint32_t site, const void *addr, uint32_t kind)
{
	if (!rt_ready() || !pm_find((uintptr_t)addr))
		return;
	rt_self.in_rt = 1;
	win_check(__builtin_frame_address(0));
	rec_flush(site, (uintptr_t)addr, (uint8_t)kind);
	rt_self.in_rt = 0;
	sched_point(0);
}

/* FENCE, when any PM region is mapped. */
void __scry_fence(uint32_t site, uint32_t kind)
{
	if (!rt_ready() || !pm_any())
		return;
	rt_self.in_rt = 1;
	win_check(__builtin_frame_address(0));
	rec_fence(site, (uint8_t)kind);
	rt_self.in_rt = 0;
	sched_point(0);
}

/* Shadow call stack. Nothing is emitted here: the stack node is computed (and STACK/CONTEXT
 * emitted) only when a record needs it, and so is FRAME. Each call gets the thread's next
 * activation serial; frame_low remembers the lowest depth whose serial changed since the
 * thread's last FRAME record, so that the writer can tell cheaply whether the list it named is
 * still the current one. */
uint32_t __scry_enter(void)
{
	return rt_self.depth;
}

void __scry_call(uint32_t depth, uint32_t site)
{
	struct rt_thread *t = &rt_self;
	if (RT_LIKELY(depth < RT_MAX_DEPTH)) {
		if (t->frames[depth] != site) {
			t->frames[depth] = site;
			if (t->valid > depth)
				t->valid = depth;
		}
		t->serials[depth] = ++t->serial;
		if (depth < t->frame_low)
			t->frame_low = depth;
	}
	t->depth = depth + 1;
	if (RT_UNLIKELY(atomic_load_explicit(&g_op_markers, memory_order_relaxed) != 0))
		op_marker_slow(site);
}

void __scry_ret(uint32_t depth)
{
	rt_self.depth = depth;
}

/* Calls into uninstrumented code: a protection window (EXTERNAL_WRITE records at the post). */
uint32_t __scry_ext_pre(uint32_t site, const void *callee, const void *p0, const void *p1,
			const void *p2, const void *p3)
{
	if (!rt_ready() || !pm_any())
		return 0;
	rt_self.in_rt = 1;
	void *frame = __builtin_frame_address(0);
	win_check(frame);
	/* Instrumented callees trace their own stores. Uninstrumented code can write PM through a
	 * pointer it is given, and PMDK's uninterpreted functions (pmemobj_publish, ...) write it
	 * through pools they know; anything else it writes is found by the comparisons at unmap and
	 * exit (site 0). */
	int pmdk = 0, protect = 0;
	if (!rt_is_instrumented(callee)) {
		pmdk = rt_is_pmdk(callee);
		protect = pmdk || (p0 && pm_find((uintptr_t)p0)) || (p1 && pm_find((uintptr_t)p1)) ||
			  (p2 && pm_find((uintptr_t)p2)) || (p3 && pm_find((uintptr_t)p3));
	}
	/* libpmem and libpmemobj functions the hooks do not interpret (pmemobj_list_insert_new,
	 * pmemobj_publish, ...) are fail-safe or persist what they write before returning, as PMDK
	 * documents; the few that leave writes unpersisted (pmem_memcpy_nodrain, pmem_flush,
	 * pmemobj_memcpy with PMEMOBJ_F_MEM_NOFLUSH, ...) have hooks of their own. */
	uint32_t token = protect ? win_open(site, pmdk ? SCRY_EXT_PERSISTED : 0, WIN_EXT, 0, frame) : 0;
	rt_self.in_rt = 0;
	return token;
}

void __scry_ext_post(uint32_t site, uint32_t token)
{
	(void)site;
	if (!token || rt_self.in_rt || atomic_load(&g_state) != RT_RUNNING)
		return;
	rt_self.in_rt = 1;
	win_close(token);
	rt_self.in_rt = 0;
}

/* ---------------------------------------------------------------- scry.h */

/* REGION_MAP + initial EXTERNAL_WRITEs (site 0). */
void scry_register_pm(void *base, size_t length, const char *path)
{
	if (!rt_init())
		return;
	pm_add((uintptr_t)base, length, path, -1, 0, 0, 0, PM_WRITABLE);
}

/* Safety-net EXTERNAL_WRITEs, REGION_UNMAP (site 0). */
void scry_unregister_pm(void *base)
{
	if (!rt_ready())
		return;
	pm_remove((uintptr_t)base, 0, 0);
}

/* OP_END of the open operation, OP_BEGIN of the next. */
void scry_op_begin(const char *text)
{
	if (!rt_init())
		return;
	rec_op_begin(text, text ? strlen(text) : 0);
}

/* OP_END. */
void scry_op_end(void)
{
	if (!rt_ready())
		return;
	rec_op_end();
}
