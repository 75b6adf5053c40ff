/* GDBM checker for the file-system corpus: run inside a crash directory, it opens db.gdbm with
 * GDBM itself (as a reader, GDBM_NOMMAP so that a short file is read, not faulted on) and checks
 * that
 *   - the database opens and every key it holds has its value;
 *   - init0..init2 (the initial state) are all there;
 *   - every key the driver acknowledged ("ack KEY" in $SCRY_STDOUT) is there.
 * Exit 0: consistent; 1: not, with the reason on standard output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdbm.h>

#include "../kv.h"

/* check looks key up in the database arg: 0 with *found set, or 1 (the value is wrong or the
 * lookup failed). */
static int check(void *arg, const char *key, int *found)
{
	GDBM_FILE db = (GDBM_FILE)arg;
	datum k = {(char *)key, (int)strlen(key)};
	char want[VALUE_SIZE];
	datum v = gdbm_fetch(db, k);
	*found = 0;
	if (v.dptr == NULL) {
		if (gdbm_last_errno(db) == GDBM_ITEM_NOT_FOUND)
			return 0;
		printf("gdbm_fetch %s: %s\n", key, gdbm_db_strerror(db));
		return 1;
	}
	value_of(key, want);
	if (v.dsize != VALUE_SIZE || memcmp(v.dptr, want, VALUE_SIZE) != 0) {
		printf("key %s has a wrong value\n", key);
		free(v.dptr);
		return 1;
	}
	free(v.dptr);
	*found = 1;
	return 0;
}

int main(void)
{
	char key[64];
	int found;
	GDBM_FILE db;
	datum k;

	db = gdbm_open("db.gdbm", 0, GDBM_READER | GDBM_NOMMAP, 0, NULL);
	if (db == NULL) {
		printf("gdbm_open: %s\n", gdbm_strerror(gdbm_errno));
		return 1;
	}
	/* Every key's value. */
	for (k = gdbm_firstkey(db); k.dptr != NULL;) {
		datum next;
		if ((size_t)k.dsize >= sizeof key) {
			printf("a key of %d bytes\n", k.dsize);
			return 1;
		}
		memcpy(key, k.dptr, (size_t)k.dsize);
		key[k.dsize] = 0;
		if (check(db, key, &found) != 0)
			return 1;
		next = gdbm_nextkey(db, k);
		free(k.dptr);
		k = next;
	}
	if (gdbm_last_errno(db) != GDBM_ITEM_NOT_FOUND && gdbm_last_errno(db) != GDBM_NO_ERROR) {
		printf("iterating: %s\n", gdbm_db_strerror(db));
		return 1;
	}
	if (check_keys(check, db) != 0)
		return 1;
	gdbm_close(db);
	return 0;
}
