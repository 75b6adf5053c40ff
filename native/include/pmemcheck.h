/*
 * pmemcheck.h: scry's pmemcheck-compatible client-request header (installed as
 * build/include/scry-compat/pmemcheck.h, searched after every other include directory of a
 * `scry cc` build: a project's own copy, or pmem's, wins).
 *
 * Debian ships Valgrind's valgrind.h but not the header of pmem's pmemcheck tool, which PM code
 * bases include to annotate their code (libpmemobj-cpp with LIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED,
 * PMDK). This header declares the same macros with the same request numbers, written for scry:
 * each is a Valgrind client request (VALGRIND_DO_CLIENT_REQUEST_EXPR or _STMT of valgrind.h),
 * so a program built with it runs unchanged natively, under pmem's pmemcheck, and under scry,
 * whose pass turns every client request into a call of the runtime (docs/pmemcheck.md: what
 * scry records for each request). Every request yields its default result, 0, unless it runs
 * under pmemcheck itself.
 *
 * The numbers are an ABI fixed by pmemcheck: the tool's base, VG_USERREQ_TOOL_BASE('P','C'),
 * then one number per request in the order below, reserved numbers included.
 *
 * The guard is also pmemcheck's own (__PMEMCHECK_H): many PM projects ship a copy of pmemcheck's
 * header, and a translation unit that includes theirs and this one (a project file and
 * libpmemobj-cpp's <pmemcheck.h>) gets the first only, in either order, never two definitions of
 * the same enumerators.
 */
#if !defined(SCRY_PMEMCHECK_H) && !defined(__PMEMCHECK_H)
#define SCRY_PMEMCHECK_H
#define __PMEMCHECK_H

#include <valgrind/valgrind.h>

typedef enum {
	VG_USERREQ__PMC_REGISTER_PMEM_MAPPING = VG_USERREQ_TOOL_BASE('P', 'C'), /* + 0 */
	VG_USERREQ__PMC_REGISTER_PMEM_FILE,      /* + 1 */
	VG_USERREQ__PMC_REMOVE_PMEM_MAPPING,     /* + 2 */
	VG_USERREQ__PMC_CHECK_IS_PMEM_MAPPING,   /* + 3 */
	VG_USERREQ__PMC_PRINT_PMEM_MAPPINGS,     /* + 4 */
	VG_USERREQ__PMC_DO_FLUSH,                /* + 5 */
	VG_USERREQ__PMC_DO_FENCE,                /* + 6 */
	VG_USERREQ__PMC_RESERVED1,               /* + 7, unused */
	VG_USERREQ__PMC_WRITE_STATS,             /* + 8 */
	VG_USERREQ__PMC_RESERVED2,               /* + 9 to + 16, unused */
	VG_USERREQ__PMC_RESERVED3,
	VG_USERREQ__PMC_RESERVED4,
	VG_USERREQ__PMC_RESERVED5,
	VG_USERREQ__PMC_RESERVED7,
	VG_USERREQ__PMC_RESERVED8,
	VG_USERREQ__PMC_RESERVED9,
	VG_USERREQ__PMC_RESERVED10,
	VG_USERREQ__PMC_SET_CLEAN,               /* + 17 */
	VG_USERREQ__PMC_START_TX,                /* + 18 */
	VG_USERREQ__PMC_START_TX_N,              /* + 19 */
	VG_USERREQ__PMC_END_TX,                  /* + 20 */
	VG_USERREQ__PMC_END_TX_N,                /* + 21 */
	VG_USERREQ__PMC_ADD_TO_TX,               /* + 22 */
	VG_USERREQ__PMC_ADD_TO_TX_N,             /* + 23 */
	VG_USERREQ__PMC_REMOVE_FROM_TX,          /* + 24 */
	VG_USERREQ__PMC_REMOVE_FROM_TX_N,        /* + 25 */
	VG_USERREQ__PMC_ADD_THREAD_TO_TX_N,      /* + 26 */
	VG_USERREQ__PMC_REMOVE_THREAD_FROM_TX_N, /* + 27 */
	VG_USERREQ__PMC_ADD_TO_GLOBAL_TX_IGNORE, /* + 28 */
	VG_USERREQ__PMC_RESERVED6,               /* + 29, unused */
	VG_USERREQ__PMC_EMIT_LOG,                /* + 30 */
	VG_USERREQ__PMC_DEEP_SYNC                /* + 31 */
} Vg_PMemCheckClientRequest;

