// gdbm_store: opens (creates) the GDBM database db in GDBM 1.23's default mode, which
// writes through a shared mapping of the file and msyncs it (gdbm_sync), and stores argv[1]
// keys k0..kN-1 with the values value-0.., each followed by gdbm_sync and "stored kI".
#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 4;
	GDBM_FILE db = gdbm_open("db", 0, GDBM_WRCREAT, 0644, NULL);
	if (!db)
		return fprintf(stderr, "gdbm_open: %s\n", gdbm_strerror(gdbm_errno)), 1;
	for (int i = 0; i < n; i++) {
		char k[16], v[32];
		snprintf(k, sizeof k, "k%d", i);
		snprintf(v, sizeof v, "value-%d", i);
		datum dk = {k, (int)strlen(k)}, dv = {v, (int)strlen(v)};
		if (gdbm_store(db, dk, dv, GDBM_REPLACE) != 0 || gdbm_sync(db) != 0)
			return fprintf(stderr, "gdbm_store %s: %s\n", k, gdbm_strerror(gdbm_errno)), 1;
		printf("stored %s\n", k);
		fflush(stdout);
	}
	return gdbm_close(db) != 0;
}
