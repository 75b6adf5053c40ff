/*
 * scry_abi.h: the contract between the scry LLVM pass (instrument/llvm) and the scry C runtime
 * (runtime/). The pass emits calls to these functions; the runtime defines them. Nothing here is
 * for users (their header is scry.h).
 *
 * Site ids. Every instrumented module carries a table of its static sites (and one of the static
 * dependence facts between them) and registers them from a constructor with
 * __scry_register_module_deps(), which returns the module's base id. The pass keeps that base in
 * an internal global (@__scry_module_base) and passes `base + local_index` as the `site` argument
 * of every callback, so site ids are unique across modules and stable for a given binary (module
 * constructors run in a fixed order). Branch sites (SCRY_SITE_BRANCH) are static facts only: no
 * callback ever names them.
 *
 * PM range filter. Loads and stores are the hot path. The pass guards each load/store callback
 * with an inline test `addr >= __scry_pm_lo && addr < __scry_pm_hi` (two globals the runtime
 * keeps as the hull of all mapped PM regions; lo > hi when there are none), so accesses to
 * ordinary memory cost two compares.
 */
#ifndef SCRY_ABI_H
#define SCRY_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One static site as the pass emits it (a constant array per module). Kinds are the SiteKind
 * values of docs/trace-format.md (SCRY_SITE_* in scry_trace_format.h). Strings are NUL-terminated
 * and live as long as the module. */
struct scry_site {
	uint32_t kind;
	uint32_t line;
	uint32_t column;
	uint32_t reserved;
	const char *function; /* enclosing function */
	const char *file;     /* source file */
	const char *callee;   /* called function for call sites, else "" */
};

/* One static dependence fact as the pass emits it (a constant array per module): site `from`
 * depends on site `to` in the way `kind` says (SCRY_DEP_CONTROL, SCRY_DEP_VALUE, SCRY_DEP_ADDRESS
 * of scry_trace_format.h; docs/trace-format.md, DEPS). `from` and `to` are indices into the
 * module's own site table (not global ids). */
struct scry_dep {
	uint32_t from;
	uint32_t to;
	uint32_t kind;
};

/* Registers a module's `n` sites and its `ndeps` dependence facts (deps may be NULL when ndeps is
 * 0); returns the global id of sites[0] (ids start at 1). The runtime writes the SITES record and,
 * right after it under the same lock, a DEPS record with the facts translated to global ids
 * (none when ndeps is 0). The pass's module constructor calls this. */
uint32_t __scry_register_module_deps(const struct scry_site *sites, uint32_t n, const struct scry_dep *deps,
				     uint32_t ndeps);
/* The same without dependence facts. */
uint32_t __scry_register_module(const struct scry_site *sites, uint32_t n);

/* Registers the entry addresses of the `n` functions a module defines (all instrumented), so that
 * __scry_ext_pre can tell a call into instrumented code from a call into code scry cannot see,
 * whatever the link mode (PIE or not, static or shared). Called by the same constructor. */
void __scry_register_functions(const void *const *fns, uint32_t n);

/* Hull of the mapped PM regions, for the pass's inline filter. */
extern uintptr_t __scry_pm_lo;
extern uintptr_t __scry_pm_hi;

/* Memory accesses. Called right AFTER the access, so the runtime reads the bytes now in memory
 * (the value loaded, or the bytes stored). `size` is in bytes. */
void __scry_load(uint32_t site, const void *addr, uint64_t size);
void __scry_store(uint32_t site, const void *addr, uint64_t size);
void __scry_nt_store(uint32_t site, const void *addr, uint64_t size);
/* An atomic read-modify-write or compare-exchange on `addr` (after it executed): recorded as a
 * load, a store and a locked fence. Called for every atomic RMW/cmpxchg whether or not it hits PM,
 * because a locked instruction also orders flushes to PM. */
void __scry_rmw(uint32_t site, const void *addr, uint64_t size);

/* memcpy/memmove (kind 0, 1) and memset (kind 2) intrinsics and libc copy calls (strcpy, ...),
 * called AFTER the operation: `dst` got `size` bytes; `src` is the source (NULL for memset). */
void __scry_memop(uint32_t site, void *dst, const void *src, uint64_t size, uint32_t kind);

/* Flushes (kind: 1 clflush, 2 clflushopt, 3 clwb) of the line holding `addr`, from intrinsics or
 * inline assembly, and fences (kind: 1 sfence, 2 mfence, 3 locked), from intrinsics, inline
 * assembly and LLVM `fence` instructions (seq_cst or acq_rel fences map to mfence). */
void __scry_flush(uint32_t site, const void *addr, uint32_t kind);
void __scry_fence(uint32_t site, uint32_t kind);

/* Call stacks. At function entry the pass reads the current depth with __scry_enter(); around
 * every call it does __scry_call(depth, site) before and __scry_ret(depth) after. Passing the
 * entry depth (not push/pop) keeps the shadow stack right across longjmp, which PMDK's
 * transactions use on abort. __scry_call also numbers the new activation (the FRAME records of
 * docs/trace-format.md): per thread, every call gets the next serial, from 1. */
uint32_t __scry_enter(void);
void __scry_call(uint32_t depth, uint32_t site);
void __scry_ret(uint32_t depth);

/* Calls into code scry did not instrument (a function only declared in the module, not an
 * intrinsic, not hooked below, not a scry function, not a known read-only libc function such as
 * strlen or memcmp) that take at least one pointer argument: the pass emits
 *     token = __scry_ext_pre(site, callee, p0, p1, p2, p3)   before the call
 *     __scry_ext_post(site, token)                           after it
 * with the callee's address and its first four pointer arguments (NULL where absent). The runtime
 * write-protects PM while the call runs when a pointer argument lies in PM (or the callee is
 * outside every instrumented module and PM is mapped), then records the bytes that changed as
 * EXTERNAL_WRITE records (docs/trace-format.md). */
uint32_t __scry_ext_pre(uint32_t site, const void *callee, const void *p0, const void *p1,
			const void *p2, const void *p3);
void __scry_ext_post(uint32_t site, uint32_t token);

/* Library calls scry interprets. For a call to a function F in the interception list (the
 * functions named below, after "pre_" / "post_"), the pass emits
 *     __scry_pre_F(site, args...)            before the call, with the call's arguments
 *     __scry_post_F(site, ret, args...)      after it returns (no `ret` for void functions)
 * For variadic F only the fixed arguments are passed. The prototypes use the same C types as
 * the real function, so the pass can forward the call's LLVM arguments unchanged; a struct
 * return (PMEMoid) is passed as clang lowers a struct argument ({i64, i64} -> two i64).
 * The list is runtime/include/scry_hooks.def (one SCRY_HOOK(name) line each, included by
 * both the pass and the runtime); the prototypes are in runtime/include/scry_hooks.h. */

#ifdef __cplusplus
}
#endif

#endif /* SCRY_ABI_H */
