/*
 * scry_main.c: scry's Valgrind tool (`valgrind --tool=scry`), the black-box recorder of `scry
 * check --black-box` (docs/black-box.md). It writes the trace format of docs/trace-format.md,
 * with the record encoders generated from the trace schema (scry_trace_format.h), for a program
 * that was not built with `scry cc`:
 *
 *  - PM regions: MAP_SHARED mappings of files that match a --pm glob, and every shared file
 *    mapping made inside libpmem's and libpmemobj's mapping calls (pmem_map_file, pmemobj_create,
 *    pmemobj_open: the preload, scry_preload.c, tells the tool when such a call runs), with their
 *    initial content as EXTERNAL_WRITE records (flag initial);
 *  - stores and loads to PM with their bytes (read back from memory after the access, so that a
 *    replay of the stores gives the pool file byte for byte), non-temporal stores (movnti,
 *    movntdq, movntps, movntpd and their VEX forms, decoded from the instruction bytes), clflush
 *    at its exact cache line (VEX rounds the line it invalidates to 256 bytes: the tool takes the
 *    address before the rounding), sfence and mfence, and a locked read-modify-write as a locked
 *    fence then its store; bytes the kernel writes into PM (read(2)) as stores;
 *  - operations: lines read from standard input (fgets, getline, getdelim, read: the preload
 *    wraps them), or calls of the --op-begin/--op-end functions (found by their entry address);
 *  - PMDK transactions and allocations, as the runtime's hooks record them (the preload wraps the
 *    libpmemobj calls); the bytes libpmemobj writes itself are EXTERNAL_WRITE records made durable
 *    by the library (flag persisted), its own flushes and fences are marked internal;
 *  - sites with the function, file and line of Valgrind's debug information (column 0), the
 *    inlined sites of the calls their code was inlined at, and call stacks (STACK, CONTEXT) from
 *    a shadow stack. An event inside a system library (libc, libpmem, libpmemobj...) is
 *    reported at the call the program made into that library, as the runtime reports it.
 *
 * Limits: VEX (Valgrind 3.19) does not decode clwb and clflushopt: the tool stops the program at
 * the first one it runs with an error that says so (the --error-file); no static dependence facts
 * (DEPS) nor activation serials (FRAME) are written. scry runs it with --read-inline-info=yes and
 * --fullpath-after= (pm/record), for the inlined sites and their files' directories.
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_seqmatch.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_clreq.h"
#include "libvex_guest_amd64.h"

#include <stddef.h>
#include <stdint.h>

#include "scry_trace_format.h"
#include "scry_vg.h"

/* ---------------------------------------------------------------- options */

static const HChar *clo_trace = NULL;      /* --trace=PATH */
static const HChar *clo_pm = NULL;         /* --pm=GLOB[:GLOB...] */
static const HChar *clo_error = NULL;      /* --error-file=PATH: why the tool stopped the program */
static const HChar *clo_op_begin = NULL;   /* --op-begin=FUNC */
static const HChar *clo_op_end = NULL;     /* --op-end=FUNC */
static Bool clo_loads = True;              /* --loads=no leaves loads out */

#define MAX_GLOBS 32
static HChar *g_globs[MAX_GLOBS];
static Int g_nglobs;

static Bool scry_process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO (arg, "--trace", clo_trace) {
	} else if VG_STR_CLO (arg, "--pm", clo_pm) {
	} else if VG_STR_CLO (arg, "--error-file", clo_error) {
	} else if VG_STR_CLO (arg, "--op-begin", clo_op_begin) {
	} else if VG_STR_CLO (arg, "--op-end", clo_op_end) {
	} else if VG_BOOL_CLO (arg, "--loads", clo_loads) {
	} else
		return False;
	return True;
}

static void scry_print_usage(void)
{
	VG_(printf)("    --trace=PATH          write the scry trace to PATH (required)\n"
		    "    --pm=GLOB[:GLOB...]   MAP_SHARED mappings of matching files are PM\n"
		    "    --error-file=PATH     why the tool stopped the program, if it did\n"
		    "    --op-begin=FUNC       calls of FUNC begin operations (not stdin lines)\n"
		    "    --op-end=FUNC         calls of FUNC end operations\n"
		    "    --loads=no|yes        record loads from PM [yes]\n");
}

static void scry_print_debug_usage(void) {}

/* ---------------------------------------------------------------- trace writer */

#define BUFSZ (1u << 20)
static Int g_fd = -1;
static unsigned char g_buf[BUFSZ];
static SizeT g_pos;
static uint64_t g_last_addr;
static Bool g_write_failed;

static void buf_flush(void)
{
	SizeT done = 0;
	while (done < g_pos && g_fd >= 0) {
		Int n = VG_(write)(g_fd, g_buf + done, (Int)(g_pos - done));
		if (n <= 0) {
			if (!g_write_failed)
				VG_(umsg)("scry: writing the trace %s failed: the trace is cut short\n", clo_trace);
			g_write_failed = True;
			break;
		}
		done += (SizeT)n;
	}
	g_pos = 0;
}

#define SCRY_TRACE_PUT /* scry_put_u8, _uv, _sv, _addr */
#include "scry_trace_format.h"

static inline void scry_need(size_t n)
{
	if (g_pos + n > BUFSZ)
		buf_flush();
}

static void scry_put_bytes(const void *p, uint64_t n)
{
	const unsigned char *c = p;
	while (n > 0) {
		if (g_pos == BUFSZ)
			buf_flush();
		SizeT k = BUFSZ - g_pos;
		if (k > n)
			k = (SizeT)n;
		VG_(memcpy)(g_buf + g_pos, c, k);
		g_pos += k;
		c += k;
		n -= k;
	}
}

static void scry_put_str(const char *s, size_t n)
{
	if (n > SCRY_MAX_STRING)
		n = SCRY_MAX_STRING;
	scry_need(10);
	scry_put_uv(n);
	scry_put_bytes(s, n);
}

#define SCRY_TRACE_ENCODERS
#include "scry_trace_format.h"

static void warn(const HChar *msg)
{
	VG_(umsg)("scry: %s\n", msg);
	scry_enc_warning(msg, VG_(strlen)(msg));
}

/* ---------------------------------------------------------------- threads and contexts */

#define MAX_THREADS 1024
static ThreadId g_last_tid;            /* thread of the last THREAD record */
static UInt g_ctx[MAX_THREADS];        /* each thread's last CONTEXT */
static Int g_pm_call[MAX_THREADS];     /* depth of PM mapping calls (SCRY_VGREQ_PM_CALL) */
static Int g_user_persist[MAX_THREADS]; /* depth of the user's libpmemobj persistence calls */
static Addr g_pm_call_ret[MAX_THREADS];
/* The THREAD id of each Valgrind thread slot: Valgrind gives a slot to a new thread once its
 * last one has exited, so a trace id is given per thread, from 1, and the slot forgets it at exit. */
static UInt g_trace_tid[MAX_THREADS];
static UInt g_next_trace_tid = 1;
static UInt g_last_trace_tid;

static void prologue(ThreadId tid, UInt ctx)
{
	if (tid >= MAX_THREADS)
		tid = MAX_THREADS - 1;
	if (g_trace_tid[tid] == 0)
		g_trace_tid[tid] = g_next_trace_tid++;
	if (g_trace_tid[tid] != g_last_trace_tid) {
		scry_enc_thread(g_trace_tid[tid]);
		g_last_trace_tid = g_trace_tid[tid];
	}
	g_last_tid = tid;
	if (ctx != g_ctx[tid]) {
		scry_enc_context(ctx);
		g_ctx[tid] = ctx;
	}
}

static void thread_reset(ThreadId tid);

/* A thread exits: its slot's next thread is another one. */
static void scry_thread_exit(ThreadId tid)
{
	if (tid >= MAX_THREADS)
		return;
	g_trace_tid[tid] = 0;
	g_ctx[tid] = 0;
	g_pm_call[tid] = 0;
	g_user_persist[tid] = 0;
	g_pm_call_ret[tid] = 0;
	thread_reset(tid);
}

/* ---------------------------------------------------------------- sites and stacks */

typedef struct _Node {
	struct _Node *next;
	UWord key;
	UInt id;
	UChar cls; /* code objects: OBJ_* */
} Node;

