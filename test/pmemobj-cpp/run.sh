#!/usr/bin/env bash
# run.sh: build libpmemobj-cpp's example programs with scry's drop-in C++ compiler and run
# `scry check` on each with a workload, writing JSON reports into a work directory.
#
# Usage:
#   test/pmemobj-cpp/run.sh [-n|-s] [--pmemcheck] [--crash] REPO WORKDIR [EXAMPLE...] [-- SCRY-CHECK-FLAGS...]
#
#   REPO      a git repository of github.com/pmem/libpmemobj-cpp (bare or not; HEAD is read with
#             `git archive`) or a directory holding its files (include/, examples/)
#   WORKDIR   scratch directory outside this repository; it gets WORKDIR/src (the extracted
#             sources) and per example WORKDIR/<ex>/: bin/<ex> (the instrumented program),
#             build.log, ops.txt (the workload), run/ (its working directory and pool),
#             report.json (+ .trace), report.txt (the same report as text, from
#             `scry analyze`), check.log, command.txt, status.txt (exit status, seconds)
#   EXAMPLE   any of the names of ALL below (the default, in that order), or segment_vector, mutex
#   -n        build only; -s  only print the summary of the reports already in WORKDIR
#   --pmemcheck  compile with libpmemobj-cpp's pmemcheck annotations
#             (-DLIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED=1): needs valgrind.h (Debian's valgrind
#             package, /usr/include/valgrind) and a pmemcheck.h, looked for in scry's
#             build/include/scry-compat and /usr/include/valgrind; reports go to WORKDIR/<ex>-pmc/
#   --crash   give the example `{pool}` (crash exploration) instead of a pool file of its own
#             (trace oracles and inference only; the default, see below)
#   flags after `--` go to `scry check` (e.g. -- --time-budget 90s -j 1)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout).
#
# Nothing of libpmemobj-cpp is copied into scry's repository: the sources are extracted into
# WORKDIR/src and built there. The library is header-only: its include/ directory is used as is.
#
# How the examples are run. Most are one-shot programs (`example POOL [COMMAND ARGS]`: open
# or create the pool, do one thing, close it), some open a pool they never create (their
# message says to run `pmempool create`, which Debian lacks), some use a pool path fixed in
# their source ("example_pool", "poolfile"). lines.cpp (next to this script) is a driver linked
# with the example, whose main is renamed scry_example_main on its translation unit: it creates
# the pool when an example only opens it (-c LAYOUT:MIB, before the first line is read), then
# calls the example's main once per line of standard input with POOL and the line's words
# as arguments and prints "[exit N]" after each; each line is thus one operation. Examples
# that read std::cin themselves get their workload directly (-1: one call). The only changes
# to the examples' sources, made with sed on the extracted copy:
#   "example_pool"      -> scry_shim_pool()           (defrag, string, v: the driver's POOL)
#   create("poolfile"   -> create(scry_shim_fresh("poolfile")
#                          (the snippet examples transaction, make_persistent, persistent,
#                          mutex, pool create the same file in every function; the driver
#                          removes it before each create, so that each function starts afresh)
# Examples left out: pman, panaconda (interactive ncurses games), pmpong (SFML, not installed),
# pool_as_class_member (the same as pool).
#
# Four of libpmemobj-cpp's tests of its concurrent containers are built too (test-chm-*:
# tests/concurrent_hash_map, test-cmap-*: tests/concurrent_map, the persistent concurrent skip
# list), with tests/test_backtrace.c and tests/valgrind_internal.cpp, and run as they are
# (`TEST POOL`: they create the pool, and install their own handlers of SIGSEGV and other
# signals, which scry's runtime chains to).
#
# Crash exploration (--crash) is not the default: it re-executes the example on crash images,
# which takes minutes where the trace oracles take seconds (give --time-budget after --). Each
# one-shot example maps its pool inside every operation; scry explores each operation from the
# pool file the previous one left, and skips the operation that creates the pool.
#
# Build: scry c++ -std=c++17 -O1 -g -I<src>/include -I<src>/examples, linked with -lpmemobj
# -lpthread. Runs get PMEM_IS_PMEM_FORCE=1 (a plain file is PM for libpmem).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$repo/build/bin/scry}
ALL=(queue simplekv map_cli array slab inline_string mpsc_queue
	radix_tree_basic radix_tree_complex_value radix_tree_custom_key radix_tree_inline_string
	radix_tree_inline_string_uint8t_key radix_tree_dot simplekv_rebuild simplekv_rebuild_string
	concurrent_hash_map concurrent_hash_map_string defrag string v
	transaction make_persistent persistent pool
	test-chm-singlethread test-chm-insert-erase test-cmap-singlethread test-cmap)
