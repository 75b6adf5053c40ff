//go:build ignore

/*
 * writer.c: the scry trace writer (docs/trace-format.md). The byte layout of every record comes
 * from the encoders generated into scry_trace_format.h from the schema (trace/schema.go); this
 * file supplies their primitives (scry_need, scry_put_*) over its buffer.
 *
 * All records go through one global buffer (RT_BUFSZ bytes) under one lock, which gives the
 * trace its global order. The buffer is written out with write(2) when full, at exit (END how=1
 * with the exit status) and on fatal signals (END how=2 with the signal). Before each record that
 * belongs to a thread the writer emits THREAD when the writing thread changed and, for records
 * with a site, CONTEXT when the thread's call-stack node changed since its last record (new
 * stack nodes are defined by STACK records first) and FRAME when the thread's list of activation
 * serials changed since its last FRAME. Every `addr` field is an svarint delta from the running
 * "last address". A module's SITES record is followed by its DEPS record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt.h"

_Atomic int g_state = RT_UNINIT;
RT_TLS struct rt_thread rt_self = {.ctx_emitted = UINT32_MAX, .frame_depth = UINT32_MAX, .frame_low = UINT32_MAX};
int g_no_loads;
int g_no_flush;

/* libpmem_skips_flushes decides, as libpmem does at load time, whether it will flush: never
 * with PMEM_NO_FLUSH=1, always with PMEM_NO_FLUSH=0, else not when every NVDIMM region's
 * persistence domain is "cpu_cache" (pmem_has_auto_flush(3): eADR) and there is one. */
static int libpmem_skips_flushes(void)
{
	const char *nf = getenv("PMEM_NO_FLUSH");
	if (nf && strcmp(nf, "1") == 0)
		return 1;
	if (nf && strcmp(nf, "0") == 0)
		return 0;
	glob_t g;
	if (glob("/sys/bus/nd/devices/region*/persistence_domain", 0, NULL, &g) != 0)
		return 0;
	int all = g.gl_pathc > 0;
	for (size_t i = 0; all && i < g.gl_pathc; i++) {
		char buf[32] = {0};
		int fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		all = n > 0 && strncmp(buf, "cpu_cache", 9) == 0 && (buf[9] == '\n' || buf[9] == 0);
	}
	globfree(&g);
	return all;
}

#define RT_BUFSZ (1u << 20)

static int g_fd = -1;
static unsigned char g_buf[RT_BUFSZ];
static size_t g_pos;        /* bytes in g_buf */
static size_t g_commit;     /* end of the last complete record in g_buf */
static int g_partial;       /* part of the current record was already written out */
static uint64_t g_last_addr; /* running address for `addr` deltas */
static uint32_t g_last_tid;  /* thread of the last THREAD record (0 before any) */
static _Atomic int g_lock;
static _Atomic uint32_t g_lock_owner;
static int g_exit_status;

/* Operations (OP_BEGIN / OP_END). */
/* Workload operations: numbered in the order they begin (g_op_next, under the lock); each thread
 * has at most one open operation, which its next OP_BEGIN or an OP_END ends, so the operations
 * of different threads can be in flight at once (explore's concurrent-operation oracles). */
static RT_TLS int g_op_open;
static RT_TLS uint64_t g_op_cur;
static uint64_t g_op_next;
/* A hooked read of standard input returned (a line or its end): see stdin_unseen_locked. */
static int g_stdin_hooked;

/* Site ids. */
static uint32_t g_next_site = 1;

uint32_t rt_gettid_slow(void)
{
	rt_self.tid = (uint32_t)syscall(SYS_gettid);
	return rt_self.tid;
}

/* Under the scheduler, threads it knows get their id from it (sched.c); a thread it does not
 * know is named by its kernel id with bit 31 set, apart from the scheduler's small ids. */
uint32_t rt_trace_tid_slow(void)
{
	rt_self.ttid = rt_gettid() | (sched_configured() ? 0x80000000u : 0);
	return rt_self.ttid;
}

static void rec_warning(const char *text, size_t len);

/* rt_warn reports that the runtime degraded (what follows in the trace is incomplete): on
 * standard error, and as a WARNING record while tracing runs, so that every analysis of the
 * trace says its results are incomplete. Before the trace is open, or after tracing stopped
 * (write_all failing stops it before it warns), only standard error gets it. Callable with the
 * lock held. */
void rt_warn(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	const int prefix = snprintf(msg, sizeof msg, "scry: ");
	int n = prefix;
	va_start(ap, fmt);
	n += vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof msg - 2)
		n = (int)sizeof msg - 2;
	rec_warning(msg + prefix, (size_t)(n - prefix));
	msg[n++] = '\n';
	ssize_t w = write(2, msg, (size_t)n);
	(void)w;
}

/* ---------------------------------------------------------------- lock */

/* glibc's flag (2.32 and later; weak, so that an older C library leaves it NULL): true while the
 * process has never had a second thread. */
extern char __libc_single_threaded __attribute__((weak));

/* A test-and-set spin lock. While the process has a single thread, no other thread can contend,
 * and the lock is taken with a plain store: the atomic exchange, which waits for the store buffer
 * to drain (the bytes of the previous record), cost about a fifth of a traced run. The signal
 * handlers of the same thread see the plain store as they see the exchange (rt_lock_mine). */
