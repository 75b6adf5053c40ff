/* Shared by the LMDB driver and checker: opening the environment db/ (a directory holding
 * data.mdb and lock.mdb) with a map of 1 MiB. */
#include <stdio.h>

#include <lmdb.h>

/* open_env opens db/ into *env: 0, or 1 with the reason on standard error. */
static inline int open_env(MDB_env **env)
{
	int rc;
	if ((rc = mdb_env_create(env)) == 0 && (rc = mdb_env_set_mapsize(*env, 1 << 20)) == 0 &&
	    (rc = mdb_env_open(*env, "db", 0, 0644)) == 0)
		return 0;
	fprintf(stderr, "opening db: %s\n", mdb_strerror(rc));
	return 1;
}
