#!/bin/sh
# Checker of the copy example, run inside a crash directory: the last "copied N" the program
# printed before the crash ($SCRY_STDOUT) promises that the first N bytes of out are those of in.
n=$(grep -o 'copied [0-9]*' "$SCRY_STDOUT" | tail -1 | cut -d' ' -f2)
[ -z "$n" ] && exit 0
[ -f out ] || { echo "out missing after \"copied $n\""; exit 1; }
[ "$(head -c "$n" in | od -An -tx1)" = "$(head -c "$n" out | od -An -tx1)" ] && exit 0
echo "the first $n bytes of out differ from in after \"copied $n\""
exit 1
