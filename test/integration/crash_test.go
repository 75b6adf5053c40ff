package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// crashReport is the part of a JSON report the crash tests read.
type crashReport struct {
	Findings []struct {
		Kind  string `json:"kind"`
		Crash *struct {
			ID      string `json:"id"`
			Symptom string `json:"symptom"`
		} `json:"crash"`
	} `json:"findings"`
	Stats *struct {
		CrashPoints  int     `json:"crash_points"`
		StatesTested int     `json:"states_tested"`
		Failures     int     `json:"failures"`
		Elapsed      float64 `json:"elapsed_seconds"`
	} `json:"stats"`
}

func readCrashReport(t *testing.T, path string) crashReport { return readJSON[crashReport](t, path) }

// readJSON decodes the JSON file at path into a T, failing t when it cannot.
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// mapcliFilter drops the output lines of mapcli that legitimately vary: the random seed printed
// when a pool is created, and the messages hashmap_atomic prints when its recovery repairs a
// crashed rebuild or a dirty count.
const mapcliFilter = `^(seed:|rebuild, previous attempt crashed|count dirty, recalculating|old count: )`

// TestCrashMapcli explores the program-order crash states of PMDK's mapcli, every map, on a
// small workload: PMDK's transactions (and hashmap_atomic's and hashmap_rp's own protocols) make
// every operation failure-atomic without reordering, so there is no crash finding. The states are
// capped (2 prefixes per crash point) to keep the test short; `make mapcli-crash` runs the
// default strategies, whose reorderings find hashmap_atomic's torn PMEMoid
// (docs/pmdk-examples.md).
func TestCrashMapcli(t *testing.T) {
	scry := testenv.Scry(t)
	mapcli := testenv.Built(t, "mapcli/mapcli")
	for _, m := range mapcliMaps {
		t.Run(m, func(t *testing.T) {
			dir := t.TempDir()
			ops := filepath.Join(dir, "ops.txt")
			if r := run(t, dir, "", scry, "workload", "kv", "--ops", "20", "--seed", "3", "-o", ops); r.code != 0 {
				t.Fatalf("workload: %s", r.stderr)
			}
			rep := filepath.Join(dir, "rep.json")
			r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops,
				"--output-filter", mapcliFilter, "--strategy", "prefix", "--max-states", "2", "--",
				mapcli, m, "{pool}")
			if r.code != 0 {
				t.Fatalf("scry check: exit %d\n%s", r.code, r.stderr)
			}
			cr := readCrashReport(t, rep)
			for _, f := range cr.Findings {
				if f.Crash != nil {
					t.Errorf("crash finding %s (%s) on mapcli %s", f.Kind, f.Crash.Symptom, m)
				}
			}
			if cr.Stats == nil || cr.Stats.CrashPoints == 0 || cr.Stats.StatesTested == 0 || cr.Stats.Failures != 0 {
				t.Errorf("stats %+v", cr.Stats)
			}
			if _, err := os.Stat(rep + ".trace"); err != nil {
				t.Errorf("the trace is not kept next to the report: %v", err)
			}
		})
	}
}

