//go:build ignore

/*
 * sched.c: the controlled scheduler (issue 42). With SCRY_SCHED set, the threads of a traced run
 * run one at a time, switching only at scheduling points, in an order a seeded policy chooses,
 * so that scry can record a program under chosen schedules and record one again exactly.
 *
 * SCRY_SCHED=POLICY:SEED[:DEPTH[:STEPS]][@THREAD.STORE]
 *   POLICY  pct, pm or ops (below)
 *   SEED    decimal, 0 to 2^64-1: every random choice derives from it
 *   DEPTH   decimal, 1 to 64 (default 3): PCT's bug depth d, d-1 priority change points
 *   STEPS   decimal, at least DEPTH-1 and at most 2^40 (default 10000): the change points are
 *           drawn among the first STEPS scheduling points
 *   @THREAD.STORE  a window to open (below): THREAD the thread's id in the trace (1 to 2^32-1),
 *           STORE the ordinal (from 1) of one of its STORE or NT_STORE records
 * Unset or empty: no scheduler, and nothing is paid but one predictable branch in the
 * callbacks. Any other value: "scry: bad SCRY_SCHED ..." on standard error and exit status 125
 * before main, before the trace is created. Read once, by rt_init; ignored in inert runs
 * (SCRY_INERT: crash-image re-executions, the fork server, lazy exploration), which write no
 * trace. The trace says which schedule it ran under: a SCHEDULE record after the header, and
 * one before END with the run's counts (writer.c; docs/trace-format.md, "SCHEDULE").
 *
 * Policies. pct is PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, "A Randomized Scheduler
 * with Probabilistic Guarantees of Finding Bugs", ASPLOS'10): every thread gets a random
 * priority when it is created (distinct: ties are redrawn), the runnable thread of highest
 * priority runs, and at d-1 change points k_1..k_{d-1}, drawn at start among the first STEPS
 * scheduling points, the running thread's priority drops to i at k_i, below every priority a
 * thread got at creation. Its guarantee: for a program of n threads and k scheduling points, a
 * bug of depth d (the fewest ordering constraints between events that expose it) is found in
 * one run with probability at least 1/(n·k^(d-1)), when STEPS is k. The defaults: DEPTH 3, as
 * the paper finds the ordering errors, atomicity violations and deadlocks it studies to have
 * small depths; STEPS 10000, a middle ground: a change point past the run's last point never
 * fires (a STEPS above k weakens the bound by (STEPS/k)^(d-1)), and one below leaves the later
 * points without change points. The record before END gives k (its points), so a caller that
 * records once can pass the real one.
 * pm is pct plus a PM-aware choice: right after a PM store, which is not durable at that point
 * (its line was written and has not been flushed and fenced since), a coin drawn from SEED
 * (probability 1/2) lowers the storing thread's priority below every other, so that the
 * highest-priority other runnable thread runs in the window where it can read the value before
 * it is durable, or persist a value derived from it (the interleavings around unpersisted
 * writes that PMRace, Chen et al., ASPLOS'22, and Durinn, Fu et al., OSDI'22, look for). Its
 * extra priority changes are outside PCT's count, so pm trades PCT's bound for those windows.
 * ops runs the workload's operations one at a time, in the order they began: a thread with an
 * operation in flight (OP_BEGIN to OP_END, writer.c) runs ahead of every thread without one, the
 * earliest-begun operation first; without an operation a thread has its PCT priority (DEPTH is
 * 1: no change points). A program that begins its operations in the order of its input lines
 * (the round drivers of docs/concurrency.md) then applies them in that order, whatever threads
 * run them: the prep runs that tell what a linearization's operations print run under it
 * (pm/explore, responses.go), so that a get concurrent with an insert prints what the order
 * says. An operation that waits for another (a blocked thread) gives the turn away as under
 * any policy.
 * A window (@THREAD.STORE) opens one such window on purpose: the schedule is the policy's, but
 * thread THREAD runs ahead of every other from its creation (its priority above all) until the
 * first scheduling point after its STORE-th STORE or NT_STORE record (counted as the trace
 * holds them: a range store longer than a record's payload is several), where it drops below
 * every other for the rest of the run. The run is the policy's own up to THREAD's creation, so
 * a caller that saw, in the trace of POLICY:SEED..., a store of thread A and a load of the same
 * bytes by another thread B during two concurrent operations (in either order) can ask for the
 * run where A stores first and B's load comes right after, before A flushes: the adversarial
 * interleaving Durinn (Fu et al., OSDI'22, §4) builds from a store that another thread's
 * operation reads before the store is durable. A's stores up to that one are the same as in
 * that trace as long as A's path does not depend on what B did first. Its changes are outside
 * PCT's count too.
 *
 * Scheduling points, where the running thread may lose the turn (counted from the creation of
 * the second thread: a program with one thread pays nothing but the branch): the callbacks of
 * PM loads, stores, range stores, flushes and fences, and of every atomic read-modify-write or
 * compare-exchange (callbacks.c; the hooks of library calls are none); and the calls below. A
 * thread that passed 65536 scheduling points in a row while another could run drops below every
 * other (a spin loop would otherwise keep the turn forever), as sched_yield does at once; one
 * that made 64 read-modify-writes in a row at one address with no other scheduling point between
 * (a spin on a lock word) does so at the 64th.
 *
 * Thread ids. The thread that starts the program is thread 1 in the trace (THREAD records),
 * the threads created through pthread_create 2, 3, ... in creation order. A thread the
 * scheduler does not know (not created through this pthread_create: created before the runtime
 * started, by a library's own clone, or past SCHED_MAX threads) runs unscheduled, and its records
 * carry its kernel id with bit 31 set.
 *
 * Synchronization (the runtime defines these functions; the real ones are found with
 * dlsym(RTLD_NEXT), and scry_rt.dynlist exports the definitions, so libpmemobj's and
 * libstdc++'s calls come here too): pthread_create, pthread_join, pthread_exit; mutexes (lock,
 * trylock, timedlock, clocklock, unlock), rwlocks (rd/wr lock, trylock, timed and clock
 * variants, unlock), spin locks, condition variables (wait, timedwait, clockwait, signal,
 * broadcast), barriers (init, destroy, wait), semaphores (wait, trywait, timedwait, clockwait,
 * post), sched_yield, and futex waits and wakes made through syscall(2). An operation that
 * acquires is a scheduling point before it, one that releases after it. A thread that would
 * block does not: it tries (trylock, sem_trywait), and when that fails it is marked waiting on
 * the object, not runnable, and gives up the turn; a release of the object (unlock, post,
 * signal, the barrier's last arrival, a thread's exit for its joiners, a futex wake) makes its
 * waiters runnable again, and they try again when they get the turn. Condition variables,
 * barriers (their count is noted at pthread_barrier_init) and futexes are modelled entirely:
 * signal wakes the longest waiter, broadcast all, the real objects are signalled too for threads
 * the scheduler does not know. A timed wait times out only when no thread can run (below).
 *
 * System calls the scheduler cannot model (read, readv, recv, recvfrom, recvmsg, accept,
 * accept4, connect, poll, ppoll, select, pselect, epoll_wait, epoll_pwait, wait, waitpid, and
 * the sleeps: nanosleep, clock_nanosleep, sleep, usleep) are a scheduling point before the call:
 * the caller stays a candidate for the turn while in the call. When the policy gives the turn to
 * a thread in such a call, everyone waits for it to return (so a read of a file or a sleep keeps
 * the schedule a function of SCRY_SCHED and the input), but for at most SCHED_GRACE_MS unless it
 * is a sleep: past that, the call is taken to wait for another thread (a pipe's writer), the
 * thread leaves the candidates until it returns, and the turn goes on. That choice depends on
 * time: the record before END counts it (timed), and a run with timed 0 replays exactly.
 *
 * When no thread can run: the turn stays free while a thread is out (in a call past its grace)
 * and goes to the first that comes back; else the highest-priority timed wait times out; else
 * every thread waits on an object only another waiting thread can release: a deadlock under this
 * schedule. The runtime says so (a WARNING record and standard error, with each thread's wait),
 * flags the record before END (deadlock) and ends the run with SIGABRT, never hanging.
 *
 * A running thread that passes no scheduling point for SCHED_STALL_MS (it waits in a call the
 * runtime does not see, such as fgets on a pipe, or spins on a plain load) loses the turn the
 * same way, counted as timed: the threads waiting for the turn watch for it.
 *
 * SYNC records. Scheduler or not, once a traced run (not SCRY_INERT) creates its second thread,
 * the functions here record the synchronization they perform (g_sync_on; docs/trace-format.md,
 * "SYNC"), from which the replay derives happens-before: a lock acquired (after it is held), a
 * read lock, an unlock (before the release, so that the next holder's lock comes after it in
 * the trace), a semaphore's post (before) and successful wait (after), a condition wait as an
 * unlock of its mutex before and a lock after, a barrier's arrival (before the wait) and leave
 * (after), a thread's creation (by the parent, with the child's trace id, before the child runs:
 * without the scheduler the child publishes its kernel id and waits for the parent's record) and
 * a join (after it returned, with the joined thread's id, kept per pthread_t from its creation).
 * callbacks.c adds the atomic read-modify-writes on memory that is not PM. Until then every
 * function pays one predictable branch on g_sync_on, and a program with one thread writes none.
 * Not recorded: pthread_tryjoin_np and pthread_timedjoin_np, the C library's internal locks, and
 * the threads a library starts with clone.
 *
 * Not covered, and what happens: threads the scheduler does not know run freely; signal
 * handlers run outside the schedule; thread-specific-data and thread_local destructors run after
 * the thread left the schedule; pthread_once, pthread_timedjoin_np and the glibc-internal waits
 * of stdio and malloc are not interposed (a wait there is seen as a stall); objects shared with
 * other processes (PTHREAD_PROCESS_SHARED) are modelled as if private; cancellation is not
 * honoured inside a modelled wait; a fork's child runs without the scheduler. A program linked
 * statically has no C library definitions for dlsym to find: the system calls above are made
 * directly, but the thread and synchronization functions have nothing to call, and the first
 * call of one ends the program with a message (link such a program dynamically).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define SCHED_MAX 1024         /* threads the scheduler knows at once */
