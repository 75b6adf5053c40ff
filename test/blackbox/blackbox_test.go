// Package blackbox tests `scry check --black-box` (docs/black-box.md): programs built with plain
// clang (-O1 -g -gdwarf-4), not with `scry cc`, recorded under scry's Valgrind tool.
//
// TestExamples builds every example of examples/ that the tool can follow (no clwb nor
// clflushopt, which Valgrind 3.19 cannot decode; no custom checker) twice, with `scry cc -O1` and
// with plain clang, checks both with `scry check --format json` (the plain one with --black-box)
// and compares the (file, line, kind) sets of their findings. The differences the tool is known to
// have are listed in knownDiffs with their reason (the same list as docs/black-box.md); any other
// difference, or a listed one that is gone, fails. TestTraceVerify replays a black-box trace
// against its pool file byte for byte (`scry trace verify`), TestMapcli does so for PMDK's mapcli
// on its eight maps; TestThreadsAndMarkers, TestNTStoresAndFlushLine check threads, operation
// markers, non-temporal stores and clflush's line on small programs (testdata/); TestLimits checks
// the errors of what black-box mode cannot record (clwb, clang's DWARF 5).
package blackbox_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// knownDiffs are the examples whose black-box findings differ from their `scry cc` build's, with
// the reason (docs/black-box.md, "Differences from scry cc"). The key is example/variant.
var knownDiffs = map[string]string{
	"clflush-ordering/buggy": "mpb-violation is inferred with the static dependence facts (DEPS) the pass computes; a binary has none",
}

// example is one program of examples/ and how it is run (its `// scry:` header lines).
type example struct {
	name, path string
	args, pm   []string
	workload   string
	markers    []string
	filter     string
	strategies []string
	// persistency is the --persistency value ("" none).
	persistency string
}

func loadExamples(t *testing.T) (eligible []example, excluded map[string]string) {
	root := filepath.Join(testenv.Root(), "examples")
	srcs, err := filepath.Glob(filepath.Join(root, "*", "*.c*"))
	if err != nil {
		t.Fatal(err)
	}
	excluded = map[string]string{}
	for _, src := range srcs {
		if base := filepath.Base(src); !slices.Contains([]string{"buggy.c", "fixed.c", "correct.c", "buggy.cpp", "fixed.cpp", "correct.cpp"}, base) {
			continue
		}
		body, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(filepath.Dir(src)) + "/" + strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		if bytes.Contains(body, []byte("<scry.h>")) {
			excluded[name] = "uses scry's API (scry.h), which only `scry cc` links"
			continue
		}
		if usesClwb.Match(body) {
			excluded[name] = "uses clwb or clflushopt, which Valgrind 3.19 does not decode"
			continue
		}
		if bytes.Contains(body, []byte("// scry: target ")) {
			excluded[name] = "built for another architecture (aarch64, run under qemu-user): black-box mode runs x86-64 programs under Valgrind"
			continue
		}
		e := example{name: name, path: src}
		sc := bufio.NewScanner(bytes.NewReader(body))
		checker := false
		for sc.Scan() {
			line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "// scry: ")
			if !ok {
				continue
			}
			key, val, _ := strings.Cut(line, " ")
			switch key {
			case "args":
				e.args = strings.Fields(val)
			case "pm":
				e.pm = append(e.pm, val)
			case "workload":
				e.workload = filepath.Join(filepath.Dir(src), val)
			case "op-markers":
				e.markers = strings.Fields(val)
			case "output-filter":
				e.filter = val
			case "strategy":
				e.strategies = strings.Split(val, ",")
			case "persistency":
				e.persistency = val
			case "checker":
				checker = true
			}
		}
		if checker {
			excluded[name] = "checked by a custom checker"
			continue
		}
		eligible = append(eligible, e)
	}
	return eligible, excluded
}

