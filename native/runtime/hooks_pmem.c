//go:build ignore

/*
 * hooks_pmem.c: hooks of libpmem (scry_hooks.def). libpmem's functions appear in the trace as what
 * they do (docs/trace-format.md, "Semantics"), with the site of the user's call:
 *   pmem_map_file            REGION_MAP (flag created when the call created the file), then the
 *                            file's non-zero content as EXTERNAL_WRITE flag initial
 *   pmem_unmap               REGION_UNMAP (after a safety-net comparison)
 *   pmem_flush               FLUSH clwb per cache line
 *   pmem_drain               FENCE sfence
 *   pmem_persist, pmem_msync, pmem_deep_persist: FLUSHes then FENCE
 *   pmem_memcpy/memmove/memset(..., flags) and the _persist/_nodrain forms: STORE of the
 *                            destination bytes, FLUSHes unless PMEM_F_MEM_NOFLUSH, FENCE unless
 *                            PMEM_F_MEM_NODRAIN (or NOFLUSH)
 * When libpmem skips its flushes (g_no_flush: PMEM_NO_FLUSH=1, or persistent caches), no FLUSH is
 * recorded for these calls, nor for libpmemobj's: what libpmem really did.
 * libpmem writes nothing else to PM, so these calls need no protection window.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "rt.h"
#include "scry_hooks.h"

#define F_NODRAIN (1u << 0) /* PMEM_F_MEM_NODRAIN, PMEMOBJ_F_MEM_NODRAIN */
#define F_NOFLUSH (1u << 5) /* PMEM_F_MEM_NOFLUSH, PMEMOBJ_F_MEM_NOFLUSH */
#define FILE_CREATE (1 << 0)  /* PMEM_FILE_CREATE */
#define FILE_TMPFILE (1 << 3) /* PMEM_FILE_TMPFILE */

struct flush_arg {
	uint32_t site;
};

/* The instructions libpmem's flush and drain stand for, by libpmem's contract (libpmem(7): a
 * drain makes the flushed ranges durable): on x86 clwb and sfence, on aarch64 DC CVAP and DSB.
 * PMDK's own aarch64 code (src/libpmem2/aarch64, PMDK 1.12 to 2.1) drains with DMB ISHST, which
 * by the Arm architecture orders the cleans without waiting for them; that is the library's
 * code, outside the program, and the contract is what the program relies on
 * (docs/persistency-profiles.md). */
#if defined(__aarch64__)
#define LIBPMEM_FLUSH SCRY_FLUSH_DC_CVAP
#define LIBPMEM_DRAIN SCRY_FENCE_DSB
#else
#define LIBPMEM_FLUSH SCRY_FLUSH_CLWB
#define LIBPMEM_DRAIN SCRY_FENCE_SFENCE
#endif

static void flush_piece(struct rt_region *r, uintptr_t a, uint64_t n, void *argp)
{
	(void)r;
	struct flush_arg *arg = argp;
	uintptr_t end = a + n;
	for (uintptr_t l = a & ~(uintptr_t)(RT_LINE - 1); l < end; l += RT_LINE)
		rec_flush(arg->site, l, LIBPMEM_FLUSH);
}

void rt_flush_lines(uint32_t site, const void *addr, size_t len)
{
	if (g_no_flush)
		return; /* libpmem writes nothing back: its persists only fence */
	rt_record_flushes(site, addr, len);
}

void rt_record_flushes(uint32_t site, const void *addr, size_t len)
{
	if (!pm_any() || len == 0)
		return;
	struct flush_arg arg = {site};
	pm_for_each((uintptr_t)addr, len, flush_piece, &arg);
}

void rt_fence(uint32_t site)
{
	if (pm_any())
		rec_fence(site, LIBPMEM_DRAIN);
}

/* STORE, FLUSHes, FENCE of a libpmem/libpmemobj memcpy-like call, per its flags. */
void rt_pmem_copy(uint32_t site, void *dest, size_t len, unsigned flags)
{
	pm_record_range(SCRY_EV_STORE, site, dest, len);
	if (!(flags & F_NOFLUSH))
		rt_flush_lines(site, dest, len);
	if (!(flags & (F_NOFLUSH | F_NODRAIN)))
		rt_fence(site);
}