#define SCHED_MAX_DEPTH 64
#define SCHED_STARVE 65536     /* scheduling points in a row before a thread drops (spin loops) */
#define SCHED_SPIN 64          /* read-modify-writes in a row at one address: a spin, which yields */
#define SCHED_GRACE_MS 200     /* a call given the turn that does not return by then is out */
#define SCHED_STALL_MS 3000    /* a running thread that passes no point for this long is out */
#define SCHED_WATCH_MS 50      /* how often the threads waiting for the turn look */

enum {
	ST_FREE = 0, /* slot unused */
	ST_READY,    /* runnable (running when it holds the turn) */
	ST_SYSCALL,  /* in a call the scheduler cannot model; still a candidate for the turn */
	ST_BLOCKED,  /* waits on obj: not runnable until the object can progress */
	ST_OUT,      /* in a call past its grace, or stalled: not a candidate until it comes back */
	ST_DONE,     /* left the schedule (exited) */
};

struct sched_thread {
	uint32_t lid;        /* the thread's id in the trace */
	int state;           /* ST_* */
	int64_t prio;        /* the runnable thread of highest priority runs */
	_Atomic uint32_t go; /* 1 while it holds the turn (a futex word) */
	const void *obj;     /* ST_BLOCKED: the object waited on */
	const char *what;    /* ST_BLOCKED: its kind, for the deadlock message */
	int timed;           /* ST_BLOCKED: the call has a timeout */
	int timedout;        /* the scheduler ended its last wait with a timeout */
	int sleeping;        /* ST_SYSCALL: a sleep, which returns by itself */
	uint64_t seq;        /* when it began to wait: wake-ups of one waiter go to the first */
	pthread_t handle;    /* for pthread_join */
	int joined;
	uint64_t stores;     /* its STORE and NT_STORE records so far (counted with a window only) */
	int64_t drawn;       /* ops: its priority outside operations */
	const void *spin;    /* the address of its last read-modify-writes in a row, and their count */
	uint32_t spins;
	int drop;            /* its window's store was recorded: it drops at its next point */
};

_Atomic int g_sched_on; /* rt.h: a second thread runs under the scheduler */

static struct {
	int on;              /* SCRY_SCHED was valid and the run is traced */
	char spec[128];
	uint8_t policy;
	uint64_t seed, depth, steps;
	uint64_t change[SCHED_MAX_DEPTH]; /* change[i]: the point where the running thread gets priority i+1 */
} g_cfg;

/* The window (@THREAD.STORE; rt.h): 0 when none. */
uint32_t g_sched_win_thread;
uint64_t g_sched_win_store;

static struct sched_thread g_th[SCHED_MAX];
static uint32_t g_nslots;              /* slots used: g_th[0..g_nslots) */
static uint32_t g_nthreads;            /* threads the scheduler ran (the next id is this + 1) */
static struct sched_thread *g_turn;    /* the thread holding the turn, NULL: free */
static struct sched_thread *g_last;    /* the last thread given the turn */
static uint64_t g_points, g_switches, g_timed, g_seq;
static struct sched_thread *g_runner;  /* the thread of the last point, and its run of points */
static uint64_t g_run;
static int64_t g_low;                  /* the priority of the next thread lowered below all */
static uint64_t g_prio_rng, g_coin_rng;
static int g_deadlock, g_stopped;
static _Atomic int g_slock;            /* guards everything above but g_cfg */
static uint64_t g_watch_points, g_watch_since; /* the watchdog's view of the holder */
static struct sched_thread *g_watch_holder;

/* ---------------------------------------------------------------- helpers */

/* The raw system call, never through the program's syscall (defined below): async-signal-safe. */
static long raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r;
#if defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a1, x1 __asm__("x1") = a2, x2 __asm__("x2") = a3,
		      x3 __asm__("x3") = a4, x4 __asm__("x4") = a5, x5 __asm__("x5") = a6;
	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	r = x0;
#else
	register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
#endif
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static void slock(void)
{
	while (atomic_exchange_explicit(&g_slock, 1, memory_order_acquire))
		while (atomic_load_explicit(&g_slock, memory_order_relaxed))
			raw_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
}

static void sunlock(void)
{
	atomic_store_explicit(&g_slock, 0, memory_order_release);
}

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA'14): one stream per kind of choice, so that pm's coins do not move the priorities. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The calling thread's entry when the scheduler is to act for it: the scheduler runs, the
 * thread is one it knows, and the runtime is not running on it (its own calls of these
 * functions, and those of signal handlers that interrupt a wait, go straight to the C library). */
static inline struct sched_thread *sched_me(void)
{
	if (RT_LIKELY(!atomic_load_explicit(&g_sched_on, memory_order_relaxed)))
		return NULL;
	if (!rt_self.sched || rt_self.in_rt)
		return NULL;
	return rt_self.sched;
}

/* ---------------------------------------------------------------- SYNC records */

_Atomic int g_sync_on; /* rt.h: SYNC records are written (a second thread was created) */

static inline int sync_on(void)
{
	return RT_UNLIKELY(atomic_load_explicit(&g_sync_on, memory_order_relaxed));
}

/* Writes SYNC op on object for the calling thread, errno kept; nothing from inside the runtime. */
static void sync_rec(uint8_t op, uint64_t object)
{
	if (rt_self.in_rt)
		return;
	int e = errno;
	rec_sync(op, object, 0);
	errno = e;
}

#define SYNC(op, obj)                                        \
	do {                                                 \
		if (sync_on())                               \
			sync_rec(op, (uint64_t)(uintptr_t)(obj)); \
	} while (0)

/* The trace id of each thread created since SYNC records began, by its pthread_t, for the
 * join's record; a handle seen again (a reused pthread_t) replaces the old entry. Guarded by
 * g_slock. */
#define SYNC_THREADS 1024
static struct {
	pthread_t h;
	uint32_t tid; /* 0: free */
} g_sync_th[SYNC_THREADS];

