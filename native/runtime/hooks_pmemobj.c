//go:build ignore

/*
 * hooks_pmemobj.c: hooks of libpmemobj (scry_hooks.def); records of docs/trace-format.md:
 *   pmemobj_create/open      REGION_MAP (base = the pool, length = the pool file's size; created
 *                            for create) + the pool's content as EXTERNAL_WRITE flag initial
 *   pmemobj_close            safety net, then (after the library unmapped the pool) the pool file
 *                            compared with the shadow (EXTERNAL_WRITE persisted), REGION_UNMAP
 *   pmemobj_persist/flush/drain: FLUSHes + FENCE / FLUSHes / FENCE
 *   pmemobj_memcpy_persist, memset_persist, memcpy, memmove, memset: STORE of the destination,
 *                            FLUSHes and FENCE per the PMEMOBJ_F_MEM_* flags
 *   pmemobj_tx_begin         TX_BEGIN (and TX_ABORT when it failed)
 *   pmemobj_tx_add_range*    TX_ADD (recorded before the call: a failing add aborts by longjmp)
 *   pmemobj_tx_commit        TX_COMMIT; pmemobj_tx_process in stage WORK: TX_COMMIT
 *   pmemobj_tx_abort         TX_ABORT (before the call: it longjmps)
 *   pmemobj_tx_end           TX_END
 *   pmemobj_tx_*alloc        ALLOC flag tx (+ zeroed); *realloc also FREE of the old object
 *   pmemobj_tx_free/xfree    FREE flag tx (before the call)
 *   pmemobj_alloc & co.      ALLOC from *oidp after the call; pmemobj_free: FREE before it
 *   pmemobj_volatile         PM_EXCLUDE of the variable and of its run id, before the call
 * Everything else these calls write to PM (undo logs, allocator metadata, a commit's log
 * processing, an abort's rollback) is caught by a protection window and recorded as
 * EXTERNAL_WRITE flag persisted. A call that moves the transaction from stage WORK to ONABORT
 * (a failing add or allocation) gets a TX_ABORT with pmemobj_tx_errno().
 *
 * The runtime never links libpmemobj: the functions it calls itself are found with dlsym.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "scry_hooks.h"

#define F_NOFLUSH (1u << 5)        /* PMEMOBJ_F_MEM_NOFLUSH */
#define XADD_NO_FLUSH (1ull << 1)  /* POBJ_XADD_NO_FLUSH */
#define XADD_NO_SNAPSHOT (1ull << 2) /* POBJ_XADD_NO_SNAPSHOT */
#define XALLOC_ZERO (1ull << 0)    /* POBJ_XALLOC_ZERO */
#define STAGE_WORK 1

/* ---------------------------------------------------------------- libpmemobj via dlsym */

static void *sym(const char *name, void *_Atomic *cache)
{
	void *p = atomic_load_explicit(cache, memory_order_relaxed);
	if (!p) {
		p = dlsym(RTLD_DEFAULT, name);
		atomic_store_explicit(cache, p, memory_order_relaxed);
	}
	return p;
}

void *obj_direct(uint64_t uuid, uint64_t off)
{
	static void *_Atomic f;
	if (!uuid || !off)
		return NULL;
	void *(*fn)(struct rt_oid) = (void *(*)(struct rt_oid))sym("pmemobj_direct", &f);
	return fn ? fn((struct rt_oid){uuid, off}) : NULL;
}

uint64_t obj_usable_size(uint64_t uuid, uint64_t off)
{
	static void *_Atomic f;
	if (!uuid || !off)
		return 0;
	size_t (*fn)(struct rt_oid) = (size_t(*)(struct rt_oid))sym("pmemobj_alloc_usable_size", &f);
	return fn ? fn((struct rt_oid){uuid, off}) : 0;
}

int obj_tx_stage(void)
{
	static void *_Atomic f;
	int (*fn)(void) = (int (*)(void))sym("pmemobj_tx_stage", &f);
	return fn ? fn() : -1;
}

int obj_tx_errno(void)
{
	static void *_Atomic f;
	int (*fn)(void) = (int (*)(void))sym("pmemobj_tx_errno", &f);
	return fn ? fn() : 0;
}

