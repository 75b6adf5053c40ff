/*
 * scry_hooks.h: prototypes of the library-call hooks the scry runtime defines, one
 * __scry_pre_F / __scry_post_F pair for every F in scry_hooks.def (see scry_abi.h for the calling
 * convention). The argument types are those of the real function F so the LLVM pass can forward
 * the call's arguments unchanged:
 *     void __scry_pre_F(uint32_t site, <F's parameters>);
 *     void __scry_post_F(uint32_t site, <F's return value, if any>, <F's parameters>);
 * Variadic functions get only their fixed parameters. A PMEMoid *return value* is passed as its
 * two 64-bit fields (pool_uuid_lo, off), which is how clang lowers a {i64, i64} struct; PMEMoid
 * *parameters* are passed by value as in C (clang lowers them to the same two i64).
 *
 * The records each hook emits are described in runtime/hooks_*.c and in docs/trace-format.md
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

/* --- libc: PM mappings --- */
void __scry_pre_mmap(uint32_t site, void *addr, size_t length, int prot, int flags, int fd, off_t offset);
void __scry_post_mmap(uint32_t site, void *ret, void *addr, size_t length, int prot, int flags, int fd, off_t offset);
void __scry_pre_mmap64(uint32_t site, void *addr, size_t length, int prot, int flags, int fd, off_t offset);
void __scry_post_mmap64(uint32_t site, void *ret, void *addr, size_t length, int prot, int flags, int fd, off_t offset);
void __scry_pre_munmap(uint32_t site, void *addr, size_t length);
void __scry_post_munmap(uint32_t site, int ret, void *addr, size_t length);

/* --- libc: operation boundaries (lines read from standard input) --- */
void __scry_pre_fgets(uint32_t site, char *s, int size, FILE *stream);
void __scry_post_fgets(uint32_t site, char *ret, char *s, int size, FILE *stream);
void __scry_pre_getline(uint32_t site, char **lineptr, size_t *n, FILE *stream);
void __scry_post_getline(uint32_t site, ssize_t ret, char **lineptr, size_t *n, FILE *stream);
void __scry_pre_read(uint32_t site, int fd, void *buf, size_t count);
void __scry_post_read(uint32_t site, ssize_t ret, int fd, void *buf, size_t count);

/* --- libc: copy functions (range stores when the destination is PM) --- */
void __scry_pre_memcpy(uint32_t site, void *dest, const void *src, size_t n);
void __scry_post_memcpy(uint32_t site, void *ret, void *dest, const void *src, size_t n);
void __scry_pre_memmove(uint32_t site, void *dest, const void *src, size_t n);
void __scry_post_memmove(uint32_t site, void *ret, void *dest, const void *src, size_t n);
void __scry_pre_memset(uint32_t site, void *s, int c, size_t n);
void __scry_post_memset(uint32_t site, void *ret, void *s, int c, size_t n);
void __scry_pre_strcpy(uint32_t site, char *dest, const char *src);
void __scry_post_strcpy(uint32_t site, char *ret, char *dest, const char *src);
void __scry_pre_strncpy(uint32_t site, char *dest, const char *src, size_t n);
void __scry_post_strncpy(uint32_t site, char *ret, char *dest, const char *src, size_t n);
void __scry_pre_strcat(uint32_t site, char *dest, const char *src);
void __scry_post_strcat(uint32_t site, char *ret, char *dest, const char *src);
void __scry_pre_strncat(uint32_t site, char *dest, const char *src, size_t n);
void __scry_post_strncat(uint32_t site, char *ret, char *dest, const char *src, size_t n);
void __scry_pre_snprintf(uint32_t site, char *str, size_t size, const char *format);
void __scry_post_snprintf(uint32_t site, int ret, char *str, size_t size, const char *format);
void __scry_pre_sprintf(uint32_t site, char *str, const char *format);
void __scry_post_sprintf(uint32_t site, int ret, char *str, const char *format);

