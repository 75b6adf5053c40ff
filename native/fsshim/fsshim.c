// fsshim.c: scry's mapping shim for file-system mode (docs/fs-mode.md, "Recording").
//
// `scry fs check` records the program under strace with this library in LD_PRELOAD. strace sees
// system calls, not stores to memory, so a write through a MAP_SHARED, PROT_WRITE mapping of a
// file would be invisible. The shim keeps, for each such mapping, a shadow copy of its bytes
// (made at mmap) and, at each point where the stores become visible to the persistence model,
// compares the mapping with its shadow page by page and reports the changed pages by a system
// call strace records in program order: a write(2) to descriptor -1, which fails with EBADF and
// changes nothing, but whose whole buffer strace prints (-xx -s 16MiB). The points are those of
// msync(2) and mmap(2): msync (MS_SYNC: the pages, then a sync of the range; MS_ASYNC: the
// pages only), munmap and mremap (the pages), fsync and fdatasync of the mapped file (the pages,
// then the real call syncs them), sync, the process's end (exit's destructors, _exit), and just
// before a write(2) (pwrite, writev, pwritev, pwritev2) to the mapped file, whose bytes the
// shadow then takes.
//
// A marker is a header (struct marker, little-endian) and, for MARK_DATA, the bytes:
//   HELLO  the shim is loaded in this process (at load and in a forked child)
//   MAP    serial, a = the mapping's address, b = its length: names the mapping mmap returned
//   DATA   serial, a = file offset, b = byte count, then the bytes (at most CHUNK per marker)
//   SYNC   serial, a = file offset, b = byte count: the range is durable (msync MS_SYNC)
// fs/strace/mmap.go decodes them. A forked child inherits the mappings and their shadows (a
// shared mapping is the same memory, so either process reports a page once it differs from
// its own shadow); exec drops them (the shadows' descriptors are close-on-exec).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAGIC "SCRYMAP1"
enum { MARK_HELLO = 1, MARK_MAP = 2, MARK_DATA = 3, MARK_SYNC = 4 };
#define CHUNK (1u << 20) // data bytes per DATA marker: strace prints 16 MiB of a buffer

struct marker {
	char magic[8];
	uint32_t kind;
	uint32_t pid;
	uint64_t serial;
	uint64_t a, b;
};

struct map {
	uintptr_t addr;
	size_t len; // page-rounded
	off_t off;  // file offset of addr
	int fd;     // our duplicate of the mapped file's descriptor (size, identity)
	dev_t dev;
	ino_t ino;
	uint64_t serial;
	unsigned char *shadow;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct map *maps;
static size_t nmaps, capmaps;
static uint64_t counter;
static size_t pagesz;
static unsigned char buf[sizeof(struct marker) + CHUNK];
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev2)(int, const struct iovec *, int, off_t, int);

static void emit(uint32_t kind, uint64_t serial, uint64_t a, uint64_t b, const void *data, size_t n) {
	struct marker m;
	memcpy(m.magic, MAGIC, 8);
	m.kind = kind;
	m.pid = (uint32_t)getpid();
	m.serial = serial;
	m.a = a;
	m.b = b;
	memcpy(buf, &m, sizeof m);
	if (n)
		memcpy(buf + sizeof m, data, n);
	int e = errno;
	syscall(SYS_write, -1, buf, sizeof m + n);
	errno = e;
}

// init_once finds the C library's write functions; pagesz, set last, says it is done (a thread
// racing it repeats the same assignments).
static void init_once(void) {
	if (__atomic_load_n(&pagesz, __ATOMIC_ACQUIRE))
		return;
	real_write = dlsym(RTLD_NEXT, "write");
	real_pwrite = dlsym(RTLD_NEXT, "pwrite");
	real_writev = dlsym(RTLD_NEXT, "writev");
	real_pwritev = dlsym(RTLD_NEXT, "pwritev");
	real_pwritev2 = dlsym(RTLD_NEXT, "pwritev2");
	__atomic_store_n(&pagesz, (size_t)sysconf(_SC_PAGESIZE), __ATOMIC_RELEASE);
}

