#!/bin/sh
# SQLite checker for the file-system corpus: run inside a crash directory, it opens db with
# sqlite3 itself, read-write (a hot journal is rolled back, a WAL replayed, as the next user
# would), and checks PRAGMA integrity_check, that init0..init2 are there and that every key the
# driver acknowledged ("ack KEY" in $SCRY_STDOUT) is there.
ok=$(sqlite3 db 'PRAGMA integrity_check;' 2>&1) || { echo "sqlite3: $ok"; exit 1; }
[ "$ok" = ok ] || { echo "integrity_check: $ok"; exit 1; }
keys=$(sqlite3 db 'SELECT k FROM t ORDER BY k;' 2>&1) || { echo "sqlite3: $keys"; exit 1; }
for k in init0 init1 init2 $(sed -n 's/^ack //p' "$SCRY_STDOUT"); do
	printf '%s\n' "$keys" | grep -qx "$k" || { echo "key $k lost"; exit 1; }
done
exit 0