static VgHashTable *g_sites;  /* (ip << 4 | kind) -> site id */
static VgHashTable *g_stacks; /* (parent << 32 | site) -> stack node id */
static VgHashTable *g_objs;   /* ip -> OBJ_* */
static UInt g_next_site = 1, g_next_stack = 1;

enum { OBJ_USER, OBJ_SYS, OBJ_PMEMOBJ, OBJ_PMEM, OBJ_CLASS = 3 };

static const HChar *base_name(const HChar *p)
{
	const HChar *b = p;
	for (; *p; p++)
		if (*p == '/')
			b = p + 1;
	return b;
}

/* obj_class says whether the code at ip is the program's (or a library of its own) or a system
 * library's: libc, the loader, libstdc++, libpmem, libpmemobj, Valgrind's preloads. */
/* A direct-mapped cache in front of the hash tables of the hot paths (one lookup per event). */
#define CACHE_SIZE 4096
typedef struct {
	UWord key;
	UInt val;
} CacheEntry;
static CacheEntry g_obj_cache[CACHE_SIZE], g_site_cache[CACHE_SIZE];
static inline CacheEntry *cache_slot(CacheEntry *c, UWord key) { return &c[(key ^ (key >> 12)) & (CACHE_SIZE - 1)]; }

static UChar obj_class_slow(Addr ip);

static inline UChar obj_class(Addr ip)
{
	CacheEntry *e = cache_slot(g_obj_cache, ip);
	if (e->key == ip && ip)
		return (UChar)e->val;
	UChar cls = obj_class_slow(ip);
	e->key = ip;
	e->val = cls;
	return cls;
}

static UChar obj_class_slow(Addr ip)
{
	Node *n = VG_(HT_lookup)(g_objs, ip);
	if (n)
		return n->cls;
	const HChar *obj = NULL;
	UChar cls = OBJ_USER;
	if (VG_(get_objname)(VG_(current_DiEpoch)(), ip, &obj) && obj) {
		const HChar *b = base_name(obj);
		const HChar *fn = NULL;
		if (VG_(get_fnname)(VG_(current_DiEpoch)(), ip, &fn) && fn && VG_(strcmp)(fn, "(below main)") == 0)
			cls = OBJ_SYS; /* _start and the C library's start-up code */
		else if (VG_(strncmp)(b, "libpmemobj", 10) == 0)
			cls = OBJ_PMEMOBJ;
		else if (VG_(strncmp)(b, "libpmem.", 8) == 0)
			cls = OBJ_PMEM;
		else if (VG_(strncmp)(obj, "/lib/", 5) == 0 || VG_(strncmp)(obj, "/lib64/", 7) == 0 ||
			 VG_(strncmp)(obj, "/usr/lib/", 9) == 0 || VG_(strncmp)(obj, "/usr/lib64/", 11) == 0 ||
			 VG_(strncmp)(b, "vgpreload_", 10) == 0 || VG_(strncmp)(b, "ld-linux", 8) == 0)
			cls = OBJ_SYS;
	}
	n = VG_(malloc)("scry.obj", sizeof *n);
	n->key = ip;
	n->id = 0;
	n->cls = cls;
	VG_(HT_add_node)(g_objs, n);
	return cls;
}

static UInt site_of_slow(Addr ip, UChar kind, Addr callee_ip);

static inline UInt site_of(Addr ip, UChar kind, Addr callee_ip)
{
	UWord key = ((UWord)ip << 4) | kind;
	CacheEntry *e = cache_slot(g_site_cache, key);
	if (e->key == key && e->val)
		return e->val;
	UInt id = site_of_slow(ip, kind, callee_ip);
	e->key = key;
	e->val = id;
	return id;
}

/* parse_desc reads a description of VG_(describe_IP), "0x...: FUNCTION (FILE:LINE)" (FILE with
 * its directory under --fullpath-after=, which scry passes), into fn, file and *line; False when
 * it names no source line. */
static Bool parse_desc(const HChar *d, HChar *fn, SizeT fnsz, HChar *file, SizeT filesz, UInt *line)
{
	const HChar *f = VG_(strstr)(d, ": ");
	SizeT n = VG_(strlen)(d);
	if (!f || n == 0 || d[n - 1] != ')')
		return False;
	f += 2;
	const HChar *open = NULL;
	for (const HChar *p = f; p[0] && p[1]; p++)
		if (p[0] == ' ' && p[1] == '(')
			open = p;
	if (!open || VG_(strncmp)(open + 2, "in ", 3) == 0)
		return False;
	const HChar *loc = open + 2, *end = d + n - 1, *colon = NULL;
	for (const HChar *p = loc; p < end; p++)
		if (*p == ':')
			colon = p;
	if (!colon)
		return False;
	SizeT k = (SizeT)(open - f) < fnsz - 1 ? (SizeT)(open - f) : fnsz - 1;
	VG_(memcpy)(fn, f, k);
	fn[k] = 0;
	k = (SizeT)(colon - loc) < filesz - 1 ? (SizeT)(colon - loc) : filesz - 1;
	VG_(memcpy)(file, loc, k);
	file[k] = 0;
	*line = (UInt)VG_(strtoll10)(colon + 1, NULL);
	return True;
}

/* inlined_at returns the INLINED site (docs/trace-format.md, "Sites") of the innermost call the
 * compiler inlined ip's code at, each chained to the next call out, from Valgrind's inlined-call
 * information; 0 when ip's code is its function's own. *inner_fn gets the inlined function. */
#define MAX_INLINED 16
static UInt inlined_at(Addr ip, HChar *inner_fn, SizeT inner_fnsz)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	InlIPCursor *c = VG_(new_IIPC)(ep, ip);
	HChar *fns[MAX_INLINED], *files[MAX_INLINED];
	UInt lines[MAX_INLINED];
	Int m = 0;
	Bool ok = True;
	do {
		HChar fn[256], file[1024];
		UInt line = 0;
		if (!parse_desc(VG_(describe_IP)(ep, ip, c), fn, sizeof fn, file, sizeof file, &line)) {
			ok = False;
			break;
		}
		fns[m] = VG_(strdup)("scry.inl", fn);
		files[m] = VG_(strdup)("scry.inl", file);
		lines[m++] = line;
	} while (m < MAX_INLINED && VG_(next_IIPC)(c));
	VG_(delete_IIPC)(c);
	UInt outer = 0;
	if (ok && m >= 2) {
		VG_(snprintf)(inner_fn, inner_fnsz, "%s", fns[0]);
		/* From the outermost: the call at (fns[j], files[j]:lines[j]) of fns[j-1]. */
		for (Int j = m - 1; j >= 1; j--) {
			UInt id = g_next_site++;
			scry_enc_sites(1);
			scry_enc_sites_site(id, SCRY_SITE_INLINED, fns[j], VG_(strlen)(fns[j]), files[j], VG_(strlen)(files[j]),
					    lines[j], 0, fns[j - 1], VG_(strlen)(fns[j - 1]), outer, SCRY_ACCESS_UNKNOWN);
			outer = id;
		}
	}
	for (Int j = 0; j < m; j++) {
		VG_(free)(fns[j]);
		VG_(free)(files[j]);
	}
	return outer;
}

static UInt site_of_slow(Addr ip, UChar kind, Addr callee_ip)
{
	UWord key = ((UWord)ip << 4) | kind;
	Node *n = VG_(HT_lookup)(g_sites, key);
	if (n)
		return n->id;
	DiEpoch ep = VG_(current_DiEpoch)();
	const HChar *fn = NULL, *file = NULL, *dir = NULL;
	UInt line = 0;
	HChar fnbuf[256], filebuf[1024], calleebuf[256];
	if (VG_(get_fnname)(ep, ip, &fn) && fn)
		VG_(snprintf)(fnbuf, sizeof fnbuf, "%s", fn);
	else
		VG_(snprintf)(fnbuf, sizeof fnbuf, "0x%lx", (unsigned long)ip);
	filebuf[0] = 0;
	if (VG_(get_filename_linenum)(ep, ip, &file, &dir, &line) && file) {
		if (file[0] != '/' && dir && dir[0])
			VG_(snprintf)(filebuf, sizeof filebuf, "%s/%s", dir, file);
		else
			VG_(snprintf)(filebuf, sizeof filebuf, "%s", file);
	} else {
		const HChar *obj = NULL;
		if (VG_(get_objname)(ep, ip, &obj) && obj)
			VG_(snprintf)(filebuf, sizeof filebuf, "%s", obj);
		line = 0;
	}
	calleebuf[0] = 0;
	if (callee_ip && VG_(get_fnname)(ep, callee_ip, &fn) && fn)
		VG_(snprintf)(calleebuf, sizeof calleebuf, "%s", fn);
	UInt inl = inlined_at(ip, fnbuf, sizeof fnbuf);
	n = VG_(malloc)("scry.site", sizeof *n);
	n->key = key;
	n->id = g_next_site++;
	n->cls = 0;
	VG_(HT_add_node)(g_sites, n);
	scry_enc_sites(1);
	scry_enc_sites_site(n->id, kind, fnbuf, VG_(strlen)(fnbuf), filebuf, VG_(strlen)(filebuf), line, 0, calleebuf,
			    VG_(strlen)(calleebuf), inl, SCRY_ACCESS_UNKNOWN);
	return n->id;
}