static void sync_note(pthread_t h, uint32_t tid)
{
	slock();
	int slot = -1;
	for (int i = 0; i < SYNC_THREADS; i++) {
		if (g_sync_th[i].tid && pthread_equal(g_sync_th[i].h, h)) {
			slot = i;
			break;
		}
		if (!g_sync_th[i].tid && slot < 0)
			slot = i;
	}
	if (slot >= 0)
		g_sync_th[slot].h = h, g_sync_th[slot].tid = tid;
	sunlock();
}

/* The trace id noted for h, forgotten (0: none). */
static uint32_t sync_take(pthread_t h)
{
	uint32_t tid = 0;
	slock();
	for (int i = 0; i < SYNC_THREADS; i++)
		if (g_sync_th[i].tid && pthread_equal(g_sync_th[i].h, h)) {
			tid = g_sync_th[i].tid;
			g_sync_th[i].tid = 0;
			break;
		}
	sunlock();
	return tid;
}

/* ---------------------------------------------------------------- the real functions */

/* The C library's definition of name (of version ver when not NULL), cached in *cache; when
 * there is none, NULL, or with must, exit with a message (a call reached a definition here that
 * has nothing to call). */
static void *real_fn(const char *name, const char *ver, void *_Atomic *cache, int must)
{
	void *p = atomic_load_explicit(cache, memory_order_acquire);
	if (RT_LIKELY(p != NULL))
		return p;
	p = ver ? dlvsym(RTLD_NEXT, name, ver) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p && must) {
		static const char msg[] = ": the scry runtime finds no C library definition to call (a program "
					  "linked statically cannot use it: link it dynamically)\n";
		ssize_t w = write(2, "scry: ", 6);
		w = write(2, name, strlen(name));
		w = write(2, msg, sizeof msg - 1);
		(void)w;
		abort();
	}
	atomic_store_explicit(cache, p, memory_order_release);
	return p;
}

/* Every function the scheduler defines, with the version of the C library's definition to call
 * (NULL: the default one; condition variables have two, the current one is GLIBC_2.3.2). */
#define COND_VER "GLIBC_2.3.2"
#define REAL_FNS(X)                                                                                  \
	X(pthread_create, NULL) X(pthread_join, NULL) X(pthread_exit, NULL)                          \
	X(pthread_mutex_lock, NULL) X(pthread_mutex_trylock, NULL) X(pthread_mutex_timedlock, NULL)  \
	X(pthread_mutex_clocklock, NULL) X(pthread_mutex_unlock, NULL)                               \
	X(pthread_rwlock_rdlock, NULL) X(pthread_rwlock_tryrdlock, NULL)                             \
	X(pthread_rwlock_timedrdlock, NULL) X(pthread_rwlock_clockrdlock, NULL)                      \
	X(pthread_rwlock_wrlock, NULL) X(pthread_rwlock_trywrlock, NULL)                             \
	X(pthread_rwlock_timedwrlock, NULL) X(pthread_rwlock_clockwrlock, NULL)                      \
	X(pthread_rwlock_unlock, NULL)                                                               \
	X(pthread_spin_lock, NULL) X(pthread_spin_trylock, NULL) X(pthread_spin_unlock, NULL)        \
	X(pthread_cond_wait, COND_VER) X(pthread_cond_timedwait, COND_VER)                           \
	X(pthread_cond_clockwait, NULL) X(pthread_cond_signal, COND_VER)                             \
	X(pthread_cond_broadcast, COND_VER)                                                          \
	X(pthread_barrier_init, NULL) X(pthread_barrier_destroy, NULL) X(pthread_barrier_wait, NULL) \
	X(sem_wait, NULL) X(sem_trywait, NULL) X(sem_timedwait, NULL) X(sem_clockwait, NULL)         \
	X(sem_post, NULL)                                                                            \
	X(read, NULL) X(readv, NULL) X(recv, NULL) X(recvfrom, NULL) X(recvmsg, NULL)                \
	X(accept, NULL) X(accept4, NULL) X(connect, NULL) X(poll, NULL) X(ppoll, NULL)               \
	X(select, NULL) X(pselect, NULL) X(epoll_wait, NULL) X(epoll_pwait, NULL)                    \
	X(wait, NULL) X(waitpid, NULL)                                                               \
	X(nanosleep, NULL) X(clock_nanosleep, NULL) X(sleep, NULL) X(usleep, NULL)

/* real_<f> caches the C library's f, ver_<f> is its version; REAL(f) is f, typed as declared. */
#define REAL_DECL(name, ver) static void *_Atomic real_##name; static const char *const ver_##name = ver;
REAL_FNS(REAL_DECL)
#define REAL(name) ((__typeof__(&name))real_fn(#name, ver_##name, &real_##name, 1))
/* REAL_OPT(f): the same, or NULL when the C library has none (a program linked statically). */
#define REAL_OPT(name) ((__typeof__(&name))real_fn(#name, ver_##name, &real_##name, 0))

/* Finds every definition once, before main, so that none is looked up later in a signal
 * handler (lazy.c reads in its fault handler). Calls made before (libraries' constructors) look
 * theirs up when first called. A static program has none to find (and keeps the C library's
 * definitions, which take precedence over these weak ones). */
#define REAL_RESOLVE(name, ver) (void)real_fn(#name, ver, &real_##name, 0);
__attribute__((constructor(101))) static void resolve_all(void)
{
	REAL_FNS(REAL_RESOLVE)
}

/* ---------------------------------------------------------------- SCRY_SCHED */

__attribute__((noreturn)) static void bad_spec(const char *v, const char *why)
{
	char msg[512];
	int n = snprintf(msg, sizeof msg,
			 "scry: bad SCRY_SCHED=\"%.200s\": %s (want POLICY:SEED[:DEPTH[:STEPS]][@THREAD.STORE], POLICY pct, pm or ops, "
			 "SEED 0 to 2^64-1, DEPTH 1 to %d, STEPS at least DEPTH-1 and at most 2^40)\n",
			 v, why, SCHED_MAX_DEPTH);
	if (n > (int)sizeof msg - 1)
		n = (int)sizeof msg - 1;
	ssize_t w = write(2, msg, (size_t)n);
	(void)w;
	_exit(125);
}

/* A decimal number of the whole of s (no sign, no spaces), at most max; -1 when it is not one. */
static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	uint64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

void sched_parse(void)
{
	const char *v = getenv("SCRY_SCHED");
	if (!v || !*v)
		return;
	if (strlen(v) >= sizeof g_cfg.spec)
		bad_spec(v, "too long");
	char buf[sizeof g_cfg.spec], *f[5] = {0};
	strcpy(buf, v);
	char *win = strchr(buf, '@');
	if (win) {
		*win++ = 0;
		char *dot = strchr(win, '.');
		uint64_t t, k;
		if (!dot)
			bad_spec(v, "a window is @THREAD.STORE");
		*dot = 0;
		if (parse_num(win, UINT32_MAX, &t) < 0 || t == 0 || parse_num(dot + 1, UINT64_MAX, &k) < 0 || k == 0)
			bad_spec(v, "a window's THREAD and STORE are decimal numbers from 1");
		g_sched_win_thread = (uint32_t)t;
		g_sched_win_store = k;
	}
	int n = 0;
	for (char *s = buf; s && n < 5; n++) {
		f[n] = s;
		s = strchr(s, ':');
		if (s)
			*s++ = 0;
	}
	if (strcmp(f[0], "pct") == 0)
		g_cfg.policy = SCRY_SCHED_PCT;
	else if (strcmp(f[0], "pm") == 0)
		g_cfg.policy = SCRY_SCHED_PM;
	else if (strcmp(f[0], "ops") == 0)
		g_cfg.policy = SCRY_SCHED_OPS;
	else
		bad_spec(v, "unknown POLICY");
	if (n < 2 || n > 4)
		bad_spec(v, n < 2 ? "no SEED" : "more than four fields");
	if (parse_num(f[1], UINT64_MAX, &g_cfg.seed) < 0)
		bad_spec(v, "SEED is not a decimal number of 64 bits");
	g_cfg.depth = 3;
	g_cfg.steps = 10000;
	if (n > 2 && (parse_num(f[2], SCHED_MAX_DEPTH, &g_cfg.depth) < 0 || g_cfg.depth == 0))
		bad_spec(v, "bad DEPTH");
	if (n > 3 && (parse_num(f[3], 1ull << 40, &g_cfg.steps) < 0 || g_cfg.steps == 0))
		bad_spec(v, "bad STEPS");
	if (g_cfg.depth - 1 > g_cfg.steps)
		bad_spec(v, "fewer STEPS than change points (DEPTH-1)");
	if (g_cfg.policy == SCRY_SCHED_OPS && g_cfg.depth != 1 && n > 2)
		bad_spec(v, "ops has no change points: DEPTH is 1");
	if (g_cfg.policy == SCRY_SCHED_OPS)
		g_cfg.depth = 1;
	strcpy(g_cfg.spec, v);

	/* PCT's change points: d-1 distinct points among 1..STEPS, point change[i] giving priority
	 * i+1. Priorities at creation are at least 2^59; lowered threads go below 0. */
	uint64_t cp = g_cfg.seed ^ 0x6368616e67652d70ull;
	for (uint64_t i = 0; i + 1 < g_cfg.depth; i++) {
		uint64_t k;
		int dup;
		do {
			k = 1 + rng_next(&cp) % g_cfg.steps;
			dup = 0;
			for (uint64_t j = 0; j < i; j++)
				dup |= g_cfg.change[j] == k;
		} while (dup);
		g_cfg.change[i] = k;
	}
	g_prio_rng = g_cfg.seed ^ 0x7072696f72697479ull;
	g_coin_rng = g_cfg.seed ^ 0x706d2d636f696e73ull;
}

