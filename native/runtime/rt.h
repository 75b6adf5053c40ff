/*
 * rt.h: private interfaces of the scry C runtime (the .c files of runtime/). Not installed, not for the pass.
 *
 * Structure:
 *   writer.c   the trace writer: one global buffer under a lock, varint encoding, every record
 *              kind of docs/trace-format.md, init, exit, fatal signals, call-stack interning.
 *   region.c   the PM region table, shadow copies, write protection around uninstrumented code
 *              and the page diffs that become EXTERNAL_WRITE records.
 *   callbacks.c the ABI of scry_abi.h (__scry_load, __scry_store, ...) and the user API (scry.h).
 *   hooks_libc.c, hooks_pmem.c, hooks_pmemobj.c: the __scry_pre_/__scry_post_ hooks.
 *   valgrind.c Valgrind client requests (__scry_client_request): pmemcheck's become records.
 *   forkserver.c, lazy.c: the fork server and lazy crash-state exploration (inert runs).
 *   converge.c convergence: hashes the pool at the first read of standard input and stops a run
 *              whose state equals a legal outcome's (SCRY_CONVERGE, inert runs).
 *   sched.c    the controlled scheduler (SCRY_SCHED, traced runs): threads one at a time under
 *              PCT or its PM-aware variant, the pthread, semaphore, futex and blocking calls it
 *              defines, logical thread ids, the deadlock and stall rules.
 */
#ifndef SCRY_RT_H
#define SCRY_RT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Internal names carry the __scry_rt_ prefix in the object files, so that they cannot clash
 * with the program's own symbols (the runtime is linked into every instrumented program). */
#define ctx_current_locked __scry_rt_ctx_current_locked
#define g_no_loads __scry_rt_g_no_loads
#define g_no_flush __scry_rt_g_no_flush
#define rt_record_flushes __scry_rt_rt_record_flushes
#define g_nregions __scry_rt_g_nregions
#define g_nwin __scry_rt_g_nwin
#define g_regions __scry_rt_g_regions
#define g_state __scry_rt_g_state
#define obj_direct __scry_rt_obj_direct
#define obj_tx_errno __scry_rt_obj_tx_errno
#define obj_tx_stage __scry_rt_obj_tx_stage
#define obj_usable_size __scry_rt_obj_usable_size
#define pm_add __scry_rt_pm_add
#define pm_check_all_locked __scry_rt_pm_check_all_locked
#define pm_final_check __scry_rt_pm_final_check
#define pm_find __scry_rt_pm_find
#define pm_for_each __scry_rt_pm_for_each
#define pm_handle_fault __scry_rt_pm_handle_fault
#define pm_note_write __scry_rt_pm_note_write
#define pm_unprotect_range __scry_rt_pm_unprotect_range
#define pm_record_range __scry_rt_pm_record_range
#define pm_remove __scry_rt_pm_remove
#define pm_remove_begin __scry_rt_pm_remove_begin
#define pm_remove_finish __scry_rt_pm_remove_finish
#define pm_store_then_check __scry_rt_pm_store_then_check
#define rec_addr_size __scry_rt_rec_addr_size
#define rec_addr_size_flags __scry_rt_rec_addr_size_flags
#define rec_ext_locked __scry_rt_rec_ext_locked
#define rec_fence __scry_rt_rec_fence
#define rec_flush __scry_rt_rec_flush
#define rec_free __scry_rt_rec_free
#define rec_output __scry_rt_rec_output
#define rec_mem __scry_rt_rec_mem
#define rec_mem_locked __scry_rt_rec_mem_locked
#define rec_op_begin __scry_rt_rec_op_begin
#define rec_op_line __scry_rt_rec_op_line
#define rec_sock_read __scry_rt_rec_sock_read
#define rec_sock_write __scry_rt_rec_sock_write
#define op_marker_slow __scry_rt_op_marker_slow
#define g_op_markers __scry_rt_g_op_markers
#define rec_op_end __scry_rt_rec_op_end
#define rec_region_map_locked __scry_rt_rec_region_map_locked
#define rec_region_unmap_locked __scry_rt_rec_region_unmap_locked
#define rec_site_only __scry_rt_rec_site_only
#define rec_sites __scry_rt_rec_sites
#define rec_tx_abort __scry_rt_rec_tx_abort
#define rec_tx_abort_locked __scry_rt_rec_tx_abort_locked
#define rt_fence __scry_rt_rt_fence
#define rt_flush_lines __scry_rt_rt_flush_lines
#define rt_gettid_slow __scry_rt_rt_gettid_slow
#define rt_init __scry_rt_rt_init
#define rt_is_instrumented __scry_rt_rt_is_instrumented
#define rt_is_pmdk __scry_rt_rt_is_pmdk
#define rt_lock __scry_rt_rt_lock
#define rt_lock_mine __scry_rt_rt_lock_mine
#define rt_pm_exclude __scry_rt_rt_pm_exclude
#define rt_pmem_copy __scry_rt_rt_pmem_copy
#define rt_self __scry_rt_rt_self
#define rt_unlock __scry_rt_rt_unlock
#define rt_warn __scry_rt_rt_warn
#define win_close __scry_rt_win_close
#define win_close_stale __scry_rt_win_close_stale
#define win_open __scry_rt_win_open
#define lazy_fault __scry_rt_lazy_fault
#define lazy_reset __scry_rt_lazy_reset
#define lazy_prepare_write __scry_rt_lazy_prepare_write
#define g_converge __scry_rt_g_converge
#define converge_slow __scry_rt_converge_slow
#define converge_opened __scry_rt_converge_opened
#define converge_reset __scry_rt_converge_reset
#define rt_take_signal __scry_rt_rt_take_signal
#define rt_full_write __scry_rt_rt_full_write
#define rt_trace_tid_slow __scry_rt_rt_trace_tid_slow
#define g_sched_on __scry_rt_g_sched_on
#define g_sync_on __scry_rt_g_sync_on
#define rec_sync __scry_rt_rec_sync
#define sched_parse __scry_rt_sched_parse
#define sched_begin __scry_rt_sched_begin
#define sched_info __scry_rt_sched_info
#define sched_configured __scry_rt_sched_configured
#define sched_stop __scry_rt_sched_stop
#define sched_point_slow __scry_rt_sched_point_slow
#define sched_point_rmw __scry_rt_sched_point_rmw
#define g_sched_win_thread __scry_rt_g_sched_win_thread
#define g_sched_win_store __scry_rt_g_sched_win_store
#define sched_count_store __scry_rt_sched_count_store
#define sched_op __scry_rt_sched_op