// file_bytes is how many bytes of m are backed by the file now (reading past them faults).
static size_t file_bytes(struct map *m) {
	struct stat st;
	if (fstat(m->fd, &st) != 0 || st.st_size <= m->off)
		return 0;
	uint64_t n = (uint64_t)(st.st_size - m->off);
	return n < m->len ? (size_t)n : m->len;
}

// report emits the pages of m in [lo, hi) (offsets in the mapping) that differ from the shadow,
// as DATA markers of runs of contiguous changed pages, and updates the shadow.
static void report(struct map *m, size_t lo, size_t hi) {
	size_t valid = file_bytes(m);
	if (hi > valid)
		hi = valid;
	lo -= lo % pagesz;
	const unsigned char *mem = (const unsigned char *)m->addr;
	size_t run = 0, runlen = 0;
	for (size_t p = lo; p < hi; p += pagesz) {
		size_t n = hi - p < pagesz ? hi - p : pagesz;
		int changed = memcmp(mem + p, m->shadow + p, n) != 0;
		if (changed) {
			if (runlen == 0)
				run = p;
			runlen += n;
		}
		if (runlen && (!changed || runlen >= CHUNK || p + n >= hi)) {
			emit(MARK_DATA, m->serial, (uint64_t)m->off + run, runlen, mem + run, runlen);
			memcpy(m->shadow + run, mem + run, runlen);
			runlen = 0;
		}
	}
}

// report_range reports every tracked mapping's pages in the address range [addr, addr+len);
// with sync, a SYNC marker of the range of each file follows its pages.
static void report_range(uintptr_t addr, size_t len, int sync) {
	for (size_t i = 0; i < nmaps; i++) {
		struct map *m = &maps[i];
		uintptr_t lo = addr > m->addr ? addr : m->addr;
		uintptr_t hi = addr + len < m->addr + m->len ? addr + len : m->addr + m->len;
		if (lo >= hi)
			continue;
		report(m, lo - m->addr, hi - m->addr);
		if (sync)
			emit(MARK_SYNC, m->serial, (uint64_t)m->off + (lo - m->addr), hi - lo, NULL, 0);
	}
}

static void report_all(void) {
	for (size_t i = 0; i < nmaps; i++)
		report(&maps[i], 0, maps[i].len);
}

static void drop(size_t i) {
	close(maps[i].fd);
	free(maps[i].shadow);
	maps[i] = maps[--nmaps];
}

// forget stops tracking the address range [addr, addr+len) (unmapped or replaced): mappings
// inside it are dropped, ones overlapping it trimmed or split.
static void forget(uintptr_t addr, size_t len) {
	uintptr_t end = addr + len;
	for (size_t i = 0; i < nmaps;) {
		struct map *m = &maps[i];
		uintptr_t mend = m->addr + m->len;
		if (end <= m->addr || addr >= mend) {
			i++;
			continue;
		}
		if (addr <= m->addr && end >= mend) {
			drop(i);
			continue;
		}
		if (addr > m->addr && end < mend) { // a hole in the middle: split off the tail
			if (nmaps == capmaps) {
				size_t c = capmaps ? 2 * capmaps : 16;
				struct map *nm = realloc(maps, c * sizeof *nm);
				if (!nm) {
					i++;
					continue;
				}
				maps = nm, capmaps = c, m = &maps[i];
			}
			struct map t = *m;
			size_t cut = end - m->addr;
			t.addr = end;
			t.len = mend - end;
			t.off = m->off + (off_t)cut;
			t.fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 512);
			t.shadow = malloc(t.len);
			if (t.fd < 0 || !t.shadow) {
				if (t.fd >= 0)
					close(t.fd);
				free(t.shadow);
			} else {
				memcpy(t.shadow, m->shadow + cut, t.len);
				maps[nmaps++] = t;
			}
			m->len = addr - m->addr;
		} else if (addr <= m->addr) { // the head
			size_t cut = end - m->addr;
			memmove(m->shadow, m->shadow + cut, m->len - cut);
			m->addr = end;
			m->off += (off_t)cut;
			m->len -= cut;
		} else { // the tail
			m->len = addr - m->addr;
		}
		i++;
	}
}

