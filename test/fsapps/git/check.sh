#!/bin/sh
# git checker for the file-system corpus: run inside a crash directory, it removes stale lock
# files (what a user does after a crash: git refuses to run while they exist), then runs
# `git fsck --full`, and checks that HEAD's a.txt is "one" or "two", and "two" once the driver
# printed "ack two" ($SCRY_STDOUT).
rm -f .git/index.lock .git/HEAD.lock .git/refs/heads/*.lock
out=$(git fsck --full 2>&1) || { echo "git fsck: $out"; exit 1; }
got=$(git show HEAD:a.txt 2>&1) || { echo "git show HEAD:a.txt: $got"; exit 1; }
case "$got" in
one | two) ;;
*) echo "HEAD's a.txt is '$got'"; exit 1 ;;
esac
if grep -qx 'ack two' "$SCRY_STDOUT" && [ "$got" != two ]; then
	echo "the acknowledged commit is lost: HEAD's a.txt is '$got'"
	exit 1
fi
exit 0