#include "scry_abi.h"
#include "scry_trace_format.h"

#define RT_LIKELY(x) __builtin_expect(!!(x), 1)

/* RT_CPU_RELAX: the spin-wait hint of the architecture (pause on x86-64, yield on aarch64). */
#if defined(__x86_64__) || defined(__i386__)
#define RT_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RT_CPU_RELAX() __asm__ volatile("yield" ::: "memory")
#else
#define RT_CPU_RELAX() ((void)0)
#endif
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT_TLS __thread __attribute__((tls_model("initial-exec")))
#define RT_PAGE 4096u
#define RT_LINE 64u

/* Runtime state (g_state). Callbacks do nothing unless it is RT_RUNNING. */
enum { RT_UNINIT = 0, RT_RUNNING = 1, RT_DONE = 2 };
extern _Atomic int g_state;

/* Depth of the per-thread shadow call stack kept for CONTEXT records. */
#define RT_MAX_DEPTH 256

struct sched_thread;

/* Per-thread state. */
struct rt_thread {
	uint32_t tid;          /* kernel thread id, 0 until first needed */
	uint32_t ttid;         /* the thread's id in the trace (THREAD records), 0 until first needed */
	struct sched_thread *sched; /* the scheduler's entry of the thread (sched.c), NULL: none */
	uint32_t in_rt;        /* set while the runtime runs on this thread (no re-entry) */
	uint32_t depth;        /* current shadow-stack depth (number of active calls) */
	uint32_t valid;        /* nodes[0..valid) match frames[0..valid) */
	uint32_t ctx_emitted;  /* stack node named by this thread's last CONTEXT (UINT32_MAX: none) */
	uint32_t frame_depth;  /* activations named by this thread's last FRAME (UINT32_MAX: none yet,
				* so that a thread reusing an exited thread's id starts with a FRAME) */
	uint32_t frame_low;    /* lowest depth given a new activation since that FRAME (UINT32_MAX: none) */
	uint64_t serial;       /* serial of this thread's latest activation (0: none yet) */
	size_t strcat_len;     /* strlen(dest) before a strcat/strncat */
	int pmem_existed;      /* the pmem_map_file path existed before the call */
	uint64_t realloc_old;  /* address of the object a realloc moves */
	uint32_t frames[RT_MAX_DEPTH]; /* call-site id of each active call */
	uint32_t nodes[RT_MAX_DEPTH];  /* interned stack node of frames[0..i] */
	uint64_t serials[RT_MAX_DEPTH]; /* activation serial of each active call (FRAME records) */
};
extern RT_TLS struct rt_thread rt_self;

