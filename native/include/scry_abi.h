/*
 * scry_abi.h: the contract between the scry LLVM pass (native/pass) and the scry C runtime
 * (native/runtime/). The pass emits calls to these functions; the runtime defines them. Nothing here is
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

/* One static site as the pass emits it (a constant array per module). Strings are
 * NUL-terminated and live as long as the module.
 *
 * `kind` holds two values: its low byte (SCRY_SITE_KIND_MASK) is the SiteKind of
 * docs/trace-format.md (SCRY_SITE_* in scry_trace_format.h; every kind is below 256), and the
 * bits from SCRY_SITE_ACCESS_SHIFT up are the site's SiteAccess (SCRY_ACCESS_*: plain,
 * volatile, or atomic with its memory order; trace format version 9), which the runtime splits
 * off into the site's `access` field. A pass older than that field leaves those bits 0 (unknown),
 * so the struct's layout, and the tables older modules carry, stay as they were. */
#define SCRY_SITE_KIND_MASK 0xffu
#define SCRY_SITE_ACCESS_SHIFT 8
struct scry_site {
	uint32_t kind; /* SiteKind | SiteAccess << SCRY_SITE_ACCESS_SHIFT */
	uint32_t line;
	uint32_t column;
	uint32_t inlined_at; /* 1 + index in this table of the SCRY_SITE_INLINED site of the inlined
	                        call this site's code came from; 0 when it was not inlined */
	const char *function; /* enclosing function */
	const char *file;     /* source file */
	const char *callee;   /* called function for call and inlined sites, else "" */
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

/* Hull of the mapped PM regions, for the pass's inline filter. */
extern uintptr_t __scry_pm_lo;
extern uintptr_t __scry_pm_hi;

/* The callbacks, one prototype per line of scry_abi.def (their documentation is there). */
#define SCRY_CALLBACK(ret, name, ...) ret name(__VA_ARGS__);
#include "scry_abi.def"
#undef SCRY_CALLBACK

/* Library calls scry interprets. For a call to a function F of scry_hooks.def, the pass emits
 *     __scry_pre_F(site, args...)            before the call, with the call's arguments
 *     __scry_post_F(site, ret, args...)      after it returns (no `ret` for void functions)
 * For variadic F only the fixed arguments are passed. The hooks take the same C types as the
 * real function, so the pass can forward the call's LLVM arguments unchanged; a struct return
 * (PMEMoid) is passed as clang lowers a struct argument ({i64, i64} -> two i64). scry_hooks.def
 * gives each F's signature once: scry_hooks.h generates the hooks' prototypes from it, and the
 * pass hooks a call only when the callee's LLVM type is the lowering of that signature (a
 * program that declares F differently keeps the call unhooked, and the pass counts it). */

#ifdef __cplusplus
}
#endif

#endif /* SCRY_ABI_H */