# also known, not run by default: segment_vector (dies of SIGSEGV natively: it assigns
# seg_vec_0[i] for i < 4096 to an empty pmem::obj::vector) and mutex (deadlocks natively:
# unique_guard_example locks the same pmem::obj::mutex twice)

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' | sed -n '1,24p' >&2
	exit 2
}

build_only=0 summary_only=0 pmc=0 crash=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-n) build_only=1; shift ;;
	-s) summary_only=1; shift ;;
	--pmemcheck) pmc=1; shift ;;
	--crash) crash=1; shift ;;
	*) break ;;
	esac
done
[[ $# -ge 2 ]] || usage
src_repo=$1 workdir=$2
shift 2
exs=()
while [[ $# -gt 0 && $1 != -- ]]; do
	exs+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#exs[@]} -gt 0 ]] || exs=("${ALL[@]}")

command -v jq >/dev/null || { echo "run.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
[[ -x $SCRY ]] || { echo "run.sh: no scry at $SCRY (run make all, or set SCRY)" >&2; exit 2; }
workdir=$(realpath -m "$workdir")
case "$workdir/" in
"$repo"/*) echo "run.sh: WORKDIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$workdir"
suffix=""
[[ $pmc == 1 ]] && suffix=-pmc
[[ $crash == 1 ]] && suffix=$suffix-crash

pmcflags=()
if [[ $pmc == 1 && $summary_only == 0 ]]; then
	[[ -f /usr/include/valgrind/valgrind.h ]] ||
		{ echo "run.sh: --pmemcheck: no /usr/include/valgrind/valgrind.h (apt-get install valgrind)" >&2; exit 2; }
	pmch=""
	for d in "$repo/build/include/scry-compat" /usr/include/valgrind; do
		[[ -f $d/pmemcheck.h ]] && { pmch=$d; break; }
	done
	[[ -n $pmch ]] ||
		{ echo "run.sh: --pmemcheck: no pmemcheck.h in $repo/build/include/scry-compat or /usr/include/valgrind" >&2; exit 2; }
	pmcflags=(-DLIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED=1 -I"$pmch" -I/usr/include/valgrind)
fi

# ---------------------------------------------------------------- per-example configuration
# srcs: the example's sources under examples/; mode: lines (the driver calls main once per
# line), once (one call, the example reads std::cin), noargs-lines / noargs-once (main());
# create: LAYOUT:MIB for the driver's -c ("" : the example creates its pool itself); fixed: the
# arguments after POOL; ops: how to make the workload (a function below); filter: a scry
# --output-filter; cwd: 1 when the example uses a file name relative to its working directory.
config() {
	srcs="" mode=lines create="" fixed="" ops=blank3 filter="" cwd=0
	case $1 in
	queue) srcs=queue/queue.cpp create=queue:16 ops=ops_queue ;;
	simplekv) srcs=simplekv/simplekv.cpp create=simplekv:32 ops=ops_simplekv ;;
	map_cli) srcs=map_cli/map_cli.cpp create=:16 fixed=persistent ops=ops_mapcli ;;
	array) srcs=array/array.cpp create=:64 ops=ops_array ;;
	slab) srcs=slab/slab.cpp create=slab:80 filter='0x[0-9a-f]' ;;
	inline_string) srcs=inline_string/inline_string.cpp create=inline_string:32 ;;
	mpsc_queue) srcs=mpsc_queue/mpsc_queue.cpp create=mpsc_queue:32 ;;
	segment_vector) srcs=segment_vector/segment_vector.cpp create=segment_vector_example:32 ;;
	radix_tree_complex_value | radix_tree_custom_key) srcs=radix_tree/$1.cpp create=radix:32 ;;
	# these two assert the values of a fresh tree: one run only
	radix_tree_basic | radix_tree_inline_string) srcs=radix_tree/$1.cpp create=radix:32 ops=one ;;
	radix_tree_inline_string_uint8t_key) srcs=radix_tree/$1.cpp create=radix_u8t:32 ;;
	radix_tree_dot) srcs=radix_tree/$1.cpp create=radix:32 mode=once ops=ops_words ;;
	simplekv_rebuild) srcs=simplekv_rebuild/simplekv_rebuild.cpp create=simplekv_rebuild:32 mode=once ops=ops_rebuild ;;
	simplekv_rebuild_string) srcs=simplekv_rebuild/simplekv_rebuild_string.cpp create=simplekv_rebuild_string:32 mode=once ops=ops_rebuild ;;
	concurrent_hash_map) srcs=concurrent_hash_map/concurrent_hash_map.cpp create=concurrent_hash_map:64 ops=blank2 filter=. ;;
	concurrent_hash_map_string) srcs=concurrent_hash_map/concurrent_hash_map_string.cpp create=cmap_string:64 ops=blank2 filter=. ;;
	defrag | string | v) srcs=$1/$1.cpp create=$1_example:32 mode=noargs-lines ;;
	transaction | make_persistent | persistent | mutex | pool)
		srcs=$1/$1.cpp mode=noargs-once ops=one cwd=1 ;;
	# libpmemobj-cpp's own tests of its concurrent containers (tests/): they create their pool
	# and run once; no driver
	test-chm-singlethread) srcs=tests/concurrent_hash_map/concurrent_hash_map_singlethread.cpp mode=test ops=one ;;
	test-chm-insert-erase) srcs=tests/concurrent_hash_map/concurrent_hash_map_insert_erase.cpp mode=test ops=one ;;
	test-cmap-singlethread) srcs=tests/concurrent_map/concurrent_map_singlethread.cpp mode=test ops=one ;;
	test-cmap) srcs=tests/concurrent_map/concurrent_map.cpp mode=test ops=one ;;
	*) echo "run.sh: unknown example $1 (known: ${ALL[*]})" >&2; exit 2 ;;
	esac
}

# workloads (standard input); the grammar ones with scry's own generator, seeded
gram() { "$SCRY" workload grammar --seed 1 --force -o "$@"; }
blank3() { printf '\n\n\n' >"$1"; }
blank2() { printf '\n\n' >"$1"; }
one() { printf '\n' >"$1"; }
ops_queue() { gram "$1" --usage 'push <number>' --usage 'pop' --usage 'show' --value number=1..1000 --count 40; }
ops_simplekv() { gram "$1" --usage 'put <key> <value>' --usage 'get <key>' --value key=1..12 --value value=1..1000 --count 40; }
ops_mapcli() {
	gram "$1" --usage 'insert <key> <value>' --usage 'insert_new <key> <value>' --usage 'get <key>' \
		--usage 'remove <key>' --usage 'remove_free <key>' --usage 'print' \
		--value key=1..16 --value value=1..1000 --count 40
}
ops_array() {
	gram "$1" --usage 'alloc <name> <size>' --usage 'print <name>' --usage 'realloc <name> <size>' \
		--usage 'free <name>' --value name=a,b,c --value size=1..20 --count 30
}
# the rebuild examples stop at the first get of a missing key (std::out_of_range ends their
# loop): every key is put first
ops_rebuild() {
	local k
	for k in $(seq 1 12); do echo "put $k $((k * 7))"; done >"$1"
	"$SCRY" workload grammar --seed 1 --usage 'put <key> <value>' --usage 'get <key>' --value key=1..12 \
		--value value=1..1000 --count 28 >>"$1"
}
ops_words() { gram "$1" --usage '<word>' --value word=alpha,beta,gamma,delta,alp,al,be,bet,gam,delt --count 30; }

build() {
	local ex=$1 out=$workdir/$1$suffix
	config "$ex"
	local s=$workdir/src/examples
	rm -rf "$out/bin" "$out/obj"
	mkdir -p "$out/bin" "$out/obj"
	local log=$out/build.log
	: >"$log"
	local f o objs=() cxx=("$SCRY" c++ -std=c++17 -O1 -g -Wno-deprecated-declarations)
	if [[ $mode == test ]]; then
		build_test "$ex" "$out" "${cxx[@]}"
		return
	fi
	for f in $srcs; do
		o=$out/obj/$(basename "${f%.*}").o
		local cmd=("${cxx[@]}" "${pmcflags[@]}" -I"$workdir/src/include" -I"$s" -include "$here/shim.h"
			-Dmain=scry_example_main -c "$s/$f" -o "$o")
		echo "+ ${cmd[*]}" >>"$log"
		"${cmd[@]}" >>"$log" 2>&1 ||
			{ tail -n 30 "$log" >&2; echo "run.sh: $ex: compiling $f failed (log: $log)" >&2; return 1; }
		objs+=("$o")
	done
	local dflags=()
	[[ $mode == noargs-* ]] && dflags=(-DSCRY_MAIN_NOARGS)
	local cmd=("${cxx[@]}" "${dflags[@]}" -I"$here" -c "$here/lines.cpp" -o "$out/obj/lines.o")
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: compiling lines.cpp failed" >&2; return 1; }
	cmd=("$SCRY" c++ -O1 -g -o "$out/bin/$ex" "${objs[@]}" "$out/obj/lines.o" -lpmemobj -lpthread)
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: linking failed" >&2; return 1; }
	"$ops" "$out/ops.txt" 2>>"$log"
	echo "run.sh: built $out/bin/$ex ($(wc -l <"$out/ops.txt") workload lines)" >&2
}

# a test of tests/: its source, tests/test_backtrace.c and tests/valgrind_internal.cpp
build_test() {
	local ex=$1 out=$2
	shift 2
	local cxx=("$@") t=$workdir/src/tests log=$out/build.log o cmd
	local inc=(-I"$workdir/src/include" -I"$workdir/src" -I"$t" -I"$t/common")
	cmd=("$SCRY" cc -O1 -g -c "$t/test_backtrace.c" -o "$out/obj/test_backtrace.o")
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: compiling test_backtrace.c failed" >&2; return 1; }
	cmd=("${cxx[@]}" "${pmcflags[@]}" "${inc[@]}" -c "$t/valgrind_internal.cpp" -o "$out/obj/valgrind_internal.o")
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: compiling valgrind_internal.cpp failed" >&2; return 1; }
	o=$out/obj/$(basename "${srcs%.*}").o
	cmd=("${cxx[@]}" "${pmcflags[@]}" "${inc[@]}" -c "$workdir/src/$srcs" -o "$o")
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: compiling $srcs failed" >&2; return 1; }
	cmd=("$SCRY" c++ -O1 -g -o "$out/bin/$ex" "$o" "$out/obj/test_backtrace.o" "$out/obj/valgrind_internal.o" -lpmemobj -lpthread)
	echo "+ ${cmd[*]}" >>"$log"
	"${cmd[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "run.sh: $ex: linking failed" >&2; return 1; }
	"$ops" "$out/ops.txt"
	echo "run.sh: built $out/bin/$ex" >&2
}

check() {
	local ex=$1 out=$workdir/$1$suffix
	config "$ex"
	rm -rf "$out/run" "$out/report.json" "$out/report.json.trace" "$out/report.txt"
	mkdir -p "$out/run"
	local pool=$out/run/pool
	[[ $crash == 1 ]] && pool='{pool}'
	local args=()
	[[ -n $create ]] && args+=(-c "$create")
	[[ $mode == test ]] && args=()
	[[ $mode == *once ]] && args+=(-1)
	[[ $mode == test ]] && rm -f "$out/run/pool"
	args+=("$pool")
	[[ -n $fixed ]] && args+=($fixed)
	local flt=()
	[[ -n $filter ]] && flt=(--output-filter "$filter")
	local trace=()
	[[ $crash == 1 ]] || trace=(--trace "$out/report.json.trace")
	local cmd=("$SCRY" check --format json -o "$out/report.json" --force --workload "$out/ops.txt" "${trace[@]}"
		--env PMEM_IS_PMEM_FORCE=1 "${flt[@]}" "${extra[@]}" -- "$out/bin/$ex" "${args[@]}")
	printf '%q ' "${cmd[@]}" >"$out/command.txt"
	echo >>"$out/command.txt"
	echo "run.sh: $ex: $(cat "$out/command.txt")" >&2
	local start end rc=0
	start=$(date +%s.%N)
	# the examples that use a relative file name run in their run/ directory
	if [[ $cwd == 1 ]]; then
		(cd "$out/run" && PMEM_IS_PMEM_FORCE=1 "${cmd[@]}") >"$out/check.log" 2>&1 || rc=$?
	else
		PMEM_IS_PMEM_FORCE=1 "${cmd[@]}" >"$out/check.log" 2>&1 || rc=$?
	fi
	end=$(date +%s.%N)
	echo "$rc $(echo "$end - $start" | bc)" >"$out/status.txt"
	# the text report of the same trace, for the line-length figures
	if [[ -s $out/report.json.trace ]]; then
		"$SCRY" analyze "$out/report.json.trace" >"$out/report.txt" 2>/dev/null || true
	fi
	echo "run.sh: $ex: scry check exited $rc after $(cut -d' ' -f2 "$out/status.txt") s" >&2
}

summary() {
	local ex=$1 out=$workdir/$1$suffix
	[[ -s $out/report.json ]] || { echo "== $ex: no report ($(cat "$out/status.txt" 2>/dev/null || echo not run))"; return; }
	echo "== $ex  (scry exit status, wall seconds: $(cat "$out/status.txt" 2>/dev/null || echo ?))"
	jq -r '
	  (.stats // {}) as $s |
	  "findings: \(.findings | length) (\([.findings[] | "\(.class)/\(.kind)"] | group_by(.) | map("\(.[0]) \(length)") | join(", ")))",
	  "crash points explored: \($s.crash_points // 0), states judged \($s.states_tested // 0), failing \($s.failures // 0)",
	  "warnings: \(.warnings | length)"' "$out/report.json"
	if [[ -s $out/report.txt ]]; then
		echo "text report: $(wc -c <"$out/report.txt") bytes, $(wc -l <"$out/report.txt") lines, $(awk 'length > 200' "$out/report.txt" | wc -l) longer than 200 characters (longest $(awk '{ if (length > m) m = length } END { print m + 0 }' "$out/report.txt"))"
	fi
}

for e in "${exs[@]}"; do config "$e"; done # reject unknown names before any work
if [[ $summary_only == 0 ]]; then
	if git -C "$src_repo" rev-parse --git-dir >/dev/null 2>&1 && ! [[ -d $src_repo/include/libpmemobj++ ]]; then
		rm -rf "$workdir/src" && mkdir -p "$workdir/src"
		git -C "$src_repo" archive HEAD | tar -x -C "$workdir/src"
		git -C "$src_repo" log -1 --format='%H %ci' >"$workdir/src/COMMIT"
	elif [[ -d $src_repo/include/libpmemobj++ && -d $src_repo/examples ]]; then
		rm -rf "$workdir/src" && mkdir -p "$workdir/src"
		cp -a "$src_repo/include" "$src_repo/examples" "$workdir/src/"
	else
		echo "run.sh: $src_repo is neither a git repository of libpmemobj-cpp nor its checkout" >&2
		exit 2
	fi
	# the fixed pool paths (see the header); each must be found where expected
	s=$workdir/src/examples
	sed -i 's|"example_pool"|scry_shim_pool()|' "$s/defrag/defrag.cpp" "$s/string/string.cpp" "$s/v/v.cpp"
	sed -i 's|create("poolfile"|create(scry_shim_fresh("poolfile")|' \
		"$s/transaction/transaction.cpp" "$s/make_persistent/make_persistent.cpp" \
		"$s/persistent/persistent.cpp" "$s/mutex/mutex.cpp" "$s/pool/pool.cpp"
	for f in defrag/defrag.cpp string/string.cpp v/v.cpp; do
		grep -q 'scry_shim_pool()' "$s/$f" || { echo "run.sh: no \"example_pool\" in $f" >&2; exit 1; }
	done
	for f in transaction make_persistent persistent mutex pool; do
		grep -q 'scry_shim_fresh' "$s/$f/$f.cpp" || { echo "run.sh: no create(\"poolfile\" in $f.cpp" >&2; exit 1; }
	done
	failed=()
	for e in "${exs[@]}"; do
		if build "$e"; then
			[[ $build_only == 1 ]] || check "$e"
		else
			failed+=("$e")
		fi
	done
	[[ ${#failed[@]} == 0 ]] || echo "run.sh: not built: ${failed[*]}" >&2
fi
for e in "${exs[@]}"; do summary "$e"; done