/* True when a callback on this thread may record: the runtime runs and is not re-entered. */
static inline int rt_ready(void)
{
	return RT_LIKELY(atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING) &&
	       !rt_self.in_rt;
}

/* Initialises the runtime once (safe to call from any entry point); returns whether it runs. */
int rt_init(void);
/* Prints "scry: <msg>" to stderr (each distinct call site once, callers pass a static flag). */
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint32_t rt_gettid_slow(void);
static inline uint32_t rt_gettid(void)
{
	return RT_LIKELY(rt_self.tid != 0) ? rt_self.tid : rt_gettid_slow();
}
/* The thread's id in the trace: the kernel's, or under the scheduler its own (sched.c). */
uint32_t rt_trace_tid_slow(void);
static inline uint32_t rt_trace_tid(void)
{
	return RT_LIKELY(rt_self.ttid != 0) ? rt_self.ttid : rt_trace_tid_slow();
}

/* --- writer.c: records. Every rec_* function takes the trace lock itself. --- */
extern int g_no_loads; /* $SCRY_NO_LOADS=1 */
/* libpmem skips its cache flushes in this run ($PMEM_NO_FLUSH=1, or every NVDIMM region's
 * persistence domain is the CPU cache, as pmem_has_auto_flush(3) decides): the trace header's
 * flag no_flush, and the library hooks record no FLUSH for libpmem's and libpmemobj's persists. */
extern int g_no_flush;
void rt_lock(void);
void rt_unlock(void);
int rt_lock_mine(void); /* this thread holds the lock */
/* The rec_*_locked variants expect the lock held. Memory records copy `data`. */
void rec_mem_locked(int kind, uint32_t site, uintptr_t addr, const void *data, uint64_t size);
void rec_ext_locked(uint32_t site, uintptr_t addr, const void *data, uint64_t size, uint8_t flags);
void rec_mem(int kind, uint32_t site, uintptr_t addr, const void *data, uint64_t size);
void rec_flush(uint32_t site, uintptr_t addr, uint8_t kind);
void rec_fence(uint32_t site, uint8_t kind);
void rec_region_map_locked(uint32_t id, uintptr_t base, uint64_t len, uint64_t off, const char *path,
			   uint32_t site, uint8_t flags);
void rec_region_unmap_locked(uint32_t id, uint32_t site);
void rec_site_only(int kind, uint32_t site); /* TX_BEGIN, TX_COMMIT, TX_END */
void rec_tx_abort(uint32_t site, uint64_t errnum);
void rec_tx_abort_locked(uint32_t site, uint64_t errnum);
void rec_addr_size_flags(int kind, uint32_t site, uintptr_t addr, uint64_t size, uint8_t flags); /* TX_ADD, ALLOC, PM_EXCLUDE */
void rec_addr_size(int kind, uint32_t site, uintptr_t addr, uint64_t size); /* SET_CLEAN, TX_IGNORE */
void rec_free(uint32_t site, uintptr_t addr, uint8_t flags);
/* SYNC: the calling thread's synchronization operation op (SCRY_SYNC_*) on object (an address,
 * or a thread's trace id for create and join) at site (0: unknown). Callers check g_sync_on. */
void rec_sync(uint8_t op, uint64_t object, uint32_t site);
/* OUTPUT: len bytes the program printed on descriptor fd through a hooked call at site (while
 * tracing: what each operation printed, for durable linearizability's responses). */
void rec_output(uint32_t site, int fd, const void *data, size_t len);
void rec_op_begin(const char *text, size_t len); /* ends the open operation first */
void rec_op_end(void);
/* A line the program read from standard input: an operation (OP_BEGIN with the line), or, when
 * operations are marked by calls ($SCRY_OP_BEGIN), the text of the next one. */
