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

#include "../kv.h"
#include "env.h"

static int fail(const char *what, int rc)
{
	printf("%s: %s\n", what, mdb_strerror(rc));
	return 1;
}

/* CHECK_KEY is the key the checker's own transaction writes. */
#define CHECK_KEY "checker"

struct ctx {
	MDB_txn *txn;
	MDB_dbi dbi;
};

static int present(void *arg, const char *key, int *found)
{
	struct ctx *c = (struct ctx *)arg;
	MDB_val k = {strlen(key), (void *)key}, v;
	char want[VALUE_SIZE];
	int rc = mdb_get(c->txn, c->dbi, &k, &v);
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
	char key[64];
	int rc, found;
	struct ctx c;

	if (open_env(&env) != 0)
		return 1;
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) != 0)
		return fail("mdb_txn_begin", rc);
	if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0)
		return fail("mdb_dbi_open", rc);
	c.txn = txn;
	c.dbi = dbi;
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
		if (strcmp(key, CHECK_KEY) != 0 && present(&c, key, &found) != 0)
			return 1;
	}
	if (rc != MDB_NOTFOUND)
		return fail("mdb_cursor_get", rc);
	mdb_cursor_close(cur);
	if (check_keys(present, &c) != 0)
		return 1;
	mdb_txn_abort(txn);
	/* The store takes a new transaction. */
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
		return fail("mdb_txn_begin (write)", rc);
	k.mv_size = strlen(CHECK_KEY);
	k.mv_data = CHECK_KEY;
	v.mv_size = 2;
	v.mv_data = "ok";
	if ((rc = mdb_put(txn, dbi, &k, &v, 0)) != 0)
		return fail("mdb_put after the crash", rc);
	if ((rc = mdb_txn_commit(txn)) != 0)
		return fail("mdb_txn_commit after the crash", rc);
	mdb_env_close(env);
	return 0;
}