/* The object a call created, with the header before it: the library wrote it (header, zeroing,
 * the copy of a realloc), and inside a transaction makes it durable only at the commit. Noted
 * while the call's window is open, so that the window compares it (region.c, "Trusting
 * libpmem"). */
#define OBJ_HEADER_MAX 64
static void note_obj(uint64_t uuid, uint64_t off)
{
	char *p = obj_direct(uuid, off);
	if (p)
		pm_note_write(p - OBJ_HEADER_MAX, OBJ_HEADER_MAX + obj_usable_size(uuid, off));
}

/* ---------------------------------------------------------------- windows */

/* Opens a protection window for a libpmemobj call (what it writes is persisted). */
#define OBJ_WINDOW(site, tx) win_open((site), SCRY_EXT_PERSISTED, WIN_PMDK, (tx), __builtin_frame_address(0))
/* Closes the window the pre hook of this call opened (frames of pre and post hooks match). */
#define OBJ_CLOSE() win_close_stale(__builtin_frame_address(0))

#define WINDOW_HOOKS_PRE(name, tx, params, ...)            \
	void __scry_pre_##name params                      \
	{                                                  \
		(void)0, __VA_ARGS__;                      \
		HOOK_ENTER();                              \
		OBJ_WINDOW(site, tx);                      \
		HOOK_LEAVE();                              \
	}

/* ---------------------------------------------------------------- pools */

/* REGION_MAP for a pool the library mapped at pop from path. */
static void pool_mapped(uint32_t site, void *pop, const char *path, int created)
{
	if (!pop || !path)
		return;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		rt_warn("cannot stat pool %s; not traced", path);
		return;
	}
	char magic[11] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = pread(fd, magic, sizeof magic, 0);
		close(fd);
		if (n == (ssize_t)sizeof magic && memcmp(magic, "PMEMPOOLSET", sizeof magic) == 0) {
			rt_warn("pool %s is a pool set; not traced", path);
			return;
		}
	}
	pm_add((uintptr_t)pop, (uint64_t)st.st_size, path, -1, 0, site, created, PM_WRITABLE | PM_FILE);
}

void __scry_pre_pmemobj_create(uint32_t site, const char *path, const char *layout, size_t poolsize, mode_t mode)
{
	(void)site, (void)path, (void)layout, (void)poolsize, (void)mode;
	rt_init();
}