/* --- libpmem --- */
void __scry_pre_pmem_map_file(uint32_t site, const char *path, size_t len, int flags, mode_t mode, size_t *mapped_lenp, int *is_pmemp);
void __scry_post_pmem_map_file(uint32_t site, void *ret, const char *path, size_t len, int flags, mode_t mode, size_t *mapped_lenp, int *is_pmemp);
void __scry_pre_pmem_unmap(uint32_t site, void *addr, size_t len);
void __scry_post_pmem_unmap(uint32_t site, int ret, void *addr, size_t len);
void __scry_pre_pmem_persist(uint32_t site, const void *addr, size_t len);
void __scry_post_pmem_persist(uint32_t site, const void *addr, size_t len);
void __scry_pre_pmem_flush(uint32_t site, const void *addr, size_t len);
void __scry_post_pmem_flush(uint32_t site, const void *addr, size_t len);
void __scry_pre_pmem_drain(uint32_t site);
void __scry_post_pmem_drain(uint32_t site);
void __scry_pre_pmem_msync(uint32_t site, const void *addr, size_t len);
void __scry_post_pmem_msync(uint32_t site, int ret, const void *addr, size_t len);
void __scry_pre_pmem_deep_persist(uint32_t site, const void *addr, size_t len);
void __scry_post_pmem_deep_persist(uint32_t site, int ret, const void *addr, size_t len);
void __scry_pre_pmem_memcpy(uint32_t site, void *pmemdest, const void *src, size_t len, unsigned flags);
void __scry_post_pmem_memcpy(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len, unsigned flags);
void __scry_pre_pmem_memmove(uint32_t site, void *pmemdest, const void *src, size_t len, unsigned flags);
void __scry_post_pmem_memmove(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len, unsigned flags);
void __scry_pre_pmem_memset(uint32_t site, void *pmemdest, int c, size_t len, unsigned flags);
void __scry_post_pmem_memset(uint32_t site, void *ret, void *pmemdest, int c, size_t len, unsigned flags);
void __scry_pre_pmem_memcpy_persist(uint32_t site, void *pmemdest, const void *src, size_t len);
void __scry_post_pmem_memcpy_persist(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len);
void __scry_pre_pmem_memmove_persist(uint32_t site, void *pmemdest, const void *src, size_t len);
void __scry_post_pmem_memmove_persist(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len);
void __scry_pre_pmem_memset_persist(uint32_t site, void *pmemdest, int c, size_t len);
void __scry_post_pmem_memset_persist(uint32_t site, void *ret, void *pmemdest, int c, size_t len);
void __scry_pre_pmem_memcpy_nodrain(uint32_t site, void *pmemdest, const void *src, size_t len);
void __scry_post_pmem_memcpy_nodrain(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len);
void __scry_pre_pmem_memmove_nodrain(uint32_t site, void *pmemdest, const void *src, size_t len);
void __scry_post_pmem_memmove_nodrain(uint32_t site, void *ret, void *pmemdest, const void *src, size_t len);
void __scry_pre_pmem_memset_nodrain(uint32_t site, void *pmemdest, int c, size_t len);
void __scry_post_pmem_memset_nodrain(uint32_t site, void *ret, void *pmemdest, int c, size_t len);

/* --- libpmemobj: pools --- */
void __scry_pre_pmemobj_create(uint32_t site, const char *path, const char *layout, size_t poolsize, mode_t mode);
void __scry_post_pmemobj_create(uint32_t site, PMEMobjpool *ret, const char *path, const char *layout, size_t poolsize, mode_t mode);
void __scry_pre_pmemobj_open(uint32_t site, const char *path, const char *layout);
void __scry_post_pmemobj_open(uint32_t site, PMEMobjpool *ret, const char *path, const char *layout);
void __scry_pre_pmemobj_close(uint32_t site, PMEMobjpool *pop);
void __scry_post_pmemobj_close(uint32_t site, PMEMobjpool *pop);
void __scry_pre_pmemobj_root(uint32_t site, PMEMobjpool *pop, size_t size);
void __scry_post_pmemobj_root(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, size_t size);
void __scry_pre_pmemobj_root_size(uint32_t site, PMEMobjpool *pop);
void __scry_post_pmemobj_root_size(uint32_t site, size_t ret, PMEMobjpool *pop);

