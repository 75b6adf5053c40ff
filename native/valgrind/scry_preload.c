/*
 * scry_preload.c: vgpreload_scry-amd64-linux.so, which Valgrind loads into the program under
 * `valgrind --tool=scry`. It wraps (Valgrind's function wrapping, valgrind.h) the library calls
 * whose meaning is not in their instructions, and tells the tool (scry_main.c) with client
 * requests (scry_vg.h): libpmem's and libpmemobj's mapping calls (their shared file mappings are
 * PM), lines read from standard input (operations), and libpmemobj's transactions, allocations
 * and persistence calls, recorded as the runtime's hooks record them (native/runtime/
 * hooks_pmemobj.c). Every record names the program's call: the wrapper's return address.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "valgrind.h"
#include "scry_trace_format.h"
#include "scry_vg.h"

typedef struct {
	uint64_t pool_uuid_lo, off;
} oid_t;

/* libpmemobj's, found when the program links it (weak: the preload never needs it). */
extern void *pmemobj_direct(oid_t oid) __attribute__((weak));
extern size_t pmemobj_alloc_usable_size(oid_t oid) __attribute__((weak));

#define REQ(r, a1, a2, a3, a4, a5) VALGRIND_DO_CLIENT_REQUEST_STMT(r, a1, a2, a3, a4, a5)
#define RET() ((uintptr_t)__builtin_return_address(0))

#define LIBPMEM libpmemZdsoZa
#define LIBPMEMOBJ libpmemobjZdsoZa
#define LIBC libcZdsoZa
#define WRAP(so, fn) I_WRAP_SONAME_FNNAME_ZU(so, fn)

/* ---------------------------------------------------------------- PM mappings */

void *WRAP(LIBPMEM, pmem_map_file)(const char *path, size_t len, int flags, mode_t mode, size_t *mlen, int *is_pmem);
void *WRAP(LIBPMEM, pmem_map_file)(const char *path, size_t len, int flags, mode_t mode, size_t *mlen, int *is_pmem)
{
	OrigFn fn;
	uintptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_PM_CALL, 1, RET(), 0, 0, 0);
	CALL_FN_W_6W(r, fn, path, len, flags, mode, mlen, is_pmem);
	REQ(SCRY_VGREQ_PM_CALL, 0, r, 0, 0, 0);
	return (void *)r;
}

void *WRAP(LIBPMEMOBJ, pmemobj_create)(const char *path, const char *layout, size_t size, mode_t mode);
void *WRAP(LIBPMEMOBJ, pmemobj_create)(const char *path, const char *layout, size_t size, mode_t mode)
{
	OrigFn fn;
	uintptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_PM_CALL, 1, RET(), 0, 0, 0);
	CALL_FN_W_WWWW(r, fn, path, layout, size, mode);
	REQ(SCRY_VGREQ_PM_CALL, 0, r, 0, 0, 0);
	return (void *)r;
}

void *WRAP(LIBPMEMOBJ, pmemobj_open)(const char *path, const char *layout);
void *WRAP(LIBPMEMOBJ, pmemobj_open)(const char *path, const char *layout)
{
	OrigFn fn;
	uintptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_PM_CALL, 1, RET(), 0, 0, 0);
	CALL_FN_W_WW(r, fn, path, layout);
	REQ(SCRY_VGREQ_PM_CALL, 0, r, 0, 0, 0);
	return (void *)r;
}

/* ---------------------------------------------------------------- operations */

/* ret: the caller, so that the tool ignores the reads libc makes for its own buffers. */
#define op_line(line, n) REQ(SCRY_VGREQ_OP_LINE, (line), (n), RET(), 0, 0)

char *WRAP(LIBC, fgets)(char *s, int size, FILE *stream);
char *WRAP(LIBC, fgets)(char *s, int size, FILE *stream)
{
	OrigFn fn;
	uintptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, s, size, stream);
	if (stream == stdin)
		op_line((char *)r, r ? strlen((char *)r) : 0);
	return (char *)r;
}

