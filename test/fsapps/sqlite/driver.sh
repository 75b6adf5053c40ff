#!/bin/sh
# SQLite driver for the file-system corpus (docs/fs-mode.md, "Real applications"): Debian's
# sqlite3 shell inserts the rows k0..k2 into db, one shell per row (the shell buffers what it
# prints into a pipe until it exits: one process per row makes each "ack" follow its own commit),
# each INSERT its own transaction with synchronous=FULL, and prints "ack KEY" once the INSERT has
# committed (the shell runs the SELECT only after the INSERT returned). The journal mode is the
# database's own: setup.sh makes it DELETE (rollback journal) or WAL.
# usage: driver.sh (in the workload directory)
set -e
for k in k0 k1 k2; do
	sqlite3 db "PRAGMA synchronous=FULL; INSERT INTO t VALUES('$k'); SELECT 'ack $k';"
done