void rt_lock(void)
{
	if (RT_LIKELY(&__libc_single_threaded != NULL && __libc_single_threaded)) {
		atomic_store_explicit(&g_lock, 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&g_lock_owner, rt_gettid(), memory_order_relaxed);
		return;
	}
	unsigned spins = 0;
	while (atomic_exchange_explicit(&g_lock, 1, memory_order_acquire)) {
		while (atomic_load_explicit(&g_lock, memory_order_relaxed)) {
			if (++spins < 200)
				RT_CPU_RELAX();
			else
				sched_yield();
		}
	}
	atomic_store_explicit(&g_lock_owner, rt_gettid(), memory_order_relaxed);
}

int rt_lock_mine(void)
{
	return atomic_load_explicit(&g_lock, memory_order_relaxed) &&
	       atomic_load_explicit(&g_lock_owner, memory_order_relaxed) == rt_gettid();
}

static volatile sig_atomic_t g_pending_sig; /* an asynchronous fatal signal came while we held the lock */
static void deliver_pending(void);

void rt_unlock(void)
{
	atomic_store_explicit(&g_lock_owner, 0, memory_order_relaxed);
	atomic_store_explicit(&g_lock, 0, memory_order_release);
	if (RT_UNLIKELY(g_pending_sig))
		deliver_pending();
}

/* ---------------------------------------------------------------- buffer */

/* Writes all of p[0..n) to the trace file; on error stops tracing. Async-signal-safe. */
static void write_all(const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n > 0 && g_fd >= 0) {
		ssize_t w = write(g_fd, c, n);
		if (w < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(g_fd);
			g_fd = -1;
			atomic_store(&g_state, RT_DONE);
			rt_warn("writing the trace failed (errno %d); tracing stops", e);
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

/* Writes the buffer out. Signals are blocked meanwhile so that a fatal-signal handler never
 * sees the buffer written but not yet emptied (it would write it twice). */
static void buf_flush(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (g_pos > g_commit)
		g_partial = 1;
	write_all(g_buf, g_pos);
	g_pos = g_commit = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The primitives of the record encoders of scry_trace_format.h. */

#define SCRY_TRACE_PUT /* scry_put_u8, _uv, _sv, _addr */
#include "scry_trace_format.h"

static inline void scry_need(size_t n)
{
	if (RT_UNLIKELY(g_pos + n > RT_BUFSZ))
		buf_flush();
}

/* Raw bytes of any length: fills the buffer, flushing as needed; big blocks go straight out. */
static void put_raw(const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n > 0) {
		size_t room = RT_BUFSZ - g_pos;
		if (room == 0) {
			buf_flush();
			if (n >= RT_BUFSZ) {
				g_partial = 1;
				write_all(c, n);
				return;
			}
			continue;
		}
		size_t k = n < room ? n : room;
		memcpy(g_buf + g_pos, c, k);
		g_pos += k;
		c += k;
		n -= k;
	}
}

static inline void scry_put_bytes(const void *p, uint64_t n)
{
	if (RT_LIKELY(n <= RT_BUFSZ - g_pos)) {
		/* The bytes of an ordinary load or store: a fixed-size copy when it is a word. */
		if (n == 8)
			memcpy(g_buf + g_pos, p, 8);
		else
			memcpy(g_buf + g_pos, p, n);
		g_pos += n;
		return;
	}
	put_raw(p, n);
}

static void scry_put_str(const char *s, size_t n)
{
	if (n > SCRY_MAX_STRING)
		n = SCRY_MAX_STRING;
	scry_need(10);
	scry_put_uv(n);
	put_raw(s, n);
}

#define SCRY_TRACE_ENCODERS
#include "scry_trace_format.h"

static inline void rec_done(void)
{
	g_commit = g_pos;
	g_partial = 0;
}

/* ---------------------------------------------------------------- call stacks */

/* Interning table (parent node, site) -> node id, open addressing, in mmap'ed memory. */
struct snode {
	uint32_t parent, site, id, pad;
};
static struct snode *g_nodes;
static size_t g_nodes_cap, g_nodes_len;
static uint32_t g_next_node = 1;

static int nodes_grow(void)
{
	size_t cap = g_nodes_cap ? g_nodes_cap * 2 : (1u << 14);
	struct snode *t = mmap(NULL, cap * sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < g_nodes_cap; i++) {
		struct snode *o = &g_nodes[i];
		if (!o->id)
			continue;
		size_t h = ((uint64_t)o->parent * 0x9E3779B97F4A7C15ull ^ o->site) & (cap - 1);
		while (t[h].id)
			h = (h + 1) & (cap - 1);
		t[h] = *o;
	}
	if (g_nodes)
		munmap(g_nodes, g_nodes_cap * sizeof *g_nodes);
	g_nodes = t;
	g_nodes_cap = cap;
	return 0;
}

/* Node id of stack `parent` + call at `site`; defines it with a STACK record when new. */
static uint32_t node_intern(uint32_t parent, uint32_t site)
{
	if (g_nodes_len * 2 >= g_nodes_cap && nodes_grow() < 0)
		return parent;
	size_t h = ((uint64_t)parent * 0x9E3779B97F4A7C15ull ^ site) & (g_nodes_cap - 1);
	while (g_nodes[h].id) {
		if (g_nodes[h].parent == parent && g_nodes[h].site == site)
			return g_nodes[h].id;
		h = (h + 1) & (g_nodes_cap - 1);
	}
	uint32_t id = g_next_node++;
	g_nodes[h] = (struct snode){parent, site, id, 0};
	g_nodes_len++;
	scry_enc_stack(id, parent, site);
	rec_done();
	return id;
}

uint32_t ctx_current_locked(struct rt_thread *t)
{
	uint32_t d = t->depth < RT_MAX_DEPTH ? t->depth : RT_MAX_DEPTH;
	for (uint32_t i = t->valid; i < d; i++)
		t->nodes[i] = node_intern(i ? t->nodes[i - 1] : 0, t->frames[i]);
	if (t->valid < d)
		t->valid = d;
	return d ? t->nodes[d - 1] : 0;
}

/* FRAME: the serials of the thread's d active calls, outermost first (out of line: it is rare
 * next to the records it precedes, and prologue() must stay small enough to be inlined). */
__attribute__((noinline)) static void frame_emit(struct rt_thread *t, uint32_t d)
{
	scry_enc_frame(d);
	for (uint32_t i = 0; i < d; i++)
		scry_enc_frame_serial(t->serials[i]);
	rec_done();
	t->frame_depth = d;
	t->frame_low = UINT32_MAX;
}

/* THREAD when the writer changed; CONTEXT when with_ctx and the stack node changed; FRAME when
 * with_ctx and the activations changed. The list named by the thread's last FRAME is still the
 * current one exactly when the depth is the same and no call since gave a new serial at a lower
 * depth (serials are never reused). */
static inline __attribute__((always_inline)) void prologue(int with_ctx)
{
	struct rt_thread *t = &rt_self;
	uint32_t tid = rt_trace_tid();
	if (RT_UNLIKELY(g_last_tid != tid)) {
		scry_enc_thread(tid);
		rec_done();
		g_last_tid = tid;
	}
	if (with_ctx) {
		uint32_t d = t->depth < RT_MAX_DEPTH ? t->depth : RT_MAX_DEPTH;
		uint32_t node = RT_LIKELY(t->valid >= d) ? (d ? t->nodes[d - 1] : 0) : ctx_current_locked(t);
		if (RT_UNLIKELY(node != t->ctx_emitted)) {
			scry_enc_context(node);
			rec_done();
			t->ctx_emitted = node;
		}
		if (RT_UNLIKELY(d != t->frame_depth || t->frame_low < d))
			frame_emit(t, d);
	}
}

/* ---------------------------------------------------------------- records */

void rec_mem_locked(int kind, uint32_t site, uintptr_t addr, const void *data, uint64_t size)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	prologue(1);
	/* A window of the scheduler counts its thread's STORE and NT_STORE records (sched.c). */
	int count = RT_UNLIKELY(g_sched_win_store != 0) && kind != SCRY_EV_LOAD;
	if (RT_LIKELY(size <= 64)) {
		/* Hot path: an ordinary load or store. */
		scry_enc_store((uint8_t)kind, site, addr, size, data);
		rec_done();
		if (count)
			sched_count_store();
		return;
	}
	do {
		uint64_t n = size < SCRY_MAX_PAYLOAD ? size : SCRY_MAX_PAYLOAD;
		scry_enc_store((uint8_t)kind, site, addr, n, data);
		rec_done();
		if (count)
			sched_count_store();
		addr += n;
		data = (const unsigned char *)data + n;
		size -= n;
	} while (size > 0);
}

void rec_ext_locked(uint32_t site, uintptr_t addr, const void *data, uint64_t size, uint8_t flags)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	prologue(1);
	while (size > 0) {
		uint64_t n = size < SCRY_MAX_PAYLOAD ? size : SCRY_MAX_PAYLOAD;
		scry_enc_external_write(site, addr, n, data, flags);
		rec_done();
		addr += n;
		data = (const unsigned char *)data + n;
		size -= n;
	}
}

