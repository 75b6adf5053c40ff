#!/usr/bin/env bash
# run.sh: build pmemkv (github.com/pmem/pmemkv) with scry's drop-in compilers against a
# libpmemobj-cpp installed into a prefix of the work directory, then run `scry check` (crash
# exploration, `{pool}`) on a small line-oriented driver for each of its persistent key-value
# engines, writing JSON reports into the work directory and printing a summary.
#
# Usage:
#   test/pmemkv/run.sh [-n] [-s] WORKDIR [ENGINE...] [-- SCRY-CHECK-FLAGS...]
#
#   WORKDIR   scratch directory outside this repository; it gets
#               libpmemobj-cpp/ (extracted sources), libpmemobj-cpp-build/, prefix/ (its install:
#               prefix/include/libpmemobj++, prefix/lib/pkgconfig/libpmemobj++.pc),
#               pmemkv/ (extracted sources), pmemkv-build/ (libpmemkv.so, built with scry cc/c++),
#               bin/driver (driver.cpp beside this script, built with scry c++), build.log,
#             and per engine WORKDIR/<engine>/: ops.txt (the workload), report.json (+ .trace),
#               check.log, command.txt, status.txt (scry's exit status, wall seconds)
#   ENGINE    any of ALL below (the default, in that order)
#   -n        build only; -s  only print the summary of the reports already in WORKDIR
#   flags after `--` go to `scry check` (default: --time-budget 120s -j 1; given flags come
#             after these, so e.g. `-- --time-budget 300s` overrides)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout);
#   PMEMOBJ_CPP_REPO and PMEMKV_REPO are the git repositories (bare or not; HEAD is read with
#   `git archive`), default /work/.mirror/pmem+libpmemobj-cpp/repo and
#   /work/.mirror/pmem+pmemkv/repo.
#
# Nothing of libpmemobj-cpp or pmemkv is copied into scry's repository: both are extracted into
# WORKDIR and built there. libpmemobj-cpp is header-only; it is configured with cmake (tests,
# examples, docs, benchmarks off) and installed into WORKDIR/prefix, never under /usr. pmemkv
# is configured with CC="$SCRY cc" CXX="$SCRY c++" against that prefix (CMAKE_PREFIX_PATH and
# PKG_CONFIG_PATH), RelWithDebInfo (-O2 -g), CXX_STANDARD=17, and is not installed: the driver
# includes WORKDIR/pmemkv/src and links WORKDIR/pmemkv-build/libpmemkv.so (with an rpath).
# libpmemobj and libpmem are Debian's (libpmemobj-dev, libpmem-dev), not instrumented: scry's
# runtime hooks their calls and records what libpmemobj itself writes to the pool as external
# writes. Both projects' cmake read their version from `git describe` in the source directory,
# which an extracted tree lacks: a .version file (as in their release tarballs) is written from
# the repository's `git describe`, else libpmemobj++.pc says "Version: " and pmemkv's check of
# libpmemobj++ >= 1.13.0 fails. Each step is skipped when its stamp file (the source commit,
# and for pmemkv and the driver the scry binary's checksum) matches.
#
# Engines built: cmap, csmap, stree, tree3, radix, robinhood (the persistent ones, on
# libpmemobj-cpp) and blackhole (always built; not checked, it stores nothing). Left out:
#   vsmap, vcmap   volatile engines on memkind (the path is a directory for a PMEM kind); no
#                  crash consistency to check, and libmemkind-dev is not installed
#   dram_vcmap     volatile testing engine (TBB)
#   json config    BUILD_JSON_CONFIG=OFF (needs rapidjson, not installed; the driver uses the
#                  C++ config API)
#   tests, docs, examples: off (tests need valgrind and the json config)
#
# The driver (driver.cpp) takes ENGINE POOL, opens the engine on POOL with create_if_missing
# and a size of 64 MiB, then reads lines `put K V`, `get K`, `remove K`, `count` with getline,
# one workload operation each, printing each result (robinhood takes only 8-byte keys and
# values: for it the driver pads them with '_' and strips the padding it prints). The workload
# (ops.txt, the same for every engine): 8 puts of keys 1..8, then 32 lines of scry's grammar
# generator (seed 1) over put, get, remove and count with keys 1..16.
#
# Runs: `scry check --format json -o WORKDIR/<engine>/report.json --workload ops.txt
#   --time-budget 120s -j 1 -- WORKDIR/bin/driver ENGINE {pool}`, with PMEM_IS_PMEM_FORCE=1
# (a plain file is PM for libpmem; scry also sets it for the program unless --no-pmem-force),
# one check at a time.
#
# Summary per engine: findings by class/kind; how many headlines (findings[].location.file)
# and innermost stack frames (findings[].stack[0].file) are under WORKDIR/prefix
# (libpmemobj-cpp's installed headers, which scry marks external), pmemkv's sources, the driver
# or elsewhere; exploration figures and warnings; then one line per headline file:line with the
# number of findings sharing it (one finding per instruction and program line that led there;
# several per headline when they are different instructions) and their
# innermost frames when those are elsewhere.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$repo/build/bin/scry}
PMEMOBJ_CPP_REPO=${PMEMOBJ_CPP_REPO:-/work/.mirror/pmem+libpmemobj-cpp/repo}
PMEMKV_REPO=${PMEMKV_REPO:-/work/.mirror/pmem+pmemkv/repo}
ALL=(cmap radix stree robinhood csmap tree3)
JOBS=2 # build parallelism
DEFAULT_CHECK=(--time-budget 120s -j 1)

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' | sed -n '1,26p' >&2
	exit 2
}