static UInt stack_node(UInt parent, UInt site)
{
	UWord key = ((UWord)parent << 32) | site;
	Node *n = VG_(HT_lookup)(g_stacks, key);
	if (n)
		return n->id;
	n = VG_(malloc)("scry.stack", sizeof *n);
	n->key = key;
	n->id = g_next_stack++;
	n->cls = 0;
	VG_(HT_add_node)(g_stacks, n);
	scry_enc_stack(n->id, parent, site);
	return n->id;
}


/* An event's site and call stack. ip is the instruction's address; the event is reported at the
 * first frame of the program's own code (the call into a system library when it runs in one);
 * *in_pmemobj tells whether libpmemobj's code is between that frame and the instruction. */
typedef struct {
	UInt site, ctx;
	Bool in_pmemobj;
} Where;

/* The call stacks come from a shadow stack per thread, kept by the instrumentation: every call
 * pushes its return address with the stack pointer that holds it, every return pops the entries
 * whose stack pointer is below the new one (so do events: a longjmp leaves no stale frame), as
 * Callgrind keeps its call stacks (Weidendorfer, "Sequential performance analysis with
 * Callgrind and KCachegrind", 2008, §2.2) instead of unwinding the stack at every event. Each
 * entry interns, when first needed, the STACK node of the chain of calls from main to it. */
typedef struct {
	Addr ret, sp;    /* the return address, and where it is stored */
	Addr callee;     /* the called address */
	UInt node;       /* the STACK node of the calls up to this one (valid when known) */
	Bool known;
} Frame;
typedef struct {
	Frame *f;
	UInt n, cap;
} Shadow;
static Shadow g_shadow[MAX_THREADS];

static Shadow *shadow_of(ThreadId tid) { return &g_shadow[tid < MAX_THREADS ? tid : MAX_THREADS - 1]; }

/* Pops the frames whose return address lies below sp (returned from, or left by a longjmp). */
static inline void shadow_unwind(Shadow *s, Addr sp)
{
	while (s->n > 0 && s->f[s->n - 1].sp < sp)
		s->n--;
}

static VG_REGPARM(2) void h_call(Addr sp, Addr callee)
{
	Shadow *s = shadow_of(VG_(get_running_tid)());
	shadow_unwind(s, sp + 1);
	if (s->n == s->cap) {
		UInt cap = s->cap ? 2 * s->cap : 256;
		if (cap > 1u << 20)
			return; /* deeper than any real stack: recursion without end; not followed */
		s->f = VG_(realloc)("scry.shadow", s->f, cap * sizeof(Frame));
		s->cap = cap;
	}
	Frame *f = &s->f[s->n++];
	f->ret = *(const Addr *)sp;
	f->sp = sp;
	f->callee = callee;
	f->known = False;
}

static VG_REGPARM(1) void h_ret(Addr sp) { shadow_unwind(shadow_of(VG_(get_running_tid)()), sp); }

/* The STACK node of the calls up to frame i (0: the empty stack). A chain starts at the first
 * call made from the program's own code: the C library's start-up (the calls of main and of a
 * thread's start routine) is no part of a stack. */
static UInt frame_node(Shadow *s, Int i)
{
	if (i < 0)
		return 0;
	Int j = i;
	while (j >= 0 && !s->f[j].known)
		j--;
	UInt parent = j >= 0 ? s->f[j].node : 0;
	for (j++; j <= i; j++) {
		Frame *g = &s->f[j];
		if (parent != 0 || (obj_class(g->ret - 1) & OBJ_CLASS) == OBJ_USER)
			parent = stack_node(parent, site_of(g->ret - 1, SCRY_SITE_CALL, g->callee));
		g->node = parent;
		g->known = True;
	}
	return parent;
}

/* where returns an event's site and context: ip is its instruction; the shadow stack's frames
 * above depth give its callers. The event is reported at the first frame of the program's code
 * (the call into a system library when it runs in one); *in_pmemobj tells whether libpmemobj's
 * code is between that frame and the instruction. */
static Where where_depth(ThreadId tid, Addr ip, UChar kind, Shadow *s, Int depth)
{
	Where w = {0, 0, False};
	UChar c = obj_class(ip) & OBJ_CLASS;
	w.in_pmemobj = c == OBJ_PMEMOBJ;
	Int i = depth - 1; /* the innermost caller's frame */
	Addr site_ip = ip;
	if (c != OBJ_USER) {
		/* Out to the first frame of the program's code. */
		Int j = i;
		for (; j >= 0; j--) {
			UChar cj = obj_class(s->f[j].ret - 1) & OBJ_CLASS;
			if (cj == OBJ_PMEMOBJ)
				w.in_pmemobj = True;
			if (cj == OBJ_USER)
				break;
		}
		if (j >= 0) {
			site_ip = s->f[j].ret - 1;
			i = j - 1;
		}
	}
	w.site = site_of(site_ip, kind, 0);
	w.ctx = frame_node(s, i);
	return w;
}

static Where where(ThreadId tid, Addr ip, UChar kind)
{
	Shadow *s = shadow_of(tid);
	shadow_unwind(s, VG_(get_SP)(tid));
	return where_depth(tid, ip, kind, s, (Int)s->n);
}

/* where_call is where for a library call the program made (a wrapped function): its return
 * address ret; the frames from the call on are the library's. */
static Where where_call(ThreadId tid, Addr ret, UChar kind)
{
	Shadow *s = shadow_of(tid);
	shadow_unwind(s, VG_(get_SP)(tid));
	Int d = (Int)s->n;
	while (d > 0 && s->f[d - 1].ret != ret)
		d--;
	if (d == 0)
		d = (Int)s->n + 1; /* not found: the whole stack */
	return where_depth(tid, ret - 1, kind, s, d - 1);
}

/* ---------------------------------------------------------------- regions */

#define MAX_REGIONS 256
typedef struct {
	Addr base, end;
	UInt id;
	Bool active;
} Region;
static Region g_regions[MAX_REGIONS];
static Int g_nregions;
static UInt g_next_region = 1;
/* The hull of the PM regions, read by the instrumentation's inline test: an access at a is
 * looked at when a - g_lo < g_span (unsigned). */
static ULong g_lo, g_span;

static void hull_update(void)
{
	Addr lo = ~(Addr)0, hi = 0;
	for (Int i = 0; i < g_nregions; i++) {
		if (!g_regions[i].active)
			continue;
		if (g_regions[i].base < lo)
			lo = g_regions[i].base;
		if (g_regions[i].end > hi)
			hi = g_regions[i].end;
	}
	if (hi == 0) {
		g_lo = g_span = 0;
		return;
	}
	/* 64 bytes of margin: an access that starts just before a region and reaches into it. */
	g_lo = lo >= 64 ? lo - 64 : 0;
	g_span = hi - g_lo;
}

static inline Bool in_pm(Addr a, SizeT n)
{
	if (a - g_lo >= g_span && a + n - g_lo > g_span)
		return False;
	for (Int i = 0; i < g_nregions; i++)
		if (g_regions[i].active && a < g_regions[i].end && a + n > g_regions[i].base)
			return True;
	return False;
}

static Bool glob_match(const HChar *path)
{
	for (Int i = 0; i < g_nglobs; i++)
		if (VG_(string_match)(g_globs[i], path))
			return True;
	return False;
}

