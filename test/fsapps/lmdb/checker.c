/* LMDB checker for the file-system corpus: run inside a crash directory, it opens db/ with LMDB
 * itself and checks that
 *   - the environment opens and every key it holds has its value;
 *   - init0..init2 (the initial state) are all there;
 *   - every key the driver acknowledged ("ack KEY" in $SCRY_STDOUT) is there;
 *   - a new write transaction commits (ALICE's LMDB failure shows when the database is modified
 *     after the crash: "mdb_page_touch" asserting, the paper's authors wrote to LMDB's developers).
 * Exit 0: consistent; 1: not, with the reason on standard output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "common.h"

static int fail(const char *what, int rc)
{
	printf("%s: %s\n", what, mdb_strerror(rc));
	return 1;
}

static int present(MDB_txn *txn, MDB_dbi dbi, const char *key, int *found)
{
	MDB_val k = {strlen(key), (void *)key}, v;
	char want[VALUE_SIZE];
	int rc = mdb_get(txn, dbi, &k, &v);
	*found = 0;
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return fail("mdb_get", rc);
	value_of(key, want);
	if (v.mv_size != VALUE_SIZE || memcmp(v.mv_data, want, VALUE_SIZE) != 0) {
		printf("key %s has a wrong value\n", key);
		return 1;
	}
	*found = 1;
	return 0;
}

int main(void)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cur;
	MDB_val k, v;
	char key[64], word[16];
	int rc, found;
	const char *out = getenv("SCRY_STDOUT");
	FILE *f;

	if (out == NULL) {
		printf("SCRY_STDOUT is not set\n");
		return 1;
	}
	if ((rc = mdb_env_create(&env)) != 0)
		return fail("mdb_env_create", rc);
	if ((rc = mdb_env_set_mapsize(env, MAP_SIZE)) != 0)
		return fail("mdb_env_set_mapsize", rc);
	if ((rc = mdb_env_open(env, "db", 0, 0644)) != 0)
		return fail("mdb_env_open", rc);
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) != 0)
		return fail("mdb_txn_begin", rc);
	if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0)
		return fail("mdb_dbi_open", rc);
	/* Every key's value. */
	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return fail("mdb_cursor_open", rc);
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		if (k.mv_size >= sizeof key) {
			printf("a key of %zu bytes\n", k.mv_size);
			return 1;
		}
		memcpy(key, k.mv_data, k.mv_size);
		key[k.mv_size] = 0;
		if (present(txn, dbi, key, &found) != 0)
			return 1;
	}
	if (rc != MDB_NOTFOUND)
		return fail("mdb_cursor_get", rc);
	mdb_cursor_close(cur);
	for (int i = 0; i < NKEYS; i++) {
		snprintf(key, sizeof key, "init%d", i);
		if (present(txn, dbi, key, &found) != 0)
			return 1;
		if (!found) {
			printf("initial key %s lost\n", key);
			return 1;
		}
	}
	if ((f = fopen(out, "r")) == NULL) {
		printf("%s: cannot open\n", out);
		return 1;
	}
	while (fscanf(f, "%15s %63s", word, key) == 2) {
		if (strcmp(word, "ack") != 0)
			continue;
		if (present(txn, dbi, key, &found) != 0)
			return 1;
		if (!found) {
			printf("acknowledged key %s lost\n", key);
			return 1;
		}
	}
	fclose(f);
	mdb_txn_abort(txn);
	/* The store takes a new transaction. */
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
		return fail("mdb_txn_begin (write)", rc);
	k.mv_size = 5;
	k.mv_data = "check";
	v.mv_size = 2;
	v.mv_data = "ok";
	if ((rc = mdb_put(txn, dbi, &k, &v, 0)) != 0)
		return fail("mdb_put after the crash", rc);
	if ((rc = mdb_txn_commit(txn)) != 0)
		return fail("mdb_txn_commit after the crash", rc);
	mdb_env_close(env);
	return 0;
}
