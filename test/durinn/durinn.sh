#!/usr/bin/env bash
# durinn.sh: build the concurrent persistent data structures of Durinn's public artifact (Fu, Lee,
# Min, "Durinn: Adversarial Memory and Thread Interleaving for Detecting Durable Linearizability
# Bugs", OSDI'22) with scry's drop-in compiler, and run `scry check` on each with a two-thread
# workload.
#
# Usage:
#   test/durinn/durinn.sh [-n|-s] ARTIFACT WORKDIR [STRUCTURE...] [-- SCRY-CHECK-FLAGS...]
#
#   ARTIFACT   the artifact: a git repository of github.com/cosmoss-jigu/durinn (bare or not; its
#              HEAD is read with `git archive`, one subtree at a time) or a directory holding its
#              checked-out files (benchmark/, third_party/)
#   WORKDIR    scratch directory outside this repository; per structure it gets
#              WORKDIR/<s>/src (the extracted, adapted sources), WORKDIR/<s>/bin/<s> (the
#              instrumented program), WORKDIR/<s>/build.log, WORKDIR/<s>/ops.txt (the workload),
#              WORKDIR/<s>/report.json (+ .trace), check.log, command.txt, status.txt, load.txt
#   STRUCTURE  any of: bst hash list skiplist queue cceh fast-fair p-art p-clht p-hot
#              p-masstree pmdk-array pmdk-queue (default: all, in that order)
#   -n         build and write the workloads only (no scry check); the summary is still printed
#   -s         only print the summary of the reports already in WORKDIR
#   flags after `--` go to `scry check` (e.g. -- --time-budget 5m -j 1)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout);
#   DURINN_OPS the workload's length in lines (default 200), DURINN_SEED its seed (default 1).
#
# Nothing of Durinn (nor of the data structures) is copied into scry's repository: the script
# extracts the artifact's sources into WORKDIR, adapts the drivers there (below) and builds there.
# The artifact bundles PMDK 1.8 and an LLVM 9 tracer; neither is used: the programs are built with
# `scry c++` / `scry cc` (Debian's clang) against Debian's libpmemobj and libpmem (PMDK 1.12).
#
# The drivers. Eleven of the thirteen programs (NVTraverse's BST, hash table, list and skip list,
# the durable queue, CCEH, FAST_FAIR's concurrent version, P-ART, P-CLHT, P-HOT, P-Masstree)
# have one driver, benchmark/<s>/main/main.c[pp], with two modes: its sixth argument 0 runs the
# op file's lines one after the other; 1 reads exactly two lines and runs them in two threads
# (run_ops_in_parallel: pthread_create of run_op_in_parallel, which calls run_op; run_op brackets
# the data-structure call with the empty api_begin()/api_end() and prints its result to the
# output file afterwards). Durinn's checker runs the second mode on two-operation op files. Here
# the second mode is kept and made to run a whole workload from standard input, in rounds of
# two lines, each line an operation of its thread, with these edits (sed, on the extracted copy
# of main.c[pp] only; every one must apply the expected number of times or the build stops):
#   fopen(op_file_path, "r")        -> durinn_open_ops(op_file_path)
#   fopen(output_file_path, "w")    -> durinn_open_out(output_file_path)
#   void api_end() {};              -> void api_end() { durinn_api_end(); }
#   in read_op_and_run_mt: after `count++;` the round is run when it holds two lines
#     (durinn_round(count); run_ops_in_parallel(<the driver's own arguments>); count = 0;),
#     `assert(count == NUM_THREADS);` becomes durinn_round(count); and the driver's call after
#     the loop runs only `if (count > 0)` (a last, odd line: prep runs may give one line)
#   in run_ops_in_parallel: durinn_thread_arg(i, &args[i]) before each pthread_create
#   in run_op_in_parallel: `if (!durinn_thread_begin(ptr)) return 0;` first and
#     durinn_thread_end() before it returns
# and test/durinn/durinn_shim.h (scry's code: its header says what each call does) force-included
# with -include. In short: all of standard input is read at once (fread; a line read with fgets
# from stdin would be an operation of the main thread), the two operations of a round begin in
# line order (SCRY_OP_BEGIN from <scry.h> with the line's text, thread 0 then thread 1: operation
# i is line i) and both before either runs, their data-structure calls run concurrently, and
# their results are printed in line order (thread 1 waits in api_end until thread 0 printed)
# before each operation ends (SCRY_OP_END). The program runs as
#   main {pool} SIZE layout - - 1
# P-Masstree's two-thread mode keeps three fields of a line (char *op[3], parallel_op[..][3])
# while its run_op reads a fourth (op[3], the numeric-or-string flag of an insert): those become
# four in run_ops_in_parallel and read_op_and_run_mt (a fix, not a change of behaviour).
# P-ART's lookup (lib/Tree.cpp) prints a debug line, "Searching key K", with std::cout in three
# writes (text, number, endl) that interleave with the other thread's result line; no line filter
# can undo that (a result glued to the debug text, a stray empty line), so the script deletes that
# one statement from the extracted Tree.cpp (before 2026-11-29 it was filtered: false findings,
# docs/durinn.md).
# The other two programs (PMDK's array and queue examples, pmdk-examples/) have no two-thread mode
# ("no mt supported" in their main) and are not thread-safe (the queue's enqueue reads and writes
# `back` outside any lock), as in Durinn's runs: they get witcher.sh's adaptation instead (an op
# file or output file named "-" is standard input or output; each line read is an operation) and
# run their sequential mode, `main {pool} SIZE layout - - 0`.
#
# The workloads (WORKDIR/<s>/ops.txt, generated with awk from DURINN_SEED, in the op-file syntax
# of the artifact's random/1000/op_file.txt): ANY two adjacent lines commute, not only the two lines
# of a round, so that what the program prints depends only on which operations were applied, never
# on how the threads interleaved. Scry's oracle compares outputs (docs/concurrency.md,
# "Workloads"), and its re-executions and prep runs feed the program a suffix of the workload (or a
# few lines) that may start at either line of a round, for instance after a crash point that falls
# between the two operations' beginnings or right before the second one: the driver then pairs
# the lines from where its input starts, one line off the workload's own rounds, and with
# commuting rounds only (as before 2026-11-29) such a pair could be an insert and a delete of the
# same key, whose output depends on the interleaving (false findings: docs/durinn.md).
#   key-value structures: every line names another key than the line before it (1..N/2, at least
#     64; values 1..999999: FAST_FAIR, CCEH and P-Masstree copy the value as a string into 8
#     bytes); the first quarter inserts, the rest is 40 % inserts, 40 % gets, 20 % deletes (no
#     deletes for CCEH, whose driver's `d` does nothing, and P-HOT, whose driver has none); an
#     insert is only of a key not present (else it is a get: FAST_FAIR and CCEH keep duplicates,
#     and which one a get finds depends on the interleaving); P-Masstree's lines carry its
#     numeric-key flag (i;K;V;0; g;K;0; d;K;0;)
#   the durable queue: a round is two enqueues or, with four or more entries queued, two dequeues,
#     and every enqueue is of the same value (so that an enqueue and a dequeue, or two enqueues,
#     paired one line off still commute: any entry is as good as any other)
#   PMDK's array and queue examples (sequential): their op files' operations (array: i;NAME;N;
#     and g;NAME;, queue: E;V; and D;), at random
#
# Build: scry c++ / scry cc -O1 -g with the include directories and -D flags of the artifact's
# Makefiles, laid out by their own `copy` targets; linked with -lpmemobj -lpmem -lpthread and
# what the Makefiles add (-ltbb, -latomic, -lm). Every program keeps raw pointers in PM, so every
# run maps the pool at the artifact's address: `--env PMEM_MMAP_HINT=600000000000`. A structure
# that does not build is reported as such with the compiler's last lines, and the others go on.
#
# The summary per structure (jq over report.json): crash points explored of total, concurrent
# points skipped, states judged, failing states, prep runs, crash findings by kind, trace findings
# by class and kind, wall time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$repo/build/bin/scry}
OPS=${DURINN_OPS:-200}
SEED=${DURINN_SEED:-1}
ALL=(bst hash list skiplist queue cceh fast-fair p-art p-clht p-hot p-masstree pmdk-array pmdk-queue)
HINT=600000000000 # PMEM_MMAP_HINT of the artifact's README (hex, as libpmem reads it)

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' | sed -n '1,24p' >&2
	exit 2
}

