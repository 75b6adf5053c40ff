#!/usr/bin/env bash
# pmrace.sh: build the target programs of PMRace (Chen, Hua, Zhang, Ding, "Efficiently Detecting
# Concurrency Bugs in Persistent Memory Programs", ASPLOS'22; their workloads and patches are
# github.com/yhuacode/pm-workloads) with scry's drop-in compiler, and run `scry check` on each
# with a two-thread workload.
#
# Usage:
#   test/pmrace/pmrace.sh [-n|-s] MIRRORS WORKDIR [TARGET...] [-- SCRY-CHECK-FLAGS...]
#
#   MIRRORS  a directory of bare git repositories laid out as MIRRORS/<owner>+<name>/repo (what
#            scry's fetch tool leaves in /work/.mirror): yhuacode+pm-workloads and the repository
#            of each submodule it pins (utsaslab+RECIPE, DICL+CCEH, DICL+FAST_FAIR, ...)
#   WORKDIR  scratch directory outside this repository; per target it gets WORKDIR/src/<t> (the
#            submodule's sources at the commit pm-workloads pins, PMRace's
#            patches/<submodule>.diff applied, then the edits below) and WORKDIR/<t>/: bin/<t>
#            (the instrumented program), build.log, ops.txt (the workload), report.json
#            (+ .trace), check.log, command.txt, status.txt
#   TARGET   any of: p-clht cceh fast-fair clevel (default: all, in that order), or
#            p-clht-gcfix (P-CLHT with its stale GC list reset on reopen, below); PMRace's fifth
#            target, memcached-pmem, is not driven (docs/pmrace.md says why)
#   -n       build and write the workloads only (no scry check); the summary is still printed
#   -s       only print the summary of the reports already in WORKDIR
#   flags after `--` go to `scry check` (e.g. -- --time-budget 6m)
#
#   SCRY (environment) is the scry binary (default: build/bin/scry of this checkout);
#   PMRACE_OPS the workload's length in lines (default 80), PMRACE_SEED its seed (default 1).
#
# Nothing of PMRace nor of its targets is copied into scry's repository: the script extracts the
# sources into WORKDIR with `git archive`, applies PMRace's patch there, edits there and builds
# there. PMRace builds its targets with its own LLVM pass, DataFlowSanitizer, libc++ and a patched
# PMDK; none of that is used: the programs are built with `scry cc` / `scry c++` (Debian's clang)
# against Debian's libpmemobj and libpmem (PMDK 1.12).
#
# The drivers. PMRace's drivers (P-CLHT/driver.cpp, CCEH-PMDK/src/test.cpp,
# concurrent_pmdk/src/test.cpp, added or rewritten by its patches) read one buffer from standard
# input with read(2) (AFL's persistent-mode macros), split it at tabs into one command stream per
# thread, and let the threads run their streams freely; they print time stamps and thread
# numbers, or nothing at all, and FAST_FAIR's deletes its pool first on every run. scry needs
# operation i to be line i of standard input and the output to depend only on which operations
# took effect (docs/concurrency.md, "Workloads for concurrent programs"), and it re-runs the
# program on crash images of its pool. So each target gets a small driver of scry's own,
# test/pmrace/<t>_driver.c[pp], that sets up the pool exactly as PMRace's driver does (same
# calls, same layout names) but opens an existing pool instead of recreating it, and applies
# PMRace's command letters (i K V, g/s K, d K, u K V; hex) with the same library calls, printing
# each call's result; test/pmrace/pmrace_rounds.h (scry's harness, its header says how) runs the
# lines in two threads, in rounds of two lines that begin in line order, overlap, and print in
# line order. Edits of the extracted sources (sed; each must apply the expected number of times):
#   p-clht  src/clht_lb_res.c: clht_create's pool of 32 MiB becomes 8 MiB and its libpmemobj
#           prefault at open and create is turned off (every re-execution opens the pool; neither
#           changes what is stored); the driver gives clht_create the pool through PMEM_POOL, as
#           PMRace's does. p-clht-gcfix (not in the default list) also sets the root's
#           version_list to NULL in clht_create's reopen branch: it holds DRAM pointers of the
#           previous process (clht_gc_thread_init), and the first resize of a reopened pool walks
#           them and segfaults (clht_gc.c:136), which kills scry's legal-outcome runs (a bug of
#           P-CLHT's recovery, fixed here only to see what the rest of the program does)
#   fast-fair  src/btree.h gets btree::pmrace_reopen, called after pmemobj_open: every page keeps
#           a pointer to a DRAM pthread_rwlock_t in PM, and the root keeps the pool pointer, both
#           dangling in a new process (the unmodified program crashes or hangs on any reopened
#           pool); it re-creates the locks of every page, level by level along the sibling chains
#   clevel  none (the driver is built from the repository's include/ and tests/ directories);
#           the driver's pool is 16 MiB instead of PMRace's 128 MiB
#   cceh    none; the driver's initial size is 2 segments instead of PMRace's 1024 (16 MiB of
#           segment initialization otherwise, and a split after some dozens of keys rather than
#           never in a short workload)
# Every run maps the pool at a fixed address (--env PMEM_MMAP_HINT=600000000000): P-CLHT keeps a
# raw PM pointer (ht_oldest), FAST_FAIR's root the pool pointer.
#
# The workload (WORKDIR/<t>/ops.txt, awk from PMRACE_SEED): rounds of two lines on two different
# keys (1..max(64, N/2), hex), so that the two operations of a round commute; the first quarter
# inserts, then 40 % inserts, 40 % lookups, 20 % deletes (P-CLHT and Clevel: half of them
# updates; CCEH: lookups instead, its Delete does nothing); an insert only of a key not present (else a lookup:
# CCEH and FAST_FAIR keep duplicates). Values 1..999999, stored as 8-byte pointer values.
# Lines a target prints from inside its operations (P-CLHT's resize messages, FAST_FAIR's "NOT
# FOUND", Clevel's constructor) land among the other thread's results depending on the interleaving: --output-filter
# drops them.
#
# The summary per target (jq over report.json): crash points explored of total, states judged,
# failing states, crash findings by kind and schedule, trace findings by class, wall time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCRY=${SCRY:-$repo/build/bin/scry}
OPS=${PMRACE_OPS:-80}
SEED=${PMRACE_SEED:-1}
ALL=(p-clht cceh fast-fair clevel)
KNOWN=(p-clht cceh fast-fair clevel p-clht-gcfix)
HINT=600000000000

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p' | sed -n '1,26p' >&2
	exit 2
}

