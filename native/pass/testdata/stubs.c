/* Stub definitions of every callback run_main.c needs (compiled without the pass): they count
 * events per kind and check them against the registered site table (kinds agree, ids in range,
 * call depth balanced), then print one summary line at exit. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/types.h>
#include "scry_abi.h"
#include "scry_trace_format.h"

uintptr_t __scry_pm_lo = UINTPTR_MAX, __scry_pm_hi = 0;
static const struct scry_site *sites;
static uint32_t nsites, depth;
static unsigned long ndeps, loads, stores, ntstores, rmws, memops, flushes, fences, calls, exts, hooks, errors;

static void check(uint32_t site, uint32_t kind) {
	if (site < 1 || site > nsites || (sites[site - 1].kind & SCRY_SITE_KIND_MASK) != kind) {
		fprintf(stderr, "bad site %u (kind %u expected)\n", site, kind);
		errors++;
	}
}
int main(int, char **);
static int sawmain; /* main is among the registered functions */
void __scry_register_functions(const void *const *f, uint32_t n) {
	for (uint32_t i = 0; i < n; i++)
		sawmain |= f[i] == (const void *)main;
}
static void summary(void) {
	if (!sawmain) {
		fprintf(stderr, "main was not registered as an instrumented function\n");
		errors++;
	}
	printf("stubs: load=%lu store=%lu nt=%lu rmw=%lu memop=%lu flush=%lu fence=%lu call=%lu ext=%lu hook=%lu depth=%u errors=%lu deps=%lu\n",
	       loads, stores, ntstores, rmws, memops, flushes, fences, calls, exts, hooks, depth, errors, ndeps);
}
/* Dependence facts: both ends in the table, a control fact names a branch site, a value or
 * address fact a load, RMW or call site. */
uint32_t __scry_register_module_deps(const struct scry_site *s, uint32_t n, const struct scry_dep *d, uint32_t nd) {
	sites = s, nsites = n;
	for (uint32_t i = 0; i < nd; i++) {
		uint32_t tk = d[i].to < n ? s[d[i].to].kind & SCRY_SITE_KIND_MASK : 0;
		int ok = d[i].from < n && d[i].to < n &&
			 (d[i].kind == SCRY_DEP_CONTROL ? tk == SCRY_SITE_BRANCH
			  : (d[i].kind == SCRY_DEP_VALUE || d[i].kind == SCRY_DEP_ADDRESS) &&
				(tk == SCRY_SITE_LOAD || tk == SCRY_SITE_RMW || tk == SCRY_SITE_LIBCALL || tk == SCRY_SITE_CALL));
		if (!ok) {
			fprintf(stderr, "bad dep %u: %u -> %u kind %u\n", i, d[i].from, d[i].to, d[i].kind);
			errors++;
		}
	}
	ndeps = nd;
	atexit(summary);
	return 1;
}
static int inpm(const void *p) { return (uintptr_t)p >= __scry_pm_lo && (uintptr_t)p < __scry_pm_hi; }
void __scry_load(uint32_t site, const void *a, uint64_t n) { check(site, SCRY_SITE_LOAD); errors += !inpm(a); loads++; }
void __scry_store(uint32_t site, const void *a, uint64_t n) { check(site, SCRY_SITE_STORE); errors += !inpm(a); stores++; }
void __scry_nt_store(uint32_t site, const void *a, uint64_t n) { check(site, SCRY_SITE_NT_STORE); ntstores++; }
void __scry_rmw(uint32_t site, const void *a, uint64_t n) { check(site, SCRY_SITE_RMW); rmws++; }
void __scry_memop(uint32_t site, void *d, const void *s, uint64_t n) { check(site, SCRY_SITE_RANGE); memops++; }
void __scry_flush(uint32_t site, const void *a, uint32_t k) { check(site, SCRY_SITE_FLUSH); flushes++; }
void __scry_fence(uint32_t site, uint32_t k) { check(site, SCRY_SITE_FENCE); fences++; }
uint32_t __scry_enter(void) { return depth; }
void __scry_call(uint32_t d, uint32_t site) { depth = d + 1; calls++; }
void __scry_ret(uint32_t d) { depth = d; }
uint32_t __scry_ext_pre(uint32_t site, const void *c, const void *p0, const void *p1, const void *p2, const void *p3) {
	check(site, SCRY_SITE_CALL); exts++; return 7;
}
void __scry_ext_post(uint32_t site, uint32_t tok) { errors += tok != 7; }
/* Hooks used by run_main.c. */
void __scry_pre_mmap(uint32_t site, void *addr, size_t len, int prot, int flags, int fd, off_t off) { check(site, SCRY_SITE_LIBCALL); hooks++; }
void __scry_post_mmap(uint32_t site, void *ret, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	check(site, SCRY_SITE_LIBCALL);
	errors += len != 4096;
	__scry_pm_lo = (uintptr_t)ret, __scry_pm_hi = (uintptr_t)ret + len;
}
void __scry_pre_strncpy(uint32_t site, char *d, const char *s, size_t n) { check(site, SCRY_SITE_LIBCALL); hooks++; }
void __scry_post_strncpy(uint32_t site, char *ret, char *d, const char *s, size_t n) { errors += ret != d || n != 47; }
void __scry_pre_memcpy(uint32_t site, void *d, const void *s, size_t n) { hooks++; }
void __scry_pre_printf(uint32_t site, const char *f) { check(site, SCRY_SITE_LIBCALL); hooks++; }
void __scry_post_printf(uint32_t site, int ret, const char *f) { errors += ret != 7; }
/* The printf's variadic arguments arrive as passed: the format and the sum (20). */
void __scry_format_loads(uint32_t site, const char *f, ...) {
	check(site, SCRY_SITE_LIBCALL);
	va_list ap;
	va_start(ap, f);
	long v = va_arg(ap, long);
	va_end(ap);
	if (strcmp(f, "sum=%ld\n") != 0 || v != 20) {
		fprintf(stderr, "format loads: %s with %ld\n", f, v);
		errors++;
	}
}
void __scry_post_memcpy(uint32_t site, void *ret, void *d, const void *s, size_t n) {}