static void region_unmap(ThreadId tid, Addr a, SizeT len, UInt site_ctx_site, UInt ctx)
{
	Bool changed = False;
	for (Int i = 0; i < g_nregions; i++) {
		Region *r = &g_regions[i];
		if (!r->active || a >= r->end || a + len <= r->base)
			continue;
		prologue(tid, ctx);
		scry_enc_region_unmap(r->id, site_ctx_site);
		r->active = False;
		changed = True;
	}
	if (changed)
		hull_update();
}

/* Initial content: runs of non-zero bytes (gaps under 256 bytes merged) as EXTERNAL_WRITE. */
static void initial_content(Addr base, SizeT n, UInt site)
{
	const unsigned char *p = (const unsigned char *)base;
	SizeT i = 0;
	while (i < n) {
		while (i < n && p[i] == 0)
			i++;
		if (i == n)
			break;
		SizeT start = i, last = i;
		for (; i < n && i - last < 256; i++)
			if (p[i] != 0)
				last = i;
		scry_enc_external_write(site, base + start, last + 1 - start, p + start, SCRY_EXT_INITIAL);
		i = last + 1;
	}
}

/* The files this run created (open with O_CREAT of a path that did not exist). */
#define MAX_CREATED 64
static HChar *g_created[MAX_CREATED];
static Int g_ncreated;
static HChar *g_pending_create[MAX_THREADS];

static Bool created_take(const HChar *path)
{
	for (Int i = 0; i < g_ncreated; i++)
		if (g_created[i] && VG_(strcmp)(g_created[i], path) == 0) {
			VG_(free)(g_created[i]);
			g_created[i] = NULL;
			return True;
		}
	return False;
}

static Bool fd_path(Int fd, HChar *buf, SizeT size)
{
	HChar link[64];
	VG_(snprintf)(link, sizeof link, "/proc/self/fd/%d", fd);
	SSizeT n = VG_(readlink)(link, buf, size - 1);
	if (n <= 0)
		return False;
	buf[n] = 0;
	return buf[0] == '/';
}

/* region_map makes [base, base+len) a PM region, the mapping of path at off (path "": memory the
 * program registered); its initial content is read from memory up to the file's end. */
static void region_map(ThreadId tid, Addr base, SizeT len, ULong off, const HChar *path, Bool created)
{
	Where w = g_pm_call_ret[tid] ? where_call(tid, g_pm_call_ret[tid], SCRY_SITE_LIBCALL)
				     : where(tid, VG_(get_IP)(tid), SCRY_SITE_LIBCALL);
	region_unmap(tid, base, len, w.site, w.ctx);
	Int slot = -1;
	for (Int i = 0; i < g_nregions; i++)
		if (!g_regions[i].active) {
			slot = i;
			break;
		}
	if (slot < 0) {
		if (g_nregions == MAX_REGIONS) {
			warn("more PM regions than the Valgrind tool follows (256): a region is not traced");
			return;
		}
		slot = g_nregions++;
	}
	Region *r = &g_regions[slot];
	r->base = base;
	r->end = base + len;
	r->id = g_next_region++;
	r->active = True;
	prologue(tid, w.ctx);
	scry_enc_region_map(r->id, base, len, off, path, VG_(strlen)(path), w.site, created ? SCRY_REGION_CREATED : 0);
	/* Only the part backed by the file may be read (past its end, a read faults). */
	struct vg_stat st;
	if (!path[0]) {
		initial_content(base, len, w.site);
	} else if (!sr_isError(VG_(stat)(path, &st)) && st.size > (Long)off) {
		ULong n = st.size - off;
		if (n > len)
			n = len;
		/* Only the file's data (SEEK_DATA, SEEK_HOLE): a sparse pool's holes read as zeros,
		 * and reading them through the mapping would fault every page in. */
		SysRes fr = VG_(open)(path, VKI_O_RDONLY, 0);
		Int fd = sr_isError(fr) ? -1 : (Int)sr_Res(fr);
		Long pos = (Long)off, end = (Long)(off + n);
		while (fd >= 0 && pos < end) {
			Long data = VG_(lseek)(fd, pos, 3 /* SEEK_DATA */);
			if (data < 0 || data >= end)
				break;
			Long hole = VG_(lseek)(fd, data, 4 /* SEEK_HOLE */);
			if (hole < 0 || hole > end)
				hole = end;
			initial_content(base + (data - off), (SizeT)(hole - data), w.site);
			pos = hole;
		}
		if (fd < 0)
			initial_content(base, n, w.site);
		else
			VG_(close)(fd);
	}
	hull_update();
}

/* The shared file mappings made during a PM mapping call (SCRY_VGREQ_PM_CALL), per thread: the
 * one holding the address the call returns becomes the region when it returns. */
#define MAX_CANDIDATES 8
typedef struct {
	Addr base;
	SizeT len;
	ULong off;
	HChar *path;
	Bool created;
} Candidate;
static Candidate g_cand[MAX_THREADS][MAX_CANDIDATES];
static Int g_ncand[MAX_THREADS];

static void candidates_drop(ThreadId t, Addr a, SizeT len)
{
	for (Int i = 0; i < g_ncand[t]; i++) {
		Candidate *c = &g_cand[t][i];
		if (a < c->base + c->len && a + len > c->base) {
			VG_(free)(c->path);
			*c = g_cand[t][--g_ncand[t]];
			i--;
		}
	}
}

static void candidate_add(ThreadId t, Addr base, SizeT len, ULong off, const HChar *path, Bool created)
{
	candidates_drop(t, base, len);
	if (g_ncand[t] == MAX_CANDIDATES)
		candidates_drop(t, g_cand[t][0].base, g_cand[t][0].len);
	g_cand[t][g_ncand[t]++] = (Candidate){base, len, off, VG_(strdup)("scry.cand", path), created};
}

static void pm_call_end(ThreadId t, Addr ret)
{
	for (Int i = 0; i < g_ncand[t]; i++) {
		Candidate *c = &g_cand[t][i];
		if (ret && ret >= c->base && ret < c->base + c->len) {
			region_map(t, c->base, c->len, c->off, c->path, c->created);
			break;
		}
	}
	candidates_drop(t, 0, ~(SizeT)0);
}

/* ---------------------------------------------------------------- system calls */

static void scry_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	(void)nargs;
	if (tid >= MAX_THREADS)
		return;
	const HChar *path = NULL;
	Int flags = 0;
	if (sysno == __NR_open) {
		path = (const HChar *)args[0];
		flags = (Int)args[1];
	} else if (sysno == __NR_openat) {
		path = (const HChar *)args[1];
		flags = (Int)args[2];
	} else if (sysno == __NR_creat) {
		path = (const HChar *)args[0];
		flags = VKI_O_CREAT;
	}
	if (!path || !(flags & VKI_O_CREAT))
		return;
	struct vg_stat st;
	SysRes r = VG_(stat)(path, &st);
	if (sr_isError(r))
		g_pending_create[tid] = (HChar *)1; /* known after the call, from its descriptor */
}

static void scry_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
	(void)nargs;
	if (tid >= MAX_THREADS)
		return;
	if (sysno == __NR_open || sysno == __NR_openat || sysno == __NR_creat) {
		if (g_pending_create[tid] && !sr_isError(res)) {
			HChar buf[4096];
			if (fd_path((Int)sr_Res(res), buf, sizeof buf)) {
				if (g_ncreated == MAX_CREATED) {
					VG_(free)(g_created[0]);
					VG_(memmove)(g_created, g_created + 1, (MAX_CREATED - 1) * sizeof g_created[0]);
					g_ncreated--;
				}
				g_created[g_ncreated++] = VG_(strdup)("scry.created", buf);
			}
		}
		g_pending_create[tid] = NULL;
		return;
	}
	if (sr_isError(res))
		return;
	if (sysno == __NR_mmap) {
		Int flags = (Int)args[3], fd = (Int)args[4];
		if (fd < 0 || (flags & VKI_MAP_ANONYMOUS) || !(flags & VKI_MAP_SHARED) || !(args[2] & VKI_PROT_WRITE))
			return;
		HChar buf[4096];
		if (!fd_path(fd, buf, sizeof buf))
			return;
		if (g_pm_call[tid] > 0)
			candidate_add(tid, (Addr)sr_Res(res), (SizeT)args[1], (ULong)args[5], buf, created_take(buf));
		else if (glob_match(buf))
			region_map(tid, (Addr)sr_Res(res), (SizeT)args[1], (ULong)args[5], buf, created_take(buf));
	} else if (sysno == __NR_munmap) {
		Addr a = (Addr)args[0];
		SizeT len = (SizeT)args[1];
		candidates_drop(tid, a, len);
		for (Int i = 0; i < g_nregions; i++) {
			Region *r = &g_regions[i];
			if (r->active && a < r->end && a + len > r->base) {
				Where w = where(tid, VG_(get_IP)(tid), SCRY_SITE_LIBCALL);
				region_unmap(tid, a, len, w.site, w.ctx);
				break;
			}
		}
	}
}