build_only=0 summary_only=0
case ${1:-} in
-n) build_only=1; shift ;;
-s) summary_only=1; shift ;;
esac
[[ $# -ge 2 ]] || usage
artifact=$1 workdir=$2
shift 2
structs=()
while [[ $# -gt 0 && $1 != -- ]]; do
	structs+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#structs[@]} -gt 0 ]] || structs=("${ALL[@]}")

git=0
if git -C "$artifact" rev-parse --git-dir >/dev/null 2>&1 && ! [[ -d $artifact/benchmark ]]; then
	git=1
elif [[ $summary_only == 0 ]] && ! [[ -d $artifact/benchmark && -d $artifact/third_party ]]; then
	echo "durinn.sh: $artifact is neither a git repository of the artifact nor its checkout" >&2
	exit 2
fi
command -v jq >/dev/null || { echo "durinn.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
[[ -x $SCRY ]] || { echo "durinn.sh: no scry at $SCRY (run make all, or set SCRY)" >&2; exit 2; }
workdir=$(realpath -m "$workdir") # checked before anything is created
case "$workdir/" in
"$repo"/*) echo "durinn.sh: WORKDIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$workdir"

# ---------------------------------------------------------------- per-structure configuration
# bench: the driver's directory under benchmark/; tp: what it needs of third_party/; copydirs:
# the benchmark subdirectories whose Makefile `copy` target lays out the sources; srcs: what to
# compile, relative to bench (main first); lang: c or c++ (.c files of a C++ program compiled as
# C++, as the artifact's Makefiles do); flags: the Makefiles' -I/-D/-std/-m flags; libs: link
# libraries; size: PM_SIZE (MiB) of benchmark/<s>/random/1000/Makefile; mt: 1 for the two-thread
# mode, 0 for the sequential one; wl: the workload's kind (kv, kv-nodel, kv-masstree, queue,
# pmdk-array, pmdk-queue); filter: scry's --output-filter for the lines a data structure prints
# from inside its operations (FAST_FAIR's search and delete of a missing key, one printf each),
# whose place among the other thread's lines depends on the interleaving.
config() {
	mt=1 wl=kv filter=""
	case $1 in
	bst)
		bench=benchmark/NVTraverse/BSTAravind tp=third_party/NVTraverse copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-I. -Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=8 ;;
	hash)
		bench=benchmark/NVTraverse/Hash tp=third_party/NVTraverse copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-I. -Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=8 ;;
	list)
		bench=benchmark/NVTraverse/List tp=third_party/NVTraverse copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-I. -Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=8 ;;
	skiplist)
		bench=benchmark/NVTraverse/Skiplist tp=third_party/NVTraverse copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-I. -Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=8 ;;
	queue)
		bench=benchmark/PersistentQueue tp=third_party/PersistentQueue copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=16 wl=queue ;;
	cceh)
		bench=benchmark/CCEH tp="third_party/CCEH/src third_party/CCEH/util" copydirs="src util"
		srcs="main/main.cpp src/CCEH_MSB.cpp src/pmdk.c" lang=c++
		flags="-I. -std=c++11 -DINPLACE -Wno-deprecated" libs="" size=8 wl=kv-nodel ;;
	fast-fair)
		bench=benchmark/FAST_FAIR tp=third_party/FAST_FAIR/concurrent/src copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.c" lang=c++ flags="-Iinclude -std=c++11 -Wno-deprecated"
		libs="" size=8 filter='^(NOT FOUND [0-9]+, t = |not found the key to delete )' ;;
	p-art)
		bench=benchmark/RECIPE/P-ART tp=third_party/RECIPE/P-ART copydirs="include lib"
		srcs="main/main.cpp lib/Tree.cpp lib/pmdk.cpp" lang=c++
		flags="-Iinclude -DCLWB -Wno-deprecated" libs="-ltbb -latomic" size=8 ;;
	p-clht)
		bench=benchmark/RECIPE/P-CLHT
		tp="third_party/RECIPE/P-CLHT/src third_party/RECIPE/P-CLHT/include third_party/RECIPE/P-CLHT/external"
		copydirs="include lib" srcs="main/main.c lib/pmdk.c lib/clht_lb_res.c" lang=c
		flags="-Iinclude -DCLWB -Wno-deprecated -Wno-error=implicit-function-declaration -Wno-error=int-conversion"
		libs="-latomic -lm" size=64 ;;
	p-hot)
		bench=benchmark/RECIPE/P-HOT tp=third_party/RECIPE/P-HOT/libs copydirs="include"
		srcs="main/main.cpp" lang=c++
		flags="-Iinclude/hot/commons/include -Iinclude/hot/rowex/include -Iinclude/idx/benchmark-helpers/include -Iinclude/idx/map-helpers/include -Iinclude/idx/content-helpers/include -Iinclude/idx/utils/include -Iinclude/profile-lib/include -DCLWB -mrtm -mcx16 -mavx -mavx2 -mbmi -mbmi2 -mlzcnt -mpopcnt -DNDEBUG -Wno-deprecated"
		libs="-ltbb" size=8 wl=kv-nodel ;;
	p-masstree)
		bench=benchmark/RECIPE/P-Masstree tp=third_party/RECIPE/P-Masstree copydirs="include lib"
		srcs="main/main.cpp lib/pmdk.cpp" lang=c++ flags="-Iinclude -DCLWB -Wno-deprecated"
		libs="" size=8 wl=kv-masstree ;;
	pmdk-array)
		bench=benchmark/pmdk-examples/array tp="" copydirs="" srcs="main/main.c" lang=c flags=""
		libs="" size=8 mt=0 wl=pmdk-array ;;
	pmdk-queue)
		bench=benchmark/pmdk-examples/queue tp="" copydirs="" srcs="main/main.c" lang=c flags=""
		libs="" size=8 mt=0 wl=pmdk-queue ;;
	*) echo "durinn.sh: unknown structure $1 (known: ${ALL[*]})" >&2; exit 2 ;;
	esac
}

# extract PATHS... of the artifact into DIR (fresh), one subtree at a time.
extract() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	local p
	for p in "$@"; do
		mkdir -p "$dir/$(dirname "$p")"
		if [[ $git == 1 ]]; then
			case $(git -C "$artifact" cat-file -t "HEAD:$p") in
			tree) git -C "$artifact" archive --format=tar --prefix="$p/" "HEAD:$p" | tar -x -C "$dir" ;;
			blob) git -C "$artifact" show "HEAD:$p" >"$dir/$p" ;;
			esac
		else
			cp -a "$artifact/$p" "$dir/$p"
		fi
	done
}

# expect FILE PATTERN N: the adapted FILE must match the fixed string PATTERN on N lines.
expect() {
	local got
	got=$(grep -cF -- "$2" "$1" || true)
	[[ $got == "$3" ]] || {
		echo "durinn.sh: $s: expected $3 line(s) with '$2' in $1 after the edits, found $got" >&2
		return 1
	}
}

# adapt_mt MAIN: the two-thread mode of the eleven uniform drivers (see the header).
adapt_mt() {
	local main=$1 call
	call=$(grep -m1 -oE 'run_ops_in_parallel\(parallel_op[^;]*;' "$main") ||
		{ echo "durinn.sh: $s: no run_ops_in_parallel(parallel_op, ...) call in $main" >&2; return 1; }
	sed -i \
		-e 's|fopen(op_file_path, "r")|durinn_open_ops(op_file_path)|' \
		-e 's|fopen(output_file_path, "w")|durinn_open_out(output_file_path)|' \
		-e 's|^void api_end() {};|void api_end() { durinn_api_end(); }|' \
		-e "s|^    count++;\$|    count++;\n    if (count == NUM_THREADS) { durinn_round(count); $call count = 0; }|" \
		-e 's|^  assert(count == NUM_THREADS);|  durinn_round(count);|' \
		-e "s|^  run_ops_in_parallel(parallel_op|  if (count > 0) run_ops_in_parallel(parallel_op|" \
		-e 's|^\( *\)pthread_create(&threads\[i\], NULL, &run_op_in_parallel, (void \*) &args\[i\]);|\1durinn_thread_arg(i, (void *) \&args[i]);\n\1pthread_create(\&threads[i], NULL, \&run_op_in_parallel, (void *) \&args[i]);|' \
		-e 's|^  struct thread_args \*args = (struct thread_args \*) ptr;|&\n  if (!durinn_thread_begin(ptr)) return 0;|' \
		-e '/^void \*run_op_in_parallel/,/^}/s|^  return 0;|  durinn_thread_end();\n  return 0;|' \
		"$main"
	expect "$main" 'durinn_open_ops(op_file_path)' 2 || return 1
	expect "$main" 'durinn_open_out(output_file_path)' 2 || return 1
	expect "$main" 'void api_end() { durinn_api_end(); }' 1 || return 1
	expect "$main" 'if (count == NUM_THREADS) { durinn_round(count);' 1 || return 1
	expect "$main" '  durinn_round(count);' 1 || return 1
	expect "$main" 'if (count > 0) run_ops_in_parallel(parallel_op' 1 || return 1
	expect "$main" 'durinn_thread_arg(i,' 1 || return 1
	expect "$main" 'if (!durinn_thread_begin(ptr)) return 0;' 1 || return 1
	expect "$main" 'durinn_thread_end();' 1 || return 1
}

# adapt_seq MAIN: witcher.sh's adaptation, for the sequential pmdk-examples drivers.
adapt_seq() {
	local main=$1
	sed -i \
		-e 's|fopen(op_file_path, "r")|(strcmp(op_file_path, "-") ? fopen(op_file_path, "r") : stdin)|' \
		-e 's|fopen(output_file_path, "w")|(strcmp(output_file_path, "-") ? fopen(output_file_path, "w") : stdout)|' \
		"$main"
	expect "$main" 'strcmp(op_file_path, "-")' 1 || return 1
	expect "$main" 'strcmp(output_file_path, "-")' 1 || return 1
}

# workload KIND N SEED: N lines on standard output (see the header).
workload() {
	awk -v kind="$1" -v n="$2" -v seed="$3" '
	function key(not) { do k = 1 + int(rand() * nkeys); while (k == not); return k }
	function val() { return 1 + int(rand() * 999999) }
	# A line on key k in round r; inserts only of keys not present (FAST_FAIR and CCEH keep a
	# duplicate, and which one a later get finds depends on the interleaving).
	function kv(k, r,   p, m) {
		p = rand(); m = kind == "kv-masstree" ? "0;" : ""
		if ((r < n / 8 || p < 0.4) && !(k in present)) {
			present[k] = 1
			return "i;" k ";" val() ";" m
		}
		if (kind != "kv-nodel" && p >= 0.8) {
			delete present[k]
			return "d;" k ";" m
		}
		return "g;" k ";" m
	}
	BEGIN {
		srand(seed)
		nkeys = n < 128 ? 64 : int(n / 2); last = 0
		if (kind ~ /^kv/) {
			for (r = 0; 2 * r < n; r++) {
				a = key(last); b = key(a); last = b
				print kv(a, r); if (2 * r + 1 < n) print kv(b, r)
			}
		} else if (kind == "queue") {
			q = 0; v = val()
			for (r = 0; 2 * r < n; r++) {
				if (q >= 4 && rand() < 0.45) { print "D;"; print "D;"; q -= 2 }
				else { print "E;" v ";"; print "E;" v ";"; q += 2 }
			}
		} else if (kind == "pmdk-queue") {
			q = 0
			for (i = 0; i < n; i++) {
				if (q > 0 && rand() < 0.45) { print "D;"; q-- }
				else if (q < 90) { print "E;" val() ";"; q++ }
				else { print "D;"; q-- }
			}
		} else if (kind == "pmdk-array") {
			split("a b c d", names, " ")
			for (i = 0; i < n; i++) {
				nm = names[1 + int(rand() * 4)]
				if (rand() < 0.5) print "i;" nm ";" (1 + int(rand() * 9)) ";"
				else print "g;" nm ";"
			}
		}
	}'
}

build() {
	local s=$1 out=$workdir/$1
	config "$s"
	local src=$out/src
	# shellcheck disable=SC2086 # tp is a list of paths
	extract "$src" "$bench" $tp benchmark/Makefile.main.common
	local b=$src/$bench d
	for d in $copydirs; do
		make -s -C "$b/$d" copy || return 1
	done
	local main=$b/${srcs%% *}
	if [[ $s == p-art ]]; then
		sed -i '/std::cout << "Searching key " << k->fkey << std::endl;/d' "$b/lib/Tree.cpp"
		expect "$b/lib/Tree.cpp" 'Searching key' 0 || return 1
	fi
	if [[ $mt == 1 ]]; then
		if [[ $s == p-masstree ]]; then
			sed -i -e '/^void run_ops_in_parallel/,/^int main/{s/\[3\]/[4]/g; s/j < 3/j < 4/g; s/i < 3/i < 4/g}' "$main"
		fi
		adapt_mt "$main" || return 1
	else
		adapt_seq "$main" || return 1
	fi

	local cc="$SCRY cc" o objs=() x
	[[ $lang == c++ ]] && cc="$SCRY c++"
	rm -rf "${out:?}/bin" "${out:?}/obj"
	mkdir -p "$out/bin" "$out/obj"
	local log=$out/build.log
	: >"$log"
	local inc=()
	[[ $mt == 1 ]] && inc=(-include "$here/durinn_shim.h")
	local f first=1
	for f in $srcs; do
		o=$out/obj/$(basename "${f%.*}").o
		x=()
		[[ $lang == c++ && $f == *.c ]] && x=(-x c++)
		local pre=()
		[[ $first == 1 ]] && pre=("${inc[@]}")
		first=0
		# shellcheck disable=SC2086 # flags is a list of words
		echo "+ (cd $b && $cc -O1 -g $flags ${pre[*]} ${x[*]} -c $f -o $o)" >>"$log"
		# shellcheck disable=SC2086
		if ! (cd "$b" && $cc -O1 -g $flags "${pre[@]}" "${x[@]}" -c "$f" -o "$o") >>"$log" 2>&1; then
			tail -n 20 "$log" >&2
			echo "durinn.sh: $s: compiling $f failed (log: $log)" >&2
			echo "compile $f" >"$out/build.failed"
			return 1
		fi
		objs+=("$o")
	done
	# shellcheck disable=SC2086 # libs is a list of words
	echo "+ $cc -O1 -g -o $out/bin/$s ${objs[*]} $libs -lpmemobj -lpmem -lpthread" >>"$log"
	# shellcheck disable=SC2086
	if ! $cc -O1 -g -o "$out/bin/$s" "${objs[@]}" $libs -lpmemobj -lpmem -lpthread >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "durinn.sh: $s: linking failed (log: $log)" >&2
		echo "link" >"$out/build.failed"
		return 1
	fi
	rm -f "$out/build.failed"
	workload "$wl" "$OPS" "$SEED" >"$out/ops.txt"
	echo "durinn.sh: built $out/bin/$s ($(wc -l <"$out/ops.txt") operations, $([[ $mt == 1 ]] && echo 'two threads' || echo sequential))" >&2
}

check() {
	local s=$1 out=$workdir/$1
	config "$s"
	local of=()
	[[ -n $filter ]] && of=(--output-filter "$filter")
	local cmd=("$SCRY" check --format json -o "$out/report.json" --force
		--workload "$out/ops.txt" --env "PMEM_MMAP_HINT=$HINT" "${of[@]}" "${extra[@]}"
		-- "$out/bin/$s" '{pool}' "$size" layout - - "$mt")
	rm -f "$out/report.json" "$out/report.json.trace"
	printf '%q ' "${cmd[@]}" >"$out/command.txt"
	echo >>"$out/command.txt"
	echo "durinn.sh: $s: $(cat "$out/command.txt")" >&2
	local start end rc=0
	echo "start $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))" >"$out/load.txt"
	start=$(date +%s.%N)
	"${cmd[@]}" >"$out/check.log" 2>&1 || rc=$?
	end=$(date +%s.%N)
	echo "end   $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
	echo "$rc $(echo "$end - $start" | bc)" >"$out/status.txt"
	echo "durinn.sh: $s: scry check exited $rc after $(cut -d' ' -f2 "$out/status.txt") s (log: $out/check.log)" >&2
}

summary() {
	local s=$1 out=$workdir/$1
	if [[ -f $out/build.failed ]]; then
		echo "== $s: does not build ($(cat "$out/build.failed"); $out/build.log)"
		return
	fi
	[[ -s $out/report.json ]] || { echo "== $s: no report ($out/report.json)"; return; }
	local st=""
	[[ -f $out/status.txt ]] && st=$(cat "$out/status.txt")
	echo "== $s  (scry exit status, wall seconds: ${st:-?}; $(wc -l <"$out/ops.txt") operations)"
	[[ -f $out/load.txt ]] && sed 's/^/load average at /' "$out/load.txt"
	jq -r '
	  def kinds(f): [.findings[] | select(f)] | group_by(.kind) | map("\(.[0].kind) \(length)") | join(", ");
	  def crash: .crash != null;
	  (.stats // {}) as $s |
	  "crash points explored: \($s.crash_points // 0) of \(($s.crash_points // 0) + ($s.skipped_budget // 0)) (left out by the budget: \($s.skipped_budget // 0); outside operations: \($s.skipped_points // 0); too many in flight: \($s.skipped_concurrent // 0))",
	  "states judged: \($s.states_tested // 0) (reused \($s.reused // 0), sampled out \($s.sampled // 0), inconclusive \($s.inconclusive // 0)); failing: \($s.failures // 0); prep runs \($s.prep_runs // 0); schedules \($s.schedules // 1); exploration \($s.elapsed_seconds // 0 | floor) s with \($s.jobs // 0) jobs",
	  "crash findings: \([.findings[] | select(crash)] | length) (\(kinds(crash)))",
	  ( [.findings[] | select(crash)][] | "  \(.kind) \(.location.file // "?" | split("/") | last):\(.location.line // 0) \(.location.function // "") (\(.count // 1) states)" ),
	  "trace findings: \([.findings[] | select(crash | not)] | length)",
	  ( [.findings[] | select(crash | not)] | group_by(.class)[] |
	    "  \(.[0].class): \(length) (\(group_by(.kind) | map("\(.[0].kind) \(length)") | join(", ")))" ),
	  "warnings: \(.warnings | length)"' "$out/report.json"
}

for s in "${structs[@]}"; do config "$s"; done # reject unknown names before any work
for s in "${structs[@]}"; do
	[[ $summary_only == 1 ]] && break
	build "$s" || continue
	[[ $build_only == 1 ]] || check "$s"
done
for s in "${structs[@]}"; do summary "$s"; done