void rec_mem(int kind, uint32_t site, uintptr_t addr, const void *data, uint64_t size)
{
	rt_lock();
	rec_mem_locked(kind, site, addr, data, size);
	rt_unlock();
}

/* Starts a small record with a site: lock, THREAD/CONTEXT. Returns 0 if the runtime stopped
 * (then the lock is not held). */
static int small_begin(int with_ctx)
{
	rt_lock();
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING) {
		rt_unlock();
		return 0;
	}
	prologue(with_ctx);
	return 1;
}

static void small_end(void)
{
	rec_done();
	rt_unlock();
}

void rec_flush(uint32_t site, uintptr_t addr, uint8_t kind)
{
	if (!small_begin(1))
		return;
	scry_enc_flush(site, kind, addr);
	small_end();
}

void rec_fence(uint32_t site, uint8_t kind)
{
	if (!small_begin(1))
		return;
	scry_enc_fence(site, kind);
	small_end();
}

void rec_region_map_locked(uint32_t id, uintptr_t base, uint64_t len, uint64_t off, const char *path,
			   uint32_t site, uint8_t flags)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	prologue(1);
	scry_enc_region_map(id, base, len, off, path ? path : "", path ? strlen(path) : 0, site, flags);
	rec_done();
}

void rec_region_unmap_locked(uint32_t id, uint32_t site)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	prologue(1);
	scry_enc_region_unmap(id, site);
	rec_done();
}

void rec_site_only(int kind, uint32_t site)
{
	if (!small_begin(1))
		return;
	scry_enc_tx_begin((uint8_t)kind, site);
	small_end();
}

void rec_tx_abort_locked(uint32_t site, uint64_t errnum)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	prologue(1);
	scry_enc_tx_abort(site, errnum);
	rec_done();
}

void rec_tx_abort(uint32_t site, uint64_t errnum)
{
	rt_lock();
	rec_tx_abort_locked(site, errnum);
	rt_unlock();
}

void rec_addr_size_flags(int kind, uint32_t site, uintptr_t addr, uint64_t size, uint8_t flags)
{
	if (!small_begin(1))
		return;
	scry_enc_tx_add((uint8_t)kind, site, addr, size, flags);
	small_end();
}