// TestCrashMapcliTransactions checks mapcli btree on `n 5` lines, each of which inserts five
// random keys in five transactions: every outermost committed transaction is a durable point of
// its operation (durable linearizability per transaction, docs/crash-exploration.md), so a crash
// between two of them is legal and the correct map has no crash finding (before transaction
// cuts, two atomicity violations).
func TestCrashMapcliTransactions(t *testing.T) {
	scry := testenv.Scry(t)
	mapcli := testenv.Built(t, "mapcli/mapcli")
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(ops, []byte("n 5\nn 5\np\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "rep.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops,
		"--output-filter", mapcliFilter, "--", mapcli, "btree", "{pool}")
	if r.code != 0 {
		t.Fatalf("scry check: exit %d\n%s", r.code, r.stderr)
	}
	cr := readCrashReport(t, rep)
	for _, f := range cr.Findings {
		if f.Crash != nil {
			t.Errorf("crash finding %s (%s) on mapcli btree with n 5", f.Kind, f.Crash.Symptom)
		}
	}
	if cr.Stats == nil || cr.Stats.CrashPoints == 0 || cr.Stats.StatesTested == 0 || cr.Stats.Failures != 0 {
		t.Errorf("stats %+v", cr.Stats)
	}
}

// TestCrashChecker runs a recovery checker on every crash image: one that accepts every image
// gives no finding; one that rejects every image is broken, since it rejects the consistent
// images of the uncrashed run too (an error, exit 2, quoting it); one that rejects exactly the
// inconsistent images of explore/testdata/ordering.c (its slot marked valid without its data)
// gives a checker finding.
func TestCrashChecker(t *testing.T) {
	scry := testenv.Scry(t)
	mapcli := testenv.Built(t, "mapcli/mapcli")
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(ops, []byte("i 1\ni 2\nc 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ordering := filepath.Join(dir, "ordering")
	if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-o", ordering, filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.c")); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	orderingOps := filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.ops")
	// Slot 0: data at byte 0, valid at byte 64 (u8 words).
	word := func(off int) string { return fmt.Sprintf(`"$(od -An -t u8 -j %d -N 8 {image} | tr -d ' ')"`, off) }
	slotCheck := "test " + word(64) + " != 1 || test " + word(0) + " != 0 || { echo 'slot 0 valid without data' >&2; exit 1; }"
	tests := []struct {
		name     string
		checker  string
		ops      string
		target   []string
		code     int
		findings bool
		msg      string
	}{
		{"accepts", "test -s {image}", ops, []string{mapcli, "btree", "{pool}"}, 0, false, ""},
		{"rejects everything", "test -s {image} && echo 'bad pool' >&2; exit 3", ops, []string{mapcli, "btree", "{pool}"}, 2, false,
			"the checker fails on a consistent image"},
		{"rejects the bad images", slotCheck, orderingOps, []string{ordering, "{pool}"}, 1, true, ""}, // random states: a reordering
	}
	for _, tt := range tests {
		rep := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
		strategy := []string{"--strategy", "prefix", "--max-states", "1"}
		if tt.findings {
			strategy = []string{"--strategy", "random"}
		}
		args := append(append([]string{"check", "--format", "json", "-o", rep, "--workload", tt.ops,
			"--output-filter", "^seed:", "--checker", tt.checker}, strategy...), "--")
		args = append(args, tt.target...)
		r := run(t, dir, "", scry, args...)
		if r.code != tt.code {
			t.Fatalf("%s: exit %d, want %d\n%s", tt.name, r.code, tt.code, r.stderr)
		}
		if tt.msg != "" && (!strings.Contains(r.stderr, tt.msg) || !strings.Contains(r.stderr, "bad pool")) {
			t.Errorf("%s: stderr does not say %q quoting the checker:\n%s", tt.name, tt.msg, r.stderr)
		}
		cr := readCrashReport(t, rep)
		var checker int
		for _, f := range cr.Findings {
			if f.Crash != nil && f.Crash.Symptom == "checker" {
				checker++
			}
		}
		if (checker > 0) != tt.findings {
			t.Errorf("%s: %d checker findings in %+v", tt.name, checker, cr.Findings)
		}
	}
}

// TestCrashReplay finds the ordering violation of explore/testdata/ordering.c with scry check
// and rebuilds its crash image with scry replay.
func TestCrashReplay(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	src := filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.c")
	bin := filepath.Join(dir, "ordering")
	if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-o", bin, src); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	ops := filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.ops")
	rep := filepath.Join(dir, "rep.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--env", "ORDERING_NOTE=run by scry", "--workload", ops, "--", bin, "{pool}")
	if r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	cr := readCrashReport(t, rep)
	idx := -1
	for i, f := range cr.Findings {
		if f.Kind == "ordering-violation" && f.Crash != nil {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no ordering-violation in %+v", cr.Findings)
	}
	img := filepath.Join(dir, "crash.img")
	for _, id := range []string{cr.Findings[idx].Crash.ID, strconv.Itoa(idx + 1)} {
		os.Remove(img)
		r = run(t, dir, "", scry, "replay", rep, id, "--out", img)
		if r.code != 0 {
			t.Fatalf("scry replay %s: exit %d\n%s", id, r.code, r.stderr)
		}
		if fi, err := os.Stat(img); err != nil || fi.Size() != 4096 {
			t.Fatalf("image: %v %v", fi, err)
		}
		if !strings.Contains(r.stdout, "tail -n +") || !strings.Contains(r.stdout, img) {
			t.Errorf("replay printed %q", r.stdout)
		}
	}
	// The reproduction prints the data that did not persist, from an empty environment too: the
	// command carries the variables the runs had (--env's among them).
	cmd := strings.TrimSpace(r.stdout)
	if !strings.Contains(cmd, "'ORDERING_NOTE=run by scry'") || !strings.Contains(cmd, "PMEM_IS_PMEM_FORCE=1") {
		t.Errorf("reproduce command %q lacks the runs' environment", cmd)
	}
	// The program changes the image it runs on: the command runs it on a fresh copy each time,
	// so it reproduces every time it is run (on the image itself, the second run would see the
	// first one's sets).
	for i := range 2 {
		out := run(t, dir, "", "/usr/bin/env", "-i", "PATH="+os.Getenv("PATH"), "/bin/sh", "-c", cmd)
		if !strings.HasPrefix(out.stdout, "0 \n") {
			t.Errorf("run %d of %s printed %q, want the lost data's 0", i+1, cmd, out.stdout)
		}
	}
	// The same under gdb, as replay prints it (batch mode here), twice.
	_, debug, ok := strings.Cut(r.stderr, "under gdb: ")
	debug, _, _ = strings.Cut(debug, "\n")
	if !ok || !strings.Contains(debug, " gdb -ex ") {
		t.Fatalf("replay printed no gdb command line:\n%s", r.stderr)
	}
	testenv.Tool(t, "gdb") // a Debian package make deps installs: missing fails the strict suite
	for i := range 2 {
		out := run(t, dir, "", "/bin/sh", "-c", strings.Replace(debug, " gdb -ex ", " gdb -batch -ex ", 1))
		if !strings.Contains(out.stdout, "\n0 \n") && !strings.HasPrefix(out.stdout, "0 \n") {
			t.Errorf("run %d of %s printed %q, want the lost data's 0", i+1, debug, out.stdout)
		}
	}
	// Without {pool} check stays a trace-only check (no stats).
	r = run(t, dir, "", scry, "check", "--format", "json", "--pm", filepath.Join(dir, "*.pool"), "--workload", ops, "--", bin, filepath.Join(dir, "x.pool"))
	if strings.Contains(r.stdout, `"stats"`) {
		t.Errorf("check without {pool} explored crash states:\n%s", r.stdout)
	}
}

// TestReplayAssumedLate: the crash findings of testdata/late-then-ordering.c, whose exploration
// assumes durable a store one operation left pending and a later one made durable (AssumeLate,
// which moves the numbering of the crash points after it), are rebuilt by scry replay: replay
// walks the trace the way the exploration did (before the report recorded assume_late, replay
// numbered the crash points otherwise and refused the finding).
func TestReplayAssumedLate(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "late-then-ordering")
	src := filepath.Join(testenv.Root(), "test", "integration", "testdata", "late-then-ordering.c")
	if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-I", filepath.Join(testenv.Root(), "examples", "include"), "-o", bin, src, "-lpmem"); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	ops := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(ops, []byte("late 1 5\nfence\nlate 2 6\npair 7\nget\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "rep.json")
	if r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops, "--", bin, "{pool}"); r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	cr := readCrashReport(t, rep)
	var kinds []string
	for i, f := range cr.Findings {
		if f.Crash == nil {
			continue
		}
		kinds = append(kinds, f.Kind)
		img := filepath.Join(dir, fmt.Sprintf("crash%d.img", i))
		if r := run(t, dir, "", scry, "replay", rep, strconv.Itoa(i+1), "--out", img); r.code != 0 {
			t.Errorf("scry replay of finding %d (%s): exit %d\n%s", i+1, f.Kind, r.code, r.stderr)
		}
	}
	if !slices.Contains(kinds, "ordering-violation") {
		t.Fatalf("crash findings %v, want an ordering-violation", kinds)
	}
}