/* --- libpmemobj: persistence --- */
void __scry_pre_pmemobj_persist(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len);
void __scry_post_pmemobj_persist(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len);
void __scry_pre_pmemobj_flush(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len);
void __scry_post_pmemobj_flush(uint32_t site, PMEMobjpool *pop, const void *addr, size_t len);
void __scry_pre_pmemobj_drain(uint32_t site, PMEMobjpool *pop);
void __scry_post_pmemobj_drain(uint32_t site, PMEMobjpool *pop);
void __scry_pre_pmemobj_memcpy_persist(uint32_t site, PMEMobjpool *pop, void *dest, const void *src, size_t len);
void __scry_post_pmemobj_memcpy_persist(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, const void *src, size_t len);
void __scry_pre_pmemobj_memset_persist(uint32_t site, PMEMobjpool *pop, void *dest, int c, size_t len);
void __scry_post_pmemobj_memset_persist(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, int c, size_t len);
void __scry_pre_pmemobj_memcpy(uint32_t site, PMEMobjpool *pop, void *dest, const void *src, size_t len, unsigned flags);
void __scry_post_pmemobj_memcpy(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, const void *src, size_t len, unsigned flags);
void __scry_pre_pmemobj_memmove(uint32_t site, PMEMobjpool *pop, void *dest, const void *src, size_t len, unsigned flags);
void __scry_post_pmemobj_memmove(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, const void *src, size_t len, unsigned flags);
void __scry_pre_pmemobj_memset(uint32_t site, PMEMobjpool *pop, void *dest, int c, size_t len, unsigned flags);
void __scry_post_pmemobj_memset(uint32_t site, void *ret, PMEMobjpool *pop, void *dest, int c, size_t len, unsigned flags);