void rec_addr_size(int kind, uint32_t site, uintptr_t addr, uint64_t size)
{
	if (!small_begin(1))
		return;
	scry_enc_set_clean((uint8_t)kind, site, addr, size);
	small_end();
}

void rec_output(uint32_t site, int fd, const void *data, size_t len)
{
	if (!len || !small_begin(1))
		return;
	for (;;) {
		size_t n = len < SCRY_MAX_PAYLOAD ? len : SCRY_MAX_PAYLOAD;
		scry_enc_output(site, (uint64_t)fd, n, data);
		data = (const unsigned char *)data + n;
		if ((len -= n) == 0)
			break;
		rec_done();
	}
	small_end();
}

void rec_free(uint32_t site, uintptr_t addr, uint8_t flags)
{
	if (!small_begin(1))
		return;
	scry_enc_free(site, addr, flags);
	small_end();
}

static void op_end_locked(void)
{
	if (!g_op_open)
		return;
	prologue(0);
	scry_enc_op_end(g_op_cur);
	rec_done();
	g_op_open = 0;
}

void rec_op_begin(const char *text, size_t len)
{
	int begun = 0;
	rt_lock();
	if (atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING) {
		op_end_locked();
		prologue(0);
		g_op_cur = g_op_next++;
		scry_enc_op_begin(g_op_cur, text ? text : "", text ? len : 0);
		rec_done();
		g_op_open = 1;
		begun = 1;
	}
	rt_unlock();
	if (begun)
		sched_op(1, g_op_cur); /* the ops policy (sched.c) */
}

/* WARNING: the runtime degraded (rt_warn). */
static void rec_warning(const char *text, size_t len)
{
	if (atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING)
		return;
	int mine = rt_lock_mine();
	if (!mine)
		rt_lock();
	if (atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING) {
		prologue(0);
		scry_enc_warning(text, len);
		rec_done();
	}
	if (!mine)
		rt_unlock();
}

/* ------------------------------------------------ operations marked by calls (--op-begin) */

#define RT_MAX_MARKERS 256
#define RT_OP_TEXT_MAX 4096
_Atomic int g_op_markers;
static uint32_t g_marker_site[RT_MAX_MARKERS]; /* call sites of the marker functions */
static uint8_t g_marker_end[RT_MAX_MARKERS];   /* 1: of the end function */
static const char *g_mark_names[2];           /* $SCRY_OP_BEGIN, $SCRY_OP_END; NULL unset */
static int g_mark_init;
/* The lines read from standard input and not yet given to an operation, oldest first: marker
 * operation k gets the k-th line read (a driver may read its whole workload first). */
static char **g_lines;
static size_t *g_line_len;
static size_t g_lines_head, g_lines_n, g_lines_cap;

/* Reads the marker names once; lock held. */
static void markers_init_locked(void)
{
	if (g_mark_init)
		return;
	g_mark_init = 1;
	const char *b = getenv("SCRY_OP_BEGIN"), *e = getenv("SCRY_OP_END");
	g_mark_names[0] = b && *b ? b : NULL;
	g_mark_names[1] = e && *e ? e : NULL;
}

/* The module's call sites of the marker functions (ids base..); lock held. A marker function
 * the compiler inlined has no call left to see: warned about, with where. */
static void markers_scan_locked(const struct scry_site *sites, uint32_t n, uint32_t base)
{
	markers_init_locked();
	if (!g_mark_names[0] && !g_mark_names[1])
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct scry_site *s = &sites[i];
		if (!s->callee)
			continue;
		for (int end = 0; end < 2; end++) {
			if (!g_mark_names[end] || strcmp(s->callee, g_mark_names[end]) != 0)
				continue;
			if ((s->kind & SCRY_SITE_KIND_MASK) == SCRY_SITE_INLINED) {
				static int warned[2];
				if (!warned[end]++)
					rt_warn("operation marker %s is inlined at %s:%u: those calls mark no operation (declare it __attribute__((noinline)))",
					s->callee, s->file ? s->file : "?", s->line);
				continue;
			}
			if ((s->kind & SCRY_SITE_KIND_MASK) != SCRY_SITE_CALL && (s->kind & SCRY_SITE_KIND_MASK) != SCRY_SITE_LIBCALL)
				continue;
			int k = atomic_load_explicit(&g_op_markers, memory_order_relaxed);
			if (k == RT_MAX_MARKERS) {
				static int warned;
				if (!warned++)
					rt_warn("more than %d calls of the operation markers: the rest mark no operation", RT_MAX_MARKERS);
				continue;
			}
			g_marker_site[k] = base + i;
			g_marker_end[k] = (uint8_t)end;
			atomic_store_explicit(&g_op_markers, k + 1, memory_order_release);
		}
	}
}

void op_marker_slow(uint32_t site)
{
	int n = atomic_load_explicit(&g_op_markers, memory_order_acquire);
	for (int i = 0; i < n; i++) {
		if (g_marker_site[i] != site)
			continue;
		if (g_marker_end[i]) {
			rec_op_end();
			return;
		}
		rt_lock();
		char *line = NULL;
		size_t len = 0;
		if (g_lines_head < g_lines_n) {
			line = g_lines[g_lines_head];
			len = g_line_len[g_lines_head];
			g_lines[g_lines_head++] = NULL;
		}
		rt_unlock();
		if (line) {
			rec_op_begin(line, len);
			free(line);
			return;
		}
		const char *text = g_mark_names[0];
		len = strlen(text);
		if (len > RT_OP_TEXT_MAX)
			len = RT_OP_TEXT_MAX;
		rec_op_begin(text, len);
		return;
	}
}