void __scry_post_pmemobj_create(uint32_t site, PMEMobjpool *ret, const char *path, const char *layout,
				size_t poolsize, mode_t mode)
{
	(void)layout, (void)poolsize, (void)mode;
	if (ret)
		converge_opened(); /* before HOOK_ENTER: also when inert */
	HOOK_ENTER();
	pool_mapped(site, ret, path, 1);
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_open(uint32_t site, const char *path, const char *layout)
{
	(void)site, (void)path, (void)layout;
	rt_init();
}

void __scry_post_pmemobj_open(uint32_t site, PMEMobjpool *ret, const char *path, const char *layout)
{
	(void)layout;
	if (ret)
		converge_opened(); /* before HOOK_ENTER: also when inert */
	HOOK_ENTER();
	pool_mapped(site, ret, path, 0);
	HOOK_LEAVE();
}

static RT_TLS int closing_idx = -1;

void __scry_pre_pmemobj_close(uint32_t site, PMEMobjpool *pop)
{
	(void)site;
	HOOK_ENTER();
	closing_idx = pm_remove_begin((uintptr_t)pop);
	HOOK_LEAVE();
}

void __scry_post_pmemobj_close(uint32_t site, PMEMobjpool *pop)
{
	(void)pop;
	HOOK_ENTER();
	pm_remove_finish(closing_idx, site);
	closing_idx = -1;
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_root, 0, (uint32_t site, PMEMobjpool *pop, size_t size), (void)pop, (void)size)
void __scry_post_pmemobj_root(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, size_t size)
{
	(void)site, (void)pop, (void)size;
	HOOK_ENTER_NOCHECK();
	if (ret_off)
		note_obj(ret_uuid, ret_off); /* created (zeroed) by the first call */
	OBJ_CLOSE();
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_root_size, 0, (uint32_t site, PMEMobjpool *pop), (void)pop)
void __scry_post_pmemobj_root_size(uint32_t site, size_t ret, PMEMobjpool *pop)
{
	(void)site, (void)ret, (void)pop;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	HOOK_LEAVE();
}

/* ---------------------------------------------------------------- persistence */

/* pmemobj_volatile(3): [ptr, ptr+size) is a volatile variable in the pool, which libpmemobj
 * (re)initializes with constr on the first call of each run, tracked by the run id it writes
 * into *vlt; neither is meant to be persisted (libpmemobj tells pmemcheck so itself:
 * REMOVE_PMEM_MAPPING of the variable, SET_CLEAN of vlt). Both are excluded from PM before the
 * call, so that constr's stores and the library's write of vlt are no PM events. Every call
 * records the exclusion again (cheap; a pool mapped anew forgets it, trace-format.md). */
void __scry_pre_pmemobj_volatile(uint32_t site, PMEMobjpool *pop, struct pmemvlt *vlt, void *ptr, size_t size,
				 void *constr, void *arg)
{
	(void)pop, (void)constr, (void)arg;
	HOOK_ENTER();
	rt_pm_exclude(site, (uintptr_t)vlt, sizeof(uint64_t)); /* struct pmemvlt { uint64_t runid; } */
	rt_pm_exclude(site, (uintptr_t)ptr, size);
	HOOK_LEAVE();
}

void __scry_post_pmemobj_volatile(uint32_t site, void *ret, PMEMobjpool *pop, struct pmemvlt *vlt, void *ptr,
				  size_t size, void *constr, void *arg)
{
	(void)site, (void)ret, (void)pop, (void)vlt, (void)ptr, (void)size, (void)constr, (void)arg;
}

void __scry_pre_pmemobj_persist(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len)
{
	(void)site, (void)pop, (void)addr, (void)len;
}

void __scry_post_pmemobj_persist(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len)
{
	(void)pop;
	HOOK_ENTER();
	rt_flush_lines(site, addr, len);
	rt_fence(site);
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_flush(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len)
{
	(void)site, (void)pop, (void)addr, (void)len;
}

void __scry_post_pmemobj_flush(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len)
{
	(void)pop;
	HOOK_ENTER();
	rt_flush_lines(site, addr, len);
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_drain(uint32_t site, PMEMobjpool *pop)
{
	(void)site, (void)pop;
}

void __scry_post_pmemobj_drain(uint32_t site, PMEMobjpool *pop)
{
	(void)pop;
	HOOK_ENTER();
	rt_fence(site);
	HOOK_LEAVE();
}

/* The copy functions: STORE (+ flushes, fence) of dest; the window catches anything else. */
static void obj_copy_pre(uint32_t site, unsigned flags, void *frame)
{
	win_open(site, (flags & F_NOFLUSH) ? 0 : SCRY_EXT_PERSISTED, WIN_PMDK, 0, frame);
}

static void obj_copy_post(uint32_t site, void *dest, size_t len, unsigned flags, void *frame)
{
	pm_record_range(SCRY_EV_STORE, site, dest, len); /* updates the shadow: the diff skips dest */
	win_close_stale(frame);
	if (!(flags & F_NOFLUSH))
		rt_flush_lines(site, dest, len);
	if (!(flags & (F_NOFLUSH | 1u)))
		rt_fence(site);
}

#define OBJ_COPY_HOOKS(name, srctype, src, flagsexpr, flagsdecl)                                          \
	void __scry_pre_##name(uint32_t site, PMEMobjpool *pop, void *dest, srctype src, size_t len flagsdecl) \
	{                                                                                                 \
		(void)pop, (void)dest, (void)src, (void)len;                                              \
		HOOK_ENTER();                                                                             \
		obj_copy_pre(site, (flagsexpr), __builtin_frame_address(0));                              \
		HOOK_LEAVE();                                                                             \
	}                                                                                                 \
	void __scry_post_##name(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, srctype src,      \
				size_t len flagsdecl)                                                     \
	{                                                                                                 \
		(void)ret, (void)pop, (void)src;                                                          \
		HOOK_ENTER_NOCHECK();                                                                     \
		obj_copy_post(site, dest, len, (flagsexpr), __builtin_frame_address(0));                  \
		HOOK_LEAVE();                                                                             \
	}

#define COMMA ,
OBJ_COPY_HOOKS(pmemobj_memcpy_persist, const void *, src, 0, )
OBJ_COPY_HOOKS(pmemobj_memset_persist, int, c, 0, )
OBJ_COPY_HOOKS(pmemobj_memcpy, const void *, src, flags, COMMA unsigned flags)
OBJ_COPY_HOOKS(pmemobj_memmove, const void *, src, flags, COMMA unsigned flags)
OBJ_COPY_HOOKS(pmemobj_memset, int, c, flags, COMMA unsigned flags)

/* ---------------------------------------------------------------- transactions */

WINDOW_HOOKS_PRE(pmemobj_tx_begin, 0, (uint32_t site, PMEMobjpool *pop, jmp_buf env), (void)pop, (void)env)
void __scry_post_pmemobj_tx_begin(uint32_t site, int ret, PMEMobjpool *pop, jmp_buf env)
{
	(void)pop, (void)env;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	rec_site_only(SCRY_EV_TX_BEGIN, site);
	if (ret != 0) /* a failed begin leaves the transaction in stage ONABORT until tx_end */
		rec_tx_abort(site, (uint64_t)(ret < 0 ? 0 : ret));
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_tx_commit, 1, (uint32_t site), (void)0)
void __scry_post_pmemobj_tx_commit(uint32_t site)
{
	HOOK_ENTER_NOCHECK();
	rec_site_only(SCRY_EV_TX_COMMIT, site); /* the log processing that follows is after the commit */
	OBJ_CLOSE();
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_tx_end, 0, (uint32_t site), (void)0)
void __scry_post_pmemobj_tx_end(uint32_t site, int ret)
{
	(void)ret;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	rec_site_only(SCRY_EV_TX_END, site);
	HOOK_LEAVE();
}

/* TX_ABORT before the call (it longjmps); the rollback is caught by the window. */
void __scry_pre_pmemobj_tx_abort(uint32_t site, int errnum)
{
	HOOK_ENTER();
	rec_tx_abort(site, (uint64_t)(errnum < 0 ? 0 : errnum));
	OBJ_WINDOW(site, 0);
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_abort(uint32_t site, int errnum)
{
	(void)site, (void)errnum;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	HOOK_LEAVE();
}

/* pmemobj_tx_process commits in stage WORK; in the other stages it only moves the stage on. */
static RT_TLS int process_stage = -1;

void __scry_pre_pmemobj_tx_process(uint32_t site)
{
	HOOK_ENTER();
	process_stage = obj_tx_stage();
	OBJ_WINDOW(site, 0);
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_process(uint32_t site)
{
	HOOK_ENTER_NOCHECK();
	if (process_stage == STAGE_WORK)
		rec_site_only(SCRY_EV_TX_COMMIT, site);
	process_stage = -1;
	OBJ_CLOSE();
	HOOK_LEAVE();
}

/* TX_ADD before the call, then a window for the undo log. */
static void tx_add(uint32_t site, const void *addr, size_t size, uint64_t flags, void *frame)
{
	if (addr && pm_find((uintptr_t)addr)) {
		uint8_t f = ((flags & XADD_NO_SNAPSHOT) ? SCRY_TXADD_NO_SNAPSHOT : 0) |
			    ((flags & XADD_NO_FLUSH) ? SCRY_TXADD_NO_FLUSH : 0);
		rec_addr_size_flags(SCRY_EV_TX_ADD, site, (uintptr_t)addr, size, f);
	}
	win_open(site, SCRY_EXT_PERSISTED, WIN_PMDK, 1, frame);
}

void __scry_pre_pmemobj_tx_add_range(uint32_t site, SCRY_PMEMOID oid, uint64_t off, size_t size)
{
	HOOK_ENTER();
	char *p = obj_direct(oid.pool_uuid_lo, oid.off);
	tx_add(site, p ? p + off : NULL, size, 0, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_tx_add_range_direct(uint32_t site, const void *ptr, size_t size)
{
	HOOK_ENTER();
	tx_add(site, ptr, size, 0, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_tx_xadd_range(uint32_t site, SCRY_PMEMOID oid, uint64_t off, size_t size, uint64_t flags)
{
	HOOK_ENTER();
	char *p = obj_direct(oid.pool_uuid_lo, oid.off);
	tx_add(site, p ? p + off : NULL, size, flags, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_tx_xadd_range_direct(uint32_t site, const void *ptr, size_t size, uint64_t flags)
{
	HOOK_ENTER();
	tx_add(site, ptr, size, flags, __builtin_frame_address(0));
	HOOK_LEAVE();
}

#define CLOSE_ONLY_POST(name, params, ...)            \
	void __scry_post_##name params                \
	{                                             \
		(void)0, __VA_ARGS__;                 \
		HOOK_ENTER_NOCHECK();                 \
		OBJ_CLOSE();                          \
		HOOK_LEAVE();                         \
	}

/* After a successful add the program writes the range: making it writable now (small ranges)
 * saves the fault of its first store on each page. */
#define ADD_UNPROTECT_MAX (4 * RT_PAGE)
static void tx_add_post(int ret, const void *addr, size_t size, void *frame)
{
	win_close_stale(frame);
	if (ret == 0 && addr && size && size <= ADD_UNPROTECT_MAX)
		pm_unprotect_range((void *)addr, size);
}

void __scry_post_pmemobj_tx_add_range(uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t off, size_t size)
{
	(void)site;
	HOOK_ENTER_NOCHECK();
	char *p = ret == 0 ? obj_direct(oid.pool_uuid_lo, oid.off) : NULL;
	tx_add_post(ret, p ? p + off : NULL, size, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_add_range_direct(uint32_t site, int ret, const void *ptr, size_t size)
{
	(void)site;
	HOOK_ENTER_NOCHECK();
	tx_add_post(ret, ptr, size, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_xadd_range(uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t off, size_t size,
				       uint64_t flags)
{
	(void)site, (void)flags;
	HOOK_ENTER_NOCHECK();
	char *p = ret == 0 ? obj_direct(oid.pool_uuid_lo, oid.off) : NULL;
	tx_add_post(ret, p ? p + off : NULL, size, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_xadd_range_direct(uint32_t site, int ret, const void *ptr, size_t size, uint64_t flags)
{
	(void)site, (void)flags;
	HOOK_ENTER_NOCHECK();
	tx_add_post(ret, ptr, size, __builtin_frame_address(0));
	HOOK_LEAVE();
}

/* ALLOC (after the allocator's own writes) of the object a call returned. */
static void alloc_rec(uint32_t site, uint64_t uuid, uint64_t off, uint8_t flags)
{
	void *p = obj_direct(uuid, off);
	if (p && pm_find((uintptr_t)p))
		rec_addr_size_flags(SCRY_EV_ALLOC, site, (uintptr_t)p, obj_usable_size(uuid, off), flags);
}

#define TX_ALLOC_HOOKS(name, params, retparams, zero, ...)                 \
	WINDOW_HOOKS_PRE(name, 1, params, __VA_ARGS__)                     \
	void __scry_post_##name retparams                                  \
	{                                                                  \
		(void)0, __VA_ARGS__;                                      \
		HOOK_ENTER_NOCHECK();                                      \
		if (ret_off)                                               \
			note_obj(ret_uuid, ret_off);                       \
		OBJ_CLOSE();                                               \
		if (ret_off)                                               \
			alloc_rec(site, ret_uuid, ret_off, SCRY_ALLOC_IN_TX | ((zero) ? SCRY_ALLOC_ZEROED : 0)); \
		HOOK_LEAVE();                                              \
	}

TX_ALLOC_HOOKS(pmemobj_tx_alloc, (uint32_t site, size_t size, uint64_t type_num),
	       (uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num), 0, (void)size, (void)type_num)
TX_ALLOC_HOOKS(pmemobj_tx_zalloc, (uint32_t site, size_t size, uint64_t type_num),
	       (uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num), 1, (void)size, (void)type_num)
TX_ALLOC_HOOKS(pmemobj_tx_xalloc, (uint32_t site, size_t size, uint64_t type_num, uint64_t flags),
	       (uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num, uint64_t flags), flags & XALLOC_ZERO,
	       (void)size, (void)type_num, (void)flags)

/* Reallocation: FREE of the old object (when it moved) and ALLOC of the new one. */
static void realloc_pre(uint32_t site, uint64_t uuid, uint64_t off, int tx, void *frame)
{
	void *p = obj_direct(uuid, off);
	rt_self.realloc_old = (uintptr_t)p;
	win_open(site, SCRY_EXT_PERSISTED, WIN_PMDK, tx, frame);
}

static void realloc_post(uint32_t site, uint64_t uuid, uint64_t off, uint8_t flags, void *frame)
{
	note_obj(uuid, off);
	win_close_stale(frame);
	void *p = obj_direct(uuid, off);
	if (!p)
		return;
	uintptr_t old = (uintptr_t)rt_self.realloc_old;
	if (old && old != (uintptr_t)p && pm_find(old))
		rec_free(site, old, flags & SCRY_ALLOC_IN_TX);
	alloc_rec(site, uuid, off, flags);
}

void __scry_pre_pmemobj_tx_realloc(uint32_t site, SCRY_PMEMOID oid, size_t size, uint64_t type_num)
{
	(void)size, (void)type_num;
	HOOK_ENTER();
	realloc_pre(site, oid.pool_uuid_lo, oid.off, 1, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_realloc(uint32_t site, SCRY_OID_RET, SCRY_PMEMOID oid, size_t size, uint64_t type_num)
{
	(void)oid, (void)size, (void)type_num;
	HOOK_ENTER_NOCHECK();
	realloc_post(site, ret_uuid, ret_off, SCRY_ALLOC_IN_TX, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_tx_zrealloc(uint32_t site, SCRY_PMEMOID oid, size_t size, uint64_t type_num)
{
	(void)size, (void)type_num;
	HOOK_ENTER();
	realloc_pre(site, oid.pool_uuid_lo, oid.off, 1, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_tx_zrealloc(uint32_t site, SCRY_OID_RET, SCRY_PMEMOID oid, size_t size, uint64_t type_num)
{
	(void)oid, (void)size, (void)type_num;
	HOOK_ENTER_NOCHECK();
	realloc_post(site, ret_uuid, ret_off, SCRY_ALLOC_IN_TX | SCRY_ALLOC_ZEROED, __builtin_frame_address(0));
	HOOK_LEAVE();
}

/* FREE before the call. */
static void free_pre(uint32_t site, uint64_t uuid, uint64_t off, int tx, void *frame)
{
	void *p = obj_direct(uuid, off);
	if (p && pm_find((uintptr_t)p))
		rec_free(site, (uintptr_t)p, tx ? SCRY_ALLOC_IN_TX : 0);
	win_open(site, SCRY_EXT_PERSISTED, WIN_PMDK, tx, frame);
}

void __scry_pre_pmemobj_tx_free(uint32_t site, SCRY_PMEMOID oid)
{
	HOOK_ENTER();
	free_pre(site, oid.pool_uuid_lo, oid.off, 1, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_tx_xfree(uint32_t site, SCRY_PMEMOID oid, uint64_t flags)
{
	(void)flags;
	HOOK_ENTER();
	free_pre(site, oid.pool_uuid_lo, oid.off, 1, __builtin_frame_address(0));
	HOOK_LEAVE();
}

CLOSE_ONLY_POST(pmemobj_tx_free, (uint32_t site, int ret, SCRY_PMEMOID oid), (void)site, (void)ret, (void)oid)
CLOSE_ONLY_POST(pmemobj_tx_xfree, (uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t flags), (void)site, (void)ret,
		(void)oid, (void)flags)

/* ---------------------------------------------------------------- atomic allocations */

#define ATOMIC_ALLOC_HOOKS(name, zero, params, retparams, ...)                                  \
	WINDOW_HOOKS_PRE(name, 0, params, __VA_ARGS__)                                          \
	void __scry_post_##name retparams                                                       \
	{                                                                                       \
		(void)0, __VA_ARGS__;                                                           \
		HOOK_ENTER_NOCHECK();                                                           \
		if (ret == 0 && oidp)                                                           \
			note_obj(oidp->pool_uuid_lo, oidp->off);                                \
		OBJ_CLOSE();                                                                    \
		if (ret == 0 && oidp)                                                           \
			alloc_rec(site, oidp->pool_uuid_lo, oidp->off, (zero) ? SCRY_ALLOC_ZEROED : 0); \
		HOOK_LEAVE();                                                                   \
	}

ATOMIC_ALLOC_HOOKS(pmemobj_alloc, 0,
		   (uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num,
		    scry_pmemobj_constr constructor, void *arg),
		   (uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num,
		    scry_pmemobj_constr constructor, void *arg),
		   (void)pop, (void)oidp, (void)size, (void)type_num, (void)constructor, (void)arg)
ATOMIC_ALLOC_HOOKS(pmemobj_zalloc, 1,
		   (uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num),
		   (uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num),
		   (void)pop, (void)oidp, (void)size, (void)type_num)
ATOMIC_ALLOC_HOOKS(pmemobj_xalloc, flags & XALLOC_ZERO,
		   (uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num,
		    uint64_t flags, scry_pmemobj_constr constructor, void *arg),
		   (uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num,
		    uint64_t flags, scry_pmemobj_constr constructor, void *arg),
		   (void)pop, (void)oidp, (void)size, (void)type_num, (void)flags, (void)constructor, (void)arg)

void __scry_pre_pmemobj_realloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num)
{
	(void)pop, (void)size, (void)type_num;
	HOOK_ENTER();
	realloc_pre(site, oidp ? oidp->pool_uuid_lo : 0, oidp ? oidp->off : 0, 0, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_realloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size,
				 uint64_t type_num)
{
	(void)pop, (void)size, (void)type_num;
	HOOK_ENTER_NOCHECK();
	if (ret == 0 && oidp)
		realloc_post(site, oidp->pool_uuid_lo, oidp->off, 0, __builtin_frame_address(0));
	else
		OBJ_CLOSE();
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_zrealloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num)
{
	__scry_pre_pmemobj_realloc(site, pop, oidp, size, type_num);
}

void __scry_post_pmemobj_zrealloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size,
				  uint64_t type_num)
{
	(void)pop, (void)size, (void)type_num;
	HOOK_ENTER_NOCHECK();
	if (ret == 0 && oidp)
		realloc_post(site, oidp->pool_uuid_lo, oidp->off, SCRY_ALLOC_ZEROED, __builtin_frame_address(0));
	else
		OBJ_CLOSE();
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_free(uint32_t site, SCRY_PMEMOID *oidp)
{
	HOOK_ENTER();
	free_pre(site, oidp ? oidp->pool_uuid_lo : 0, oidp ? oidp->off : 0, 0, __builtin_frame_address(0));
	HOOK_LEAVE();
}

void __scry_post_pmemobj_free(uint32_t site, SCRY_PMEMOID *oidp)
{
	(void)site, (void)oidp;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	HOOK_LEAVE();
}

/* ---------------------------------------------------------------- reservations */

/*
 * The action API: pmemobj_reserve/xreserve hand out memory the program fills with plain stores
 * before pmemobj_publish makes it allocated (atomically with the other actions), or
 * pmemobj_cancel gives it back. Until then a crash leaves it free, so what is written into it
 * cannot matter for recovery. The trace says so: ALLOC flag reserve after the reservation, a
 * second ALLOC without it when a publish covers the action (flag tx for pmemobj_tx_publish:
 * the object then belongs to the transaction), FREE flag reserve on cancel. Reservations are
 * remembered by the address of their struct pobj_action, which the program passes back to
 * publish/cancel (the struct's content is PMDK's internal business).
 */
#define RT_MAX_RESV 1024
static struct resv {
	const void *act;
	uintptr_t addr;
	uint64_t size;
} g_resv[RT_MAX_RESV];
static int g_nresv;

static void resv_add(const void *act, uintptr_t addr, uint64_t size)
{
	rt_lock();
	for (int i = 0; i < g_nresv; i++)
		if (g_resv[i].act == act) { /* the program reuses the action slot */
			g_resv[i].addr = addr, g_resv[i].size = size;
			rt_unlock();
			return;
		}
	if (g_nresv < RT_MAX_RESV)
		g_resv[g_nresv++] = (struct resv){act, addr, size};
	rt_unlock();
}

/* Ends the reservations whose action lies in actv[0..n): ALLOC (flags) when published, FREE
 * (flag reserve) when cancelled. */
static void resv_end(uint32_t site, const char *actv, size_t n, int publish, uint8_t flags)
{
	/* sizeof(struct pobj_action) in PMDK 1.x: a 4-byte type, 3 words of data, 14 more words. */
	const size_t act_size = 4 + 3 * 4 + 14 * 8;
	const char *end = actv + n * act_size;
	rt_lock();
	int found[RT_MAX_RESV], nf = 0;
	for (int i = 0; i < g_nresv; i++) {
		const char *a = g_resv[i].act;
		if (a >= actv && a < end)
			found[nf++] = i;
	}
	struct resv ended[RT_MAX_RESV];
	for (int k = 0; k < nf; k++)
		ended[k] = g_resv[found[k]];
	for (int k = nf - 1; k >= 0; k--) /* remove from the back, keeping indices valid */
		g_resv[found[k]] = g_resv[--g_nresv];
	rt_unlock();
	for (int k = 0; k < nf; k++) {
		if (!pm_find(ended[k].addr))
			continue;
		if (publish)
			rec_addr_size_flags(SCRY_EV_ALLOC, site, ended[k].addr, ended[k].size, flags);
		else
			rec_free(site, ended[k].addr, SCRY_ALLOC_RESERVE);
	}
}

static void reserve_post(uint32_t site, uint64_t uuid, uint64_t off, const void *act, size_t size, uint8_t flags)
{
	if (!off)
		return;
	void *p = obj_direct(uuid, off);
	if (!p || !pm_find((uintptr_t)p))
		return;
	uint64_t usable = obj_usable_size(uuid, off);
	if (!usable)
		usable = size;
	rec_addr_size_flags(SCRY_EV_ALLOC, site, (uintptr_t)p, usable, flags | SCRY_ALLOC_RESERVE);
	resv_add(act, (uintptr_t)p, usable);
}

WINDOW_HOOKS_PRE(pmemobj_reserve, 0,
		 (uint32_t site, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num),
		 (void)pop, (void)act, (void)size, (void)type_num)
void __scry_post_pmemobj_reserve(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, struct pobj_action *act, size_t size,
				 uint64_t type_num)
{
	(void)pop, (void)type_num;
	HOOK_ENTER_NOCHECK();
	note_obj(ret_uuid, ret_off);
	OBJ_CLOSE();
	reserve_post(site, ret_uuid, ret_off, act, size, 0);
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_xreserve, 0,
		 (uint32_t site, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num,
		  uint64_t flags),
		 (void)pop, (void)act, (void)size, (void)type_num, (void)flags)
void __scry_post_pmemobj_xreserve(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, struct pobj_action *act,
				  size_t size, uint64_t type_num, uint64_t flags)
{
	(void)pop, (void)type_num;
	HOOK_ENTER_NOCHECK();
	note_obj(ret_uuid, ret_off);
	OBJ_CLOSE();
	reserve_post(site, ret_uuid, ret_off, act, size, (flags & XALLOC_ZERO) ? SCRY_ALLOC_ZEROED : 0);
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_publish, 0, (uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt),
		 (void)pop, (void)actv, (void)actvcnt)
void __scry_post_pmemobj_publish(uint32_t site, int ret, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt)
{
	(void)pop;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	if (ret == 0)
		resv_end(site, (const char *)actv, actvcnt, 1, 0);
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_tx_publish, 1, (uint32_t site, struct pobj_action *actv, size_t actvcnt), (void)actv,
		 (void)actvcnt)
void __scry_post_pmemobj_tx_publish(uint32_t site, int ret, struct pobj_action *actv, size_t actvcnt)
{
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	if (ret == 0)
		resv_end(site, (const char *)actv, actvcnt, 1, SCRY_ALLOC_IN_TX);
	HOOK_LEAVE();
}

WINDOW_HOOKS_PRE(pmemobj_tx_xpublish, 1, (uint32_t site, struct pobj_action *actv, size_t actvcnt, uint64_t flags),
		 (void)actv, (void)actvcnt, (void)flags)
void __scry_post_pmemobj_tx_xpublish(uint32_t site, int ret, struct pobj_action *actv, size_t actvcnt,
				     uint64_t flags)
{
	(void)flags;
	HOOK_ENTER_NOCHECK();
	OBJ_CLOSE();
	if (ret == 0)
		resv_end(site, (const char *)actv, actvcnt, 1, SCRY_ALLOC_IN_TX);
	HOOK_LEAVE();
}

void __scry_pre_pmemobj_cancel(uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt)
{
	(void)pop;
	HOOK_ENTER();
	resv_end(site, (const char *)actv, actvcnt, 0, 0);
	OBJ_WINDOW(site, 0);
	HOOK_LEAVE();
}

CLOSE_ONLY_POST(pmemobj_cancel, (uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt),
		(void)site, (void)pop, (void)actv, (void)actvcnt)