#define GETDELIM(name)                                                                        \
	ssize_t WRAP(LIBC, name)(char **lineptr, size_t *n, int delim, FILE *stream);         \
	ssize_t WRAP(LIBC, name)(char **lineptr, size_t *n, int delim, FILE *stream)          \
	{                                                                                     \
		OrigFn fn;                                                                    \
		intptr_t r;                                                                   \
		VALGRIND_GET_ORIG_FN(fn);                                                     \
		CALL_FN_W_WWWW(r, fn, lineptr, n, delim, stream);                             \
		if (stream == stdin)                                                          \
			op_line(r >= 0 ? *lineptr : NULL, r >= 0 ? (size_t)r : 0);           \
		return r;                                                                     \
	}
GETDELIM(getdelim)
GETDELIM(__getdelim)

ssize_t WRAP(LIBC, getline)(char **lineptr, size_t *n, FILE *stream);
ssize_t WRAP(LIBC, getline)(char **lineptr, size_t *n, FILE *stream)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, lineptr, n, stream);
	if (stream == stdin)
		op_line(r >= 0 ? *lineptr : NULL, r >= 0 ? (size_t)r : 0);
	return r;
}

ssize_t WRAP(LIBC, read)(int fd, void *buf, size_t count);
ssize_t WRAP(LIBC, read)(int fd, void *buf, size_t count)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, fd, buf, count);
	if (fd == 0 && r >= 0)
		op_line(r > 0 ? buf : NULL, (size_t)r);
	return r;
}

/* ---------------------------------------------------------------- transactions */

int WRAP(LIBPMEMOBJ, pmemobj_tx_begin)(void *pop, void *env, ...);
int WRAP(LIBPMEMOBJ, pmemobj_tx_begin)(void *pop, void *env, ...)
{
	/* Called through TX_BEGIN with the parameter list's end (TX_PARAM_NONE): only that form
	 * is forwarded. */
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, pop, env, 0);
	REQ(SCRY_VGREQ_TX_SITE, SCRY_EV_TX_BEGIN, RET(), 0, 0, 0);
	if (r != 0)
		REQ(SCRY_VGREQ_TX_ABORT, r < 0 ? 0 : r, RET(), 0, 0, 0);
	return (int)r;
}

void WRAP(LIBPMEMOBJ, pmemobj_tx_commit)(void);
void WRAP(LIBPMEMOBJ, pmemobj_tx_commit)(void)
{
	OrigFn fn;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_v_v(fn);
	REQ(SCRY_VGREQ_TX_SITE, SCRY_EV_TX_COMMIT, RET(), 0, 0, 0);
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_end)(void);
int WRAP(LIBPMEMOBJ, pmemobj_tx_end)(void)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_v(r, fn);
	REQ(SCRY_VGREQ_TX_SITE, SCRY_EV_TX_END, RET(), 0, 0, 0);
	return (int)r;
}

void WRAP(LIBPMEMOBJ, pmemobj_tx_abort)(int errnum);
void WRAP(LIBPMEMOBJ, pmemobj_tx_abort)(int errnum)
{
	OrigFn fn;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_TX_ABORT, errnum < 0 ? 0 : errnum, RET(), 0, 0, 0);
	CALL_FN_v_W(fn, errnum);
}

static void tx_add(uintptr_t ret, const void *p, size_t size, uint64_t flags)
{
	uint8_t f = 0;
	if (flags & (1u << 2))
		f |= SCRY_TXADD_NO_SNAPSHOT;
	if (flags & (1u << 1))
		f |= SCRY_TXADD_NO_FLUSH;
	REQ(SCRY_VGREQ_TX_RANGE, SCRY_EV_TX_ADD, p, size, f, ret);
}

static void *direct(oid_t oid) { return pmemobj_direct && oid.off ? pmemobj_direct(oid) : NULL; }