build_only=0 summary_only=0
case ${1:-} in
-n) build_only=1; shift ;;
-s) summary_only=1; shift ;;
esac
[[ $# -ge 2 ]] || usage
mirrors=$1 workdir=$2
shift 2
targets=()
while [[ $# -gt 0 && $1 != -- ]]; do
	targets+=("$1")
	shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")

command -v jq >/dev/null || { echo "pmrace.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
[[ -x $SCRY ]] || { echo "pmrace.sh: no scry at $SCRY (run make all, or set SCRY)" >&2; exit 2; }
workdir=$(realpath -m "$workdir")
case "$workdir/" in
"$repo"/*) echo "pmrace.sh: WORKDIR must be outside the repository ($repo)" >&2; exit 2 ;;
esac
mkdir -p "$workdir"
pmw=$mirrors/yhuacode+pm-workloads/repo

# config T: sub (the pm-workloads submodule), dir (the target's directory in it), lang, srcs
# (relative to dir; the driver is added), flags, libs, args (after {pool}), wl (workload kind),
# filter (--output-filter).
config() {
	filter="" args=""
	case $1 in
	p-clht | p-clht-gcfix)
		sub=RECIPE dir=P-CLHT lang=cc driver=clht_driver.c
		srcs="src/clht_lb_res.c src/clht_gc.c external/sspfd/sspfd.c external/ssmem/src/ssmem.c"
		flags="-D_GNU_SOURCE -fheinous-gnu-extensions -DCLFLUSH -DADD_PADDING -Iinclude -Iexternal/include"
		libs="-lm" wl=kv-upd filter='^(resize to [0-9]+ buckets from|clht_bucket_create_stats \()' ;;
	cceh)
		sub=CCEH dir=CCEH-PMDK lang=c++ driver=cceh_driver.cpp srcs="src/CCEH.cpp"
		flags="-std=c++17 -I. -DINPLACE -DMULTITHREAD" libs="" args=2 wl=kv-nodel ;;
	fast-fair)
		sub=FAST_FAIR dir=concurrent_pmdk lang=c++ driver=fastfair_driver.cpp srcs=""
		flags="-std=c++17 -Wno-register -Isrc -DCONCURRENT -DPMRACE_REOPEN" libs="" wl=kv-s
		filter='^(NOT FOUND [0-9]+, t = |not found the key to delete )' ;;
	clevel)
		sub=Clevel-Hashing dir=. lang=c++ driver=clevel_driver.cpp srcs=""
		flags="-std=c++17 -Iinclude -Itests" libs="" wl=kv-clevel
		filter='^(clevel_hash constructor: HashPower = |hashpower : )' ;;
	*) echo "pmrace.sh: unknown target $1 (known: ${KNOWN[*]})" >&2; exit 2 ;;
	esac
}

# expect FILE PATTERN N: FILE must match the fixed string PATTERN on N lines after the edits.
expect() {
	local got
	got=$(grep -cF -- "$2" "$1" || true)
	[[ $got == "$3" ]] || {
		echo "pmrace.sh: $t: expected $3 line(s) with '$2' in $1 after the edits, found $got" >&2
		return 1
	}
}

# extract SUB T: WORKDIR/src/T, the submodule SUB at the commit pm-workloads pins, with PMRace's
# patch applied (one copy per target, since the targets' edits differ).
extract() {
	local sub=$1 t=$2 url name commit
	url=$(git -C "$pmw" config --blob HEAD:.gitmodules "submodule.$sub.url")
	name=$(sed -E 's|^https://github.com/||; s|\.git$||; s|/|+|' <<<"$url")
	commit=$(git -C "$pmw" ls-tree HEAD "$sub" | awk '{print $3}')
	rm -rf "$workdir/src/$t"
	mkdir -p "$workdir/src/$t"
	git -C "$mirrors/$name/repo" archive "$commit" | tar -x -C "$workdir/src/$t"
	git -C "$pmw" show "HEAD:patches/$sub.diff" | (cd "$workdir/src/$t" && patch -p1 -s)
	echo "$sub $url $commit (pm-workloads $(git -C "$pmw" rev-parse --short HEAD))" >"$workdir/src/$t.commit"
}

adapt() {
	local d=$workdir/src/$t/$dir
	case $t in
	p-clht | p-clht-gcfix)
		sed -i -e 's/int arg_open = 1, arg_create = 1;/int arg_open = 0, arg_create = 0;/' \
			-e 's/size_t pool_size = 32\*1024\*1024UL;/size_t pool_size = 8*1024*1024UL;/' \
			"$d/src/clht_lb_res.c"
		expect "$d/src/clht_lb_res.c" 'int arg_open = 0, arg_create = 0;' 1 || return 1
		expect "$d/src/clht_lb_res.c" 'size_t pool_size = 8*1024*1024UL;' 1 || return 1
		[[ $t == p-clht-gcfix ]] || return 0
		sed -i '/^    } else {$/,/^    }$/s|^        w->status_lock = LOCK_FREE;$|&\n        w->version_list = NULL; /* pmrace.sh: p-clht-gcfix */|' \
			"$d/src/clht_lb_res.c"
		expect "$d/src/clht_lb_res.c" 'w->version_list = NULL; /* pmrace.sh: p-clht-gcfix */' 1 ;;
	fast-fair)
		sed -i 's|^  void constructor(PMEMobjpool \*);$|&\n  void pmrace_reopen(PMEMobjpool *);|' "$d/src/btree.h"
		cat >>"$d/src/btree.h" <<'EOF'

/* added by scry's test/pmrace/pmrace.sh: what a reopen needs (the page locks are DRAM
 * pthread_rwlock_t pointers kept in PM, and the pool pointer too) */
void btree::pmrace_reopen(PMEMobjpool *pool) {
  pop = pool;
  pmemobj_persist(pop, &pop, sizeof(pop));
  TOID(page) level = root;
  while (level.oid.off != 0) {
    TOID(page) p = level;
    while (p.oid.off != 0) {
      D_RW(p)->hdr.rwlock = new pthread_rwlock_t;
      pthread_rwlock_init(D_RW(p)->hdr.rwlock, NULL);
      pmemobj_persist(pop, &D_RW(p)->hdr.rwlock, sizeof(pthread_rwlock_t *));
      p.oid.off = D_RO(p)->hdr.sibling_ptr.oid.off;
    }
    level.oid.off = (uint64_t)D_RO(level)->hdr.leftmost_ptr;
  }
}
EOF
		expect "$d/src/btree.h" 'void pmrace_reopen(PMEMobjpool *);' 1 ;;
	esac
}

# workload KIND N SEED: N lines on standard output (see the header).
workload() {
	awk -v kind="$1" -v n="$2" -v seed="$3" '
	function key(not) { do k = 1 + int(rand() * nkeys); while (k == not); return k }
	function val() { return 1 + int(rand() * 999999) }
	function kv(k, r,   p) {
		p = rand()
		if ((r < n / 8 || p < 0.4) && !(k in present)) {
			present[k] = 1
			return sprintf("i %x %x", k, val())
		}
		if ((kind == "kv-upd" || kind == "kv-clevel") && p >= 0.9) return sprintf("u %x %x", k, val())
		if (kind != "kv-nodel" && p >= 0.8) {
			delete present[k]
			return sprintf("%s %x", kind == "kv-clevel" ? "e" : "d", k)
		}
		return sprintf("%s %x", kind == "kv-s" || kind == "kv-clevel" ? "s" : "g", k)
	}
	BEGIN {
		srand(seed)
		nkeys = n < 128 ? 64 : int(n / 2)
		for (r = 0; 2 * r < n; r++) {
			a = key(0); b = key(a)
			print kv(a, r); if (2 * r + 1 < n) print kv(b, r)
		}
	}'
}

summary() {
	local t=$1 w=$workdir/$1 r
	r=$w/report.json
	if [[ ! -s $r ]]; then
		printf '%-10s %s\n' "$t" "$(cat "$w/status.txt" 2>/dev/null || echo 'no report')"
		return
	fi
	jq -r --arg t "$t" --arg wall "$(sed -n 's/^wall //p' "$w/check.log" 2>/dev/null | tail -1)" '
		def crash: [.findings[] | select(.crash != null)];
		"\($t): \(.stats.crash_points) crash points explored (\(.stats.skipped_budget // 0) left out for the budget), \(.stats.states_tested) states judged, \(.stats.failures) failed, \(.stats.prep_runs // 0) prep runs, schedules \(.stats.schedules // 1); wall \($wall)",
		"  crash findings: " + ([crash[] | "\(.kind)@\(.schedule // "os")"] | group_by(.) | map("\(.[0]) x\(length)") | join(", ")),
		"  trace findings: " + ([.findings[] | select(.crash == null) | .class] | group_by(.) | map("\(.[0]) \(length)") | join(", "))
	' "$r"
}

if [[ $summary_only == 1 ]]; then
	for t in "${targets[@]}"; do summary "$t"; done
	exit 0
fi

for t in "${targets[@]}"; do
	config "$t"
	w=$workdir/$t
	rm -rf "$w"
	mkdir -p "$w/bin"
	extract "$sub" "$t"
	if ! adapt; then
		echo "adaptation failed" >"$w/status.txt"
		continue
	fi
	# shellcheck disable=SC2086
	if ! (cd "$workdir/src/$t/$dir" && "$SCRY" "$lang" -O1 -g $flags -I"$here" -w \
		-o "$w/bin/$t" "$here/$driver" $srcs -lpmemobj -lpmem -lpthread $libs) >"$w/build.log" 2>&1; then
		echo "build failed: $(grep -m3 'error' "$w/build.log" | tr '\n' ' ')" >"$w/status.txt"
		summary "$t"
		continue
	fi
	workload "$wl" "$OPS" "$SEED" >"$w/ops.txt"
	echo "built" >"$w/status.txt"
	[[ $build_only == 1 ]] && { summary "$t"; continue; }
	cmd=("$SCRY" check -j 1 --env PMEM_MMAP_HINT=$HINT)
	[[ -n $filter ]] && cmd+=(--output-filter "$filter")
	cmd+=(--format json -o "$w/report.json" --force "${extra[@]}" --workload "$w/ops.txt" -- "$w/bin/$t" '{pool}')
	[[ -n $args ]] && cmd+=($args)
	printf '%q ' "${cmd[@]}" >"$w/command.txt"
	echo >>"$w/command.txt"
	start=$(date +%s)
	set +e
	(cd "$w" && "${cmd[@]}") >"$w/check.log" 2>&1
	rc=$?
	set -e
	echo "wall $(($(date +%s) - start))s" >>"$w/check.log"
	echo "checked, scry exit $rc" >"$w/status.txt"
	summary "$t"
done