/* ---------------------------------------------------------------- threads */

static int64_t draw_prio(void)
{
	for (;;) {
		int64_t p = (int64_t)((rng_next(&g_prio_rng) >> 5) | (1ull << 59));
		int dup = 0;
		for (uint32_t i = 0; i < g_nslots; i++)
			dup |= g_th[i].state != ST_FREE && g_th[i].prio == p;
		if (!dup)
			return p;
	}
}

/* A slot for a new thread, its id the next one (NULL: SCHED_MAX threads are alive). Lock held. */
static struct sched_thread *new_thread(void)
{
	struct sched_thread *t = NULL;
	for (uint32_t i = 0; i < g_nslots && !t; i++)
		if (g_th[i].state == ST_FREE || (g_th[i].state == ST_DONE && g_th[i].joined))
			t = &g_th[i];
	if (!t && g_nslots < SCHED_MAX)
		t = &g_th[g_nslots++];
	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->lid = ++g_nthreads;
	t->state = ST_READY;
	t->prio = draw_prio(); /* drawn for every thread: the window's keeps the others' the same */
	if (g_sched_win_store && t->lid == g_sched_win_thread)
		t->prio = INT64_C(1) << 62; /* above every priority drawn (below 2^60) */
	return t;
}

static void atfork_child(void);

uint32_t sched_begin(void)
{
	if (!g_cfg.spec[0])
		return 0;
	g_cfg.on = 1;
	pthread_atfork(NULL, NULL, atfork_child);
	struct sched_thread *t = new_thread();
	t->handle = pthread_self();
	atomic_store(&t->go, 1);
	g_turn = g_last = t;
	rt_self.sched = t;
	return t->lid;
}

int sched_info(struct sched_info *si)
{
	if (!g_cfg.on)
		return 0;
	*si = (struct sched_info){g_cfg.spec, g_cfg.policy, g_cfg.seed, g_cfg.depth, g_cfg.steps,
				  g_points, g_switches, g_nthreads, g_timed, g_deadlock};
	return 1;
}

int sched_configured(void)
{
	return g_cfg.on;
}

void sched_stop(void)
{
	/* Exit: the threads that wait for the turn keep waiting (exit ends them), and the watchdog
	 * takes nothing from the exiting thread, which runs the runtime's last work. */
	slock();
	g_stopped = 1;
	atomic_store(&g_sched_on, 0);
	sunlock();
}

static void atfork_child(void)
{
	atomic_store(&g_sched_on, 0);
	rt_self.sched = NULL;
	atomic_store(&g_slock, 0);
}

/* ---------------------------------------------------------------- choosing */

static int candidate(const struct sched_thread *t)
{
	return t->state == ST_READY || t->state == ST_SYSCALL;
}

/* The candidate of highest priority other than skip (ties: the lowest id), or NULL. Lock held. */
static struct sched_thread *best(const struct sched_thread *skip)
{
	struct sched_thread *b = NULL;
	for (uint32_t i = 0; i < g_nslots; i++) {
		struct sched_thread *t = &g_th[i];
		if (t != skip && candidate(t) && (!b || t->prio > b->prio || (t->prio == b->prio && t->lid < b->lid)))
			b = t;
	}
	return b;
}

static void lower(struct sched_thread *t)
{
	t->prio = g_low--;
}