// assumeReport is the part of a JSON report TestAssumeFixed reads.
type assumeReport struct {
	Findings []struct {
		Kind     string `json:"kind"`
		Location struct {
			Line int `json:"line"`
		} `json:"location"`
		Crash *struct{} `json:"crash"`
	} `json:"findings"`
	Stats struct {
		Failures       int `json:"failures"`
		AssumedDurable int `json:"assumed_durable"`
	} `json:"stats"`
}

// TestAssumeFixed runs examples/assume-fixed/buggy.c three ways: by default its durability bug
// is reported once (unpersisted-store, and the cross-failure-read of the lost magic by recovery
// proving it) and its ordering
// bug gives the same crash findings as the same program built with the magic persisted
// (-DPERSIST_MAGIC); with --no-assume-fixed the lost magic makes many more crash states fail.
func TestAssumeFixed(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	src := filepath.Join(testenv.Root(), "examples", "assume-fixed", "buggy.c")
	wl := filepath.Join(testenv.Root(), "examples", "assume-fixed", "workload.txt")
	type outcome struct {
		crash    []string // kind:line of crash findings other than the magic's cross-failure-read
		kinds    map[string]int
		failures int
	}
	check := func(name string, cflags []string, flags ...string) outcome {
		t.Helper()
		bin := filepath.Join(dir, name)
		inc := "-I" + filepath.Join(testenv.Root(), "examples", "include") // example.h
		args := append([]string{"cc", "-O0", "-g", "-mclwb", inc, "-o", bin}, cflags...)
		if r := run(t, dir, "", scry, append(args, src, "-lpmem")...); r.code != 0 {
			t.Fatalf("scry cc: %s", r.stderr)
		}
		rep := filepath.Join(dir, name+".json")
		args = append([]string{"check", "--format", "json", "-o", rep, "--workload", wl}, flags...)
		if r := run(t, dir, "", scry, append(args, "--", bin, "{pool}")...); r.code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s", name, r.code, r.stderr)
		}
		doc := readJSON[assumeReport](t, rep)
		o := outcome{kinds: map[string]int{}, failures: doc.Stats.Failures}
		for _, f := range doc.Findings {
			o.kinds[f.Kind]++
			if f.Crash != nil && f.Kind != "cross-failure-read" {
				o.crash = append(o.crash, fmt.Sprintf("%s:%d", f.Kind, f.Location.Line))
			}
		}
		return o
	}
	buggy := check("buggy", nil)
	persisted := check("persisted", []string{"-DPERSIST_MAGIC"})
	literal := check("literal", nil, "--no-assume-fixed")
	if buggy.kinds["unpersisted-store"] != 1 || buggy.kinds["cross-failure-read"] != 1 || buggy.kinds["durability-violation"] != 0 {
		t.Errorf("the durability bug is not reported once with its proof: %v", buggy.kinds)
	}
	if persisted.kinds["unpersisted-store"] != 0 || persisted.kinds["cross-failure-read"] != 0 || persisted.kinds["durability-violation"] != 0 {
		t.Errorf("-DPERSIST_MAGIC still has the durability bug: %v", persisted.kinds)
	}
	if fmt.Sprint(buggy.crash) != fmt.Sprint(persisted.crash) || len(buggy.crash) == 0 {
		t.Errorf("ordering findings with the durability bug %v, without it %v: want the same, not empty", buggy.crash, persisted.crash)
	}
	if literal.failures <= buggy.failures {
		t.Errorf("literal model: %d failing states, assumed fixed: %d; want more without the assumption", literal.failures, buggy.failures)
	}
}