/* --- libpmemobj: transactions --- */
void __scry_pre_pmemobj_tx_begin(uint32_t site, PMEMobjpool *pop, jmp_buf env);
void __scry_post_pmemobj_tx_begin(uint32_t site, int ret, PMEMobjpool *pop, jmp_buf env);
void __scry_pre_pmemobj_tx_commit(uint32_t site);
void __scry_post_pmemobj_tx_commit(uint32_t site);
void __scry_pre_pmemobj_tx_end(uint32_t site);
void __scry_post_pmemobj_tx_end(uint32_t site, int ret);
void __scry_pre_pmemobj_tx_abort(uint32_t site, int errnum);
void __scry_post_pmemobj_tx_abort(uint32_t site, int errnum);
void __scry_pre_pmemobj_tx_process(uint32_t site);
void __scry_post_pmemobj_tx_process(uint32_t site);
void __scry_pre_pmemobj_tx_add_range(uint32_t site, SCRY_PMEMOID oid, uint64_t off, size_t size);
void __scry_post_pmemobj_tx_add_range(uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t off, size_t size);
void __scry_pre_pmemobj_tx_add_range_direct(uint32_t site, const void *ptr, size_t size);
void __scry_post_pmemobj_tx_add_range_direct(uint32_t site, int ret, const void *ptr, size_t size);
void __scry_pre_pmemobj_tx_xadd_range(uint32_t site, SCRY_PMEMOID oid, uint64_t off, size_t size, uint64_t flags);
void __scry_post_pmemobj_tx_xadd_range(uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t off, size_t size, uint64_t flags);
void __scry_pre_pmemobj_tx_xadd_range_direct(uint32_t site, const void *ptr, size_t size, uint64_t flags);
void __scry_post_pmemobj_tx_xadd_range_direct(uint32_t site, int ret, const void *ptr, size_t size, uint64_t flags);
void __scry_pre_pmemobj_tx_alloc(uint32_t site, size_t size, uint64_t type_num);
void __scry_post_pmemobj_tx_alloc(uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_tx_zalloc(uint32_t site, size_t size, uint64_t type_num);
void __scry_post_pmemobj_tx_zalloc(uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_tx_xalloc(uint32_t site, size_t size, uint64_t type_num, uint64_t flags);
void __scry_post_pmemobj_tx_xalloc(uint32_t site, SCRY_OID_RET, size_t size, uint64_t type_num, uint64_t flags);
void __scry_pre_pmemobj_tx_realloc(uint32_t site, SCRY_PMEMOID oid, size_t size, uint64_t type_num);
void __scry_post_pmemobj_tx_realloc(uint32_t site, SCRY_OID_RET, SCRY_PMEMOID oid, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_tx_zrealloc(uint32_t site, SCRY_PMEMOID oid, size_t size, uint64_t type_num);
void __scry_post_pmemobj_tx_zrealloc(uint32_t site, SCRY_OID_RET, SCRY_PMEMOID oid, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_tx_free(uint32_t site, SCRY_PMEMOID oid);
void __scry_post_pmemobj_tx_free(uint32_t site, int ret, SCRY_PMEMOID oid);
void __scry_pre_pmemobj_tx_xfree(uint32_t site, SCRY_PMEMOID oid, uint64_t flags);
void __scry_post_pmemobj_tx_xfree(uint32_t site, int ret, SCRY_PMEMOID oid, uint64_t flags);

/* --- libpmemobj: atomic allocations --- */
void __scry_pre_pmemobj_alloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num, scry_pmemobj_constr constructor, void *arg);
void __scry_post_pmemobj_alloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num, scry_pmemobj_constr constructor, void *arg);
void __scry_pre_pmemobj_zalloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_post_pmemobj_zalloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_xalloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num, uint64_t flags, scry_pmemobj_constr constructor, void *arg);
void __scry_post_pmemobj_xalloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num, uint64_t flags, scry_pmemobj_constr constructor, void *arg);
void __scry_pre_pmemobj_realloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_post_pmemobj_realloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_zrealloc(uint32_t site, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_post_pmemobj_zrealloc(uint32_t site, int ret, PMEMobjpool *pop, SCRY_PMEMOID *oidp, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_free(uint32_t site, SCRY_PMEMOID *oidp);
void __scry_post_pmemobj_free(uint32_t site, SCRY_PMEMOID *oidp);

/* Reservations (libpmemobj/action_base.h). struct pobj_action is only passed by pointer. */
struct pobj_action;
void __scry_pre_pmemobj_reserve(uint32_t site, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num);
void __scry_post_pmemobj_reserve(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num);
void __scry_pre_pmemobj_xreserve(uint32_t site, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num, uint64_t flags);
void __scry_post_pmemobj_xreserve(uint32_t site, SCRY_OID_RET, PMEMobjpool *pop, struct pobj_action *act, size_t size, uint64_t type_num, uint64_t flags);
void __scry_pre_pmemobj_publish(uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt);
void __scry_post_pmemobj_publish(uint32_t site, int ret, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt);
void __scry_pre_pmemobj_tx_publish(uint32_t site, struct pobj_action *actv, size_t actvcnt);
void __scry_post_pmemobj_tx_publish(uint32_t site, int ret, struct pobj_action *actv, size_t actvcnt);
void __scry_pre_pmemobj_tx_xpublish(uint32_t site, struct pobj_action *actv, size_t actvcnt, uint64_t flags);
void __scry_post_pmemobj_tx_xpublish(uint32_t site, int ret, struct pobj_action *actv, size_t actvcnt, uint64_t flags);
void __scry_pre_pmemobj_cancel(uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt);
void __scry_post_pmemobj_cancel(uint32_t site, PMEMobjpool *pop, struct pobj_action *actv, size_t actvcnt);

#ifdef __cplusplus
}
#endif

#endif /* SCRY_HOOKS_H */