/* Bytes the kernel wrote into PM (read(2) into a mapped pool): the program's stores. */
static void scry_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT len)
{
	(void)part;
	if (len == 0 || !in_pm(a, len))
		return;
	Where w = where(tid, VG_(get_IP)(tid), SCRY_SITE_RANGE);
	prologue(tid, w.ctx);
	scry_enc_store(SCRY_EV_STORE, w.site, a, len, (const void *)a);
}

/* ---------------------------------------------------------------- event helpers */

enum { K_STORE, K_NT_STORE, K_LOAD, K_RMW, K_FLUSH, K_SFENCE, K_MFENCE };

static void h_mem(UWord k, Addr ip, Addr a, UWord size)
{
	if (!in_pm(a, size))
		return;
	ThreadId tid = VG_(get_running_tid)();
	UChar sk = k == K_NT_STORE ? SCRY_SITE_NT_STORE : k == K_LOAD ? SCRY_SITE_LOAD : k == K_RMW ? SCRY_SITE_RMW : SCRY_SITE_STORE;
	Where w = where(tid, ip, sk);
	prologue(tid, w.ctx);
	if (k == K_LOAD) {
		scry_enc_store(SCRY_EV_LOAD, w.site, a, size, (const void *)a);
	} else if (w.in_pmemobj) {
		/* libpmemobj's own writes (undo log, allocator metadata, commit, rollback): made
		 * durable before the call returns. */
		scry_enc_external_write(w.site, a, size, (const void *)a, SCRY_EXT_PERSISTED);
	} else {
		/* A locked read-modify-write orders the flushes before it ahead of its store: its
		 * fence comes first (docs/trace-format.md). */
		if (k == K_RMW)
			scry_enc_fence(w.site, SCRY_FENCE_LOCKED);
		scry_enc_store(k == K_NT_STORE ? SCRY_EV_NT_STORE : SCRY_EV_STORE, w.site, a, size, (const void *)a);
	}
}

/* A store the instrumentation could not guard inline (a guarded store: guard is its condition). */
static void h_mem_guarded(UWord k, Addr ip, Addr a, UWord size_guard)
{
	if (size_guard & 1)
		h_mem(k, ip, a, size_guard >> 1);
}

static void h_flush(Addr ip, Addr a)
{
	if (!in_pm(a, 1))
		return;
	ThreadId tid = VG_(get_running_tid)();
	Where w = where(tid, ip, SCRY_SITE_FLUSH);
	UChar kind = SCRY_FLUSH_CLFLUSH;
	if (w.in_pmemobj && (tid >= MAX_THREADS || g_user_persist[tid] == 0))
		kind |= SCRY_INTERNAL_BIT;
	prologue(tid, w.ctx);
	scry_enc_flush(w.site, kind, a & ~(Addr)63);
}

static void h_fence(Addr ip, UWord k)
{
	if (g_lo == 0 && g_span == 0)
		return; /* no PM mapped: a fence orders nothing scry follows */
	ThreadId tid = VG_(get_running_tid)();
	Where w = where(tid, ip, SCRY_SITE_FENCE);
	UChar kind = k == K_SFENCE ? SCRY_FENCE_SFENCE : SCRY_FENCE_MFENCE;
	if (w.in_pmemobj && (tid >= MAX_THREADS || g_user_persist[tid] == 0))
		kind |= SCRY_INTERNAL_BIT;
	prologue(tid, w.ctx);
	scry_enc_fence(w.site, kind);
}

/* ---------------------------------------------------------------- operations */

static Bool g_op_open;
static ULong g_op_cur, g_op_next;
static HChar g_last_line[4096];
static SizeT g_last_line_len;
static Bool g_have_line;

static void op_end(ThreadId tid)
{
	if (!g_op_open)
		return;
	prologue(tid, g_ctx[tid < MAX_THREADS ? tid : MAX_THREADS - 1]);
	scry_enc_op_end(g_op_cur);
	g_op_open = False;
}

static void op_begin(ThreadId tid, const HChar *text, SizeT len)
{
	op_end(tid);
	prologue(tid, g_ctx[tid < MAX_THREADS ? tid : MAX_THREADS - 1]);
	g_op_cur = g_op_next++;
	scry_enc_op_begin(g_op_cur, text, len);
	g_op_open = True;
}

static void op_line(ThreadId tid, const HChar *line, SizeT n)
{
	Bool marked = clo_op_begin != NULL;
	if (!line) {
		if (!marked)
			op_end(tid);
		return;
	}
	if (n > 0 && line[n - 1] == '\n')
		n--;
	if (n > 0 && line[n - 1] == '\r')
		n--;
	if (n > sizeof g_last_line)
		n = sizeof g_last_line;
	if (marked) {
		VG_(memcpy)(g_last_line, line, n);
		g_last_line_len = n;
		g_have_line = True;
		return;
	}
	op_begin(tid, line, n);
}

static void h_op_marker(UWord end)
{
	ThreadId tid = VG_(get_running_tid)();
	if (end) {
		op_end(tid);
		return;
	}
	if (g_have_line)
		op_begin(tid, g_last_line, g_last_line_len);
	else
		op_begin(tid, clo_op_begin, VG_(strlen)(clo_op_begin));
}

/* ---------------------------------------------------------------- limits of VEX */

/* insn_class decodes the instruction at ip enough to tell the ones scry needs apart. */
enum { I_OTHER, I_NT, I_CLFLUSH, I_CLFLUSHOPT, I_CLWB, I_SFENCE, I_MFENCE };

static Int insn_class(Addr ip, UInt len)
{
	const UChar *p = (const UChar *)ip, *end = p + len;
	Bool p66 = False;
	for (; p < end; p++) {
		UChar b = *p;
		if (b == 0x66)
			p66 = True;
		else if (b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x3E || b == 0x26 || b == 0x36 ||
			 b == 0x64 || b == 0x65 || b == 0x67 || b == 0xF0 || (b >= 0x40 && b <= 0x4F))
			continue;
		else
			break;
	}
	if (p >= end)
		return I_OTHER;
	if (*p == 0xC5 && p + 2 < end) /* two-byte VEX: map 0F */
		return (p[2] == 0xE7 || p[2] == 0x2B) ? I_NT : I_OTHER;
	if (*p == 0xC4 && p + 3 < end) /* three-byte VEX: map in the low 5 bits */
		return ((p[1] & 0x1F) == 1 && (p[3] == 0xE7 || p[3] == 0x2B)) ? I_NT : I_OTHER;
	if (*p != 0x0F || p + 1 >= end)
		return I_OTHER;
	UChar op = p[1];
	if (op == 0xC3 || op == 0xE7 || op == 0x2B)
		return I_NT;
	if (op == 0xAE && p + 2 < end) {
		UChar m = p[2];
		if (m == 0xF8)
			return I_SFENCE;
		if (m == 0xF0)
			return I_MFENCE;
		Int reg = (m >> 3) & 7;
		if ((m >> 6) != 3) {
			if (reg == 7)
				return p66 ? I_CLFLUSHOPT : I_CLFLUSH;
			if (reg == 6 && p66)
				return I_CLWB;
		}
	}
	return I_OTHER;
}

static void stop_with_error(const HChar *msg)
{
	VG_(umsg)("scry: %s\n", msg);
	if (clo_error) {
		SysRes r = VG_(open)(clo_error, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0600);
		if (!sr_isError(r)) {
			VG_(write)((Int)sr_Res(r), msg, VG_(strlen)(msg));
			VG_(close)((Int)sr_Res(r));
		}
	}
	warn(msg);
	buf_flush();
	VG_(exit)(2);
}

