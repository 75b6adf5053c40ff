#!/bin/sh
# Checker of the sort example, run inside a crash directory: data holds the original lines,
# either in their original order or sorted; once the program printed "sorted", sorted.
[ -f data ] || { echo "data is missing"; exit 1; }
want=$(printf 'pear\napple\nfig\nkiwi\nbanana\ncherry\n' | sort)
got=$(LC_ALL=C sort data)
[ "$got" = "$(printf '%s\n' "$want" | LC_ALL=C sort)" ] || { echo "data lost lines: $(od -c data | head -3)"; exit 1; }
if grep -q sorted "$SCRY_STDOUT"; then
	LC_ALL=C sort -c data 2>/dev/null || { echo "printed sorted, but data is not"; exit 1; }
fi
exit 0
