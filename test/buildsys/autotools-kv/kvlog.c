/* kvlog (buggy): an append writes the record, then bumps the count and persists the count
 * (pmem_persist) but never the record: the count may be durable while the record it publishes is
 * not, so after a crash the log can end in garbage. */
#include "kvlog.h"

#include <libpmem.h>
#include <stdlib.h>

struct record {
	uint64_t key, value;
};

struct header {
	uint64_t count;
	uint64_t pad[7];
	struct record records[];
};

struct kvlog {
	struct header *h;
	size_t mapped;
};

struct kvlog *kvlog_open(const char *path)
{
	struct kvlog *log = malloc(sizeof *log);
	int is_pmem;
	if (!log)
		return NULL;
	log->h = pmem_map_file(path, 4096, PMEM_FILE_CREATE, 0644, &log->mapped, &is_pmem);
	if (!log->h) {
		free(log);
		return NULL;
	}
	return log;
}

int kvlog_append(struct kvlog *log, uint64_t key, uint64_t value)
{
	struct header *h = log->h;
	if (sizeof *h + (h->count + 1) * sizeof(struct record) > log->mapped)
		return -1;
	struct record *r = &h->records[h->count];
	r->key = key; // want "unpersisted-store"
	r->value = value; // want "unpersisted-store"
	h->count++;
	pmem_persist(&h->count, sizeof h->count);
	return 0;
}

void kvlog_close(struct kvlog *log)
{
	pmem_unmap(log->h, log->mapped);
	free(log);
}