/* The block ends at an instruction VEX cannot decode, and the program reached it. */
static void h_nodecode(Addr ip)
{
	Int c = insn_class(ip, 15);
	if (c != I_CLWB && c != I_CLFLUSHOPT)
		return; /* Valgrind's own SIGILL and message follow */
	const HChar *fn = "?", *file = NULL, *dir = NULL;
	UInt line = 0;
	DiEpoch ep = VG_(current_DiEpoch)();
	VG_(get_fnname)(ep, ip, &fn);
	HChar where_[1200];
	if (VG_(get_filename_linenum)(ep, ip, &file, &dir, &line) && file)
		VG_(snprintf)(where_, sizeof where_, "%s (%s:%u)", fn, file, line);
	else
		VG_(snprintf)(where_, sizeof where_, "%s", fn);
	HChar msg[2048];
	VG_(snprintf)(msg, sizeof msg,
		      "the program executes %s at 0x%lx in %s, which this Valgrind cannot decode: "
		      "black-box mode cannot follow it. Rebuild the program with `scry cc` (no --black-box), "
		      "or build it without %s (e.g. -mno-clwb -mno-clflushopt; PMDK chooses clflush by itself "
		      "under Valgrind), or point SCRY_VALGRIND at a Valgrind that decodes it (such as pmem's "
		      "fork, github.com/pmem/valgrind)",
		      c == I_CLWB ? "clwb" : "clflushopt", (unsigned long)ip, where_,
		      c == I_CLWB ? "clwb" : "clflushopt");
	stop_with_error(msg);
}

/* ---------------------------------------------------------------- instrumentation */

static IRExpr *load64(IRSB *sb, void *p)
{
	IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)p))));
	return IRExpr_RdTmp(t);
}

/* The inline test of an access at addr: in the PM hull. */
static IRExpr *hull_guard(IRSB *sb, IRExpr *addr)
{
	IRExpr *lo = load64(sb, &g_lo), *span = load64(sb, &g_span);
	IRTemp d = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(d, IRExpr_Binop(Iop_Sub64, addr, lo)));
	IRTemp g = newIRTemp(sb->tyenv, Ity_I1);
	addStmtToIRSB(sb, IRStmt_WrTmp(g, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(d), span)));
	return IRExpr_RdTmp(g);
}

static void add_call(IRSB *sb, const HChar *name, void *fn, IRExpr **args, IRExpr *guard, IRExpr *maddr, Int msize)
{
	/* After a memory access, VEX has the registers the helper's unwinding reads up to date
	 * already (--vex-iropt-register-updates=unwindregs-at-mem-access, the default). */
	IRDirty *d = unsafeIRDirty_0_N(0, name, VG_(fnptr_to_fnentry)(fn), args);
	if (guard)
		d->guard = guard;
	if (maddr && msize > 0) {
		d->mFx = Ifx_Read;
		d->mAddr = maddr;
		d->mSize = msize;
	}
	if (maddr && msize > 0) {
		addStmtToIRSB(sb, IRStmt_Dirty(d));
		return;
	}
	/* The helper unwinds the stack: the registers it reads must be up to date. */
	d->nFxState = 3;
	VG_(memset)(&d->fxState, 0, sizeof d->fxState);
	d->fxState[0].fx = Ifx_Read;
	d->fxState[0].offset = offsetof(VexGuestAMD64State, guest_RSP);
	d->fxState[0].size = 8;
	d->fxState[1].fx = Ifx_Read;
	d->fxState[1].offset = offsetof(VexGuestAMD64State, guest_RBP);
	d->fxState[1].size = 8;
	d->fxState[2].fx = Ifx_Read;
	d->fxState[2].offset = offsetof(VexGuestAMD64State, guest_RIP);
	d->fxState[2].size = 8;
	addStmtToIRSB(sb, IRStmt_Dirty(d));
}

static void mem_event(IRSB *sb, UWord k, Addr ip, IRExpr *addr, Int size)
{
	if (size <= 0)
		return;
	/* Flat IR: addr is an atom (a temporary or a constant), usable as a helper argument. */
	IRExpr *g = hull_guard(sb, addr);
	add_call(sb, "scry_mem", h_mem, mkIRExprVec_4(mkIRExpr_HWord(k), mkIRExpr_HWord(ip), addr, mkIRExpr_HWord(size)), g, addr, size);
}

static Bool entry_named(Addr ip, const HChar *name)
{
	const HChar *fn = NULL;
	return name && VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), ip, &fn) && fn && VG_(strcmp)(fn, name) == 0;
}

static IRSB *scry_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			     const VexGuestExtents *vge, const VexArchInfo *archinfo, IRType gWordTy, IRType hWordTy)
{
	(void)closure, (void)layout, (void)vge, (void)archinfo;
	if (gWordTy != hWordTy || gWordTy != Ity_I64)
		VG_(tool_panic)("scry: only amd64 is supported");
	IRSB *sb = deepCopyIRSBExceptStmts(in);
	Int i = 0;
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(sb, in->stmts[i]);
	Addr ip = 0;
	Int cls = I_OTHER;
	/* Loads inside libpmem and libpmemobj are the libraries' business (the runtime does not see
	 * them either): not instrumented. */
	Bool in_pmdk = False;
	/* The definitions of the block's temporaries (flat IR: each assigned once). */
	IRExpr **defs = VG_(calloc)("scry.defs", in->tyenv->types_used + 1, sizeof(IRExpr *));
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (!st || st->tag == Ist_NoOp)
			continue;
		switch (st->tag) {
		case Ist_IMark:
			addStmtToIRSB(sb, st);
			ip = (Addr)st->Ist.IMark.addr;
			cls = insn_class(ip, st->Ist.IMark.len);
			in_pmdk = (obj_class(ip) & OBJ_CLASS) >= OBJ_PMEMOBJ;
			if (entry_named(ip, clo_op_begin))
				add_call(sb, "scry_op_marker", h_op_marker, mkIRExprVec_1(mkIRExpr_HWord(0)), NULL, NULL, 0);
			else if (entry_named(ip, clo_op_end))
				add_call(sb, "scry_op_marker", h_op_marker, mkIRExprVec_1(mkIRExpr_HWord(1)), NULL, NULL, 0);
			break;
		case Ist_WrTmp: {
			addStmtToIRSB(sb, st);
			IRExpr *e = st->Ist.WrTmp.data;
			defs[st->Ist.WrTmp.tmp] = e;
			if (clo_loads && !in_pmdk && e->tag == Iex_Load)
				mem_event(sb, K_LOAD, ip, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty));
			break;
		}
		case Ist_Store: {
			addStmtToIRSB(sb, st);
			IRType ty = typeOfIRExpr(in->tyenv, st->Ist.Store.data);
			mem_event(sb, cls == I_NT ? K_NT_STORE : K_STORE, ip, st->Ist.Store.addr, sizeofIRType(ty));
			break;
		}
		case Ist_StoreG: {
			addStmtToIRSB(sb, st);
			IRStoreG *sg = st->Ist.StoreG.details;
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, sg->data));
			IRTemp g64 = newIRTemp(sb->tyenv, Ity_I64);
			addStmtToIRSB(sb, IRStmt_WrTmp(g64, IRExpr_Unop(Iop_1Uto64, sg->guard)));
			IRTemp sz = newIRTemp(sb->tyenv, Ity_I64);
			addStmtToIRSB(sb, IRStmt_WrTmp(sz, IRExpr_Binop(Iop_Or64, IRExpr_RdTmp(g64), mkIRExpr_HWord((HWord)size << 1))));
			add_call(sb, "scry_mem_guarded", h_mem_guarded,
				 mkIRExprVec_4(mkIRExpr_HWord(cls == I_NT ? K_NT_STORE : K_STORE), mkIRExpr_HWord(ip), sg->addr, IRExpr_RdTmp(sz)),
				 NULL, sg->addr, size);
			break;
		}
		case Ist_LoadG: {
			addStmtToIRSB(sb, st);
			if (!clo_loads || in_pmdk)
				break;
			IRLoadG *lg = st->Ist.LoadG.details;
			IRType ty, wty;
			typeOfIRLoadGOp(lg->cvt, &wty, &ty);
			Int size = sizeofIRType(ty);
			IRTemp g64 = newIRTemp(sb->tyenv, Ity_I64);
			addStmtToIRSB(sb, IRStmt_WrTmp(g64, IRExpr_Unop(Iop_1Uto64, lg->guard)));
			IRTemp sz = newIRTemp(sb->tyenv, Ity_I64);
			addStmtToIRSB(sb, IRStmt_WrTmp(sz, IRExpr_Binop(Iop_Or64, IRExpr_RdTmp(g64), mkIRExpr_HWord((HWord)size << 1))));
			add_call(sb, "scry_mem_guarded", h_mem_guarded,
				 mkIRExprVec_4(mkIRExpr_HWord(K_LOAD), mkIRExpr_HWord(ip), lg->addr, IRExpr_RdTmp(sz)), NULL, lg->addr, size);
			break;
		}
		case Ist_CAS: {
			addStmtToIRSB(sb, st);
			IRCAS *cas = st->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
			mem_event(sb, K_RMW, ip, cas->addr, size);
			break;
		}
		case Ist_LLSC:
			addStmtToIRSB(sb, st);
			if (st->Ist.LLSC.storedata)
				mem_event(sb, K_RMW, ip, st->Ist.LLSC.addr, sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)));
			break;
		case Ist_Dirty: {
			addStmtToIRSB(sb, st);
			IRDirty *d = st->Ist.Dirty.details;
			if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
				mem_event(sb, K_STORE, ip, d->mAddr, d->mSize);
			else if (clo_loads && !in_pmdk && d->mFx == Ifx_Read)
				mem_event(sb, K_LOAD, ip, d->mAddr, d->mSize);
			break;
		}
		case Ist_MBE:
			addStmtToIRSB(sb, st);
			if (st->Ist.MBE.event == Imbe_Fence && (cls == I_SFENCE || cls == I_MFENCE))
				add_call(sb, "scry_fence", h_fence,
					 mkIRExprVec_2(mkIRExpr_HWord(ip), mkIRExpr_HWord(cls == I_SFENCE ? K_SFENCE : K_MFENCE)), NULL, NULL, 0);
			break;
		case Ist_Put: {
			addStmtToIRSB(sb, st);
			/* clflush: VEX invalidates the 256-byte block around the address (CMSTART =
			 * addr & ~255); the flushed line is the one of addr itself. */
			if (cls != I_CLFLUSH || st->Ist.Put.offset != offsetof(VexGuestAMD64State, guest_CMSTART))
				break;
			IRExpr *e = st->Ist.Put.data;
			if (e->tag == Iex_RdTmp && defs[e->Iex.RdTmp.tmp])
				e = defs[e->Iex.RdTmp.tmp];
			if (e->tag == Iex_Binop && e->Iex.Binop.op == Iop_And64)
				e = e->Iex.Binop.arg1;
			add_call(sb, "scry_flush", h_flush, mkIRExprVec_2(mkIRExpr_HWord(ip), e), NULL, NULL, 0);
			break;
		}
		default:
			addStmtToIRSB(sb, st);
		}
	}
	VG_(free)(defs);
	/* The shadow stack (where): a call pushes, a return pops, with the stack pointer after
	 * the block's own update of it. */
	if (in->jumpkind == Ijk_Call || in->jumpkind == Ijk_Ret) {
		IRTemp sp = newIRTemp(sb->tyenv, Ity_I64);
		addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RSP), Ity_I64)));
		IRDirty *d = in->jumpkind == Ijk_Call
				     ? unsafeIRDirty_0_N(2, "scry_call", VG_(fnptr_to_fnentry)(h_call), mkIRExprVec_2(IRExpr_RdTmp(sp), in->next))
				     : unsafeIRDirty_0_N(1, "scry_ret", VG_(fnptr_to_fnentry)(h_ret), mkIRExprVec_1(IRExpr_RdTmp(sp)));
		addStmtToIRSB(sb, IRStmt_Dirty(d));
	}
	if (in->jumpkind == Ijk_NoDecode)
		add_call(sb, "scry_nodecode", h_nodecode, mkIRExprVec_1(in->next), NULL, NULL, 0);
	return sb;
}

