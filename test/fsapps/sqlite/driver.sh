#!/bin/sh
# SQLite driver for the file-system corpus (docs/fs-mode.md, "Real applications"): Debian's
# sqlite3 shell inserts the rows k0..k2 into db, each in its own transaction, with
# synchronous=FULL, and prints "ack KEY" after each INSERT has committed (the shell runs the
# SELECT only once the INSERT before it returned). The journal mode is the database's own:
# setup.sh makes it DELETE (rollback journal) or WAL.
# usage: driver.sh (in the workload directory)
exec sqlite3 db "PRAGMA synchronous=FULL;
INSERT INTO t VALUES('k0'); SELECT 'ack k0';
INSERT INTO t VALUES('k1'); SELECT 'ack k1';
INSERT INTO t VALUES('k2'); SELECT 'ack k2';"