// TestConfirmInferred: the breach of an inferred property is unconfirmed (a warning, exit 0)
// until a crash image that breaks the property makes the program fail. On a program that
// recovers from every such state (checksummed records) the mpb-violation stays unconfirmed and
// says so; on one that does not (explore/testdata/ordering.c) it is confirmed, a correctness
// finding next to the ordering violation.
func TestConfirmInferred(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		src, ops  string
		code      int
		class     string
		msg       string
		crashKind string
	}{
		{"testdata/checksum.c", "set 1 10\nset 2 20\nget 1\nget 2\n", 0, "unconfirmed", "not confirmed: the program recovered from each of the", ""},
		{filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.c"), "", 1, "correctness", "confirmed:", "ordering-violation"},
	} {
		t.Run(filepath.Base(tc.src), func(t *testing.T) {
			src, _ := filepath.Abs(tc.src)
			bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
			if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-o", bin, src, "-lpmem"); r.code != 0 {
				t.Fatalf("scry cc: %s", r.stderr)
			}
			ops := filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.ops")
			if tc.ops != "" {
				ops = filepath.Join(dir, "checksum.ops")
				if err := os.WriteFile(ops, []byte(tc.ops), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep := filepath.Join(dir, filepath.Base(bin)+".json")
			r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops, "--", bin, "{pool}")
			if r.code != tc.code {
				t.Fatalf("scry check: exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			b, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Findings []struct {
					Kind, Class, Message string
					Properties           []int
				}
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			mpb, crash := 0, 0
			for _, f := range out.Findings {
				switch f.Kind {
				case "mpb-violation":
					mpb++
					if f.Class != tc.class || !strings.Contains(f.Message, tc.msg) || len(f.Properties) == 0 {
						t.Errorf("mpb-violation %s (properties %v): %s; want class %s, message with %q", f.Class, f.Properties, f.Message, tc.class, tc.msg)
					}
				case "ordering-violation", "atomicity-violation":
					crash++
					if f.Kind != tc.crashKind {
						t.Errorf("unexpected %s: %s", f.Kind, f.Message)
					}
				}
			}
			if mpb == 0 || (tc.crashKind != "") != (crash > 0) {
				t.Errorf("%d mpb-violation and %d crash findings in\n%s", mpb, crash, b)
			}
		})
	}
}

// TestLevelHashing checks scry on its port of a published persistent hash table
// (test/levelhash, Level Hashing, OSDI'18) with 120 operations of `scry workload kv`: the
// insert's ordering bug WITCHER reports (the token persisted while the slot's value is not, at a
// crash point before a clflush) and the never-flushed item counter (a durability violation,
// assumed fixed afterwards) are found; the run fails with status 1.
func TestLevelHashing(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	bin, ops := levelHashing(t, scry, dir)
	rep := filepath.Join(dir, "report.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops, "--", bin, "{pool}")
	if r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Findings []levelFinding
		Stats    struct {
			AssumedDurable int `json:"assumed_durable"`
			StatesTested   int `json:"states_tested"`
		}
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	ordering := slices.ContainsFunc(out.Findings, levelOrdering)
	durability := slices.ContainsFunc(out.Findings, func(f levelFinding) bool {
		// The lost counter shows in the count printed at the end.
		return f.Kind == "durability-violation" && f.Crash != nil && strings.Contains(f.Crash.DiffRolledBack, "items:")
	})
	if !ordering || !durability || out.Stats.AssumedDurable == 0 || out.Stats.StatesTested == 0 {
		t.Errorf("ordering bug found: %v, counter's durability bug found: %v, stats %+v; report:\n%s", ordering, durability, out.Stats, b)
	}
	// The durability violation's state (taken at an operation's start) is replayable, and its
	// reproduction prints the wrong count the finding reports.
	for _, f := range out.Findings {
		if f.Kind != "durability-violation" || f.Crash == nil {
			continue
		}
		img := filepath.Join(dir, "durability.img")
		r := run(t, dir, "", scry, "replay", rep, f.Crash.ID, "--out", img)
		if r.code != 0 {
			t.Fatalf("scry replay %s: exit %d\n%s", f.Crash.ID, r.code, r.stderr)
		}
		var got string
		for _, l := range strings.Split(f.Crash.DiffRolledBack, "\n") {
			if strings.HasPrefix(l, "+items:") {
				got = strings.TrimPrefix(l, "+")
			}
		}
		if rr := run(t, dir, "", "/bin/sh", "-c", strings.TrimSpace(r.stdout)); got == "" || !strings.Contains(rr.stdout, got) {
			t.Errorf("reproducing %s printed %q, want %q", f.Crash.ID, rr.stdout, got)
		}
		break
	}
	// A further variant of a finding is replayable by its own id.
	for _, f := range out.Findings {
		if f.Crash == nil || len(f.Crash.VariantImages) == 0 {
			continue
		}
		v := f.Crash.VariantImages[0]
		img := filepath.Join(dir, "variant.img")
		r := run(t, dir, "", scry, "replay", rep, v.ID, "--out", img)
		if r.code != 0 {
			t.Fatalf("scry replay %s: exit %d\n%s", v.ID, r.code, r.stderr)
		}
		if want := fmt.Sprintf("tail -n +%d ", v.Input); !strings.Contains(r.stdout, want) {
			t.Errorf("replay of variant %s printed %q, want it to start at line %d", v.ID, r.stdout, v.Input)
		}
		return
	}
	t.Errorf("no crash finding with a further variant in\n%s", b)
}

// The lines of level_hashing.c's write_slot: the value store and the token store after it.
const levelValueLine, levelTokenLine = 168, 169

// levelFinding is what the Level Hashing tests read of a finding in a JSON report.
type levelFinding struct {
	Kind     string
	Class    string
	Location struct{ Line int }
	Related  []struct {
		Role report.Role
		Line int
	}
	Crash *struct {
		ID             string `json:"id"`
		DiffRolledBack string `json:"diff_rolled_back"`
		VariantImages  []struct {
			ID    string `json:"id"`
			Input int    `json:"input_line"`
		} `json:"variant_images"`
	}
}

// related reports whether one of f's related locations has the role at the line.
func (f levelFinding) related(role report.Role, line int) bool {
	for _, r := range f.Related {
		if r.Role == role && r.Line == line {
			return true
		}
	}
	return false
}

// levelOrdering reports whether f is write_slot's ordering bug: an ordering violation with the
// token store persisted and the value store not.
func levelOrdering(f levelFinding) bool {
	return f.Kind == "ordering-violation" && f.related(report.RolePersisted, levelTokenLine) && f.related(report.RoleUnpersisted, levelValueLine)
}

// levelHashing builds test/levelhash/level_hashing.c with `scry cc -O1` (its lookup loop
// find_in inlined into locate) and writes 120 operations of `scry workload kv --seed 1`, in dir;
// it returns the program and the workload.
func levelHashing(t *testing.T, scry, dir string) (bin, ops string) {
	t.Helper()
	src := filepath.Join(testenv.Root(), "test", "levelhash", "level_hashing.c")
	bin = filepath.Join(dir, "level_hashing")
	if r := run(t, dir, "", scry, "cc", "-O1", "-o", bin, src, "-lpmem"); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	ops = filepath.Join(dir, "ops.txt")
	if r := run(t, dir, "", scry, "workload", "kv", "--ops", "120", "--seed", "1", "-o", ops); r.code != 0 {
		t.Fatalf("scry workload: %s", r.stderr)
	}
	return bin, ops
}

// TestLevelHashingInvariants checks the invariants strategy alone on the Level Hashing port
// (WITCHER §4.3, §6): query reads the slot's value through the index find_in's loop left with,
// so the value's store must persist before the token's (MPB, inferred through the implicit flow
// out of that loop, docs/inference.md), and the crash state that breaks it (the token persisted,
// the value not) fails: an ordering violation that confirms the mpb-violation at the token store.
func TestLevelHashingInvariants(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	bin, ops := levelHashing(t, scry, dir)
	rep := filepath.Join(dir, "report.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--strategy", "invariants", "--workload", ops, "--", bin, "{pool}")
	if r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	out := readJSON[struct{ Findings []levelFinding }](t, rep)
	ordering := slices.ContainsFunc(out.Findings, levelOrdering)
	mpb := slices.ContainsFunc(out.Findings, func(f levelFinding) bool {
		return f.Kind == "mpb-violation" && f.Location.Line == levelTokenLine && f.Class == "correctness" && f.related(report.RoleEarlierStore, levelValueLine)
	})
	if !ordering || !mpb {
		b, _ := os.ReadFile(rep)
		t.Errorf("value/token ordering violation found: %v, confirmed value-before-token mpb-violation: %v; report:\n%s", ordering, mpb, b)
	}
}