// checkArgs is the `scry check` command line of e, its program bin, in dir.
func checkArgs(e example, dir, bin string, blackBox bool) []string {
	args := []string{"check", "--format", "json", "-o", filepath.Join(dir, "report.json"), "--trace", filepath.Join(dir, "trace")}
	if blackBox {
		args = append(args, "--black-box")
	}
	if e.persistency != "" {
		args = append(args, "--persistency", e.persistency)
	}
	if len(e.markers) == 2 {
		args = append(args, "--op-begin", e.markers[0], "--op-end", e.markers[1])
	}
	if e.workload != "" {
		args = append(args, "--workload", e.workload)
		if e.filter != "" {
			args = append(args, "--output-filter", e.filter)
		}
		if len(e.strategies) > 0 {
			args = append(args, "--strategy", strings.Join(e.strategies, ","))
		}
		return append(append(args, "--", bin), e.args...)
	}
	for _, g := range e.pm {
		args = append(args, "--pm", filepath.Join(dir, g))
	}
	pool := filepath.Join(dir, "test.pool")
	for _, a := range e.args {
		args = append(args, strings.ReplaceAll(a, "{pool}", pool))
	}
	return slices.Insert(args, len(args)-len(e.args), "--", bin)
}

// plainCC returns the clang that builds the black-box programs.
func plainCC(t *testing.T, cxx bool) string {
	for _, v := range []string{"16", "14"} {
		name := "clang-" + v
		if cxx {
			name = "clang++-" + v
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no clang-16 nor clang-14 (make deps)")
	return ""
}

// usesClwb finds a source that executes clwb or clflushopt (an intrinsic or inline assembly).
var usesClwb = regexp.MustCompile(`_mm_clwb|_mm_clflushopt|asm[^;]*(clwb|clflushopt)`)

var libs = []string{"-lpmemobj", "-lpmem", "-lpthread"}

// build compiles src into bin, with `scry cc` when scry is set, else with plain clang.
func build(t *testing.T, scry, src, bin string, extra ...string) {
	t.Helper()
	cxx := strings.HasSuffix(src, ".cpp")
	inc := "-I" + filepath.Join(testenv.Root(), "examples", "include")
	var cmd *exec.Cmd
	if scry != "" {
		driver := "cc"
		if cxx {
			driver = "c++"
		}
		cmd = exec.Command(scry, append(append([]string{driver, "-O1", inc, "-o", bin, src}, extra...), libs...)...)
	} else {
		// pmemcheck.h, scry's copy of pmemcheck's header, over Debian's valgrind.h.
		pmc := "-I" + filepath.Join(testenv.BuildDir(), "include", "scry-compat")
		cmd = exec.Command(plainCC(t, cxx), append(append([]string{"-O1", "-g", "-gdwarf-4", inc, pmc, "-I/usr/include/valgrind", "-o", bin, src}, extra...), libs...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// check runs scry check on e's program bin in a fresh directory and returns its findings.
func check(t *testing.T, scry string, e example, dir, bin string, blackBox bool) []testenv.Want {
	t.Helper()
	args := checkArgs(e, dir, bin, blackBox)
	cmd := exec.Command(scry, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("scry %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	rep, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("scry %s: no report: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	got, err := testenv.ReportFindings(rep)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func wantsString(ws []testenv.Want) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

func TestExamples(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	testenv.Built(t, filepath.Join("lib", "scry", "valgrind", "scry-amd64-linux"))
	eligible, excluded := loadExamples(t)
	if len(eligible) == 0 {
		t.Fatal("no example to check in black-box mode")
	}
	for name, why := range excluded {
		t.Logf("%s: not checked in black-box mode: %s", name, why)
	}
	for _, e := range eligible {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			instrDir, bbDir := t.TempDir(), t.TempDir()
			build(t, scry, e.path, filepath.Join(instrDir, "prog"))
			build(t, "", e.path, filepath.Join(bbDir, "prog"))
			want := check(t, scry, e, instrDir, filepath.Join(instrDir, "prog"), false)
			got := check(t, scry, e, bbDir, filepath.Join(bbDir, "prog"), true)
			missing, unexpected := testenv.CompareWants(want, got)
			differs := len(missing) > 0 || len(unexpected) > 0
			reason, known := knownDiffs[e.name]
			switch {
			case differs && !known:
				t.Errorf("black-box findings differ from scry cc's\nonly with scry cc: %s\nonly in black-box: %s",
					wantsString(missing), wantsString(unexpected))
			case !differs && known:
				t.Errorf("listed in knownDiffs (%s) but the findings agree now: %s", reason, wantsString(got))
			case differs:
				t.Logf("known difference (%s): only with scry cc: %s; only in black-box: %s", reason, wantsString(missing), wantsString(unexpected))
			}
		})
	}
}

// TestTraceVerify records the missing-flush example in black-box mode and replays its trace
// against the pool file.
func TestTraceVerify(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	build(t, "", filepath.Join(testenv.Root(), "examples", "missing-flush", "buggy.c"), bin)
	tr, pool := filepath.Join(dir, "trace"), filepath.Join(dir, "t.pool")
	if out, err := exec.Command(scry, "record", "--black-box", "--trace", tr, "--pm", filepath.Join(dir, "*.pool"), "--", bin, pool).CombinedOutput(); err != nil {
		t.Fatalf("scry record --black-box: %v\n%s", err, out)
	}
	out, err := exec.Command(scry, "trace", "verify", tr).CombinedOutput()
	if err != nil {
		t.Fatalf("scry trace verify: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("match the trace")) {
		t.Errorf("scry trace verify: no region matched:\n%s", out)
	}
}

// TestLimits: what black-box mode cannot record is an error that says what to do.
func TestLimits(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	root := filepath.Join(testenv.Root(), "examples")
	for _, tc := range []struct {
		name, src string
		flags     []string
		want      []string
	}{
		{"clwb", filepath.Join(root, "missing-fence", "buggy.c"), []string{"-mclwb", "-mclflushopt"},
			[]string{"clwb", "scry cc", "SCRY_VALGRIND"}},
		{"dwarf5", filepath.Join(root, "missing-flush", "buggy.c"), []string{"-gdwarf-5"},
			[]string{"DWARF 5", "-gdwarf-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "prog")
			build(t, "", tc.src, bin, tc.flags...)
			cmd := exec.Command(scry, "check", "--black-box", "--trace", filepath.Join(dir, "trace"), "--pm", filepath.Join(dir, "*.pool"), "--", bin, filepath.Join(dir, "t.pool"))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("scry check --black-box: %v (want exit status 2)\n%s", err, out)
			}
			for _, w := range tc.want {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("the error does not say %q:\n%s", w, out)
				}
			}
			if bytes.Contains(out, []byte("panic")) {
				t.Errorf("scry panicked:\n%s", out)
			}
		})
	}
}

// TestMapcli records PMDK's mapcli (its plain build, mapcli.native: clang -O2 -g -gdwarf-4) in
// black-box mode on every map with a generated workload: the trace replays to the pool file byte
// for byte (`scry trace verify`) and gives no correctness finding on this mature code, as its
// `scry cc` build gives none (test/integration, TestMapcliTraces).
func TestMapcli(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	native := testenv.Built(t, filepath.Join("mapcli", "mapcli.native"))
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: 300, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"btree", "ctree", "rbtree", "rtree", "hashmap_tx", "hashmap_atomic", "hashmap_rp", "skiplist"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ops := filepath.Join(dir, "ops.txt")
			if err := os.WriteFile(ops, wl.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			tr, pool := filepath.Join(dir, "trace"), filepath.Join(dir, m+".pool")
			cmd := exec.Command(scry, "check", "--black-box", "--format", "json", "-o", filepath.Join(dir, "report.json"),
				"--trace", tr, "--workload", ops, "--", native, m, pool, "1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("scry check --black-box on mapcli %s: %v\n%s", m, err, out)
			}
			rep, err := os.ReadFile(filepath.Join(dir, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := testenv.ReportFindings(rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range got {
				if f.Class == "correctness" {
					t.Errorf("correctness finding on mapcli %s: %s", m, f)
				}
			}
			out, err := exec.Command(scry, "trace", "verify", tr).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("OK:")) {
				t.Errorf("scry trace verify on mapcli %s: %v\n%s", m, err, out)
			}
		})
	}
}

// TestThreadsAndMarkers records testdata/threads.c (two threads, one after the other in the
// thread slot Valgrind reuses, storing, flushing and fencing; one operation marked by calls of
// op_begin and op_end) in black-box mode: each thread's stores are its own, the marker calls
// make exactly one operation, and the trace replays to the file.
func TestThreadsAndMarkers(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	build(t, "", filepath.Join(testenv.Root(), "test", "blackbox", "testdata", "threads.c"), bin, "-pthread")
	tr := filepath.Join(dir, "trace")
	if out, err := exec.Command(scry, "record", "--black-box", "--trace", tr, "--pm", filepath.Join(dir, "*.pool"),
		"--op-begin", "op_begin", "--op-end", "op_end", "--", bin, filepath.Join(dir, "t.pool")).CombinedOutput(); err != nil {
		t.Fatalf("scry record --black-box: %v\n%s", err, out)
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	storesBy := map[uint64]map[uint32]int{} // address -> thread -> stores
	begins, ends := 0, 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case trace.KindStore:
			if storesBy[ev.Addr] == nil {
				storesBy[ev.Addr] = map[uint32]int{}
			}
			storesBy[ev.Addr][ev.Thread]++
		case trace.KindOpBegin:
			begins++
		case trace.KindOpEnd:
			ends++
		}
	}
	if begins != 1 || ends != 1 {
		t.Errorf("OP_BEGIN %d, OP_END %d: want one operation", begins, ends)
	}
	if len(storesBy) != 2 {
		t.Fatalf("stores to %d addresses, want 2 (one per thread): %v", len(storesBy), storesBy)
	}
	threads := map[uint32]bool{}
	for addr, by := range storesBy {
		if len(by) != 1 {
			t.Errorf("address %#x stored by threads %v, want one", addr, by)
		}
		for th, n := range by {
			threads[th] = true
			if n != 100 {
				t.Errorf("thread %d stored %d times to %#x, want 100", th, n, addr)
			}
		}
	}
	if len(threads) != 2 {
		t.Errorf("stores by %d threads, want 2", len(threads))
	}
	out, err := exec.Command(scry, "trace", "verify", tr).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("OK:")) {
		t.Errorf("scry trace verify: %v\n%s", err, out)
	}
}

// TestNTStoresAndFlushLine records testdata/ntstore.c in black-box mode: its movnti and movntdq
// are NT_STORE records (VEX makes them plain stores; the tool tells them by their bytes), its
// clflush flushes the exact cache line of its address (not the 256-byte block VEX invalidates),
// and scry finds nothing (every store is durable).
func TestNTStoresAndFlushLine(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	build(t, "", filepath.Join(testenv.Root(), "test", "blackbox", "testdata", "ntstore.c"), bin)
	tr, pool := filepath.Join(dir, "trace"), filepath.Join(dir, "t.pool")
	if out, err := exec.Command(scry, "check", "--black-box", "--trace", tr, "--pm", filepath.Join(dir, "*.pool"), "--", bin, pool).CombinedOutput(); err != nil {
		t.Fatalf("scry check --black-box: %v (want no finding)\n%s", err, out)
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var base uint64
	var nt []uint64
	var flushes []uint64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case trace.KindRegionMap:
			base = ev.Addr
		case trace.KindNTStore:
			nt = append(nt, ev.Addr-base)
		case trace.KindFlush:
			flushes = append(flushes, ev.Addr-base)
		}
	}
	if want := []uint64{0, 8, 16, 24, 32, 40, 48, 56, 256}; !slices.Equal(nt, want) {
		t.Errorf("NT_STORE offsets %v, want %v", nt, want)
	}
	if want := []uint64{576}; !slices.Equal(flushes, want) {
		t.Errorf("FLUSH offsets %v, want %v (the line of the address, not its 256-byte block)", flushes, want)
	}
}