/* ---------------------------------------------------------------- client requests */

static Int g_tx_depth[MAX_THREADS]; /* libpmemobj transactions open per thread */

static void thread_reset(ThreadId tid)
{
	g_tx_depth[tid] = 0;
	g_shadow[tid].n = 0;
}

/* Reservations not yet published nor cancelled, by the address of their struct pobj_action (as
 * the runtime keeps them: native/runtime/hooks_pmemobj.c). */
#define MAX_RESV 1024
static struct {
	Addr act, addr;
	SizeT size;
} g_resv[MAX_RESV];
static Int g_nresv;

static void resv_add(Addr act, Addr addr, SizeT size)
{
	for (Int i = 0; i < g_nresv; i++)
		if (g_resv[i].act == act) {
			g_resv[i].addr = addr, g_resv[i].size = size;
			return;
		}
	if (g_nresv < MAX_RESV) {
		g_resv[g_nresv].act = act, g_resv[g_nresv].addr = addr, g_resv[g_nresv].size = size;
		g_nresv++;
	}
}

/* The records of the reservations whose action lies in actv[0..n): ALLOC (flags) when published,
 * FREE (flag reserve) when cancelled; the caller wrote the prologue. */
static void resv_end(UInt site, Addr actv, SizeT n, Bool publish, UChar flags)
{
	/* sizeof(struct pobj_action) in PMDK 1.x: a 4-byte type, 3 words of data, 14 more words. */
	const SizeT act_size = 4 + 3 * 4 + 14 * 8;
	for (Int i = 0; i < g_nresv; i++) {
		if (g_resv[i].act < actv || g_resv[i].act >= actv + n * act_size)
			continue;
		if (in_pm(g_resv[i].addr, 1)) {
			if (publish)
				scry_enc_tx_add(SCRY_EV_ALLOC, site, g_resv[i].addr, g_resv[i].size, flags);
			else
				scry_enc_free(site, g_resv[i].addr, SCRY_ALLOC_RESERVE);
		}
		g_resv[i--] = g_resv[--g_nresv];
	}
}

/* pmemcheck's requests in the program (docs/pmemcheck.md), recorded as the runtime records them
 * (native/runtime/valgrind.c), at the request's site; every request answers 0. The numbers are
 * pmemcheck's ABI, from VG_USERREQ_TOOL_BASE('P', 'C'): native/include/pmemcheck.h. */
enum {
	PMC_REGISTER_PMEM_MAPPING = ('P' << 24) | ('C' << 16),
	PMC_REMOVE_PMEM_MAPPING = PMC_REGISTER_PMEM_MAPPING + 2,
	PMC_DO_FLUSH = PMC_REGISTER_PMEM_MAPPING + 5,
	PMC_DO_FENCE = PMC_REGISTER_PMEM_MAPPING + 6,
	PMC_SET_CLEAN = PMC_REGISTER_PMEM_MAPPING + 17,
	PMC_ADD_TO_TX = PMC_REGISTER_PMEM_MAPPING + 22,
	PMC_ADD_TO_TX_N = PMC_REGISTER_PMEM_MAPPING + 23,
	PMC_ADD_TO_GLOBAL_TX_IGNORE = PMC_REGISTER_PMEM_MAPPING + 28,
};

