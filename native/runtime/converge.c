//go:build ignore

/*
 * converge.c: convergence, the runtime's side of "stop early" for runs on crash images that pass
 * (issue 29; scry's side in internal/exec/converge.go). Source: WITCHER (Fu, Wang, Ahmed, Cox,
 * Min; SOSP'21) §4.5, output equivalence: a run on a crash image is compared with the legal
 * outcomes' runs. The program is deterministic and the rest of its input is the same, so a run
 * whose persistent state, once the program has opened (and so recovered) its pool and is about to
 * read its first operation, equals a legal outcome's state at that point, behaves as that run from
 * there on: this file stops it there.
 *
 * The contract (fixed; scry builds the variable and reads OUT):
 *
 * SCRY_CONVERGE holds six fields separated by '\n':
 *   1. "1", the version (another value: the variable is ignored, "E version" goes to OUT)
 *   2. OUT: absolute path of the file the runtime creates (O_TRUNC) and writes
 *   3. POOL: absolute path of the pool file to hash
 *   4. EXCL: byte ranges of the pool whose content is ignored, "OFFSET+LENGTH" (decimal bytes),
 *      comma-separated, possibly empty
 *   5. NEEDOPEN: "1": hash only after a pmemobj_open or pmemobj_create of this process returned
 *      non-NULL (PMDK's recovery has run); "0": no such condition
 *   6. HASHES: the legal outcomes' hashes, space-separated, 32 lowercase hex digits each
 * It is ignored when SCRY_LAZY is set. It arrives in the environment (exec) or in the fork
 * server's tag (forkserver.c), so it is read at the first read of standard input, never in a
 * constructor; converge_reset forgets what was read before a fork server's child took its tag.
 *
 * When: in the pre-hook of a read of standard input (fgets, getline, getdelim, __getdelim with
 * stream == stdin; read with fd == 0), before the read, the first time the NEEDOPEN condition
 * holds there. Once per process: later reads never hash again, also after an error.
 *
 * The hash: XXH3-128, streamed over the pool file's size in bytes (u64 little-endian), then, for
 * each 4096-byte page at offset o (the last one zero-padded) whose content with every byte inside
 * an EXCL range set to zero is not all zero: o (u64 little-endian) and those 4096 bytes (EXCL
 * bytes zeroed). Holes (SEEK_DATA/SEEK_HOLE) are zero pages, skipped unread. So a hole and a page
 * of written zeros hash alike, and EXCL bytes never matter. Text: 32 lowercase hex digits, the
 * high 64 bits first (XXH128_canonical_t).
 *
 * OUT, written with open/write/close (never the program's stdio), errno preserved:
 *   "H <hash>"  the hash was taken;
 *   "C <i>"     it equals the i-th (from 0) of HASHES: standard output and error are flushed and
 *               the process _exits(0) (no atexit handlers, no destructors);
 *   "E <why>"   a malformed variable, a pool that cannot be opened or read: the program goes on as
 *               if there were no variable.
 * OUT is created at its first line: a run that never took the hash (NEEDOPEN never held, no read
 * of standard input) and had no error leaves no OUT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rt.h"

#define CV_PAGE 4096u
#define CV_CHUNK (1u << 20) /* bytes per pread: a multiple of CV_PAGE, at least 64 KiB */

_Atomic int g_converge; /* CV_*: what this process knows of SCRY_CONVERGE (rt.h) */
static _Atomic int g_opened; /* a pmemobj_open/pmemobj_create returned non-NULL */

struct cv_range {
	uint64_t off, end; /* [off, end) in bytes of the pool */
};

/* The parsed variable (valid in CV_WAIT and CV_BUSY). Fields point into g.var. */
static struct {
	char *var;                  /* a copy of the variable's value, its fields NUL-terminated */
	const char *out, *pool;
	const char *hashes;         /* space-separated, validated */
	struct cv_range *excl;      /* sorted by off, disjoint */
	size_t nexcl;
	int needopen;
} g;

void converge_opened(void)
{
	atomic_store_explicit(&g_opened, 1, memory_order_relaxed);
}

void converge_reset(void)
{
	atomic_store(&g_converge, CV_UNKNOWN);
}

/* Appends s to OUT (created at the first write of this process's hook). */
static void out_line(const char *s)
{
	static int created;
	if (!g.out || g.out[0] != '/')
		return;
	int fd = open(g.out, O_WRONLY | O_CLOEXEC | (created ? O_APPEND : O_CREAT | O_TRUNC), 0644);
	if (fd < 0)
		return;
	created = 1;
	rt_full_write(fd, s, strlen(s));
	close(fd);
}

/* An error: "E why" to OUT, and the variable is forgotten. */
static void fail(const char *why)
{
	char b[256];
	snprintf(b, sizeof b, "E %s\n", why);
	out_line(b);
	free(g.excl);
	g.excl = NULL;
	atomic_store(&g_converge, CV_OFF);
}