int WRAP(LIBPMEMOBJ, pmemobj_tx_add_range_direct)(const void *p, size_t size);
int WRAP(LIBPMEMOBJ, pmemobj_tx_add_range_direct)(const void *p, size_t size)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WW(r, fn, p, size);
	if (r == 0)
		tx_add(RET(), p, size, 0);
	return (int)r;
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_xadd_range_direct)(const void *p, size_t size, uint64_t flags);
int WRAP(LIBPMEMOBJ, pmemobj_tx_xadd_range_direct)(const void *p, size_t size, uint64_t flags)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, p, size, flags);
	if (r == 0)
		tx_add(RET(), p, size, flags);
	return (int)r;
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_add_range)(oid_t oid, uint64_t off, size_t size);
int WRAP(LIBPMEMOBJ, pmemobj_tx_add_range)(oid_t oid, uint64_t off, size_t size)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWWW(r, fn, oid.pool_uuid_lo, oid.off, off, size);
	char *p = direct(oid);
	if (r == 0 && p)
		tx_add(RET(), p + off, size, 0);
	return (int)r;
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_xadd_range)(oid_t oid, uint64_t off, size_t size, uint64_t flags);
int WRAP(LIBPMEMOBJ, pmemobj_tx_xadd_range)(oid_t oid, uint64_t off, size_t size, uint64_t flags)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_5W(r, fn, oid.pool_uuid_lo, oid.off, off, size, flags);
	char *p = direct(oid);
	if (r == 0 && p)
		tx_add(RET(), p + off, size, flags);
	return (int)r;
}

/* ---------------------------------------------------------------- allocations */

static void alloc_rec(uintptr_t ret, oid_t oid, uint8_t flags)
{
	void *p = direct(oid);
	if (!p)
		return;
	size_t size = pmemobj_alloc_usable_size ? pmemobj_alloc_usable_size(oid) : 0;
	REQ(SCRY_VGREQ_TX_RANGE, SCRY_EV_ALLOC, p, size, flags, ret);
}

/* A PMEMoid is returned in rax:rdx; valgrind.h's CALL_FN macros keep rax only, so this one,
 * their amd64 sequence with rdx as a second output, calls the original with up to six arguments
 * (the callee ignores the ones it does not take). */
#define CALL_FN_OID(lo, hi, orig, arg1, arg2, arg3, arg4, arg5, arg6)                        \
	do {                                                                                \
		volatile OrigFn _orig = (orig);                                             \
		volatile unsigned long _argvec[7];                                          \
		volatile unsigned long _res, _res2;                                         \
		_argvec[0] = (unsigned long)_orig.nraddr;                                   \
		_argvec[1] = (unsigned long)(arg1);                                         \
		_argvec[2] = (unsigned long)(arg2);                                         \
		_argvec[3] = (unsigned long)(arg3);                                         \
		_argvec[4] = (unsigned long)(arg4);                                         \
		_argvec[5] = (unsigned long)(arg5);                                         \
		_argvec[6] = (unsigned long)(arg6);                                         \
		__asm__ volatile(VALGRIND_CFI_PROLOGUE VALGRIND_ALIGN_STACK                 \
				 "subq $128,%%rsp\n\t"                                      \
				 "movq 48(%%rax), %%r9\n\t"                                 \
				 "movq 40(%%rax), %%r8\n\t"                                 \
				 "movq 32(%%rax), %%rcx\n\t"                                \
				 "movq 24(%%rax), %%rdx\n\t"                                \
				 "movq 16(%%rax), %%rsi\n\t"                                \
				 "movq 8(%%rax), %%rdi\n\t"                                 \
				 "movq (%%rax), %%rax\n\t" VALGRIND_CALL_NOREDIR_RAX        \
				 VALGRIND_RESTORE_STACK VALGRIND_CFI_EPILOGUE                 \
				 : "=a"(_res), "=d"(_res2)                                  \
				 : "a"(&_argvec[0]) __FRAME_POINTER                         \
				 : "cc", "memory", "rcx", "rsi", "rdi", "r8", "r9", "r10",  \
				   "r11", "r14", "r15");                                    \
		lo = _res;                                                                  \
		hi = _res2;                                                                 \
	} while (0)

