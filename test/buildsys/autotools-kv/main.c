/* kvlog POOL KEY VALUE: appends KEY=VALUE to the kvlog at POOL. */
#include <stdio.h>
#include <stdlib.h>

#include "kvlog.h"

int main(int argc, char *argv[])
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s POOL KEY VALUE\n", argv[0]);
		return 2;
	}
	struct kvlog *log = kvlog_open(argv[1]);
	if (!log) {
		perror(argv[1]);
		return 1;
	}
	int rc = kvlog_append(log, strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	kvlog_close(log);
	return rc == 0 ? 0 : 1;
}