/* Gives the turn to t (NULL: the turn is free). Lock held. */
static void give(struct sched_thread *t)
{
	if (g_turn && g_turn != t)
		atomic_store(&g_turn->go, 0);
	g_turn = t;
	if (!t)
		return;
	if (t != g_last)
		g_switches++;
	g_last = t;
	atomic_store(&t->go, 1);
	raw_syscall(SYS_futex, (long)&t->go, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

__attribute__((noreturn)) static void deadlock(void);

/* Who runs when the holder cannot: the best candidate; when none, NULL while a thread is out
 * (the first back takes the turn), else the timed wait of highest priority times out, else the
 * program deadlocked. Lock held (released by deadlock). */
static struct sched_thread *dispatch(void)
{
	struct sched_thread *t = best(NULL), *timed = NULL;
	if (t)
		return t;
	int blocked = 0;
	for (uint32_t i = 0; i < g_nslots; i++) {
		struct sched_thread *u = &g_th[i];
		if (u->state == ST_OUT)
			return NULL;
		if (u->state == ST_BLOCKED) {
			blocked = 1;
			if (u->timed && (!timed || u->prio > timed->prio))
				timed = u;
		}
	}
	if (timed) {
		timed->timedout = 1;
		timed->state = ST_READY;
		return timed;
	}
	if (blocked)
		deadlock();
	return NULL;
}

/* Counts a scheduling point of the holder me and applies PCT's change points. Lock held. */
static void point(struct sched_thread *me)
{
	g_points++;
	for (uint64_t i = 0; i + 1 < g_cfg.depth; i++)
		if (g_cfg.change[i] == g_points)
			me->prio = (int64_t)i + 1;
	if (g_runner != me)
		g_runner = me, g_run = 0;
	g_run++;
}

/* Waits until me holds the turn. Meanwhile, every SCHED_WATCH_MS, it looks whether the holder
 * is stuck (watch). */
static void watch(void);
static void wait_turn(struct sched_thread *me)
{
	struct timespec ts = {0, SCHED_WATCH_MS * 1000000L};
	while (!atomic_load(&me->go)) {
		if (raw_syscall(SYS_futex, (long)&me->go, FUTEX_WAIT_PRIVATE, 0, (long)&ts, 0, 0) < 0 &&
		    errno == ETIMEDOUT)
			watch();
	}
}

/* Under the lock, for a thread about to act as the holder: when the watchdog took the turn away
 * (me is out), it waits for the turn again first. Returns with the lock held and the turn. */
static void reclaim(struct sched_thread *me)
{
	while (g_turn != me) {
		if (me->state == ST_OUT) {
			me->state = ST_READY;
			if (!g_turn)
				give(dispatch());
		}
		sunlock();
		wait_turn(me);
		slock();
	}
}

/* The watchdog, run by threads waiting for the turn: a holder in a call past its grace (not a
 * sleep), or one that passed no scheduling point for SCHED_STALL_MS, is out, and the turn goes
 * on. */
static void watch(void)
{
	uint64_t now = now_ms();
	slock();
	struct sched_thread *h = g_turn;
	if (g_stopped || !h) {
		g_watch_holder = NULL;
	} else if (h != g_watch_holder || g_points != g_watch_points) {
		g_watch_holder = h, g_watch_points = g_points, g_watch_since = now;
	} else if (!(h->state == ST_SYSCALL && h->sleeping) &&
		   now - g_watch_since >= (h->state == ST_SYSCALL ? SCHED_GRACE_MS : SCHED_STALL_MS)) {
		h->state = ST_OUT;
		g_timed++;
		give(dispatch());
		g_watch_holder = NULL;
	}
	sunlock();
}

/* Makes up to n (0: all) waiters of obj runnable, the longest waiting first; returns how many.
 * Lock held. */
static int wake_locked(const void *obj, int n)
{
	int woken = 0;
	while (n == 0 || woken < n) {
		struct sched_thread *first = NULL;
		for (uint32_t i = 0; i < g_nslots; i++) {
			struct sched_thread *t = &g_th[i];
			if (t->state == ST_BLOCKED && t->obj == obj && (!first || t->seq < first->seq))
				first = t;
		}
		if (!first)
			break;
		first->state = ST_READY;
		woken++;
	}
	return woken;
}

static int wake(const void *obj, int n)
{
	slock();
	int woken = wake_locked(obj, n);
	sunlock();
	return woken;
}

/* ---------------------------------------------------------------- the steps */

enum { SP_SYNC, SP_STORE, SP_YIELD };

/* The start of every step of me, about to act as the holder: the runtime's flag set (its calls
 * go straight to the C library) and errno saved, the lock taken, the turn reclaimed, the
 * waiters of wake (NULL: none) woken, the scheduling point counted. */
struct saved {
	uint32_t in;
	int err;
};
static struct saved enter(struct sched_thread *me, const void *wake)
{
	struct saved sv = {rt_self.in_rt, errno};
	rt_self.in_rt = 1;
	slock();
	reclaim(me);
	if (wake)
		wake_locked(wake, 0);
	point(me);
	return sv;
}

/* The end of a step: the lock released; with wait, the turn awaited; flag and errno restored. */
static void leave(struct sched_thread *me, struct saved sv, int wait)
{
	sunlock();
	if (wait)
		wait_turn(me);
	rt_self.in_rt = sv.in;
	errno = sv.err;
}

/* A scheduling point of me, which holds the turn: wakes the waiters of wake (NULL: none), counts
 * the point, applies the policy and gives the turn to the thread that is to run; returns when me
 * holds it again. */
static void step(struct sched_thread *me, int what, const void *wake)
{
	struct saved sv = enter(me, wake);
	struct sched_thread *other = best(me);
	if (me->drop) {
		me->drop = 0;
		lower(me);
	}
	if (other) {
		if (what == SP_YIELD || g_run >= SCHED_STARVE)
			lower(me);
		else if (what == SP_STORE && g_cfg.policy == SCRY_SCHED_PM && (rng_next(&g_coin_rng) & 1))
			lower(me);
		if (other->prio > me->prio) {
			g_run = 0;
			give(other);
		}
	}
	leave(me, sv, 1);
}

void sched_op(int begin, uint64_t seq)
{
	struct sched_thread *me = rt_self.sched;
	if (!me || g_cfg.policy != SCRY_SCHED_OPS)
		return;
	slock();
	if (begin) {
		if (me->prio < (INT64_C(1) << 60))
			me->drawn = me->prio;
		/* Above every drawn priority (below 2^60), below a window's (2^62); earlier first. */
		me->prio = (INT64_C(1) << 61) - (int64_t)(seq & ((UINT64_C(1) << 59) - 1));
	} else if (me->prio >= (INT64_C(1) << 60) && me->prio < (INT64_C(1) << 62)) {
		me->prio = me->drawn;
	}
	sunlock();
}

void sched_count_store(void)
{
	struct sched_thread *me = rt_self.sched;
	if (me && me->lid == g_sched_win_thread && ++me->stores == g_sched_win_store)
		me->drop = 1;
}

void sched_point_slow(int store)
{
	struct sched_thread *me = sched_me();
	if (me && !g_stopped) {
		me->spins = 0;
		step(me, store ? SP_STORE : SP_SYNC, NULL);
	}
}

void sched_point_rmw(const void *addr, int store)
{
	struct sched_thread *me = sched_me();
	if (!me || g_stopped)
		return;
	if (me->spin != addr)
		me->spin = addr, me->spins = 0;
	if (++me->spins >= SCHED_SPIN) {
		/* A spin on a word another thread holds (a lock's compare-and-swap retried): give the
		 * turn away as sched_yield does, rather than after SCHED_STARVE points, so that the
		 * holder runs (a window or a change point may have dropped it below the spinner). */
		me->spins = 0;
		step(me, SP_YIELD, NULL);
		return;
	}
	step(me, store ? SP_STORE : SP_SYNC, NULL);
}

/* me waits on obj (what: its kind, for messages; timed: the call has a timeout), after waking
 * the waiters of wake (NULL: none), and gives up the turn; returns when it runs again: 1 when the
 * wait timed out (no thread could run), else 0 (woken). */
static int block(struct sched_thread *me, const void *obj, const char *what, int timed, const void *wake)
{
	struct saved sv = enter(me, wake);
	me->state = ST_BLOCKED;
	me->obj = obj, me->what = what, me->timed = timed, me->timedout = 0;
	me->seq = ++g_seq;
	give(dispatch());
	leave(me, sv, 1);
	return me->timedout;
}

/* A call the scheduler cannot model: a scheduling point where me stays a candidate while in the
 * call (sys_enter), and waits for the turn after it (sys_exit). */
static void sys_enter(struct sched_thread *me, int sleeping)
{
	struct saved sv = enter(me, NULL);
	me->state = ST_SYSCALL;
	me->sleeping = sleeping;
	struct sched_thread *b = best(NULL);
	if (b != me)
		give(b);
	leave(me, sv, 0);
}

static void sys_exit(struct sched_thread *me)
{
	int e = errno;
	rt_self.in_rt = 1;
	slock();
	int out = me->state == ST_OUT;
	me->state = ST_READY;
	if (out && !g_turn)
		give(dispatch());
	sunlock();
	wait_turn(me);
	rt_self.in_rt = 0;
	errno = e;
}

/* The thread leaves the schedule: its joiners can go on, the turn goes to the next. */
static void sched_exit(struct sched_thread *me)
{
	if (rt_self.sched != me)
		return;
	struct saved sv = enter(me, me);
	me->state = ST_DONE;
	give(dispatch());
	leave(me, sv, 0);
	rt_self.sched = NULL;
}

/* Every thread waits: the message names each wait; the run ends with SIGABRT (the fatal-signal
 * handler writes the trace's end, the record before END flagged deadlock). Lock held. */
static void deadlock(void)
{
	static char msg[1024];
	size_t n = (size_t)snprintf(msg, sizeof msg, "deadlock under SCRY_SCHED=%s: every thread waits:", g_cfg.spec);
	for (uint32_t i = 0; i < g_nslots && n < sizeof msg; i++) {
		struct sched_thread *t = &g_th[i];
		if (t->state != ST_BLOCKED)
			continue;
		if (strcmp(t->what, "join") == 0)
			n += (size_t)snprintf(msg + n, sizeof msg - n, " thread %u on %s of thread %u;", t->lid, t->what,
					      ((const struct sched_thread *)t->obj)->lid);
		else
			n += (size_t)snprintf(msg + n, sizeof msg - n, " thread %u on %s %p;", t->lid, t->what, t->obj);
	}
	g_deadlock = 1;
	g_stopped = 1;
	sunlock();
	rt_warn("%s ending the run (SIGABRT)", msg);
	abort();
}

/* ---------------------------------------------------------------- acquiring and releasing */

/* Acquires obj with try (0, or an error: EBUSY while another holds it), waiting as the scheduler
 * does while it is busy; a scheduling point before. Returns try's result, or ETIMEDOUT. */
static int acquire(struct sched_thread *me, void *obj, const char *what, int (*try)(void *), int timed)
{
	step(me, SP_SYNC, NULL);
	for (;;) {
		int r = try(obj);
		if (r != EBUSY)
			return r;
		if (block(me, obj, what, timed, NULL))
			return ETIMEDOUT;
	}
}

/* After a release of obj: its waiters may go on, and it is a scheduling point. */
static void released(struct sched_thread *me, const void *obj)
{
	step(me, SP_SYNC, obj);
}

static int try_mutex(void *o)
{
	pthread_mutex_t *m = o;
	int r = REAL(pthread_mutex_trylock)(m);
	/* Locking an error-checking mutex one holds fails; any other kind waits (for ever: a
	 * deadlock the scheduler reports when nothing else can run). */
	if (r == EBUSY && m->__data.__owner == (int)rt_gettid() &&
	    (m->__data.__kind & 3) == PTHREAD_MUTEX_ERRORCHECK)
		return EDEADLK;
	return r;
}
static int try_rd(void *o) { return REAL(pthread_rwlock_tryrdlock)(o); }
static int try_wr(void *o) { return REAL(pthread_rwlock_trywrlock)(o); }
static int try_spin(void *o) { return REAL(pthread_spin_trylock)(o); }
static int try_sem(void *o)
{
	int e = errno;
	if (REAL(sem_trywait)(o) == 0)
		return 0;
	int r = errno == EAGAIN ? EBUSY : errno;
	errno = e;
	return r;
}

/* Semaphores answer -1 and errno where the others answer the error. */
static int as_error(int r)
{
	return r;
}
static int as_errno(int r)
{
	if (r == 0)
		return 0;
	errno = r;
	return -1;
}

/* The functions below are weak: a program that defines one keeps its own. Mutexes, rwlocks,
 * spin locks and semaphores: an acquire waits as the scheduler does (acquire), a try is a
 * scheduling point before it, a release one after it. */
#define WEAK __attribute__((weak))
#define ACQUIRE_FN(name, params, args, what, try, timed, result, op) \
	WEAK int name params                                      \
	{                                                         \
		struct sched_thread *me = sched_me();             \
		int r = RT_LIKELY(!me) ? REAL(name) args : result(acquire(me, (void *)l, what, try, timed)); \
		if (r == 0)                                       \
			SYNC(op, l);                              \
		return r;                                         \
	}
#define TRY_FN(name, type, op)                                    \
	WEAK int name(type *l)                                    \
	{                                                         \
		struct sched_thread *me = sched_me();             \
		if (me)                                           \
			step(me, SP_SYNC, NULL);                  \
		int r = REAL(name)(l);                            \
		if (r == 0)                                       \
			SYNC(op, l);                              \
		return r;                                         \
	}
#define RELEASE_FN(name, type, op)                                \
	WEAK int name(type *l)                                    \
	{                                                         \
		struct sched_thread *me = sched_me();             \
		SYNC(op, l);                                      \
		int r = REAL(name)(l);                            \
		if (me && r == 0)                                 \
			released(me, (const void *)l);            \
		return r;                                         \
	}

typedef const struct timespec *abstime;
ACQUIRE_FN(pthread_mutex_lock, (pthread_mutex_t *l), (l), "mutex", try_mutex, 0, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_mutex_timedlock, (pthread_mutex_t *l, abstime t), (l, t), "mutex", try_mutex, 1, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_mutex_clocklock, (pthread_mutex_t *l, clockid_t c, abstime t), (l, c, t), "mutex", try_mutex, 1, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l), "rwlock", try_rd, 0, as_error, SCRY_SYNC_RDLOCK)
ACQUIRE_FN(pthread_rwlock_timedrdlock, (pthread_rwlock_t *l, abstime t), (l, t), "rwlock", try_rd, 1, as_error, SCRY_SYNC_RDLOCK)
ACQUIRE_FN(pthread_rwlock_clockrdlock, (pthread_rwlock_t *l, clockid_t c, abstime t), (l, c, t), "rwlock", try_rd, 1, as_error, SCRY_SYNC_RDLOCK)
ACQUIRE_FN(pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l), "rwlock", try_wr, 0, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_rwlock_timedwrlock, (pthread_rwlock_t *l, abstime t), (l, t), "rwlock", try_wr, 1, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_rwlock_clockwrlock, (pthread_rwlock_t *l, clockid_t c, abstime t), (l, c, t), "rwlock", try_wr, 1, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(pthread_spin_lock, (pthread_spinlock_t *l), (l), "spin lock", try_spin, 0, as_error, SCRY_SYNC_LOCK)
ACQUIRE_FN(sem_wait, (sem_t *l), (l), "semaphore", try_sem, 0, as_errno, SCRY_SYNC_SEM_WAIT)
ACQUIRE_FN(sem_timedwait, (sem_t *l, abstime t), (l, t), "semaphore", try_sem, 1, as_errno, SCRY_SYNC_SEM_WAIT)
ACQUIRE_FN(sem_clockwait, (sem_t *l, clockid_t c, abstime t), (l, c, t), "semaphore", try_sem, 1, as_errno, SCRY_SYNC_SEM_WAIT)
TRY_FN(pthread_mutex_trylock, pthread_mutex_t, SCRY_SYNC_LOCK)
TRY_FN(pthread_rwlock_tryrdlock, pthread_rwlock_t, SCRY_SYNC_RDLOCK)
TRY_FN(pthread_rwlock_trywrlock, pthread_rwlock_t, SCRY_SYNC_LOCK)
TRY_FN(pthread_spin_trylock, pthread_spinlock_t, SCRY_SYNC_LOCK)
TRY_FN(sem_trywait, sem_t, SCRY_SYNC_SEM_WAIT)
RELEASE_FN(pthread_mutex_unlock, pthread_mutex_t, SCRY_SYNC_UNLOCK)
RELEASE_FN(pthread_rwlock_unlock, pthread_rwlock_t, SCRY_SYNC_UNLOCK)
RELEASE_FN(pthread_spin_unlock, pthread_spinlock_t, SCRY_SYNC_UNLOCK)
RELEASE_FN(sem_post, sem_t, SCRY_SYNC_SEM_POST)

/* ---------------------------------------------------------------- condition variables */

/* Waits on c, m released meanwhile (its waiters woken) and acquired again after. */
static int cond_wait(struct sched_thread *me, pthread_cond_t *c, pthread_mutex_t *m, int timed)
{
	int r = REAL(pthread_mutex_unlock)(m);
	if (r != 0)
		return r;
	int to = block(me, c, "condition variable", timed, m);
	r = acquire(me, m, "mutex", try_mutex, 0);
	return r ? r : to ? ETIMEDOUT : 0;
}

WEAK int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct sched_thread *me = sched_me();
	SYNC(SCRY_SYNC_UNLOCK, m);
	int r = RT_LIKELY(!me) ? REAL(pthread_cond_wait)(c, m) : cond_wait(me, c, m, 0);
	if (r == 0 || r == ETIMEDOUT)
		SYNC(SCRY_SYNC_LOCK, m);
	return r;
}

