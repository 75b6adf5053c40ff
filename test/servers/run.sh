#!/usr/bin/env bash
# run.sh: build memcached-pmem (Lenovo's port of memcached to PM, `--enable-pslab`) with scry's
# drop-in compiler and crash-explore it in client mode (`scry check --client`, docs/servers.md):
# scry starts the server on a free port under the recording and on every crash image, and
# mcclient.py (beside this script) sends it WITCHER's generated memcached workload, one request
# per line, printing each answer.
#
# Usage:
#   test/servers/run.sh WORKDIR [OPS|FILE] [-- SCRY-CHECK-FLAGS...]
#
#   WORKDIR  scratch directory outside this repository; it gets memcached-pmem/ (extracted
#            sources, built there: memcached-pmem/memcached), build.log, ops.txt (the first OPS
#            lines of WITCHER's benchmark/memcached-pmem/random/2000/op_file.txt, default 100;
#            or a copy of FILE, a workload in the same format, e.g. update.txt beside this script:
#            two sets, an update of the first key, two gets), report.json (+ .trace), check.log,
#            command.txt and status.txt (exit status, seconds)
#   flags after `--` go to `scry check` (default: --time-budget 8m)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout);
#   WITCHER_REPO the repository holding third_party/memcached-pmem and the op file (bare or not;
#   HEAD is read with `git archive`), default /work/.mirror/cosmoss-jigu+witcher/repo
#   (`fetch github:cosmoss-jigu/witcher`). Needs libevent-dev, autoconf, automake and python3.
#
# Nothing of memcached-pmem is copied into scry's repository. Its tree in WITCHER's repository
# was configured elsewhere: it is reconfigured here (autoreconf -fi; ./configure --enable-pslab
# CC="$SCRY cc") and only the server is built (`make memcached`; the debug build's gcov flags do
# not link with clang), with CFLAGS="-g -O1 -fcommon" (its headers define `hash` in every
# object, which -fno-common, clang's default, refuses to link).
#
# The server runs through memcached-server.sh (beside this script): a new pool is created with 8
# MiB of persistent slabs and pslab_policy=pmem (items are allocated in PM; the default policy
# allocates them in DRAM), an existing one is recovered (pslab_recover), one worker thread (-t 1),
# no UDP, listening on 127.0.0.1:{port}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$root/build/bin/scry}
WITCHER_REPO=${WITCHER_REPO:-/work/.mirror/cosmoss-jigu+witcher/repo}
work=${1:?usage: run.sh WORKDIR [OPS|FILE] [-- SCRY-CHECK-FLAGS...]}
shift
ops=100
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
	ops=$1
	shift
fi
[ "${1:-}" = "--" ] && shift
flags=("--time-budget" "8m" "$@")
mkdir -p "$work"
work=$(cd "$work" && pwd)
src=$work/memcached-pmem
if [ ! -x "$src/memcached" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	# The subdirectory's tree alone: the mirror may lack objects of the rest of the repository.
	git -C "$WITCHER_REPO" archive HEAD:third_party/memcached-pmem | tar -x -C "$src"
	(
		cd "$src"
		autoreconf -f -i
		./configure --enable-pslab CC="$SCRY cc"
		make -j2 memcached CFLAGS="-g -O1 -fcommon"
	) > "$work/build.log" 2>&1 || { echo "build failed: $work/build.log" >&2; exit 1; }
fi
if [ -f "$ops" ]; then
	cp "$ops" "$work/ops.txt"
else
	git -C "$WITCHER_REPO" show HEAD:benchmark/memcached-pmem/random/2000/op_file.txt | head -n "$ops" > "$work/ops.txt"
fi
python=$(command -v /usr/bin/python3 || command -v python3)
cmd=("$SCRY" check --client "$python $here/mcclient.py {port}" --workload "$work/ops.txt"
	--format json -o "$work/report.json" --force "${flags[@]}"
	-- "$here/memcached-server.sh" "$src/memcached" "{pool}" "{port}")
printf '%q ' "${cmd[@]}" > "$work/command.txt"
echo >> "$work/command.txt"
start=$(date +%s)
status=0
"${cmd[@]}" > "$work/check.log" 2>&1 || status=$?
echo "$status $(( $(date +%s) - start ))" > "$work/status.txt"
"$SCRY" report "$work/report.json" | tail -n 3
echo "exit status $status in $(( $(date +%s) - start ))s; report $work/report.json"
