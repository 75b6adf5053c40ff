#!/usr/bin/env bash
# witcher.sh: build the programs of WITCHER's public artifact (Fu et al., SOSP'21) with scry's
# drop-in compiler and run `scry check` (crash exploration) on their 2 000-operation workloads.
#
# Usage:
#   test/witcher/witcher.sh [-n|-s] ARTIFACT WORKDIR [PROGRAM...] [-- SCRY-CHECK-FLAGS...]
#
#   ARTIFACT  the artifact: a git repository of github.com/cosmoss-jigu/witcher (bare or not;
#             its HEAD is read with `git archive`) or a directory holding its checked-out files
#             (benchmark/, third_party/, giri/)
#   WORKDIR   scratch directory outside this repository; per program it gets
#             WORKDIR/<prog>/src (the extracted sources), WORKDIR/<prog>/bin/<prog> (the
#             instrumented program), WORKDIR/<prog>/ops.txt (the workload),
#             WORKDIR/<prog>/report.json (+ .trace) and WORKDIR/<prog>/check.log
#   PROGRAM   any of: level-hashing fast-fair cceh woart p-clht (default: all five, in that order)
#   -n        build only (no scry check); the summary of existing reports is still printed
#   -s        only print the summary of the reports already in WORKDIR
#   flags after `--` go to `scry check` (e.g. -- --time-budget 2m -j 2)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout).
#
# Nothing of WITCHER (nor of the data structures) is copied into scry's repository: this script
# extracts the artifact's sources into WORKDIR, adapts the drivers there (below) and builds there.
#
# What is adapted, and why (the only changes to the artifact's code, made on the extracted copy):
#   * The drivers (benchmark/<prog>/main/main.c[pp]) take `PMFILE SIZE_MIB LAYOUT OPFILE
#     START SKIP OUTFILE` and read OPFILE with fopen/fgets, write OUTFILE with fprintf. scry
#     feeds the workload on standard input (one operation per line: the re-execution of a
#     crash during operation k gets the lines after k) and judges the program's standard output.
#     So two fopen calls get a "-" case, applied with sed:
#       fopen(op_file_path, "r")      -> (strcmp(op_file_path, "-") ? fopen(...) : stdin)
#       fopen(output_file_path, "w")  -> (strcmp(output_file_path, "-") ? fopen(...) : stdout)
#     and the program runs as `main {pool} SIZE layout - 0 -1 -`. With fgets on `stdin` itself,
#     scry's runtime sees each line read as the beginning of an operation (its text the line), so
#     no operation markers are needed. (Opening /dev/stdin instead would read the same bytes
#     through another FILE, which scry does not see as operations; /dev/stdout opened with
#     "w" would truncate whatever file scry's standard error is redirected to.)
#     WITCHER brackets the data-structure call with witcher_tx_begin()/witcher_tx_end(); with
#     lines as operations, scry's operation k also holds the driver's parsing and output of line
#     k, and, for FAST_FAIR, CCEH and WOART inserts, the value's nvm_alloc + memcpy + flush the
#     driver does before witcher_tx_begin().
#   * Nothing else. The data structures reopen an existing pool (init_nvmm_pool: pmemobj_open
#     when the file exists; CCEH runs Recovery(), P-CLHT clht_lock_initialization()), which is
#     how scry's re-executions run. They keep raw pointers in PM, so every run maps the pool at
#     the address WITCHER's setup uses: `--env PMEM_MMAP_HINT=600000000000` (also given to the
#     recorded run), as in the artifact's README.
#
# Build: scry cc / scry c++ -O1 -g (the artifact builds with clang 9 -O0 and its giri tracer),
# the include directories and -D flags of the artifact's Makefiles, laid out by those
# Makefiles' own `copy` targets; linked with -lpmemobj -lpmem (and -lm, -latomic for P-CLHT).
# P-CLHT also gets -Wno-error=implicit-function-declaration: clht.h calls _mm_pause()
# undeclared, a warning for clang 9 and an error for clang 16 (a flag, not a source change).
#
# The summary per program (jq over report.json): crash points explored of total, states judged,
# failing states, crash findings by kind, trace findings by kind and class, wall time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$repo/build/bin/scry}
ALL_PROGS=(level-hashing fast-fair cceh woart p-clht)
HINT=600000000000 # PMEM_MMAP_HINT of the artifact's README (hex, as libpmem reads it)

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' | sed -n '1,20p' >&2
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
progs=()
while [[ $# -gt 0 && $1 != -- ]]; do
	progs+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#progs[@]} -gt 0 ]] || progs=("${ALL_PROGS[@]}")

git=0
if git -C "$artifact" rev-parse --git-dir >/dev/null 2>&1 && ! [[ -d $artifact/benchmark ]]; then
	git=1
elif [[ $summary_only == 0 ]] && ! [[ -d $artifact/benchmark && -d $artifact/third_party ]]; then
	echo "witcher.sh: $artifact is neither a git repository of the artifact nor its checkout" >&2
	exit 2
fi
command -v jq >/dev/null || { echo "witcher.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
[[ -x $SCRY ]] || { echo "witcher.sh: no scry at $SCRY (run make all, or set SCRY)" >&2; exit 2; }
workdir=$(realpath -m "$workdir") # checked before anything is created
case "$workdir/" in
"$repo"/*) echo "witcher.sh: WORKDIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$workdir"

# ---------------------------------------------------------------- per-program configuration
# bench: the program's directory under benchmark/; tp: what it needs of third_party/;
# copydirs: the benchmark subdirectories whose Makefile `copy` target lays out the sources;
# srcs: the sources to compile, relative to bench (main first); lang: c or c++ (the artifact
# compiles every pmdk.c of a C++ program as C++); flags: the Makefiles' -I/-D/-std flags;
# libs: link libraries; size: PM_SIZE (MiB) of benchmark/<prog>/random/2000/Makefile.
config() {
	case $1 in
	level-hashing)
		bench=benchmark/Level_Hashing tp=third_party/Level_Hashing/persistent_level_hashing
		copydirs="include lib" lang=c
		srcs="main/main.c lib/hash.c lib/log.c lib/pflush.c lib/level_hashing.c lib/pmdk.c"
		flags="-Iinclude -Wno-deprecated" libs="-lpmemobj -lpmem -lm" size=32 ;;
	fast-fair)
		bench=benchmark/FAST_FAIR tp=third_party/FAST_FAIR/single/src
		copydirs="include lib" lang=c++
		srcs="main/main.cpp lib/pmdk.c"
		flags="-Iinclude -Wno-deprecated -std=c++11" libs="-lpmemobj -lpmem" size=8 ;;
	cceh)
		bench=benchmark/CCEH tp="third_party/CCEH/src third_party/CCEH/util"
		copydirs="src util" lang=c++
		srcs="main/main.cpp src/CCEH_MSB.cpp src/pmdk.c"
		flags="-I. -std=c++11 -DINPLACE" libs="-lpmemobj -lpmem" size=8 ;;
	woart)
		bench=benchmark/WORT/woart tp=third_party/WORT/src/woart
		copydirs="include lib" lang=c
		srcs="main/main.c lib/pmdk.c lib/woart.c"
		flags="-Iinclude -Wno-deprecated" libs="-lpmemobj -lpmem" size=8 ;;
	p-clht)
		bench=benchmark/RECIPE/P-CLHT
		tp="third_party/RECIPE/P-CLHT/src third_party/RECIPE/P-CLHT/include third_party/RECIPE/P-CLHT/external"
		copydirs="include lib" lang=c
		srcs="main/main.c lib/pmdk.c lib/clht_lb_res.c"
		flags="-Iinclude -Wno-deprecated -DCLWB -Wno-error=implicit-function-declaration" libs="-lpmemobj -lpmem -lm -latomic" size=64 ;;
	*) echo "witcher.sh: unknown program $1 (known: ${ALL_PROGS[*]})" >&2; exit 2 ;;
	esac
}

# extract PATHS... of the artifact into DIR (fresh). A git repository is read with git archive
# (only the paths named: the mirror lacks blobs elsewhere, e.g. Level Hashing's concurrent
# workloads); a plain directory is copied.
extract() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	local p
	for p in "$@"; do
		mkdir -p "$dir/$(dirname "$p")"
		if [[ $git == 1 ]]; then
			# one subtree at a time: `git archive HEAD -- PATH` still complains about the
			# mirror's missing blobs outside PATH
			case $(git -C "$artifact" cat-file -t "HEAD:$p") in
			tree) git -C "$artifact" archive --format=tar --prefix="$p/" "HEAD:$p" | tar -x -C "$dir" ;;
			blob) git -C "$artifact" show "HEAD:$p" >"$dir/$p" ;;
			esac
		else
			cp -a "$artifact/$p" "$dir/$p"
		fi
	done
}

build() {
	local prog=$1 out=$workdir/$1
	config "$prog"
	local src=$out/src
	# Makefile.main.common is included by the drivers' Makefiles, which the copy targets run.
	extract "$src" "$bench" $tp giri/include/Witcher benchmark/Makefile.main.common
	local b=$src/$bench d
	for d in $copydirs; do
		make -s -C "$b/$d" copy
	done
	# The driver's "-" cases (see the header); each substitution must apply exactly once.
	local main=$b/${srcs%% *}
	sed -i \
		-e 's|fopen(op_file_path, "r")|(strcmp(op_file_path, "-") ? fopen(op_file_path, "r") : stdin)|' \
		-e 's|fopen(output_file_path, "w")|(strcmp(output_file_path, "-") ? fopen(output_file_path, "w") : stdout)|' \
		"$main"
	[[ $(grep -c 'strcmp(op_file_path, "-")' "$main") == 1 &&
		$(grep -c 'strcmp(output_file_path, "-")' "$main") == 1 ]] ||
		{ echo "witcher.sh: $prog: the driver's fopen calls were not found in $main" >&2; exit 1; }

	local cc="$SCRY cc" s o objs=()
	[[ $lang == c++ ]] && cc="$SCRY c++"
	rm -rf "$out/bin" "$out/obj"
	mkdir -p "$out/bin" "$out/obj"
	local log=$out/build.log # the compiler's commands and warnings
	: >"$log"
	for s in $srcs; do
		o=$out/obj/$(basename "${s%.*}").o
		# -x c++ for the .c files of a C++ program, as the artifact's Makefiles compile them
		local x=()
		[[ $lang == c++ && $s == *.c ]] && x=(-x c++)
		echo "+ (cd $b && $cc -O1 -g -I$src/giri/include/Witcher $flags ${x[*]} -c $s -o $o)" >>"$log"
		(cd "$b" && $cc -O1 -g -I"$src/giri/include/Witcher" $flags "${x[@]}" -c "$s" -o "$o") >>"$log" 2>&1 ||
			{ tail -n 30 "$log" >&2; echo "witcher.sh: $prog: compiling $s failed (log: $log)" >&2; exit 1; }
		objs+=("$o")
	done
	echo "+ $cc -O1 -g -o $out/bin/$prog ${objs[*]} $libs" >>"$log"
	$cc -O1 -g -o "$out/bin/$prog" "${objs[@]}" $libs >>"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; echo "witcher.sh: $prog: linking failed (log: $log)" >&2; exit 1; }
	# The workload: the artifact's random 2 000-operation op file, one operation per line.
	cp "$b/random/2000/op_file.txt" "$out/ops.txt"
	echo "witcher.sh: built $out/bin/$prog ($(wc -l <"$out/ops.txt") operations)" >&2
}

check() {
	local prog=$1 out=$workdir/$1
	config "$prog"
	local cmd=("$SCRY" check --format json -o "$out/report.json" --force
		--workload "$out/ops.txt" --env "PMEM_MMAP_HINT=$HINT" "${extra[@]}"
		-- "$out/bin/$prog" '{pool}' "$size" layout - 0 -1 -)
	rm -f "$out/report.json" "$out/report.json.trace"
	printf '%q ' "${cmd[@]}" >"$out/command.txt"
	echo >>"$out/command.txt"
	echo "witcher.sh: $prog: $(cat "$out/command.txt")" >&2
	local start end rc=0
	# the machine's load when the run starts and ends (the runs use -j jobs; others may share it)
	echo "start $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))" >"$out/load.txt"
	start=$(date +%s.%N)
	# scry's standard error (progress, notes, the recorded run's output) goes to the log.
	"${cmd[@]}" >"$out/check.log" 2>&1 || rc=$?
	end=$(date +%s.%N)
	echo "end   $(date -u +%FT%TZ) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
	echo "$rc $(echo "$end - $start" | bc)" >"$out/status.txt"
	echo "witcher.sh: $prog: scry check exited $rc after $(cut -d' ' -f2 "$out/status.txt") s (log: $out/check.log)" >&2
}

summary() {
	local prog=$1 out=$workdir/$1
	[[ -s $out/report.json ]] || { echo "== $prog: no report ($out/report.json)"; return; }
	local st=""
	[[ -f $out/status.txt ]] && st=$(cat "$out/status.txt")
	echo "== $prog  (scry exit status, wall seconds: ${st:-?})"
	[[ -f $out/load.txt ]] && sed 's/^/load average at /' "$out/load.txt"
	jq -r '
	  def kinds(f): [.findings[] | select(f)] | group_by(.kind) | map("\(.[0].kind) \(length)") | join(", ");
	  def crash: .crash != null;
	  (.stats // {}) as $s |
	  "crash points explored: \($s.crash_points // 0) of \(($s.crash_points // 0) + ($s.skipped_budget // 0)) (left out by the budget: \($s.skipped_budget // 0); outside operations: \($s.skipped_points // 0))",
	  "states judged: \($s.states_tested // 0) (reused \($s.reused // 0), sampled out \($s.sampled // 0), inconclusive \($s.inconclusive // 0)); failing: \($s.failures // 0); exploration \($s.elapsed_seconds // 0 | floor) s with \($s.jobs // 0) jobs",
	  "crash findings: \([.findings[] | select(crash)] | length) (\(kinds(crash)))",
	  "trace findings: \([.findings[] | select(crash | not)] | length)",
	  ( [.findings[] | select(crash | not)] | group_by(.class)[] |
	    "  \(.[0].class): \(length) (\(group_by(.kind) | map("\(.[0].kind) \(length)") | join(", ")))" ),
	  "warnings: \(.warnings | length)"' "$out/report.json"
}

for p in "${progs[@]}"; do config "$p"; done # reject unknown names before any work
for p in "${progs[@]}"; do
	[[ $summary_only == 1 ]] && break
	build "$p"
	[[ $build_only == 1 ]] || check "$p"
done
for p in "${progs[@]}"; do summary "$p"; done