void rec_op_line(const char *line, size_t len)
{
	rt_lock();
	g_stdin_hooked = 1;
	markers_init_locked();
	int marked = g_mark_names[0] != NULL;
	if (marked && line) {
		if (len > RT_OP_TEXT_MAX)
			len = RT_OP_TEXT_MAX;
		if (g_lines_n == g_lines_cap) {
			size_t cap = g_lines_cap ? 2 * g_lines_cap : 64;
			char **l = realloc(g_lines, cap * sizeof *l);
			size_t *n = l ? realloc(g_line_len, cap * sizeof *n) : NULL;
			if (l)
				g_lines = l;
			if (n)
				g_line_len = n;
			if (l && n)
				g_lines_cap = cap;
		}
		char *copy = g_lines_n < g_lines_cap ? malloc(len ? len : 1) : NULL;
		if (copy) {
			memcpy(copy, line, len);
			g_lines[g_lines_n] = copy;
			g_line_len[g_lines_n++] = len;
		} else {
			static int warned;
			if (!warned++)
				rt_warn("out of memory keeping the lines read for the operations' texts: later operations are named by their marker");
		}
	}
	rt_unlock();
	if (marked)
		return;
	if (line)
		rec_op_begin(line, len);
	else
		rec_op_end(); /* end of input */
}

/* ------------------------------------------------ operations marked by requests (client mode) */

/* A server driven by a client (scry check --client sets $SCRY_OP_SOCKET=1) reads its workload
 * from a socket, not from standard input: each request the client sends, and the answer the
 * server writes back, is one operation. The runtime cannot parse the protocol, so it marks the
 * boundary by alternation: the first bytes read from a socket after the server last wrote to one
 * (or the first bytes of the run) begin an operation, named by their first line; a request that
 * arrives in several reads, with no answer between them, stays one operation. A read that
 * returns end of file (the client closed its connection) ends the operation in flight, so that
 * what the server does when it is stopped belongs to none. One client connection sending its
 * requests one at a time, each after the previous answer, gives operation k = workload line k
 * (docs/servers.md). */
static int g_sock_mode = -1;              /* $SCRY_OP_SOCKET read once: 1 on, 0 off */
static _Atomic int g_sock_answered = 1;   /* the server wrote to a socket since the last request */
static _Atomic int g_sock_requests;       /* requests seen, for the end's warning */

static int sock_mode(void)
{
	int m = __atomic_load_n(&g_sock_mode, __ATOMIC_RELAXED);
	if (m < 0) {
		const char *v = getenv("SCRY_OP_SOCKET");
		m = v && *v && strcmp(v, "0") != 0;
		__atomic_store_n(&g_sock_mode, m, __ATOMIC_RELAXED);
	}
	return m;
}