void __scry_pre_pmem_map_file(uint32_t site, const char *path, size_t len, int flags, mode_t mode,
			      size_t *mapped_lenp, int *is_pmemp)
{
	(void)site, (void)len, (void)flags, (void)mode, (void)mapped_lenp, (void)is_pmemp;
	if (!rt_init() || rt_self.in_rt)
		return;
	struct stat st;
	rt_self.pmem_existed = path && stat(path, &st) == 0;
}

void __scry_post_pmem_map_file(uint32_t site, void *ret, const char *path, size_t len, int flags, mode_t mode,
			       size_t *mapped_lenp, int *is_pmemp)
{
	(void)mode, (void)is_pmemp;
	HOOK_ENTER();
	if (ret) {
		size_t n = mapped_lenp ? *mapped_lenp : len;
		struct stat st;
		if (n == 0 && path && stat(path, &st) == 0)
			n = (size_t)st.st_size;
		int created = ((flags & FILE_CREATE) && !rt_self.pmem_existed) || (flags & FILE_TMPFILE);
		pm_add((uintptr_t)ret, n, (flags & FILE_TMPFILE) ? NULL : path, -1, 0, site, created,
		       PM_WRITABLE | ((flags & FILE_TMPFILE) ? 0 : PM_FILE));
	}
	HOOK_LEAVE();
}

void __scry_pre_pmem_unmap(uint32_t site, void *addr, size_t len)
{
	HOOK_ENTER();
	pm_remove((uintptr_t)addr, len ? len : 1, site);
	HOOK_LEAVE();
}

void __scry_post_pmem_unmap(uint32_t site, int ret, void *addr, size_t len)
{
	(void)site, (void)ret, (void)addr, (void)len;
}

void __scry_pre_pmem_persist(uint32_t site, const void *addr, size_t len)
{
	(void)site, (void)addr, (void)len;
}

void __scry_post_pmem_persist(uint32_t site, const void *addr, size_t len)
{
	HOOK_ENTER();
	rt_flush_lines(site, addr, len);
	rt_fence(site);
	HOOK_LEAVE();
}

void __scry_pre_pmem_flush(uint32_t site, const void *addr, size_t len)
{
	(void)site, (void)addr, (void)len;
}

void __scry_post_pmem_flush(uint32_t site, const void *addr, size_t len)
{
	HOOK_ENTER();
	rt_flush_lines(site, addr, len);
	HOOK_LEAVE();
}

void __scry_pre_pmem_drain(uint32_t site)
{
	(void)site;
}

void __scry_post_pmem_drain(uint32_t site)
{
	HOOK_ENTER();
	rt_fence(site);
	HOOK_LEAVE();
}

void __scry_pre_pmem_msync(uint32_t site, const void *addr, size_t len)
{
	(void)site, (void)addr, (void)len;
}

void __scry_post_pmem_msync(uint32_t site, int ret, const void *addr, size_t len)
{
	(void)ret;
	__scry_post_pmem_persist(site, addr, len);
}

void __scry_pre_pmem_deep_persist(uint32_t site, const void *addr, size_t len)
{
	(void)site, (void)addr, (void)len;
}

void __scry_post_pmem_deep_persist(uint32_t site, int ret, const void *addr, size_t len)
{
	(void)ret;
	__scry_post_pmem_persist(site, addr, len);
}

#define COPY_HOOKS(name, srctype, src, flagsexpr, flagsdecl)                                    \
	void __scry_pre_##name(uint32_t site, void *pmemdest, srctype src, size_t len flagsdecl) \
	{                                                                                       \
		(void)site, (void)pmemdest, (void)src, (void)len, (void)(flagsexpr);            \
	}                                                                                       \
	void __scry_post_##name(uint32_t site, void *ret, void *pmemdest, srctype src, size_t len flagsdecl) \
	{                                                                                       \
		(void)ret, (void)src;                                                           \
		HOOK_ENTER_NOCHECK();                                                           \
		pm_store_then_check(pmemdest, len, __builtin_frame_address(0));                 \
		rt_pmem_copy(site, pmemdest, len, (flagsexpr));                                 \
		HOOK_LEAVE();                                                                   \
	}