#define TX_ALLOC(name, nargs_zero_flags)                                                         \
	oid_t WRAP(LIBPMEMOBJ, name)(size_t size, uint64_t type_num, uint64_t flags);            \
	oid_t WRAP(LIBPMEMOBJ, name)(size_t size, uint64_t type_num, uint64_t flags)             \
	{                                                                                        \
		OrigFn fn;                                                                       \
		VALGRIND_GET_ORIG_FN(fn);                                                        \
		oid_t oid;                                                                       \
		unsigned long lo, hi;                                                            \
		CALL_FN_OID(lo, hi, fn, size, type_num, flags, 0, 0, 0);                         \
		oid.pool_uuid_lo = lo;                                                           \
		oid.off = hi;                                                                    \
		uint8_t f = SCRY_ALLOC_IN_TX;                                                    \
		if ((nargs_zero_flags) == 1 || ((nargs_zero_flags) == 2 && (flags & 1)))         \
			f |= SCRY_ALLOC_ZEROED;                                                  \
		alloc_rec(RET(), oid, f);                                                        \
		return oid;                                                                      \
	}
/* 0: pmemobj_tx_alloc (not zeroed), 1: pmemobj_tx_zalloc, 2: pmemobj_tx_xalloc (its flags); the
 * third argument of the first two is whatever the caller left in rdx, never read by them. */
TX_ALLOC(pmemobj_tx_alloc, 0)
TX_ALLOC(pmemobj_tx_zalloc, 1)
TX_ALLOC(pmemobj_tx_xalloc, 2)

int WRAP(LIBPMEMOBJ, pmemobj_tx_free)(oid_t oid);
int WRAP(LIBPMEMOBJ, pmemobj_tx_free)(oid_t oid)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	void *p = direct(oid);
	if (p)
		REQ(SCRY_VGREQ_FREE, p, SCRY_ALLOC_IN_TX, RET(), 0, 0);
	CALL_FN_W_WW(r, fn, oid.pool_uuid_lo, oid.off);
	return (int)r;
}

/* ---------------------------------------------------------------- the user's persistence */

#define USER_PERSIST_V3(name)                                                 \
	void WRAP(LIBPMEMOBJ, name)(void *pop, const void *addr, size_t len); \
	void WRAP(LIBPMEMOBJ, name)(void *pop, const void *addr, size_t len)  \
	{                                                                     \
		OrigFn fn;                                                    \
		VALGRIND_GET_ORIG_FN(fn);                                     \
		REQ(SCRY_VGREQ_USER_PERSIST, 1, 0, 0, 0, 0);                  \
		CALL_FN_v_WWW(fn, pop, addr, len);                            \
		REQ(SCRY_VGREQ_USER_PERSIST, 0, 0, 0, 0, 0);                  \
	}
USER_PERSIST_V3(pmemobj_persist)
USER_PERSIST_V3(pmemobj_flush)

void WRAP(LIBPMEMOBJ, pmemobj_drain)(void *pop);
void WRAP(LIBPMEMOBJ, pmemobj_drain)(void *pop)
{
	OrigFn fn;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_USER_PERSIST, 1, 0, 0, 0, 0);
	CALL_FN_v_W(fn, pop);
	REQ(SCRY_VGREQ_USER_PERSIST, 0, 0, 0, 0, 0);
}