WEAK int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	struct sched_thread *me = sched_me();
	SYNC(SCRY_SYNC_UNLOCK, m);
	int r = RT_LIKELY(!me) ? REAL(pthread_cond_timedwait)(c, m, t) : cond_wait(me, c, m, 1);
	if (r == 0 || r == ETIMEDOUT)
		SYNC(SCRY_SYNC_LOCK, m);
	return r;
}

WEAK int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t)
{
	struct sched_thread *me = sched_me();
	SYNC(SCRY_SYNC_UNLOCK, m);
	int r = RT_LIKELY(!me) ? REAL(pthread_cond_clockwait)(c, m, k, t) : cond_wait(me, c, m, 1);
	if (r == 0 || r == ETIMEDOUT)
		SYNC(SCRY_SYNC_LOCK, m);
	return r;
}

WEAK int pthread_cond_signal(pthread_cond_t *c)
{
	struct sched_thread *me = sched_me();
	int r = REAL(pthread_cond_signal)(c);
	if (me) {
		wake(c, 1);
		step(me, SP_SYNC, NULL);
	}
	return r;
}

WEAK int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct sched_thread *me = sched_me();
	int r = REAL(pthread_cond_broadcast)(c);
	if (me)
		released(me, c);
	return r;
}

/* ---------------------------------------------------------------- barriers */