void rec_op_line(const char *line, size_t len);
/* Client mode ($SCRY_OP_SOCKET=1): n bytes read from descriptor fd (a request when fd is a
 * socket and the server answered since the last one: OP_BEGIN with its first line; end of file
 * ends the operation), and n bytes written to fd (an answer when fd is a socket). */
void rec_sock_read(int fd, const void *data, ssize_t n);
void rec_sock_write(int fd, ssize_t n);
/* Call sites of the functions named by $SCRY_OP_BEGIN / $SCRY_OP_END (scry record --op-begin,
 * --op-end): __scry_call checks g_op_markers (their number) before looking. */
extern _Atomic int g_op_markers;
void op_marker_slow(uint32_t site);
/* SITES, then DEPS (when some of the ndeps facts are valid), under one lock hold. */
uint32_t rec_sites(const struct scry_site *sites, uint32_t n, const struct scry_dep *deps, uint32_t ndeps);

/* --- region.c --- */
struct rt_region {
	_Atomic int active;
	uint32_t id;        /* region id in the trace */
	uintptr_t base, end;
	uint64_t file_off;
	int writable;       /* mapping has PROT_WRITE: kept write-protected but for W (region.c) */
	int file;           /* a MAP_SHARED mapping of path at file_off: its bytes can be pread */
	dev_t dev;          /* the file's identity when file (a renamed-over path is not read) */
	ino_t ino;
	int all_w;          /* the whole region may be writable (wbits not exact) */
	uint64_t *wbits;    /* one bit per page made writable since the last protection */
	char *path;         /* file it stands for, or NULL */
	unsigned char *shadow; /* bytes the trace says the region holds */
};
#define RT_MAX_REGIONS 64
extern struct rt_region g_regions[RT_MAX_REGIONS];
extern _Atomic int g_nregions;   /* regions currently active */
extern _Atomic int g_nwin;       /* protection windows open (any thread) */

/* Region containing addr, or NULL. Lock-free; fast for repeated hits. */
struct rt_region *pm_find(uintptr_t addr);
static inline int pm_any(void) { return atomic_load_explicit(&g_nregions, memory_order_relaxed) > 0; }

/* Adds a region and records REGION_MAP plus its initial content (EXTERNAL_WRITE initial).
 * fd >= 0 (or the path) is used to skip holes. flags: PM_WRITABLE (the mapping has PROT_WRITE:
 * it is write-protected from now on), PM_FILE (the region is a MAP_SHARED mapping of path, or of
 * fd, at file_off: its content is read from the file with pread, never through the mapping). */
enum { PM_WRITABLE = 1, PM_FILE = 2 };
void pm_add(uintptr_t base, uint64_t len, const char *path, int fd, uint64_t file_off, uint32_t site,
	    int created, unsigned flags);
/* Closes pending windows, records what changed (safety net, site 0) and REGION_UNMAP for every
 * region overlapping [addr, addr+len) (len 0: the region starting at addr). */
void pm_remove(uintptr_t addr, uint64_t len, uint32_t site);
/* pmemobj_close: like pm_remove but the REGION_UNMAP comes in pm_remove_finish, after the
 * pool's file has been compared with the shadow once the library has unmapped it. */
int pm_remove_begin(uintptr_t base);
void pm_remove_finish(int idx, uint32_t site);

/* For every maximal piece of [addr, addr+len) that lies in a region: fn(region, piece, n, arg). */
void pm_for_each(uintptr_t addr, uint64_t len, void (*fn)(struct rt_region *, uintptr_t, uint64_t, void *),
		 void *arg);
/* Records a STORE/NT_STORE/LOAD of every PM piece of the range (bytes read now). */
void pm_record_range(int kind, uint32_t site, const void *addr, uint64_t len);

/* Protection windows: what uninstrumented code writes to PM while they are open becomes
 * EXTERNAL_WRITE records (region.c describes the protection scheme). */
enum { WIN_EXT = 0, WIN_PMDK = 1 };
/* Opens a window; returns its token (an id, never 0) or 0 if nothing was protected. frame is the
 * caller's frame address (used to notice windows left open by longjmp). tx: the call is a
 * libpmemobj transaction call (a transition to TX_STAGE_ONABORT records TX_ABORT). */
uint32_t win_open(uint32_t site, uint8_t ext_flags, int kind, int tx, void *frame);
/* Closes the window with this token and the windows its thread opened after it (those of other
 * threads stay open). */