static int is_socket(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

void rec_sock_read(int fd, const void *data, ssize_t n)
{
	if (n < 0 || !sock_mode() || atomic_load_explicit(&g_state, memory_order_relaxed) != RT_RUNNING || !is_socket(fd))
		return;
	if (n == 0) {
		atomic_store_explicit(&g_sock_answered, 1, memory_order_relaxed);
		rec_op_end();
		return;
	}
	if (!atomic_exchange_explicit(&g_sock_answered, 0, memory_order_relaxed))
		return; /* more of the request in flight */
	atomic_fetch_add_explicit(&g_sock_requests, 1, memory_order_relaxed);
	const char *c = data;
	size_t len = 0;
	while (len < (size_t)n && len < RT_OP_TEXT_MAX && c[len] != '\n' && c[len] != '\r')
		len++;
	rec_op_begin(c, len);
}

void rec_sock_write(int fd, ssize_t n)
{
	if (n <= 0 || !sock_mode() || atomic_load_explicit(&g_sock_answered, memory_order_relaxed) || !is_socket(fd))
		return;
	atomic_store_explicit(&g_sock_answered, 1, memory_order_relaxed);
}

/* Warns, in client mode, when no request was seen: the server read its sockets where scry sees
 * no call (inside a library: libevent's buffers, an uninstrumented module) or through a call it
 * does not hook (recvfrom, recvmsg, readv), so the workload's requests are no operations. */
static void sock_unseen_locked(void)
{
	if (!sock_mode() || g_op_next > 0 || atomic_load_explicit(&g_sock_requests, memory_order_relaxed) > 0)
		return;
	rt_warn("client mode: the server read no request from a socket through a call scry hooks (read or recv in code built with scry cc): no operation was recorded. Requests read inside a library or through recvfrom, recvmsg or readv are not seen; mark operations with --op-begin/--op-end instead");
}

void rec_op_end(void)
{
	rt_lock();
	if (atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING)
		op_end_locked();
	rt_unlock();
	sched_op(0, 0);
}

void rec_sync(uint8_t op, uint64_t object, uint32_t site)
{
	if (!small_begin(0))
		return;
	scry_enc_sync(op, object, site);
	small_end();
}

/* A fact the DEPS record can carry: both ends in the module's table, a known kind. */
static int dep_ok(const struct scry_dep *d, uint32_t n)
{
	return d->from < n && d->to < n && d->kind >= SCRY_DEP_CONTROL && d->kind <= SCRY_DEP_ADDRESS;
}

/* SITES: assigns ids g_next_site.. to the module's sites. DEPS: the module's dependence facts,
 * with its local indices turned into those ids. */
uint32_t rec_sites(const struct scry_site *sites, uint32_t n, const struct scry_dep *deps, uint32_t ndeps)
{
	rt_lock();
	uint32_t base = g_next_site;
	g_next_site += n;
	if (atomic_load_explicit(&g_state, memory_order_relaxed) == RT_RUNNING) {
		scry_enc_sites(n);
		for (uint32_t i = 0; i < n; i++) {
			const struct scry_site *s = &sites[i];
			/* inlined-at: a local index + 1; an index outside the table or naming the site
			 * itself is dropped rather than written as a bad id. */
			uint32_t at = s->inlined_at;
			/* kind: the SiteKind in the low byte, the SiteAccess above (scry_abi.h); an
			 * access this runtime does not know is written as unknown. */
			uint32_t access = s->kind >> SCRY_SITE_ACCESS_SHIFT;
			if (access > SCRY_ACCESS_SEQ_CST)
				access = SCRY_ACCESS_UNKNOWN;
			scry_enc_sites_site(base + i, (uint8_t)(s->kind & SCRY_SITE_KIND_MASK),
					    s->function ? s->function : "", s->function ? strlen(s->function) : 0,
					    s->file ? s->file : "", s->file ? strlen(s->file) : 0, s->line, s->column,
					    s->callee ? s->callee : "", s->callee ? strlen(s->callee) : 0,
					    at != 0 && at <= n && at - 1 != i ? (uint64_t)base + at - 1 : 0, (uint8_t)access);
		}
		rec_done();
		markers_scan_locked(sites, n, base);
		uint32_t valid = 0;
		for (uint32_t i = 0; deps && i < ndeps; i++)
			valid += dep_ok(&deps[i], n);
		if (valid > 0) {
			scry_enc_deps(valid);
			for (uint32_t i = 0; i < ndeps; i++) {
				if (!dep_ok(&deps[i], n))
					continue;
				scry_enc_deps_fact((uint64_t)base + deps[i].from, (uint8_t)deps[i].kind,
						   (uint64_t)base + deps[i].to);
			}
			rec_done();
		}
	}
	rt_unlock();
	return base;
}

/* Warns when the program consumed standard input (its offset moved: a workload file, as `scry
 * check --workload` gives it) with no operation recorded and no hooked read of it: the reads were
 * made where scry sees no call (std::cin and std::getline inside libstdc++, fread, scanf), so the
 * workload's lines are no operations. A pipe has no offset: nothing is said. */
static void stdin_unseen_locked(void)
{
	if (g_stdin_hooked || g_op_next > 0)
		return;
	off_t off = lseek(0, 0, SEEK_CUR);
	if (off > 0)
		rt_warn("the program read %lld bytes of standard input, but through no call scry hooks (fgets, getline, getdelim, read in instrumented code): no operation was recorded. Reads inside libraries (std::cin, std::getline of a stream, fread, scanf) are not seen; read the workload with fgets or getline, or mark operations with --op-begin/--op-end",
			(long long)off);
}

/* SCHEDULE: the controlled schedule (sched.c), after the header (end 0) and, with the run's
 * counts, before END. Belongs to no thread: no prologue. Async-signal-safe. */
static void schedule_rec(int end)
{
	struct sched_info si;
	if (!sched_info(&si))
		return;
	uint8_t flags = (end ? SCRY_SCHED_END : 0) | (si.deadlock ? SCRY_SCHED_DEADLOCK : 0);
	scry_enc_schedule(si.spec, strlen(si.spec), si.policy, si.seed, si.depth, si.steps, flags,
			  si.points, si.switches, si.threads, si.timed);
	rec_done();
}

/* END record followed by the final write; lock held. */
static void end_locked(uint8_t how, int64_t status)
{
	stdin_unseen_locked();
	sock_unseen_locked();
	markers_init_locked();
	for (int end = 0; end < 2; end++) {
		int seen = 0;
		for (int i = 0; i < atomic_load_explicit(&g_op_markers, memory_order_relaxed); i++)
			seen |= g_marker_end[i] == end;
		if (g_mark_names[end] && !seen)
			rt_warn("operation marker %s: the instrumented code has no call of it (never called there, or inlined: declare it __attribute__((noinline))), so it marked no operation",
				g_mark_names[end]);
	}
	schedule_rec(1);
	scry_enc_end(how, status);
	rec_done();
	buf_flush();
	if (g_fd >= 0) {
		close(g_fd);
		g_fd = -1;
	}
}

/* ---------------------------------------------------------------- exit and signals */

static void on_exit_handler(int status, void *arg)
{
	(void)arg;
	g_exit_status = status & 0xff;
}

/* Runs after the program's destructors (lowest user priority runs last at exit). */
__attribute__((destructor(101))) static void rt_fini(void)
{
	if (atomic_load(&g_state) != RT_RUNNING)
		return;
	rt_self.in_rt = 1;
	sched_stop();
	pm_final_check();
	rt_lock();
	if (atomic_load(&g_state) == RT_RUNNING) {
		/* Close the operation still open: the workload ran to its end. */
		op_end_locked();
		end_locked(SCRY_END_EXIT, g_exit_status);
		atomic_store(&g_state, RT_DONE);
	}
	rt_unlock();
}

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM, SIGINT};
/* The action each signal had before the runtime's handler, or the program set since (sigaction
 * below): what fatal_handler chains to. g_sig_owned: the runtime's handler is installed. */
