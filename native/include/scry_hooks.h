/*
 * scry_hooks.h: prototypes of the library-call hooks the scry runtime defines, one
 * __scry_pre_F / __scry_post_F pair for every F in scry_hooks.def, generated from its signatures
 * (see scry_abi.h for the calling convention). The argument types are those of the real function
 * F so the LLVM pass can forward the call's arguments unchanged:
 *     void __scry_pre_F(uint32_t site, <F's parameters>);
 *     void __scry_post_F(uint32_t site, <F's return value, if any>, <F's parameters>);
 * Variadic functions get only their fixed parameters. A PMEMoid *return value* is passed as its
 * two 64-bit fields (pool_uuid_lo, off), which is how clang lowers a {i64, i64} struct; PMEMoid
 * *parameters* are passed by value as in C (clang lowers them to the same two i64).
 *
 * The records each hook emits are described in native/runtime/hooks_*.c and in docs/trace-format.md
 * ("Semantics the analyses rely on").
 */
#ifndef SCRY_HOOKS_H
#define SCRY_HOOKS_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PMDK types, declared here so that neither the runtime nor the pass needs PMDK's headers. They
 * match libpmemobj.h (PMDK 1.x); a program may include both. */
typedef struct pmemobjpool PMEMobjpool;
#ifndef LIBPMEMOBJ_BASE_H
/* Layout-compatible with libpmemobj's PMEMoid; named differently so that a translation unit
 * including libpmemobj.h after this header does not see a redefinition. */
typedef struct scry_pmemoid {
	uint64_t pool_uuid_lo;
	uint64_t off;
} scry_pmemoid;
#define SCRY_PMEMOID scry_pmemoid
#else
#define SCRY_PMEMOID PMEMoid
#endif
typedef int (*scry_pmemobj_constr)(PMEMobjpool *pop, void *ptr, void *arg);

/* The hook of a PMEMoid-returning function gets the result as these two parameters. */
#define SCRY_OID_RET uint64_t ret_uuid, uint64_t ret_off

/* Reservations (libpmemobj/action_base.h): struct pobj_action is only passed by pointer. */
struct pobj_action;
/* pmemobj_volatile's run-id word (libpmemobj/base.h): only passed by pointer. */
struct pmemvlt;

/* One pre and one post hook per line of scry_hooks.def. */
#define SCRY_RET(type) , type ret
#define SCRY_NORET
#define SCRY_OIDRET , SCRY_OID_RET
#define SCRY_HOOK(name, result, ...)                                                               \
	void __scry_pre_##name(uint32_t site, ##__VA_ARGS__);                                       \
	void __scry_post_##name(uint32_t site result, ##__VA_ARGS__);
#include "scry_hooks.def"
#undef SCRY_HOOK
#undef SCRY_RET
#undef SCRY_NORET
#undef SCRY_OIDRET

#ifdef __cplusplus
}
#endif

#endif /* SCRY_HOOKS_H */
