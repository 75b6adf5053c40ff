#!/bin/sh
# Creates the SQLite corpus's initial state in the current directory: db with table t holding
# init0..init2, in journal mode $1 (delete or wal; WAL is persistent, stored in the database).
set -e
sqlite3 db "PRAGMA journal_mode=$1; CREATE TABLE t(k TEXT PRIMARY KEY);
INSERT INTO t VALUES('init0'),('init1'),('init2');" >/dev/null
