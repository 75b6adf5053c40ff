#!/bin/sh
# Checker of the mmap example, run inside a crash directory: the header's count=N names records
# 0..N-1, each "record-I" in the second page; the last "stored N" printed before the crash
# ($SCRY_STDOUT) promises a count of at least N.
s=$(grep -o 'stored [0-9]*' "$SCRY_STDOUT" | tail -1 | cut -d' ' -f2)
if [ ! -f db ]; then
	[ -z "$s" ] && exit 0
	echo "db missing after \"stored $s\""
	exit 1
fi
n=$(head -c 16 db | tr -d '\000' | sed -n 's/^count=\([0-9]*\)$/\1/p')
[ -z "$n" ] && n=0
i=0
while [ "$i" -lt "$n" ]; do
	r=$(dd if=db bs=16 skip=$((256 + i)) count=1 2>/dev/null | tr -d '\000')
	[ "$r" = "record-$i" ] || { echo "count=$n but record $i is missing"; exit 1; }
	i=$((i + 1))
done
[ -n "$s" ] && [ "$n" -lt "$s" ] && { echo "count=$n after \"stored $s\""; exit 1; }
exit 0