static void track(void *addr, size_t len, int fd, off_t off) {
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	len = (len + pagesz - 1) / pagesz * pagesz;
	if (nmaps == capmaps) {
		size_t c = capmaps ? 2 * capmaps : 16;
		struct map *nm = realloc(maps, c * sizeof *nm);
		if (!nm)
			return;
		maps = nm, capmaps = c;
	}
	struct map m = {.addr = (uintptr_t)addr, .len = len, .off = off, .dev = st.st_dev, .ino = st.st_ino};
	m.fd = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (m.fd < 0)
		m.fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	m.shadow = calloc(1, len);
	if (m.fd < 0 || !m.shadow) {
		if (m.fd >= 0)
			close(m.fd);
		free(m.shadow);
		return;
	}
	m.serial = ((uint64_t)(uint32_t)getpid() << 32) | ++counter;
	memcpy(m.shadow, addr, file_bytes(&m));
	maps[nmaps++] = m;
	emit(MARK_MAP, m.serial, (uint64_t)(uintptr_t)addr, len, NULL, 0);
}

static int tracked_flags(int prot, int flags, int fd) {
	int type = flags & MAP_TYPE;
	return fd >= 0 && !(flags & MAP_ANONYMOUS) && (prot & PROT_WRITE) && (type == MAP_SHARED || type == MAP_SHARED_VALIDATE);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	init_once();
	pthread_mutex_lock(&mu);
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) { // replaces what was mapped there
		report_range((uintptr_t)addr, len, 0);
	}
	void *r = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r != MAP_FAILED) {
		if (flags & MAP_FIXED)
			forget((uintptr_t)r, len);
		if (tracked_flags(prot, flags, fd))
			track(r, len, fd, off);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

int munmap(void *addr, size_t len) {
	init_once();
	pthread_mutex_lock(&mu);
	report_range((uintptr_t)addr, len, 0);
	int r = (int)syscall(SYS_munmap, addr, len);
	if (r == 0)
		forget((uintptr_t)addr, len);
	pthread_mutex_unlock(&mu);
	return r;
}

int msync(void *addr, size_t len, int flags) {
	init_once();
	pthread_mutex_lock(&mu);
	report_range((uintptr_t)addr, len, (flags & MS_SYNC) != 0);
	pthread_mutex_unlock(&mu);
	return (int)syscall(SYS_msync, addr, len, flags);
}

void *mremap(void *old, size_t oldlen, size_t newlen, int flags, ...) {
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	init_once();
	pthread_mutex_lock(&mu);
	report_range((uintptr_t)old, oldlen, 0);
	void *r = (void *)syscall(SYS_mremap, old, oldlen, newlen, flags, want);
	if (r != MAP_FAILED) {
		struct map *m = NULL;
		for (size_t i = 0; i < nmaps; i++)
			if (maps[i].addr == (uintptr_t)old)
				m = &maps[i];
		size_t n = (newlen + pagesz - 1) / pagesz * pagesz;
		unsigned char *s = m ? realloc(m->shadow, n) : NULL;
		if (m && s && oldlen >= m->len) { // the whole mapping moved or resized: same serial
			if (n > m->len)
				memset(s + m->len, 0, n - m->len);
			m->shadow = s;
			m->addr = (uintptr_t)r;
			m->len = n;
			memcpy(m->shadow, r, file_bytes(m)); // just reported: the mapping is the file
		} else {
			if (m && s)
				m->shadow = s;
			forget((uintptr_t)old, oldlen); // part of a mapping: stop tracking it
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

// report_file reports the pages of every mapping of fd's file.
static void report_file(int fd) {
	struct stat st;
	init_once();
	if (fstat(fd, &st) != 0)
		return;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nmaps; i++)
		if (maps[i].dev == st.st_dev && maps[i].ino == st.st_ino)
			report(&maps[i], 0, maps[i].len);
	pthread_mutex_unlock(&mu);
}

int fsync(int fd) {
	report_file(fd);
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd) {
	report_file(fd);
	return (int)syscall(SYS_fdatasync, fd);
}

void sync(void) {
	init_once();
	pthread_mutex_lock(&mu);
	report_all();
	pthread_mutex_unlock(&mu);
	syscall(SYS_sync);
}

void _exit(int status) {
	init_once();
	pthread_mutex_lock(&mu);
	report_all();
	pthread_mutex_unlock(&mu);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

void _Exit(int status) __attribute__((alias("_exit")));

// Writes to a mapped file. The stores made through its mappings before a write(2) precede the
// write in program order: their pages are reported first (the kernel may write them back at any
// time after the stores). After the write, the written range of the mapping shows the new bytes
// (the page cache is shared): the shadow takes them, so that they are not reported again as a
// store.

static int before_write(int fd, struct stat *st) {
	init_once(); // a library's constructor may write before the shim's runs
	if (__atomic_load_n(&nmaps, __ATOMIC_RELAXED) == 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
		return 0;
	int any = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nmaps; i++)
		if (maps[i].dev == st->st_dev && maps[i].ino == st->st_ino) {
			report(&maps[i], 0, maps[i].len);
			any = 1;
		}
	pthread_mutex_unlock(&mu);
	return any;
}

// after_write copies the file's bytes [off, off+n), just written, from each mapping of the file
// into its shadow; off < 0 means the descriptor's position after the write is off+n's end.
static void after_write(int fd, const struct stat *st, off_t off, ssize_t n) {
	if (n <= 0)
		return;
	int e = errno;
	if (off < 0) {
		off_t end = lseek(fd, 0, SEEK_CUR);
		if (end < 0) {
			errno = e;
			return;
		}
		off = end - n;
	}
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nmaps; i++) {
		struct map *m = &maps[i];
		if (m->dev != st->st_dev || m->ino != st->st_ino)
			continue;
		off_t lo = off > m->off ? off : m->off;
		off_t hi = off + n;
		off_t valid = m->off + (off_t)file_bytes(m);
		if (hi > valid)
			hi = valid;
		if (lo < hi)
			memcpy(m->shadow + (lo - m->off), (const unsigned char *)m->addr + (lo - m->off), (size_t)(hi - lo));
	}
	pthread_mutex_unlock(&mu);
	errno = e;
}

ssize_t write(int fd, const void *b, size_t n) {
	struct stat st;
	int mapped = before_write(fd, &st);
	ssize_t r = real_write(fd, b, n);
	if (mapped)
		after_write(fd, &st, -1, r);
	return r;
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off) {
	struct stat st;
	int mapped = before_write(fd, &st);
	ssize_t r = real_pwrite(fd, b, n, off);
	if (mapped)
		after_write(fd, &st, off, r);
	return r;
}

ssize_t pwrite64(int fd, const void *b, size_t n, off_t off) __attribute__((alias("pwrite")));

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
	struct stat st;
	int mapped = before_write(fd, &st);
	ssize_t r = real_writev(fd, iov, cnt);
	if (mapped)
		after_write(fd, &st, -1, r);
	return r;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
	struct stat st;
	int mapped = before_write(fd, &st);
	ssize_t r = real_pwritev(fd, iov, cnt, off);
	if (mapped)
		after_write(fd, &st, off, r);
	return r;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) __attribute__((alias("pwritev")));

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) {
	struct stat st;
	int mapped = before_write(fd, &st);
	ssize_t r = real_pwritev2(fd, iov, cnt, off, flags);
	if (mapped)
		after_write(fd, &st, off, r);
	return r;
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) __attribute__((alias("pwritev2")));

static void prepare(void) { pthread_mutex_lock(&mu); }
static void parent(void) { pthread_mutex_unlock(&mu); }
static void child(void) {
	pthread_mutex_unlock(&mu);
	emit(MARK_HELLO, 0, 0, 0, NULL, 0);
}

__attribute__((constructor)) static void load(void) {
	init_once();
	pthread_atfork(prepare, parent, child);
	emit(MARK_HELLO, 0, 0, 0, NULL, 0);
}

__attribute__((destructor)) static void unload(void) {
	pthread_mutex_lock(&mu);
	report_all();
	pthread_mutex_unlock(&mu);
}
