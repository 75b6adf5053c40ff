#!/bin/sh
# Mercurial checker for the file-system corpus: run inside a crash directory, it removes stale
# locks and, when hg left an interrupted transaction (.hg/store/journal), runs `hg recover`, as
# hg tells its user to; then `hg verify`, and checks that tip holds a.txt "one" and b.txt "two"
# (the commit), or a.txt alone (the commit before it) unless the driver printed "ack two"
# ($SCRY_STDOUT). Two Python start-ups (three with recover): each costs more than the rest.
export HGPLAIN=1
rm -f .hg/wlock .hg/store/lock
if [ -e .hg/store/journal ]; then
	out=$(hg recover 2>&1) || { echo "hg recover: $out"; exit 1; }
fi
out=$(hg verify -q 2>&1) || { echo "hg verify: $out"; exit 1; }
got=$(hg cat -r tip a.txt b.txt 2>/dev/null | tr '\n' ' ')
case "$got" in
"one two ") ;;
"one ") ! grep -qx 'ack two' "$SCRY_STDOUT" || { echo "the acknowledged commit is lost"; exit 1; } ;;
*) echo "tip's a.txt and b.txt hold '$got'"; exit 1 ;;
esac
exit 0