static struct sigaction g_prev[NSIG];
static _Atomic int g_sig_owned[NSIG];
static void runtime_action(struct sigaction *sa, int onstack);
static void default_action(int sig);
/* The C library's sigaction (glibc exports it under this name too), which the runtime's own
 * definition of sigaction below calls. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Writes what is complete and END how=2. Async-signal-safe: no malloc, no stdio. */
static void final_signal(int sig)
{
	int expected = RT_RUNNING;
	if (!atomic_compare_exchange_strong(&g_state, &expected, RT_DONE))
		return;
	uint32_t me = rt_gettid();
	int locked = 0;
	if (atomic_load(&g_lock_owner) != me || !atomic_load(&g_lock)) {
		/* Another thread may hold the lock: wait a little, then go on regardless. */
		for (int i = 0; i < 2000000 && atomic_exchange(&g_lock, 1); i++)
			RT_CPU_RELAX();
		locked = 1;
	}
	if (!g_partial) { /* else a record was cut in the middle: leave the trace truncated */
		g_pos = g_commit;
		/* Bytes stored but not yet recorded (the signal came between a store and its
		 * callback, or from uninstrumented code): safety net with site 0. Only when the
		 * signal did not interrupt the runtime itself, whose state may be inconsistent. */
		if (locked) {
			atomic_store(&g_state, RT_RUNNING);
			pm_check_all_locked();
			atomic_store(&g_state, RT_DONE);
		}
		/* A server in client mode is stopped with SIGTERM once its client ended (scry check
		 * --client): that is how it ends, idle, not a death in the middle of its work, so the
		 * end-of-program checks run as at an exit. */
		if (sig == SIGTERM && sock_mode())
			end_locked(SCRY_END_EXIT, 0);
		else
			end_locked(SCRY_END_SIGNAL, sig);
	}
	if (locked)
		atomic_store(&g_lock, 0);
}

#if defined(__aarch64__)
/*
 * DC CVAP and DC CVADP (Armv8.2 DCPoP, Armv8.5 DCPoDP) raise SIGILL where the CPU lacks them, and
 * under qemu-user, which implements them in system emulation only (QEMU 7.2): an emulator's
 * memory persists nothing, so the runtime steps over the instruction, as a CPU would complete it.
 * The pass has already recorded it. 1 when the instruction at the fault was one of them.
 */
static int emulate_dc(void *ucv)
{
	ucontext_t *uc = ucv;
	if (!uc)
		return 0;
	uint32_t insn = *(const uint32_t *)(uintptr_t)uc->uc_mcontext.pc;
	uint32_t op = insn & ~(uint32_t)0x1f; /* without Xt */
	if (op != 0xd50b7c20 /* DC CVAP */ && op != 0xd50b7d20 /* DC CVADP */)
		return 0;
	uc->uc_mcontext.pc += 4;
	return 1;
}
#else
static int emulate_dc(void *uc)
{
	(void)uc;
	return 0;
}
#endif

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (sig == SIGILL && emulate_dc(uc)) {
		errno = saved;
		return;
	}
	if ((sig == SIGSEGV || sig == SIGTRAP) && lazy_fault(sig, si, uc)) {
		errno = saved;
		return;
	}
	if (sig == SIGSEGV && si && si->si_code == SEGV_ACCERR && pm_handle_fault(si->si_addr)) {
		errno = saved;
		return;
	}
	if ((sig == SIGTERM || sig == SIGINT) && g_prev[sig].sa_handler == SIG_DFL &&
	    atomic_load(&g_lock) && atomic_load(&g_lock_owner) == rt_gettid()) {
		/* The runtime was interrupted mid-record: finish it, then die (rt_unlock). */
		g_pending_sig = sig;
		errno = saved;
		return;
	}
	struct sigaction p = g_prev[sig];
	if (p.sa_flags & SA_RESETHAND && p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
		/* A one-shot handler of the program: the next signal gets the default action. */
		g_prev[sig].sa_handler = SIG_DFL;
		g_prev[sig].sa_flags = 0;
	}
	if ((p.sa_flags & SA_SIGINFO) && p.sa_sigaction) {
		p.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(p.sa_flags & SA_SIGINFO) && p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
		p.sa_handler(sig);
		return;
	}
	if (p.sa_handler == SIG_IGN && sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL &&
	    sig != SIGABRT)
		return;
	final_signal(sig);
	default_action(sig);
	/* Synchronous faults re-fault on return; the others are delivered when we return. */
	raise(sig);
}

static void deliver_pending(void)
{
	int sig = g_pending_sig;
	g_pending_sig = 0;
	final_signal(sig);
	default_action(sig);
	raise(sig);
}

void rt_take_signal(int sig)
{
	if (atomic_load(&g_sig_owned[sig]))
		return;
	struct sigaction sa;
	runtime_action(&sa, 0);
	if (__sigaction(sig, &sa, &g_prev[sig]) < 0)
		rt_warn("cannot install the handler of signal %d", sig);
	else
		atomic_store(&g_sig_owned[sig], 1);
}

static void install_signals(void)
{
	for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
		rt_take_signal(fatal_sigs[i]);
}

/* ------------------------------------------------ the program's own handlers */