build_only=0 summary_only=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-n) build_only=1; shift ;;
	-s) summary_only=1; shift ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown flag $1" >&2; usage ;;
	*) break ;;
	esac
done
[[ $# -ge 1 ]] || usage
workdir=$1
shift
engines=()
while [[ $# -gt 0 && $1 != -- ]]; do
	engines+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#engines[@]} -gt 0 ]] || engines=("${ALL[@]}")
for e in "${engines[@]}"; do
	case " ${ALL[*]} " in
	*" $e "*) ;;
	*) echo "run.sh: unknown engine $e (known: ${ALL[*]})" >&2; exit 2 ;;
	esac
done

command -v jq >/dev/null || { echo "run.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
workdir=$(realpath -m "$workdir")
case "$workdir/" in
"$repo"/*) echo "run.sh: WORKDIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$workdir"
prefix=$workdir/prefix
log=$workdir/build.log

# run CMD... appending it and its output to build.log; on failure show the log's tail
run() {
	echo "+ $*" >>"$log"
	"$@" >>"$log" 2>&1 || {
		local rc=$?
		tail -n 40 "$log" >&2
		echo "run.sh: failed ($rc): $* (log: $log)" >&2
		exit 1
	}
}

# extract REPO's HEAD into DIR (afresh); prints nothing
extract() {
	local src=$1 dir=$2
	git --git-dir="$src" rev-parse HEAD >/dev/null 2>&1 || src=$(git -C "$src" rev-parse --absolute-git-dir)
	rm -rf "$dir" && mkdir -p "$dir"
	git --git-dir="$src" archive HEAD | tar -x -C "$dir"
	git --git-dir="$src" log -1 --format='%H %ci' >"$dir/COMMIT"
	# both projects' cmake take their version from `git describe` in the source directory,
	# which is no repository here, and leave it empty (libpmemobj++.pc then says "Version: ",
	# and pmemkv's check of libpmemobj++ >= 1.13.0 fails); a .version file, as in their release
	# tarballs, is read first: `git describe` of the repository, spelt as their cmake spells it
	# (1.13.0-129-g36ffa5af -> 1.13.0-git129.g36ffa5af)
	local v
	if v=$(git --git-dir="$src" describe --tags 2>/dev/null); then
		sed -E 's/^([0-9.]*)-rc([0-9]*)-([0-9]*)-(g[0-9a-f]*)$/\1-rc\2.git\3.\4/; s/^([0-9.]*)-([0-9]*)-(g[0-9a-f]*)$/\1-git\2.\3/' \
			<<<"$v" >"$dir/.version"
	fi
}

head_of() {
	local src=$1
	git --git-dir="$src" rev-parse HEAD 2>/dev/null || git -C "$src" rev-parse HEAD
}

build_objcpp() {
	local stamp=$prefix/.stamp-libpmemobj-cpp want
	want=$(head_of "$PMEMOBJ_CPP_REPO")
	if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
		echo "run.sh: libpmemobj-cpp $want already installed in $prefix" >&2
		return
	fi
	echo "run.sh: installing libpmemobj-cpp $want into $prefix" >&2
	extract "$PMEMOBJ_CPP_REPO" "$workdir/libpmemobj-cpp"
	rm -rf "$workdir/libpmemobj-cpp-build" "$prefix"
	run cmake -S "$workdir/libpmemobj-cpp" -B "$workdir/libpmemobj-cpp-build" \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
		-DBUILD_EXAMPLES=OFF -DBUILD_TESTS=OFF -DBUILD_DOC=OFF -DBUILD_BENCHMARKS=OFF \
		-DUSE_CCACHE=OFF -DTESTS_USE_VALGRIND=OFF -DUSE_LIBUNWIND=OFF
	run cmake --build "$workdir/libpmemobj-cpp-build" -j "$JOBS"
	run cmake --install "$workdir/libpmemobj-cpp-build"
	[[ -f $prefix/lib/pkgconfig/libpmemobj++.pc ]] ||
		{ echo "run.sh: no $prefix/lib/pkgconfig/libpmemobj++.pc after the install" >&2; exit 1; }
	grep -q '^Version: [0-9]' "$prefix/lib/pkgconfig/libpmemobj++.pc" ||
		{ echo "run.sh: $prefix/lib/pkgconfig/libpmemobj++.pc has no version" >&2; exit 1; }
	echo "$want" >"$stamp"
}

scry_sum() { sha256sum "$SCRY" | cut -c1-16; }

build_pmemkv() {
	local b=$workdir/pmemkv-build stamp=$workdir/pmemkv-build/.stamp want
	want="$(head_of "$PMEMKV_REPO") $(scry_sum) $(cat "$prefix/.stamp-libpmemobj-cpp")"
	if [[ -f $stamp && $(cat "$stamp") == "$want" && -f $b/libpmemkv.so ]]; then
		echo "run.sh: pmemkv already built in $b" >&2
		return
	fi
	echo "run.sh: building pmemkv $(head_of "$PMEMKV_REPO") with $SCRY cc/c++ in $b" >&2
	extract "$PMEMKV_REPO" "$workdir/pmemkv"
	rm -rf "$b"
	local on=ON
	run env CC="$SCRY cc" CXX="$SCRY c++" PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
		cmake -S "$workdir/pmemkv" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCXX_STANDARD=17 \
		-DBUILD_DOC=OFF -DBUILD_EXAMPLES=OFF -DBUILD_TESTS=OFF -DBUILD_JSON_CONFIG=OFF \
		-DTESTS_JSON=OFF -DTESTS_USE_VALGRIND=OFF -DUSE_CCACHE=OFF -DDEVELOPER_MODE=OFF \
		-DENGINE_VSMAP=OFF -DENGINE_VCMAP=OFF -DENGINE_DRAM_VCMAP=OFF \
		-DENGINE_CMAP=$on -DENGINE_CSMAP=$on -DENGINE_STREE=$on -DENGINE_TREE3=$on \
		-DENGINE_RADIX=$on -DENGINE_ROBINHOOD=$on
	run cmake --build "$b" -j "$JOBS"
	[[ -f $b/libpmemkv.so ]] || { echo "run.sh: no $b/libpmemkv.so after the build" >&2; exit 1; }
	echo "$want" >"$stamp"
}

build_driver() {
	local out=$workdir/bin/driver stamp=$workdir/bin/.stamp want
	want="$(sha256sum "$here/driver.cpp" | cut -c1-16) $(cat "$workdir/pmemkv-build/.stamp")"
	if [[ -f $stamp && $(cat "$stamp") == "$want" && -x $out ]]; then
		echo "run.sh: driver already built: $out" >&2
		return
	fi
	mkdir -p "$workdir/bin"
	run "$SCRY" c++ -std=c++17 -O1 -g -I"$workdir/pmemkv/src" -I"$prefix/include" -o "$out" "$here/driver.cpp" \
		-L"$workdir/pmemkv-build" -Wl,-rpath,"$workdir/pmemkv-build" -lpmemkv
	echo "$want" >"$stamp"
	echo "run.sh: built $out" >&2
}

# the workload, the same for every engine
make_ops() {
	local f=$1 k
	for k in $(seq 1 8); do echo "put $k v$((k * 37))"; done >"$f"
	"$SCRY" workload grammar --seed 1 --count 32 --usage 'put <key> <value>' --usage 'get <key>' \
		--usage 'remove <key>' --usage 'count' --value key=1..16 --value value=1..100000 >>"$f"
}

check() {
	local e=$1 out=$workdir/$1
	mkdir -p "$out"
	rm -f "$out/report.json" "$out/report.json.trace" "$out/check.log" "$out/status.txt"
	make_ops "$out/ops.txt"
	local cmd=("$SCRY" check --format json -o "$out/report.json" --force --workload "$out/ops.txt"
		"${DEFAULT_CHECK[@]}" "${extra[@]}" -- "$workdir/bin/driver" "$e" '{pool}')
	printf '%q ' "${cmd[@]}" >"$out/command.txt"
	echo >>"$out/command.txt"
	echo "run.sh: $e: $(cat "$out/command.txt")" >&2
	local start end rc=0
	start=$(date +%s.%N)
	PMEM_IS_PMEM_FORCE=1 "${cmd[@]}" >"$out/check.log" 2>&1 || rc=$?
	end=$(date +%s.%N)
	echo "$rc $(echo "$end - $start" | bc)" >"$out/status.txt"
	echo "run.sh: $e: scry check exited $rc after $(cut -d' ' -f2 "$out/status.txt") s" >&2
}

summary() {
	local e=$1 out=$workdir/$1
	[[ -s $out/report.json ]] || { echo "== $e: no report ($(cat "$out/status.txt" 2>/dev/null || echo not run))"; return; }
	echo "== $e  (scry exit status, wall seconds: $(cat "$out/status.txt" 2>/dev/null || echo ?))"
	# where: prefix (libpmemobj-cpp's installed headers), pmemkv (its sources), driver, other
	jq -r --arg prefix "$prefix/" --arg kv "$workdir/pmemkv/" '
	  def where: if . == null then "none"
	    elif startswith($prefix) then "prefix"
	    elif startswith($kv) then "pmemkv"
	    elif endswith("/driver.cpp") then "driver"
	    else "other" end;
	  def counts(f): [.[] | f] | group_by(.) | map("\(.[0]) \(length)") | join(", ");
	  (.stats // {}) as $s |
	  "findings: \(.findings | length) (\(.findings | counts("\(.class)/\(.kind)")))",
	  "headline files: \(.findings | counts(.location.file | where)); innermost frames: \(.findings | counts(.stack[0].file | where))",
	  "crash points explored: \($s.crash_points // 0) (outside operations: \($s.skipped_points // 0)), states judged \($s.states_tested // 0), failing \($s.failures // 0), sampled out \($s.sampled // 0), inconclusive \($s.inconclusive // 0)",
	  "warnings: \(.warnings | length)",
	  (.warnings[]? | "  warning: \(if type == "string" then . else (.message // tostring) end)" | .[0:240]),
	  # one line per headline (class, kind, file:line): how many findings share it, where it
	  # is, and the innermost frames of their stacks when those differ from it
	  (.findings | group_by([.class, .kind, .location.file, .location.line]) | .[] |
	    "  \(length)x \(.[0].class)/\(.[0].kind)  \(.[0].location.file // "?"):\(.[0].location.line // "?")  [\(.[0].location.file | where)]" +
	    ([.[] | .stack[0] | select(. != null) | "\(.file | split("/") | last):\(.line)"] | unique) as $in |
	    (if ($in | length) > 0 and ($in != ["\(.[0].location.file | split("/") | last):\(.[0].location.line)"])
	     then "  innermost: \($in | join(" "))" else "" end))
	' "$out/report.json"
}

if [[ $summary_only == 0 ]]; then
	[[ -x $SCRY ]] || { echo "run.sh: no scry at $SCRY (run make all, or set SCRY)" >&2; exit 2; }
	echo "==== $(date -Is) run.sh $*" >>"$log"
	build_objcpp
	build_pmemkv
	build_driver
	if [[ $build_only == 0 ]]; then
		for e in "${engines[@]}"; do check "$e"; done
	fi
fi
[[ $build_only == 1 ]] || for e in "${engines[@]}"; do summary "$e"; done