/* The counts of the barriers pthread_barrier_init made (all of them, scheduler or not), which
 * the scheduler's barrier_wait needs: glibc's barrier keeps its count to itself. */
#define SCHED_BARRIERS 256
static struct {
	const void *b;
	unsigned count;
} g_barriers[SCHED_BARRIERS];

static unsigned barrier_count(const void *b, int set, unsigned count)
{
	unsigned r = 0;
	slock();
	int free_slot = -1;
	for (int i = 0; i < SCHED_BARRIERS; i++) {
		if (g_barriers[i].b == b) {
			r = g_barriers[i].count;
			if (set)
				g_barriers[i].b = count ? b : NULL, g_barriers[i].count = count;
			free_slot = -2;
			break;
		}
		if (!g_barriers[i].b && free_slot == -1)
			free_slot = i;
	}
	if (set && count && free_slot >= 0)
		g_barriers[free_slot].b = b, g_barriers[free_slot].count = count;
	sunlock();
	return r;
}

WEAK int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count)
{
	int r = REAL(pthread_barrier_init)(b, a, count);
	if (r == 0)
		barrier_count(b, 1, count);
	return r;
}

WEAK int pthread_barrier_destroy(pthread_barrier_t *b)
{
	barrier_count(b, 1, 0);
	return REAL(pthread_barrier_destroy)(b);
}

static int barrier_wait(struct sched_thread *me, pthread_barrier_t *b);

WEAK int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct sched_thread *me = sched_me();
	SYNC(SCRY_SYNC_BARRIER_ARRIVE, b);
	int r = RT_LIKELY(!me) ? REAL(pthread_barrier_wait)(b) : barrier_wait(me, b);
	if (r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD)
		SYNC(SCRY_SYNC_BARRIER_LEAVE, b);
	return r;
}

/* pthread_barrier_wait under the scheduler. */
static int barrier_wait(struct sched_thread *me, pthread_barrier_t *b)
{
	unsigned n = barrier_count(b, 0, 0);
	if (n == 0) {
		/* Not made by pthread_barrier_init here: the C library's, as a call not modelled. */
		sys_enter(me, 0);
		int r = REAL(pthread_barrier_wait)(b);
		sys_exit(me);
		return r;
	}
	step(me, SP_SYNC, NULL);
	slock();
	unsigned arrived = 1;
	for (uint32_t i = 0; i < g_nslots; i++)
		arrived += g_th[i].state == ST_BLOCKED && g_th[i].obj == b;
	sunlock();
	if (arrived < n) {
		block(me, b, "barrier", 0, NULL);
		return 0;
	}
	released(me, b);
	return PTHREAD_BARRIER_SERIAL_THREAD;
}

/* ---------------------------------------------------------------- threads */

struct start {
	void *(*fn)(void *);
	void *arg;
	struct sched_thread *t;
};

static void exit_cleanup(void *t)
{
	sched_exit(t);
}

/* A scheduled thread's start: it takes its id, waits for its first turn, runs, and leaves the
 * schedule when it returns, calls pthread_exit or is cancelled. */
static void *start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	rt_self.ttid = s.t->lid;
	rt_self.sched = s.t;
	rt_self.in_rt = 1;
	wait_turn(s.t);
	rt_self.in_rt = 0;
	void *ret;
	pthread_cleanup_push(exit_cleanup, s.t);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/* A thread created outside the scheduler while SYNC records are written: it publishes its
 * trace id (tid, a futex word) and waits for go, set once the parent recorded its creation. */
struct sync_start {
	void *(*fn)(void *);
	void *arg;
	_Atomic uint32_t tid, go;
};