/*
 * The runtime's handler must stay first for the signals above: SIGSEGV carries the faults of
 * write-protected PM (region.c), the others write the trace's end. A program that installs a
 * handler of its own (libpmemobj-cpp's tests do, test_register_sighandlers) would replace it,
 * and its first write into a protected page would then reach the program's handler, or kill
 * it. So the runtime defines sigaction(2), signal(2) and sysv_signal(3) (__sysv_signal, which
 * <signal.h> names signal in strict ISO C modes), as hooks_pmem.c defines libpmem's functions:
 * linked into the executable, these definitions take the program's calls, and those of the
 * libraries it loads. For a signal the runtime handles, the program's action is kept as the
 * runtime's previous one (g_prev), which fatal_handler chains to for every signal that is not a
 * fault of protected PM (its handler, SA_SIGINFO or not; SA_RESETHAND honoured; SIG_DFL and
 * SIG_IGN as before), and the old action the program gets back is its own, never the runtime's.
 * The program's sa_mask is not applied while its handler runs (the runtime's handler runs with
 * none); its SA_ONSTACK is, by the runtime's handler. Other signals, and every call before the
 * runtime installed its handlers, go to the C library (__sigaction) unchanged. They are weak: a
 * program defining one of these names keeps its own. Not covered: sigset(3), bsd_signal(3),
 * ssignal(3), and the rt_sigaction system call made directly.
 */
static void runtime_action(struct sigaction *sa, int onstack)
{
	memset(sa, 0, sizeof *sa);
	sa->sa_sigaction = fatal_handler;
	sa->sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | (onstack ? SA_ONSTACK : 0);
	sigemptyset(&sa->sa_mask);
}

/* The default action of sig again, for the runtime's own use (not a program's action). */
static void default_action(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	atomic_store(&g_sig_owned[sig], 0);
	__sigaction(sig, &sa, NULL);
}

__attribute__((weak)) int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || !atomic_load(&g_sig_owned[sig]))
		return __sigaction(sig, act, old);
	struct sigaction prev = g_prev[sig];
	if (act) {
		struct sigaction sa;
		runtime_action(&sa, (act->sa_flags & SA_ONSTACK) != 0);
		if (__sigaction(sig, &sa, NULL) < 0)
			return -1;
		g_prev[sig] = *act;
	}
	if (old)
		*old = prev;
	return 0;
}

static sighandler_t set_handler(int sig, sighandler_t handler, int flags, int mask_sig)
{
	struct sigaction sa, old;
	if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (mask_sig)
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal(2): BSD semantics (the handler stays, the signal is blocked while it runs,
 * interrupted system calls restart). */
__attribute__((weak)) sighandler_t signal(int sig, sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESTART, 1);
}

/* System V semantics: a one-shot handler, the signal not blocked while it runs. */
__attribute__((weak)) sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, 0);
}

__attribute__((weak)) sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return __sysv_signal(sig, handler);
}

static void atfork_child(void)
{
	/* The child must not write into the parent's trace. */
	atomic_store(&g_state, RT_DONE);
	g_pos = g_commit = 0;
	atomic_store(&g_lock, 0);
	if (g_fd >= 0) {
		close(g_fd);
		g_fd = -1;
	}
}

/* ---------------------------------------------------------------- init */

static _Atomic int g_init; /* 0 not started, 1 running, 2 done */

int rt_init(void)
{
	int st = atomic_load(&g_init);
	if (RT_LIKELY(st == 2))
		return atomic_load(&g_state) == RT_RUNNING;
	int expected = 0;
	if (!atomic_compare_exchange_strong(&g_init, &expected, 1)) {
		if (expected == 1 && !rt_self.in_rt) {
			while (atomic_load(&g_init) != 2)
				sched_yield();
		}
		return atomic_load(&g_state) == RT_RUNNING;
	}
	rt_self.in_rt = 1;
	const char *path = getenv("SCRY_TRACE");
	if (!path || !*path)
		path = "scry.trace";
	const char *nl = getenv("SCRY_NO_LOADS");
	g_no_loads = nl && *nl && strcmp(nl, "0") != 0;
	/* SCRY_INERT=1 (crash-image re-executions): the runtime stays out of the way. No trace, no
	 * PM region is registered, so the pass's inline address test keeps loads and stores off the
	 * callbacks, and every hook returns at once: the program runs close to its native speed. */
	const char *inert = getenv("SCRY_INERT");
	if (inert && *inert && strcmp(inert, "0") != 0) {
#if defined(__aarch64__)
		rt_take_signal(SIGILL); /* emulate_dc */
#endif
		atomic_store(&g_state, RT_DONE);
		rt_self.in_rt = 0;
		atomic_store(&g_init, 2);
		return 0;
	}
	sched_parse(); /* exits 125 on a bad SCRY_SCHED, before the trace exists */
	g_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (g_fd < 0) {
		rt_warn("cannot create the trace %s (errno %d); not tracing", path, errno);
		atomic_store(&g_state, RT_DONE);
	} else {
		g_no_flush = libpmem_skips_flushes();
		uint16_t flags = g_no_flush ? SCRY_TRACE_NO_FLUSH : 0;
#if defined(__aarch64__)
		flags |= SCRY_TRACE_AARCH64;
#endif
		scry_trace_header(g_buf, SCRY_TRACE_VERSION, flags, RT_LINE);
		g_pos = g_commit = SCRY_TRACE_HEADER_SIZE;
		uint32_t lid = sched_begin();
		if (lid) {
			rt_self.ttid = lid;
			schedule_rec(0);
		}
		install_signals();
		on_exit(on_exit_handler, NULL);
		pthread_atfork(NULL, NULL, atfork_child);
		atomic_store(&g_state, RT_RUNNING);
	}
	rt_self.in_rt = 0;
	atomic_store(&g_init, 2);
	return atomic_load(&g_state) == RT_RUNNING;
}

__attribute__((constructor(101))) static void rt_ctor(void)
{
	rt_init();
}
