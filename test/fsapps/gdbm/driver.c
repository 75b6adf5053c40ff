/* GDBM driver for the file-system corpus (docs/fs-mode.md, "Real applications").
 *
 * `driver init [nommap]` creates the database db.gdbm holding init0..init2 (the initial state, not
 * recorded). `driver run [nommap]` is the recorded workload: it opens db.gdbm for writing and
 * stores k0..k2, each followed by gdbm_sync, printing "ack KEY" once gdbm_sync has returned 0:
 * what the checker reads back from $SCRY_STDOUT. With `nommap` the database is opened with
 * GDBM_NOMMAP (pread/pwrite); without it GDBM maps the file (its default), writes through the
 * mapping and syncs with msync and fsync. */
#include <stdio.h>
#include <string.h>

#include <gdbm.h>

#include "../kv.h"

int main(int argc, char **argv)
{
	char key[16], val[VALUE_SIZE];
	int init, flags = 0;
	GDBM_FILE db;

	if (argc < 2 || argc > 3 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "run") != 0) ||
	    (argc == 3 && strcmp(argv[2], "nommap") != 0)) {
		fprintf(stderr, "usage: driver init|run [nommap]\n");
		return 2;
	}
	init = strcmp(argv[1], "init") == 0;
	if (argc == 3)
		flags |= GDBM_NOMMAP;
	db = gdbm_open("db.gdbm", 0, GDBM_WRCREAT | flags, 0644, NULL);
	if (db == NULL) {
		fprintf(stderr, "gdbm_open: %s\n", gdbm_strerror(gdbm_errno));
		return 1;
	}
	for (int i = 0; i < NKEYS; i++) {
		datum k, v;
		snprintf(key, sizeof key, "%s%d", init ? "init" : "k", i);
		value_of(key, val);
		k.dptr = key;
		k.dsize = (int)strlen(key);
		v.dptr = val;
		v.dsize = VALUE_SIZE;
		if (gdbm_store(db, k, v, GDBM_REPLACE) != 0) {
			fprintf(stderr, "gdbm_store %s: %s\n", key, gdbm_db_strerror(db));
			return 1;
		}
		if (gdbm_sync(db) != 0) {
			fprintf(stderr, "gdbm_sync: %s\n", gdbm_db_strerror(db));
			return 1;
		}
		if (!init) {
			printf("ack %s\n", key);
			fflush(stdout);
		}
	}
	if (gdbm_close(db) != 0) {
		fprintf(stderr, "gdbm_close: %s\n", gdbm_strerror(gdbm_errno));
		return 1;
	}
	return 0;
}
