/* kvlog: an append-only log of key-value records in a file mapped with libpmem. */
#ifndef KVLOG_H
#define KVLOG_H

#include <stddef.h>
#include <stdint.h>

struct kvlog;

/* Opens (creating it, 4 KiB) the log at path; NULL with errno set on failure. */
struct kvlog *kvlog_open(const char *path);
/* Appends key=value; -1 when the log is full. */
int kvlog_append(struct kvlog *log, uint64_t key, uint64_t value);
void kvlog_close(struct kvlog *log);

#endif