/* A request with up to three arguments, as an expression (default result 0) or a statement. */
#define SCRY_PMC_EXPR_(req, a, b, c) VALGRIND_DO_CLIENT_REQUEST_EXPR(0, (req), (a), (b), (c), 0, 0)
#define SCRY_PMC_STMT_(req, a, b) VALGRIND_DO_CLIENT_REQUEST_STMT((req), (a), (b), 0, 0, 0)

/* Mappings: [addr, addr+len) is PM (again); is not PM (a field kept volatile on purpose); the
 * file descriptor's mapping; is the range PM (0 outside pmemcheck); print the mappings. */
#define VALGRIND_PMC_REGISTER_PMEM_MAPPING(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_REGISTER_PMEM_MAPPING, addr, len, 0)
#define VALGRIND_PMC_REGISTER_PMEM_FILE(desc, base, size, offset) \
	VALGRIND_DO_CLIENT_REQUEST_EXPR(0, VG_USERREQ__PMC_REGISTER_PMEM_FILE, (desc), (base), (size), (offset), 0)
#define VALGRIND_PMC_REMOVE_PMEM_MAPPING(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_REMOVE_PMEM_MAPPING, addr, len, 0)
#define VALGRIND_PMC_CHECK_IS_PMEM_MAPPING(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_CHECK_IS_PMEM_MAPPING, addr, len, 0)
#define VALGRIND_PMC_PRINT_PMEM_MAPPINGS SCRY_PMC_STMT_(VG_USERREQ__PMC_PRINT_PMEM_MAPPINGS, 0, 0)

/* Persistence: the cache lines of [addr, addr+len) are flushed; a store fence; the range is
 * durable now; a deep flush of the range (logged only). */
#define VALGRIND_PMC_DO_FLUSH(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_DO_FLUSH, addr, len, 0)
#define VALGRIND_PMC_DO_FENCE SCRY_PMC_STMT_(VG_USERREQ__PMC_DO_FENCE, 0, 0)
#define VALGRIND_PMC_SET_CLEAN(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_SET_CLEAN, addr, len, 0)
#define VALGRIND_PMC_DEEP_SYNC(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_DEEP_SYNC, addr, len, 0)

/* Diagnostics of the tool. */
#define VALGRIND_PMC_WRITE_STATS SCRY_PMC_STMT_(VG_USERREQ__PMC_WRITE_STATS, 0, 0)
#define VALGRIND_PMC_EMIT_LOG(text) SCRY_PMC_EXPR_(VG_USERREQ__PMC_EMIT_LOG, text, 0, 0)

/* Transactions: the thread's (or transaction txn's) transaction starts or ends; a range is added
 * to it or removed from it; a thread joins or leaves transaction txn; stores to a range are never
 * transaction errors. */
#define VALGRIND_PMC_START_TX SCRY_PMC_STMT_(VG_USERREQ__PMC_START_TX, 0, 0)
#define VALGRIND_PMC_START_TX_N(txn) SCRY_PMC_EXPR_(VG_USERREQ__PMC_START_TX_N, txn, 0, 0)
#define VALGRIND_PMC_END_TX SCRY_PMC_STMT_(VG_USERREQ__PMC_END_TX, 0, 0)
#define VALGRIND_PMC_END_TX_N(txn) SCRY_PMC_EXPR_(VG_USERREQ__PMC_END_TX_N, txn, 0, 0)
#define VALGRIND_PMC_ADD_TO_TX(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_ADD_TO_TX, addr, len, 0)
#define VALGRIND_PMC_ADD_TO_TX_N(txn, addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_ADD_TO_TX_N, txn, addr, len)
#define VALGRIND_PMC_REMOVE_FROM_TX(addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_REMOVE_FROM_TX, addr, len, 0)
#define VALGRIND_PMC_REMOVE_FROM_TX_N(txn, addr, len) SCRY_PMC_EXPR_(VG_USERREQ__PMC_REMOVE_FROM_TX_N, txn, addr, len)
#define VALGRIND_PMC_ADD_THREAD_TX_N(txn) SCRY_PMC_EXPR_(VG_USERREQ__PMC_ADD_THREAD_TO_TX_N, txn, 0, 0)
#define VALGRIND_PMC_REMOVE_THREAD_FROM_TX_N(txn) SCRY_PMC_EXPR_(VG_USERREQ__PMC_REMOVE_THREAD_FROM_TX_N, txn, 0, 0)
#define VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE(addr, len) SCRY_PMC_STMT_(VG_USERREQ__PMC_ADD_TO_GLOBAL_TX_IGNORE, addr, len)

#endif /* SCRY_PMEMCHECK_H */
