// gdbm_check OUT: the checker of gdbm_store, run inside a crash directory. Every key OUT (what
// gdbm_store printed before the crash) says was stored must be in db with its value; argv[2],
// when given, is a key to create, to show that the database still takes writes (its mapped
// bucket and header are whole).
#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	GDBM_FILE db = gdbm_open("db", 0, GDBM_WRITER, 0, NULL);
	if (!db)
		return printf("db cannot be opened: %s\n", gdbm_strerror(gdbm_errno)), 1;
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	char line[128], key[64];
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "stored %63s", key) != 1)
			continue;
		char want[80];
		snprintf(want, sizeof want, "value-%s", key + 1);
		datum dk = {key, (int)strlen(key)};
		datum v = gdbm_fetch(db, dk);
		if (!v.dptr || v.dsize != (int)strlen(want) || memcmp(v.dptr, want, v.dsize) != 0)
			return printf("%s lost after \"stored %s\"\n", key, key), 1;
		free(v.dptr);
	}
	if (argc > 2) {
		datum dk = {argv[2], (int)strlen(argv[2])};
		if (gdbm_store(db, dk, dk, GDBM_REPLACE) != 0)
			return printf("storing %s: %s\n", argv[2], gdbm_strerror(gdbm_errno)), 1;
	}
	return gdbm_close(db) != 0;
}
