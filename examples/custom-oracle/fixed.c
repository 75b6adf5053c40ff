// custom-oracle (fixed): the one-entry redo log of buggy.c, appended in the right order: the
// entry and its length are persisted first, and only then is the commit flag set and persisted,
// so no crash can leave a set flag over an entry that did not reach PM. The custom oracle of
// oracle/main.go reports nothing.
// scry: args {pool}
// scry: checker oracle
#include <libpmem.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "example.h"

#define POOL_SIZE 4096

/* The pool's layout, which oracle/main.go knows too. */
struct log {
	uint64_t committed; /* offset 0: the commit flag (cache line 0) */
	uint64_t len;       /* offset 8: the entry's length, on the flag's line */
	char pad[48];
	char entry[128]; /* offset 64: the entry (cache lines 1 and 2) */
	char data[128];  /* offset 192: where entries are applied */
};

/* apply copies a committed entry to the data and clears the flag. */
static void apply(struct log *log, const char *s, uint64_t n)
{
	memcpy(log->data, s, n);
	pmem_persist(log->data, n);
	log->committed = 0;
	pmem_persist(&log->committed, sizeof log->committed);
}

/* append writes an entry to the log and commits it. */
static void append(struct log *log, const char *s, uint64_t n)
{
	memcpy(log->entry, s, n);
	log->len = n;
	pmem_persist(log, offsetof(struct log, entry) + n);
	log->committed = 1;
	pmem_persist(&log->committed, sizeof log->committed);
}

int main(int argc, char *argv[])
{
	struct log *log = example_pmem(argc, argv, POOL_SIZE, NULL);
	if (log->committed) /* recovery: a committed entry is applied again */
		apply(log, log->entry, log->len);

	static const char msg[] = "set greeting hello";
	append(log, msg, sizeof msg);
	apply(log, msg, sizeof msg);

	pmem_unmap(log, POOL_SIZE);
	return 0;
}