/* pmemobj_volatile(3): the variable and its run id are no PM (the runtime's hook says why). */
void *WRAP(LIBPMEMOBJ, pmemobj_volatile)(void *pop, void *vlt, void *ptr, size_t size, void *constr, void *arg);
void *WRAP(LIBPMEMOBJ, pmemobj_volatile)(void *pop, void *vlt, void *ptr, size_t size, void *constr, void *arg)
{
	OrigFn fn;
	uintptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_TX_RANGE, SCRY_EV_PM_EXCLUDE, vlt, sizeof(uint64_t), 0, RET());
	REQ(SCRY_VGREQ_TX_RANGE, SCRY_EV_PM_EXCLUDE, ptr, size, 0, RET());
	CALL_FN_W_6W(r, fn, pop, vlt, ptr, size, constr, arg);
	return (void *)r;
}

/* ---------------------------------------------------------------- reservations (action API) */

#define RESERVE(name, zero_test)                                                                      \
	oid_t WRAP(LIBPMEMOBJ, name)(void *pop, void *act, size_t size, uint64_t type_num, uint64_t flags); \
	oid_t WRAP(LIBPMEMOBJ, name)(void *pop, void *act, size_t size, uint64_t type_num, uint64_t flags)  \
	{                                                                                             \
		OrigFn fn;                                                                            \
		VALGRIND_GET_ORIG_FN(fn);                                                             \
		oid_t oid;                                                                            \
		unsigned long lo, hi;                                                                 \
		CALL_FN_OID(lo, hi, fn, pop, act, size, type_num, flags, 0);                          \
		oid.pool_uuid_lo = lo;                                                                \
		oid.off = hi;                                                                         \
		void *p = direct(oid);                                                                \
		if (p) {                                                                              \
			size_t usable = pmemobj_alloc_usable_size ? pmemobj_alloc_usable_size(oid) : 0; \
			REQ(SCRY_VGREQ_RESERVE, act, p, usable ? usable : size,                       \
			    SCRY_ALLOC_RESERVE | ((zero_test) ? SCRY_ALLOC_ZEROED : 0), RET());         \
		}                                                                                     \
		return oid;                                                                           \
	}
/* pmemobj_reserve takes no flags: its fifth argument is whatever the caller left in r8. */
RESERVE(pmemobj_reserve, 0)
RESERVE(pmemobj_xreserve, flags & 1)

int WRAP(LIBPMEMOBJ, pmemobj_publish)(void *pop, void *actv, size_t n);
int WRAP(LIBPMEMOBJ, pmemobj_publish)(void *pop, void *actv, size_t n)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, pop, actv, n);
	if (r == 0)
		REQ(SCRY_VGREQ_RESV_END, actv, n, 1, 0, RET());
	return (int)r;
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_publish)(void *actv, size_t n);
int WRAP(LIBPMEMOBJ, pmemobj_tx_publish)(void *actv, size_t n)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WW(r, fn, actv, n);
	if (r == 0)
		REQ(SCRY_VGREQ_RESV_END, actv, n, 1, SCRY_ALLOC_IN_TX, RET());
	return (int)r;
}

int WRAP(LIBPMEMOBJ, pmemobj_tx_xpublish)(void *actv, size_t n, uint64_t flags);
int WRAP(LIBPMEMOBJ, pmemobj_tx_xpublish)(void *actv, size_t n, uint64_t flags)
{
	OrigFn fn;
	intptr_t r;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(r, fn, actv, n, flags);
	if (r == 0)
		REQ(SCRY_VGREQ_RESV_END, actv, n, 1, SCRY_ALLOC_IN_TX, RET());
	return (int)r;
}

void WRAP(LIBPMEMOBJ, pmemobj_cancel)(void *pop, void *actv, size_t n);
void WRAP(LIBPMEMOBJ, pmemobj_cancel)(void *pop, void *actv, size_t n)
{
	OrigFn fn;
	VALGRIND_GET_ORIG_FN(fn);
	REQ(SCRY_VGREQ_RESV_END, actv, n, 0, 0, RET());
	CALL_FN_v_WWW(fn, pop, actv, n);
}