#define COMMA ,
COPY_HOOKS(pmem_memcpy, const void *, src, flags, COMMA unsigned flags)
COPY_HOOKS(pmem_memmove, const void *, src, flags, COMMA unsigned flags)
COPY_HOOKS(pmem_memset, int, c, flags, COMMA unsigned flags)
COPY_HOOKS(pmem_memcpy_persist, const void *, src, 0, )
COPY_HOOKS(pmem_memmove_persist, const void *, src, 0, )
COPY_HOOKS(pmem_memset_persist, int, c, 0, )
COPY_HOOKS(pmem_memcpy_nodrain, const void *, src, F_NODRAIN, )
COPY_HOOKS(pmem_memmove_nodrain, const void *, src, F_NODRAIN, )
COPY_HOOKS(pmem_memset_nodrain, int, c, F_NODRAIN, )

/* ------------------------------------------------ libpmem as uninstrumented libraries call it */

/*
 * The runtime defines the libpmem functions libpmemobj imports (nm -D libpmemobj.so: pmem_persist,
 * pmem_flush, pmem_msync, pmem_deep_flush, pmem_memcpy, pmem_memmove, pmem_memset; pmem_drain
 * has no range). Linked into the instrumented program, these definitions are the ones the dynamic
 * linker binds libpmemobj's references to (the executable comes first in symbol lookup); the
 * program's own calls bind to them too, and its hooks above run around them as before. Each one
 * notes its range for the protection window open around the library call, if any
 * (pm_note_write, region.c "Trusting libpmem"), then calls libpmem's own definition, found with
 * dlsym(RTLD_NEXT). They are weak: a program that defines a function of the same name keeps it,
 * and the windows then never trust libpmem.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

/* libpmem's definition of name; exits with a message when there is none (a call reached this
 * definition although libpmem is not loaded: nothing sensible can be done for it). */
static void *real_pmem(const char *name, void *_Atomic *cache)
{
	void *p = atomic_load_explicit(cache, memory_order_acquire);
	if (RT_LIKELY(p != NULL))
		return p;
	p = dlsym(RTLD_NEXT, name);
	if (!p) {
		static const char msg[] = "scry: libpmem is not loaded, but one of its functions was called\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		abort();
	}
	atomic_store_explicit(cache, p, memory_order_release);
	return p;
}

#define REAL_PMEM(name, type) ((type)real_pmem(#name, &real_##name))

static void *_Atomic real_pmem_persist, *_Atomic real_pmem_flush, *_Atomic real_pmem_msync,
	*_Atomic real_pmem_deep_flush, *_Atomic real_pmem_memcpy, *_Atomic real_pmem_memmove,
	*_Atomic real_pmem_memset;

__attribute__((weak)) void pmem_persist(const void *addr, size_t len)
{
	pm_note_write(addr, len);
	REAL_PMEM(pmem_persist, void (*)(const void *, size_t))(addr, len);
}

__attribute__((weak)) void pmem_flush(const void *addr, size_t len)
{
	pm_note_write(addr, len);
	REAL_PMEM(pmem_flush, void (*)(const void *, size_t))(addr, len);
}

__attribute__((weak)) int pmem_msync(const void *addr, size_t len)
{
	pm_note_write(addr, len);
	return REAL_PMEM(pmem_msync, int (*)(const void *, size_t))(addr, len);
}

__attribute__((weak)) void pmem_deep_flush(const void *addr, size_t len)
{
	pm_note_write(addr, len);
	REAL_PMEM(pmem_deep_flush, void (*)(const void *, size_t))(addr, len);
}

__attribute__((weak)) void *pmem_memcpy(void *dest, const void *src, size_t len, unsigned flags)
{
	pm_note_write(dest, len);
	return REAL_PMEM(pmem_memcpy, void *(*)(void *, const void *, size_t, unsigned))(dest, src, len, flags);
}

__attribute__((weak)) void *pmem_memmove(void *dest, const void *src, size_t len, unsigned flags)
{
	pm_note_write(dest, len);
	return REAL_PMEM(pmem_memmove, void *(*)(void *, const void *, size_t, unsigned))(dest, src, len, flags);
}

__attribute__((weak)) void *pmem_memset(void *dest, int c, size_t len, unsigned flags)
{
	pm_note_write(dest, len);
	return REAL_PMEM(pmem_memset, void *(*)(void *, int, size_t, unsigned))(dest, c, len, flags);
}