static Bool pmemcheck_request(ThreadId tid, UWord *arg, UWord *ret)
{
	*ret = 0;
	/* A library's own requests (Debian's PMDK makes them under any Valgrind tool): scry
	 * interprets the library's calls itself. */
	if ((obj_class(VG_(get_IP)(tid)) & OBJ_CLASS) != OBJ_USER)
		return True;
	ThreadId t = tid < MAX_THREADS ? tid : MAX_THREADS - 1;
	Addr a = arg[1];
	SizeT n = arg[2];
	if (arg[0] == PMC_ADD_TO_TX_N)
		a = arg[2], n = arg[3];
	UChar kind;
	switch (arg[0]) {
	case PMC_DO_FLUSH:
		kind = SCRY_SITE_FLUSH;
		break;
	case PMC_DO_FENCE:
		kind = SCRY_SITE_FENCE;
		break;
	case PMC_REGISTER_PMEM_MAPPING:
	case PMC_REMOVE_PMEM_MAPPING:
	case PMC_SET_CLEAN:
	case PMC_ADD_TO_TX:
	case PMC_ADD_TO_TX_N:
	case PMC_ADD_TO_GLOBAL_TX_IGNORE:
		kind = SCRY_SITE_LIBCALL;
		if (n == 0 || (arg[0] != PMC_REGISTER_PMEM_MAPPING && !in_pm(a, n)))
			return True;
		break;
	default:
		return True; /* nothing to record (native/runtime/valgrind.c says why, request by request) */
	}
	if (arg[0] == PMC_REGISTER_PMEM_MAPPING && !in_pm(a, n)) {
		region_map(tid, a, n, 0, "", False);
		return True;
	}
	Where w = where(tid, VG_(get_IP)(tid), kind);
	prologue(tid, w.ctx);
	switch (arg[0]) {
	case PMC_REGISTER_PMEM_MAPPING:
		scry_enc_tx_add(SCRY_EV_PM_EXCLUDE, w.site, a, n, SCRY_PM_INCLUDE);
		break;
	case PMC_REMOVE_PMEM_MAPPING:
		scry_enc_tx_add(SCRY_EV_PM_EXCLUDE, w.site, a, n, 0);
		break;
	case PMC_DO_FLUSH:
		for (Addr l = a & ~(Addr)63; l < a + n; l += 64)
			if (in_pm(l, 64))
				scry_enc_flush(w.site, SCRY_FLUSH_CLWB, l);
		break;
	case PMC_DO_FENCE:
		scry_enc_fence(w.site, SCRY_FENCE_SFENCE);
		break;
	case PMC_SET_CLEAN:
		scry_enc_set_clean(SCRY_EV_SET_CLEAN, w.site, a, n);
		break;
	case PMC_ADD_TO_TX:
	case PMC_ADD_TO_TX_N:
		if (g_tx_depth[t] > 0)
			scry_enc_tx_add(SCRY_EV_TX_ADD, w.site, a, n, SCRY_TXADD_NO_SNAPSHOT | SCRY_TXADD_NO_FLUSH);
		break;
	case PMC_ADD_TO_GLOBAL_TX_IGNORE:
		scry_enc_set_clean(SCRY_EV_TX_IGNORE, w.site, a, n);
		break;
	}
	return True;
}

static Bool scry_handle_client_request(ThreadId tid, UWord *arg, UWord *ret)
{
	if (VG_IS_TOOL_USERREQ('P', 'C', arg[0]))
		return pmemcheck_request(tid, arg, ret);
	if (!VG_IS_TOOL_USERREQ('S', 'C', arg[0]))
		return False;
	*ret = 0;
	ThreadId t = tid < MAX_THREADS ? tid : MAX_THREADS - 1;
	switch (arg[0]) {
	case SCRY_VGREQ_PM_CALL:
		if (arg[1]) {
			if (g_pm_call[t]++ == 0)
				g_pm_call_ret[t] = (Addr)arg[2];
		} else if (g_pm_call[t] > 0 && --g_pm_call[t] == 0) {
			pm_call_end(t, (Addr)arg[2]);
			g_pm_call_ret[t] = 0;
		}
		return True;
	case SCRY_VGREQ_USER_PERSIST:
		if (arg[1])
			g_user_persist[t]++;
		else if (g_user_persist[t] > 0)
			g_user_persist[t]--;
		return True;
	case SCRY_VGREQ_OP_LINE:
		if ((obj_class((Addr)arg[3] - 1) & OBJ_CLASS) == OBJ_USER)
			op_line(tid, (const HChar *)arg[1], (SizeT)arg[2]);
		return True;
	}
	/* The PMDK records, at the user's call of the library (arg: its return address). */
	Addr callret;
	switch (arg[0]) {
	case SCRY_VGREQ_TX_SITE:
		callret = (Addr)arg[2];
		break;
	case SCRY_VGREQ_TX_RANGE:
		callret = (Addr)arg[5];
		if (arg[1] == SCRY_EV_PM_EXCLUDE && !in_pm(arg[2], arg[3]))
			return True;
		break;
	case SCRY_VGREQ_TX_ABORT:
		callret = (Addr)arg[2];
		break;
	case SCRY_VGREQ_FREE:
		callret = (Addr)arg[3];
		break;
	case SCRY_VGREQ_RESERVE:
	case SCRY_VGREQ_RESV_END:
		callret = (Addr)arg[5];
		break;
	default:
		return False;
	}
	Where w = where_call(tid, callret, SCRY_SITE_LIBCALL);
	prologue(tid, w.ctx);
	switch (arg[0]) {
	case SCRY_VGREQ_TX_SITE:
		scry_enc_tx_begin((uint8_t)arg[1], w.site);
		if (arg[1] == SCRY_EV_TX_BEGIN)
			g_tx_depth[t]++;
		else if (arg[1] == SCRY_EV_TX_END && g_tx_depth[t] > 0)
			g_tx_depth[t]--;
		break;
	case SCRY_VGREQ_TX_RANGE:
		scry_enc_tx_add((uint8_t)arg[1], w.site, arg[2], arg[3], (uint8_t)arg[4]);
		break;
	case SCRY_VGREQ_TX_ABORT:
		scry_enc_tx_abort(w.site, arg[1]);
		break;
	case SCRY_VGREQ_FREE:
		scry_enc_free(w.site, arg[1], (uint8_t)arg[2]);
		break;
	case SCRY_VGREQ_RESERVE:
		if (in_pm(arg[2], 1)) {
			scry_enc_tx_add(SCRY_EV_ALLOC, w.site, arg[2], arg[3], (uint8_t)arg[4]);
			resv_add(arg[1], arg[2], arg[3]);
		}
		break;
	case SCRY_VGREQ_RESV_END:
		resv_end(w.site, arg[1], arg[2], arg[3] != 0, (UChar)arg[4]);
		break;
	}
	return True;
}

/* ---------------------------------------------------------------- start and end */

static void scry_post_clo_init(void)
{
	if (!clo_trace) {
		VG_(fmsg)("scry: --trace=PATH is required\n");
		VG_(exit)(2);
	}
	if (clo_pm) {
		HChar *s = VG_(strdup)("scry.globs", clo_pm), *save = NULL;
		for (HChar *g = VG_(strtok_r)(s, ":", &save); g; g = VG_(strtok_r)(NULL, ":", &save)) {
			if (g_nglobs == MAX_GLOBS) {
				VG_(fmsg)("scry: more than %d --pm globs\n", MAX_GLOBS);
				VG_(exit)(2);
			}
			g_globs[g_nglobs++] = g;
		}
	}
	SysRes r = VG_(open)(clo_trace, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC, 0644);
	if (sr_isError(r)) {
		VG_(fmsg)("scry: cannot create the trace %s\n", clo_trace);
		VG_(exit)(2);
	}
	g_fd = (Int)sr_Res(r);
	/* Every call and return must end a block, for the shadow stack: VEX may not follow a call
	 * into its callee within one superblock (Callgrind asks the same). */
	VG_(clo_vex_control).guest_chase = False;
	g_sites = VG_(HT_construct)("scry.sites");
	g_stacks = VG_(HT_construct)("scry.stacks");
	g_objs = VG_(HT_construct)("scry.objs");
	unsigned char h[SCRY_TRACE_HEADER_SIZE];
	scry_trace_header(h, SCRY_TRACE_VERSION, 0, 64);
	scry_put_bytes(h, sizeof h);
}

static void scry_fini(Int exitcode)
{
	if (g_fd < 0)
		return;
	op_end(g_last_tid);
	scry_enc_end(SCRY_END_EXIT, exitcode);
	buf_flush();
	VG_(close)(g_fd);
	g_fd = -1;
}

static void scry_pre_clo_init(void)
{
	VG_(details_name)("scry");
	VG_(details_version)(NULL);
	VG_(details_description)("scry's black-box recorder of persistent-memory programs");
	VG_(details_copyright_author)("the scry authors");
	VG_(details_bug_reports_to)("https://github.com/scry-pm/scry/issues");
	VG_(details_avg_translation_sizeB)(400);
	VG_(basic_tool_funcs)(scry_post_clo_init, scry_instrument, scry_fini);
	VG_(needs_command_line_options)(scry_process_cmd_line_option, scry_print_usage, scry_print_debug_usage);
	VG_(needs_client_requests)(scry_handle_client_request);
	VG_(needs_syscall_wrapper)(scry_pre_syscall, scry_post_syscall);
	VG_(track_post_mem_write)(scry_post_mem_write);
	VG_(track_pre_thread_ll_exit)(scry_thread_exit);
}

VG_DETERMINE_INTERFACE_VERSION(scry_pre_clo_init)
