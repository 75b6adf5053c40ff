// custom-oracle (buggy): a one-entry redo log in raw PM (libpmem's pmem_map_file). To append, the
// program writes the entry, then sets the log's commit flag, then persists the log; recovery
// applies a committed entry. The flag is set while the entry is still only in the cache, on
// other cache lines than the flag, so a crash can persist the flag without the entry and
// recovery applies garbage. scry's own analyses see nothing wrong (everything is persisted in
// the end, and this run never reads the log back); the custom oracle of oracle/main.go, which
// knows the log's layout, reports the store that sets the flag (AGAMOTTO (OSDI'20) §4.2.2:
// custom oracles state what the program's own PM data must satisfy).
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
	log->committed = 1; // want "premature-commit"
	pmem_persist(log, offsetof(struct log, entry) + n);
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
