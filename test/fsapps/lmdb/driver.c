/* LMDB driver for the file-system corpus (docs/fs-mode.md, "Real applications").
 *
 * `driver init` creates the environment db/ (data.mdb, lock.mdb) holding init0..init2 (the
 * initial state, not recorded). `driver run` is the recorded workload: one write transaction
 * per key k0..k2 (mdb_put, then mdb_txn_commit, which writes the dirty pages, fdatasyncs the
 * data file and writes the meta page through its O_DSYNC descriptor), printing "ack KEY" once
 * mdb_txn_commit has returned 0: what the checker reads back from $SCRY_STDOUT. */
#include <stdio.h>
#include <string.h>

#include <lmdb.h>

#include "../kv.h"
#include "env.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s\n", what, mdb_strerror(rc));
	return 1;
}

int main(int argc, char **argv)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k, v;
	char key[16], val[VALUE_SIZE];
	int rc, init;

	if (argc != 2 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "run") != 0)) {
		fprintf(stderr, "usage: driver init|run\n");
		return 2;
	}
	init = strcmp(argv[1], "init") == 0;
	if (open_env(&env) != 0)
		return 1;
	for (int i = 0; i < NKEYS; i++) {
		snprintf(key, sizeof key, "%s%d", init ? "init" : "k", i);
		value_of(key, val);
		if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
			return fail("mdb_txn_begin", rc);
		if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0)
			return fail("mdb_dbi_open", rc);
		k.mv_size = strlen(key);
		k.mv_data = key;
		v.mv_size = sizeof val;
		v.mv_data = val;
		if ((rc = mdb_put(txn, dbi, &k, &v, 0)) != 0)
			return fail("mdb_put", rc);
		if ((rc = mdb_txn_commit(txn)) != 0)
			return fail("mdb_txn_commit", rc);
		if (!init) {
			printf("ack %s\n", key);
			fflush(stdout);
		}
	}
	mdb_env_close(env);
	return 0;
}