static int cmp_range(const void *a, const void *b)
{
	const struct cv_range *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Parses EXCL into g.excl (sorted, overlapping ranges merged); 0, or -1 when malformed. */
static int parse_excl(char *s)
{
	size_t n = *s ? 1 : 0;
	for (char *c = s; *c; c++)
		n += *c == ',';
	g.nexcl = 0;
	g.excl = n ? calloc(n, sizeof *g.excl) : NULL;
	if (n && !g.excl)
		return -1;
	while (*s) {
		char *end;
		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		unsigned long long off = strtoull(s, &end, 10);
		if (errno || *end != '+' || end[1] < '0' || end[1] > '9')
			return -1;
		unsigned long long len = strtoull(end + 1, &end, 10);
		if (errno || (*end && *end != ',') || off + len < off)
			return -1;
		if (len > 0)
			g.excl[g.nexcl++] = (struct cv_range){off, off + len};
		s = *end ? end + 1 : end;
		if (*end && !*s)
			return -1; /* a trailing comma */
	}
	qsort(g.excl, g.nexcl, sizeof *g.excl, cmp_range);
	size_t k = 0;
	for (size_t i = 0; i < g.nexcl; i++) {
		if (k > 0 && g.excl[i].off <= g.excl[k - 1].end) {
			if (g.excl[i].end > g.excl[k - 1].end)
				g.excl[k - 1].end = g.excl[i].end;
		} else {
			g.excl[k++] = g.excl[i];
		}
	}
	g.nexcl = k;
	return 0;
}

/* Validates HASHES: 32 lowercase hex digits each, separated by single spaces. */
static int valid_hashes(const char *s)
{
	while (*s) {
		for (int i = 0; i < 32; i++, s++)
			if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
				return 0;
		if (*s == ' ' && s[1])
			s++;
		else if (*s)
			return 0;
	}
	return 1;
}

/* Reads and parses SCRY_CONVERGE: the next state (CV_OFF or CV_WAIT). */
static int parse(void)
{
	const char *v = getenv("SCRY_CONVERGE");
	if (!v)
		return CV_OFF;
	const char *lz = getenv("SCRY_LAZY");
	if (lz && *lz)
		return CV_OFF;
	free(g.var);
	memset(&g, 0, sizeof g);
	g.var = strdup(v);
	if (!g.var)
		return CV_OFF;
	char *f[7] = {0};
	int n = 0; /* fields seen (7: more than six) */
	for (char *s = g.var; s && n < 7; n++) {
		f[n] = s;
		s = strchr(s, '\n');
		if (s)
			*s++ = 0;
	}
	if (n >= 2)
		g.out = f[1];
	if (strcmp(f[0], "1") != 0) {
		fail("version");
		return CV_OFF;
	}
	if (n != 6) {
		fail("malformed SCRY_CONVERGE: not six fields");
		return CV_OFF;
	}
	g.pool = f[2], g.hashes = f[5];
	const char *why = NULL;
	if (g.out[0] != '/')
		why = "OUT is not an absolute path";
	else if (g.pool[0] != '/')
		why = "POOL is not an absolute path";
	else if (parse_excl(f[3]) < 0)
		why = "malformed EXCL";
	else if (strcmp(f[4], "0") != 0 && strcmp(f[4], "1") != 0)
		why = "malformed NEEDOPEN";
	else if (!valid_hashes(g.hashes))
		why = "malformed HASHES";
	if (why) {
		fail(why);
		return CV_OFF;
	}
	g.needopen = f[4][0] == '1';
	return CV_WAIT;
}

/* Zeroes the EXCL bytes of buf, which holds the pool's bytes [off, off+n). */
static void zero_excl(unsigned char *buf, uint64_t off, uint64_t n)
{
	/* The first range ending after off (ranges are sorted and disjoint). */
	size_t lo = 0, hi = g.nexcl;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g.excl[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < g.nexcl && g.excl[i].off < off + n; i++) {
		uint64_t a = g.excl[i].off > off ? g.excl[i].off : off;
		uint64_t b = g.excl[i].end < off + n ? g.excl[i].end : off + n;
		memset(buf + (a - off), 0, b - a);
	}
}

static void put_u64(XXH3_state_t *st, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	XXH3_128bits_update(st, b, 8);
}

/* Hashes the pages [from, to) of the pool (page-aligned offsets, to <= the size rounded up)
 * into st; 0, or -1 when a read fails. */
static int hash_pages(XXH3_state_t *st, int fd, unsigned char *buf, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint64_t want = to - from < CV_CHUNK ? to - from : CV_CHUNK;
		uint64_t got = 0;
		while (got < want) {
			ssize_t r = pread(fd, buf + got, want - got, (off_t)(from + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -1;
			if (r == 0)
				break; /* end of file: the last page is zero-padded */
			got += (uint64_t)r;
		}
		memset(buf + got, 0, want - got);
		zero_excl(buf, from, want);
		for (uint64_t p = 0; p < want; p += CV_PAGE) {
			const unsigned char *page = buf + p;
			if (page[0] == 0 && memcmp(page, page + 1, CV_PAGE - 1) == 0)
				continue;
			put_u64(st, from + p);
			XXH3_128bits_update(st, page, CV_PAGE);
		}
		from += want;
	}
	return 0;
}

/* hash_pages over [from, to) without reading the pages that lie wholly inside an EXCL range:
 * they hash as zero pages, which are skipped (a libpmemobj pool's lanes are most of its data). */
static int hash_extent(XXH3_state_t *st, int fd, unsigned char *buf, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < g.nexcl && from < to; i++) {
		uint64_t a = (g.excl[i].off + CV_PAGE - 1) / CV_PAGE * CV_PAGE; /* whole pages inside */
		uint64_t b = g.excl[i].end / CV_PAGE * CV_PAGE;
		if (b <= a || b <= from)
			continue;
		if (a >= to)
			break;
		if (a > from && hash_pages(st, fd, buf, from, a) < 0)
			return -1;
		from = b;
	}
	return from < to ? hash_pages(st, fd, buf, from, to) : 0;
}

/* Takes the hash of the pool into hex (33 bytes); NULL, or the reason it could not. */
static const char *take_hash(char hex[33])
{
	int fd = open(g.pool, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "cannot open POOL";
	struct stat sb;
	unsigned char *buf = NULL;
	XXH3_state_t *st = NULL;
	const char *why = NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		why = "POOL is not a regular file";
		goto out;
	}
	buf = malloc(CV_CHUNK);
	st = XXH3_createState();
	if (!buf || !st || XXH3_128bits_reset(st) != XXH_OK) {
		why = "out of memory";
		goto out;
	}
	uint64_t size = (uint64_t)sb.st_size;
	uint64_t end = (size + CV_PAGE - 1) / CV_PAGE * CV_PAGE; /* pages cover [0, end) */
	put_u64(st, size);
	/* Data extents, page-aligned outwards; next: the first page not hashed yet. */
	uint64_t next = 0;
	while (next < end) {
		off_t d = lseek(fd, (off_t)next, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break; /* only a hole is left */
		uint64_t from, to;
		if (d < 0) { /* no SEEK_DATA here: read everything */
			from = next, to = end;
		} else {
			off_t h = lseek(fd, d, SEEK_HOLE);
			from = (uint64_t)d / CV_PAGE * CV_PAGE;
			to = h < 0 ? end : ((uint64_t)h + CV_PAGE - 1) / CV_PAGE * CV_PAGE;
			if (from < next)
				from = next;
			if (to > end)
				to = end;
			if (to <= from)
				to = from + CV_PAGE; /* cannot happen on a sane file system: go on */
		}
		if (hash_extent(st, fd, buf, from, to) < 0) {
			why = "cannot read POOL";
			goto out;
		}
		next = to;
	}
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[2 * i] = digits[c.digest[i] >> 4];
		hex[2 * i + 1] = digits[c.digest[i] & 15];
	}
	hex[32] = 0;
out:
	XXH3_freeState(st);
	free(buf);
	close(fd);
	return why;
}

/* The index of hex in HASHES, or -1. */
static long find_hash(const char *hex)
{
	long i = 0;
	for (const char *s = g.hashes; *s; i++) {
		if (memcmp(s, hex, 32) == 0)
			return i;
		s += 32;
		if (*s == ' ')
			s++;
	}
	return -1;
}

void converge_slow(void)
{
	int saved = errno;
	int s = CV_UNKNOWN;
	if (atomic_compare_exchange_strong(&g_converge, &s, CV_BUSY)) {
		s = parse();
		atomic_store(&g_converge, s);
	}
	if (s != CV_WAIT || (g.needopen && !atomic_load_explicit(&g_opened, memory_order_relaxed)))
		goto out;
	int expected = CV_WAIT;
	if (!atomic_compare_exchange_strong(&g_converge, &expected, CV_BUSY))
		goto out; /* another thread takes it */
	char hex[33], line[64];
	const char *why = take_hash(hex);
	if (why) {
		fail(why);
		goto out;
	}
	snprintf(line, sizeof line, "H %s\n", hex);
	out_line(line);
	long i = find_hash(hex);
	if (i >= 0) {
		snprintf(line, sizeof line, "C %ld\n", i);
		out_line(line);
		fflush(stdout);
		fflush(stderr);
		_exit(0);
	}
	free(g.excl);
	g.excl = NULL;
	atomic_store(&g_converge, CV_OFF);
out:
	errno = saved;
}