void win_close(uint32_t token);
/* Closes this thread's windows whose call was left by longjmp (frame at or above theirs). */
void win_close_stale(void *frame);
/* For a store that already happened at [addr, addr+len): puts its bytes in the shadow, then
 * closes stale windows, so that their diff does not take the program's own store for an external
 * write (the STORE record follows). */
void pm_store_then_check(const void *addr, uint64_t len, void *frame);
static inline void win_check(void *frame)
{
	if (RT_UNLIKELY(atomic_load_explicit(&g_nwin, memory_order_relaxed) > 0))
		win_close_stale(frame);
}
/* Is `callee` the entry of a function defined in an instrumented module? */
int rt_is_instrumented(const void *callee);
/* Is `callee` in libpmem or libpmemobj (a function the hooks do not interpret)? 0: no, 1: in
 * libpmem, 2: in libpmemobj. */
int rt_is_pmdk(const void *callee);
/* libpmem was asked to write or flush [addr, addr+len) (hooks_pmem.c's definitions of the libpmem
 * functions libpmemobj calls): while a window is open, the range is compared at its close
 * (region.c, "Trusting libpmem"). */
void pm_note_write(const void *addr, size_t len);
/* At exit: close windows, compare every region with its shadow. */
void pm_final_check(void);
/* The same comparison without closing windows, lock held; async-signal-safe (no malloc). */
void pm_check_all_locked(void);
/* SIGSEGV handling for write protection: returns 1 if the fault was ours and is handled. */
int pm_handle_fault(void *addr);
/* Makes the PM pages of [addr, addr+len) writable (and watched like faulting pages), for writes
 * the kernel makes into PM on the program's behalf (read(2) into a PM buffer would fail with
 * EFAULT on a protected page). */
void pm_unprotect_range(void *addr, uint64_t len);

/* --- lazy.c: lazy crash-state exploration (SCRY_LAZY, docs/lazy-exploration.md). --- */
#include <signal.h>
/* SIGSEGV on a page holding an undetermined line (the process branches), or the SIGTRAP that
 * ends a single step: returns 1 when the signal was lazy exploration's and is handled. */
int lazy_fault(int sig, siginfo_t *si, void *uc);
/* The kernel is about to write [addr, addr+len) (read(2) into the pool, called from the read
 * hook): the unresolved lines of the pages it covers are resolved (branching, as if touched) and
 * the pages made writable, so that the system call does not fail with EFAULT. */
void lazy_prepare_write(void *addr, size_t len);
/* The environment changed (the fork server's child took its run's tag): SCRY_LAZY is read again
 * at the next mmap. */
void lazy_reset(void);
/* --- converge.c: convergence (SCRY_CONVERGE; the contract is in converge.c's header). --- */
enum {
	CV_UNKNOWN = 0, /* SCRY_CONVERGE not looked at yet */
	CV_OFF,         /* absent, ignored or malformed, or the hash was taken */
	CV_WAIT,        /* parsed: the hash is taken at the first stdin read where NEEDOPEN holds */
	CV_BUSY,        /* a thread is parsing the variable or taking the hash */
};
extern _Atomic int g_converge;
void converge_slow(void);
/* A read of standard input is about to happen (the hooks of fgets, getline, getdelim and
 * __getdelim on stdin, of read on fd 0): may hash the pool and stop the process. Cheap once
 * SCRY_CONVERGE is known absent: one relaxed load. */
static inline void converge_stdin_read(void)
{
	if (RT_UNLIKELY(atomic_load_explicit(&g_converge, memory_order_relaxed) != CV_OFF))
		converge_slow();
}
/* pmemobj_open or pmemobj_create returned non-NULL (the NEEDOPEN condition); called also when
 * the runtime is inert. */
void converge_opened(void);
/* The environment changed (the fork server's child took its run's tag): SCRY_CONVERGE is read
 * again at the next read of standard input. */
void converge_reset(void);
/* --- sched.c: the controlled scheduler (SCRY_SCHED; the contract is in sched.c's header). --- */
extern _Atomic int g_sched_on; /* a second thread runs under the scheduler */
/* A traced run created its second thread: synchronization is recorded (SYNC records) from then
 * on, scheduler or not (sched.c, "SYNC records"). */
extern _Atomic int g_sync_on;
/* Reads SCRY_SCHED (rt_init, before the trace is created): exits 125 with a message when it is
 * malformed. */