static void *sync_start(void *p)
{
	struct sync_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;
	atomic_store(&s->tid, rt_trace_tid());
	raw_syscall(SYS_futex, (long)&s->tid, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	while (!atomic_load(&s->go))
		raw_syscall(SYS_futex, (long)&s->go, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
	free(s);
	return fn(arg);
}

/* pthread_create without the scheduler: in a traced run, SYNC records begin (if they had not)
 * and the creation is one, written before the child runs. */
static int create_unscheduled(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct sync_start *s;
	if (rt_self.in_rt || atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING ||
	    !(s = malloc(sizeof *s)))
		return REAL(pthread_create)(th, attr, fn, arg);
	s->fn = fn, s->arg = arg;
	atomic_store(&s->tid, 0);
	atomic_store(&s->go, 0);
	atomic_store(&g_sync_on, 1);
	int r = REAL(pthread_create)(th, attr, sync_start, s);
	if (r != 0) {
		free(s);
		return r;
	}
	uint32_t tid;
	while ((tid = atomic_load(&s->tid)) == 0)
		raw_syscall(SYS_futex, (long)&s->tid, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
	sync_note(*th, tid);
	sync_rec(SCRY_SYNC_CREATE, tid);
	/* s is the child's from here: it frees it once it saw go (a wake of a freed word wakes no
	 * one, or someone who checks their own word again). */
	atomic_store(&s->go, 1);
	raw_syscall(SYS_futex, (long)&s->go, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
	return r;
}

WEAK int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct sched_thread *me = g_cfg.on && !g_stopped && !rt_self.in_rt ? rt_self.sched : NULL;
	if (RT_LIKELY(!me))
		return create_unscheduled(th, attr, fn, arg);
	struct start *s = malloc(sizeof *s);
	if (!s)
		return EAGAIN;
	rt_self.in_rt = 1;
	slock();
	reclaim(me);
	struct sched_thread *t = new_thread();
	sunlock();
	if (!t) {
		static int warned;
		if (!warned++)
			rt_warn("more than %d threads alive: the scheduler runs the next ones unscheduled", SCHED_MAX);
		free(s);
		rt_self.in_rt = 0;
		return create_unscheduled(th, attr, fn, arg);
	}
	*s = (struct start){fn, arg, t};
	atomic_store(&g_sync_on, 1);
	int r = REAL(pthread_create)(th, attr, start, s);
	slock();
	if (r != 0) {
		t->state = ST_FREE;
		g_nthreads--;
		free(s);
	} else {
		t->handle = *th;
		atomic_store(&g_sched_on, 1);
	}
	sunlock();
	rt_self.in_rt = 0;
	if (r == 0) {
		/* The child waits for its turn, which this step may give it: it has not run yet. */
		sync_note(*th, t->lid);
		sync_rec(SCRY_SYNC_CREATE, t->lid);
		step(me, SP_SYNC, NULL);
	}
	return r;
}

static int join_scheduled(struct sched_thread *me, pthread_t th, void **ret);

WEAK int pthread_join(pthread_t th, void **ret)
{
	struct sched_thread *me = sched_me();
	int r = RT_LIKELY(!me) ? REAL(pthread_join)(th, ret) : join_scheduled(me, th, ret);
	if (r == 0 && sync_on()) {
		uint32_t tid = sync_take(th);
		if (tid)
			sync_rec(SCRY_SYNC_JOIN, tid);
	}
	return r;
}

/* pthread_join under the scheduler. */
static int join_scheduled(struct sched_thread *me, pthread_t th, void **ret)
{
	struct sched_thread *t = NULL;
	slock();
	for (uint32_t i = 0; i < g_nslots && !t; i++)
		if (g_th[i].state != ST_FREE && !g_th[i].joined && &g_th[i] != me &&
		    pthread_equal(g_th[i].handle, th))
			t = &g_th[i];
	sunlock();
	if (!t) {
		/* A thread the scheduler does not know: a call not modelled. */
		sys_enter(me, 0);
		int r = REAL(pthread_join)(th, ret);
		sys_exit(me);
		return r;
	}
	step(me, SP_SYNC, NULL);
	for (;;) {
		slock();
		int done = t->state == ST_DONE;
		sunlock();
		if (done)
			break;
		block(me, t, "join", 0, NULL);
	}
	int r = REAL(pthread_join)(th, ret);
	if (r == 0) {
		slock();
		t->joined = 1;
		sunlock();
	}
	return r;
}

WEAK void pthread_exit(void *ret)
{
	struct sched_thread *me = sched_me();
	if (me)
		sched_exit(me);
	REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

WEAK int sched_yield(void)
{
	struct sched_thread *me = sched_me();
	if (RT_LIKELY(!me))
		return (int)raw_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	step(me, SP_YIELD, NULL);
	return 0;
}

/* ---------------------------------------------------------------- futexes */

/* syscall(2) for futex waits and wakes of scheduled threads: modelled like the other waits (a
 * wait whose word no longer holds the value returns EAGAIN; a wake wakes the longest waiters,
 * and the kernel's for threads the scheduler does not know). Every other call, and every call
 * when the scheduler is off, is the raw system call. */
WEAK long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	struct sched_thread *me;
	if (RT_UNLIKELY(n == SYS_futex) && (me = sched_me()) != NULL) {
		int op = (int)a[1] & FUTEX_CMD_MASK;
		const int *word = (const int *)a[0];
		if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) {
			step(me, SP_SYNC, NULL);
			if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != (int)a[2]) {
				errno = EAGAIN;
				return -1;
			}
			if (block(me, word, "futex", a[3] != 0, NULL)) {
				errno = ETIMEDOUT;
				return -1;
			}
			return 0;
		}
		if (op == FUTEX_WAKE || op == FUTEX_WAKE_BITSET) {
			long k = raw_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
			int e = errno;
			int woken = wake(word, a[2] > 0 ? (int)a[2] : 1);
			step(me, SP_SYNC, NULL);
			errno = e;
			return k < 0 ? k : k + woken;
		}
	}
	return raw_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ---------------------------------------------------------------- calls not modelled */

/* Without the C library's definition (a program linked statically: dlsym finds none), the
 * system call itself. */
static unsigned raw_sleep(unsigned s)
{
	struct timespec t = {(time_t)s, 0};
	return raw_syscall(SYS_nanosleep, (long)&t, (long)&t, 0, 0, 0, 0) < 0 ? (unsigned)t.tv_sec : 0;
}
static int raw_usleep(useconds_t u)
{
	struct timespec t = {(time_t)(u / 1000000), (long)(u % 1000000) * 1000};
	return (int)raw_syscall(SYS_nanosleep, (long)&t, 0, 0, 0, 0, 0);
}
struct sigset_arg {
	const sigset_t *set;
	size_t len;
};
#define RAW(n, a, b, c, d, e, f) raw_syscall(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define SIGSET(s) (&(struct sigset_arg){s, _NSIG / 8})

#define SYS_FN(ret, name, sleeping, params, args, raw)                                  \
	WEAK ret name params                                                            \
	{                                                                               \
		__typeof__(&name) real = REAL_OPT(name);                                \
		struct sched_thread *me = sched_me();                                   \
		if (RT_LIKELY(!me))                                                     \
			return real ? real args : (ret)(raw);                           \
		sys_enter(me, sleeping);                                                \
		ret res_ = real ? real args : (ret)(raw);                               \
		sys_exit(me);                                                           \
		return res_;                                                            \
	}

SYS_FN(ssize_t, read, 0, (int fd, void *b, size_t n), (fd, b, n), RAW(SYS_read, fd, b, n, 0, 0, 0))
SYS_FN(ssize_t, readv, 0, (int fd, const struct iovec *v, int n), (fd, v, n), RAW(SYS_readv, fd, v, n, 0, 0, 0))
SYS_FN(ssize_t, recv, 0, (int fd, void *b, size_t n, int f), (fd, b, n, f), RAW(SYS_recvfrom, fd, b, n, f, 0, 0))
SYS_FN(ssize_t, recvfrom, 0, (int fd, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l), (fd, b, n, f, a, l),
       RAW(SYS_recvfrom, fd, b, n, f, a, l))
SYS_FN(ssize_t, recvmsg, 0, (int fd, struct msghdr *m, int f), (fd, m, f), RAW(SYS_recvmsg, fd, m, f, 0, 0, 0))
SYS_FN(int, accept, 0, (int fd, struct sockaddr *a, socklen_t *l), (fd, a, l), RAW(SYS_accept, fd, a, l, 0, 0, 0))
SYS_FN(int, accept4, 0, (int fd, struct sockaddr *a, socklen_t *l, int f), (fd, a, l, f), RAW(SYS_accept4, fd, a, l, f, 0, 0))
SYS_FN(int, connect, 0, (int fd, const struct sockaddr *a, socklen_t l), (fd, a, l), RAW(SYS_connect, fd, a, l, 0, 0, 0))
#ifndef SYS_poll
/* aarch64 has no poll or select system call: ppoll and pselect6 with the timeout converted. */
static long raw_poll(struct pollfd *p, nfds_t n, int ms)
{
	struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
	return raw_syscall(SYS_ppoll, (long)p, (long)n, ms < 0 ? 0 : (long)&t, 0, _NSIG / 8, 0);
}
static long raw_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	struct timespec t = {0, 0};
	if (tv)
		t = (struct timespec){tv->tv_sec, tv->tv_usec * 1000};
	return raw_syscall(SYS_pselect6, n, (long)r, (long)w, (long)e, tv ? (long)&t : 0, 0);
}
#define RAW_POLL(p, n, t) raw_poll(p, n, t)
#define RAW_SELECT(n, r, w, e, t) raw_select(n, r, w, e, t)
#else
#define RAW_POLL(p, n, t) RAW(SYS_poll, p, n, t, 0, 0, 0)
#define RAW_SELECT(n, r, w, e, t) RAW(SYS_select, n, r, w, e, t, 0)
#endif
SYS_FN(int, poll, 0, (struct pollfd *p, nfds_t n, int t), (p, n, t), RAW_POLL(p, n, t))
SYS_FN(int, ppoll, 0, (struct pollfd *p, nfds_t n, const struct timespec *t, const sigset_t *s), (p, n, t, s),
       RAW(SYS_ppoll, p, n, t, s, _NSIG / 8, 0))
SYS_FN(int, select, 0, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t), (n, r, w, e, t),
       RAW_SELECT(n, r, w, e, t))
SYS_FN(int, pselect, 0, (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t, const sigset_t *s),
       (n, r, w, e, t, s), RAW(SYS_pselect6, n, r, w, e, t, SIGSET(s)))
#ifndef SYS_epoll_wait
#define SYS_epoll_wait_RAW(fd, e, n, t) RAW(SYS_epoll_pwait, fd, e, n, t, 0, _NSIG / 8)
#else
#define SYS_epoll_wait_RAW(fd, e, n, t) RAW(SYS_epoll_wait, fd, e, n, t, 0, 0)
#endif
SYS_FN(int, epoll_wait, 0, (int fd, struct epoll_event *e, int n, int t), (fd, e, n, t), SYS_epoll_wait_RAW(fd, e, n, t))
SYS_FN(int, epoll_pwait, 0, (int fd, struct epoll_event *e, int n, int t, const sigset_t *s), (fd, e, n, t, s),
       RAW(SYS_epoll_pwait, fd, e, n, t, s, _NSIG / 8))
SYS_FN(pid_t, wait, 0, (int *s), (s), RAW(SYS_wait4, -1, s, 0, 0, 0, 0))
SYS_FN(pid_t, waitpid, 0, (pid_t p, int *s, int o), (p, s, o), RAW(SYS_wait4, p, s, o, 0, 0, 0))
SYS_FN(int, nanosleep, 1, (const struct timespec *a, struct timespec *b), (a, b), RAW(SYS_nanosleep, a, b, 0, 0, 0, 0))
SYS_FN(int, clock_nanosleep, 1, (clockid_t c, int f, const struct timespec *a, struct timespec *b), (c, f, a, b),
       RAW(SYS_clock_nanosleep, c, f, a, b, 0, 0) < 0 ? errno : 0)
SYS_FN(unsigned, sleep, 1, (unsigned s), (s), raw_sleep(s))
SYS_FN(int, usleep, 1, (useconds_t u), (u), raw_usleep(u))
