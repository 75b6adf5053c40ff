/*
 * scry.h: the optional annotation API of scry for programs under test. Programs need none of it:
 * scry finds PM regions (libpmem, libpmemobj, mmap of files matching --pm) and operations (lines
 * read from standard input) by itself. Use it when a program maps PM in a way scry cannot see, or
 * has its own notion of an operation. Every function is a no-op when the program was not built
 * with `scry cc` (the weak definitions below are replaced by the scry runtime's).
 */
#ifndef SCRY_H
#define SCRY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declares [base, base+length) as persistent memory standing for `path` (may be NULL) from file
 * offset 0. Its current bytes are recorded as the region's initial content. */
void scry_register_pm(void *base, size_t length, const char *path) __attribute__((weak));
/* Declares that [base, base+length) is no longer persistent memory. */
void scry_unregister_pm(void *base) __attribute__((weak));
/* Begins a named workload operation (ends the previous one, if open). */
void scry_op_begin(const char *text) __attribute__((weak));
/* Ends the current workload operation. */
void scry_op_end(void) __attribute__((weak));

#define SCRY_REGISTER_PM(b, l, p) do { if (scry_register_pm) scry_register_pm((b), (l), (p)); } while (0)
#define SCRY_UNREGISTER_PM(b) do { if (scry_unregister_pm) scry_unregister_pm(b); } while (0)
#define SCRY_OP_BEGIN(t) do { if (scry_op_begin) scry_op_begin(t); } while (0)
#define SCRY_OP_END() do { if (scry_op_end) scry_op_end(); } while (0)

#ifdef __cplusplus
}
#endif

#endif /* SCRY_H */