void sched_parse(void);
/* The trace is open: the scheduler starts when SCRY_SCHED was given; returns the calling
 * thread's id in the trace (0: no scheduler). */
uint32_t sched_begin(void);
struct sched_info {
	const char *spec;
	uint8_t policy;
	uint64_t seed, depth, steps, points, switches, threads, timed;
	int deadlock;
};
/* The schedule and the run's counts so far; 0 when there is no scheduler. */
int sched_info(struct sched_info *si);
int sched_configured(void);
/* Exit (rt_fini): no thread is given the turn from here on. */
void sched_stop(void);
void sched_point_slow(int store);
/* The scheduling point of an atomic read-modify-write at addr (a spin there yields, sched.c). */
void sched_point_rmw(const void *addr, int store);
/* The window of SCRY_SCHED (@THREAD.STORE): the thread and the ordinal of its STORE or NT_STORE
 * record after which it drops below every other thread; 0 when none. The writer calls
 * sched_count_store for each such record (under the trace lock, on the storing thread). */
extern uint32_t g_sched_win_thread;
extern uint64_t g_sched_win_store;
void sched_count_store(void);
/* Under the ops policy: the calling thread began workload operation seq (begin 1; its previous
 * one ended) or ended its operation (begin 0). Called outside the trace lock. */
void sched_op(int begin, uint64_t seq);
/* A scheduling point of the callbacks (store: right after a PM store, pm's window): nothing
 * but this branch unless a second thread runs under the scheduler. */
static inline void sched_point(int store)
{
	if (RT_UNLIKELY(atomic_load_explicit(&g_sched_on, memory_order_relaxed)))
		sched_point_slow(store);
}

/* forkserver.c: writes all of p[0..n) to fd, retrying after EINTR; 0, or -1 on error.
 * Async-signal-safe. */
int rt_full_write(int fd, const void *p, size_t n);
/* writer.c: installs the runtime's handler for sig (the program's actions are kept and chained
 * to, as for the fatal signals), also when the runtime is inert. */
void rt_take_signal(int sig);

/* Call-stack context (writer.c): current stack node of this thread, interning new nodes
 * (emits STACK). Lock held. */
uint32_t ctx_current_locked(struct rt_thread *t);

/* libpmemobj functions the runtime calls itself, resolved with dlsym (NULL when absent). */
struct rt_oid { uint64_t pool_uuid_lo, off; };
void *obj_direct(uint64_t uuid, uint64_t off);
uint64_t obj_usable_size(uint64_t uuid, uint64_t off);
int obj_tx_stage(void); /* -1 when unknown */
int obj_tx_errno(void);

/* FLUSH (clwb) of every cache line of [addr, addr+len) that lies in PM, as libpmem makes them
 * (hooks_pmem.c): none when libpmem skips its flushes (g_no_flush). */
void rt_flush_lines(uint32_t site, const void *addr, size_t len);
/* The same FLUSH records whatever libpmem does: a flush the program itself declares (pmemcheck's
 * VALGRIND_PMC_DO_FLUSH). */
void rt_record_flushes(uint32_t site, const void *addr, size_t len);
/* FENCE sfence when any region is mapped. */
void rt_fence(uint32_t site);
/* PM_EXCLUDE of [addr, addr+len) when its first byte is PM (valgrind.c): the range is no PM from
 * now on (pmemcheck's REMOVE_PMEM_MAPPING, pmemobj_volatile). Caller sets in_rt. */
void rt_pm_exclude(uint32_t site, uint64_t addr, uint64_t len);
/* STORE of dest, then FLUSHes unless flags has NOFLUSH, FENCE unless NODRAIN or NOFLUSH. */
void rt_pmem_copy(uint32_t site, void *dest, size_t len, unsigned flags);

/* Hook prologue: nothing unless the runtime runs and is not re-entered; closes windows that a
 * longjmp left open. HOOK_ENTER_NOCHECK leaves them (post hooks close their own window later). */
#define HOOK_ENTER_NOCHECK()                            \
	do {                                            \
		if (!rt_ready())                        \
			return;                         \
		rt_self.in_rt = 1;                      \
	} while (0)
#define HOOK_ENTER()                                    \
	do {                                            \
		HOOK_ENTER_NOCHECK();                   \
		win_check(__builtin_frame_address(0));  \
	} while (0)
#define HOOK_LEAVE() (rt_self.in_rt = 0)

#endif /* SCRY_RT_H */
