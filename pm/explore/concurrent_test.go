package explore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// helperEnv makes the test binary run slotsMain instead of the tests: the target of the tests
// below, an uninstrumented program whose traces are built by hand.
const helperEnv = "EXPLORE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "slots" {
		if os.Getenv("SLOTS_DIE") == "1" { // a program that cannot run in this environment
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		os.Exit(slotsMain(os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// The slots program: a 4 KiB pool of 32 slots, slot i's data at 64*i and its valid flag at
// 2048 + 64*i (two cache lines). "put I V" writes the data, then the flag; "get" prints I:V for
// every valid slot. A valid slot with data 0 is what a crash between the two writes, with the
// flag persisted first, leaves.
const (
	slotBase  = 0x7f0000000000
	validOff  = 2048
	slotsSize = 4096
)

func slotsMain(pool string) int {
	f, err := os.OpenFile(pool, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	word := func(off int64) uint64 {
		var b [8]byte
		f.ReadAt(b[:], off)
		return binary.LittleEndian.Uint64(b[:])
	}
	put := func(off int64, v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		f.WriteAt(b[:], off)
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var i, v uint64
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "put"):
			if _, err := fmt.Sscanf(line, "put %d %d", &i, &v); err != nil || i >= 32 {
				return 2
			}
			put(int64(64*i), v)
			put(int64(validOff+64*i), 1)
		case line == "get":
			if os.Getenv("SLOTS_STAMP") == "1" { // output that varies between runs (vary_test.go)
				fmt.Printf("at %d pid %d\n", time.Now().UnixNano(), os.Getpid())
			}
			for i := int64(0); i < 32; i++ {
				if word(validOff+64*i) != 0 {
					fmt.Printf("%d:%d\n", i, word(64*i))
				}
			}
		}
	}
	return 0
}

// slotTrace builds the trace of the slots program: ops are the workload lines, steps the
// interleaving, each step (thread, action) with action "begin K", "end K", "data K" (the data
// store of operation K's slot, written back and fenced unless nofence), "valid K", "both K"
// (data and flag written, then both written back and ONE fence: the ordering bug), "stores K"
// (data and flag written, nothing written back) and "sync K" (both written back, one fence).
func slotTrace(t *testing.T, dir string, ops []string, steps []string) (tracePath, workload string) {
	t.Helper()
	b := analysistest.New().Map(1, slotBase, slotsSize)
	slot := func(k int) (i, v uint64) {
		if _, err := fmt.Sscanf(ops[k], "put %d %d", &i, &v); err != nil {
			t.Fatalf("op %d %q is not a put", k, ops[k])
		}
		return i, v
	}
	store := func(site uint32, addr, v uint64) {
		b.Store(site, addr, 8)
		binary.LittleEndian.PutUint64(b.Events[len(b.Events)-1].Data, v)
	}
	for _, s := range steps {
		var tid uint32
		var act string
		var k int
		if _, err := fmt.Sscanf(s, "%d %s %d", &tid, &act, &k); err != nil {
			t.Fatalf("step %q: %v", s, err)
		}
		b.Thread(tid)
		i, v := uint64(0), uint64(0)
		if act != "begin" && act != "end" {
			i, v = slot(k)
		}
		data, valid := slotBase+64*i, slotBase+validOff+64*i
		switch act {
		case "begin":
			b.OpBegin(uint64(k), ops[k])
		case "end":
			b.OpEnd(uint64(k))
		case "data":
			store(10, data, v)
			b.Persist(11, data, 8)
		case "valid":
			store(12, valid, 1)
			b.Persist(13, valid, 8)
		case "both":
			store(10, data, v)
			store(12, valid, 1)
			b.Flush(14, trace.FlushCLWB, data).Flush(14, trace.FlushCLWB, valid).Fence(15, trace.FenceSFENCE)
		case "stores":
			store(10, data, v)
			store(12, valid, 1)
		case "sync":
			b.Flush(14, trace.FlushCLWB, data).Flush(14, trace.FlushCLWB, valid).Fence(15, trace.FenceSFENCE)
		default:
			t.Fatalf("step %q", s)
		}
	}
	b.Thread(1).Unmap(1, 20).Exit(0)
	return b.WriteFiles(t, dir, "slots", ops)
}

func exploreSlots(t *testing.T, dir, tr, wl string, cfg Config, env ...string) *Result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Read(wl)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Trace, cfg.Args, cfg.Workload = tr, []string{self, "{pool}"}, w
	cfg.Timeout, cfg.Env, cfg.Jobs = 10*time.Second, append([]string{helperEnv + "=slots"}, env...), 2
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	return r
}

var slotOps = []string{"put 0 5", "put 1 7", "get"}

// TestConcurrentOracles explores two overlapping operations: the legal outcomes are every order
// of every subset of the operations in flight (WITCHER §4.7), so a crash image where the second
// operation took effect and the first did not is legal, and the ordering bug of the first is
// still found, with the operations in flight in its report.
func TestConcurrentOracles(t *testing.T) {
	fixed := []string{
		"1 begin 0", "2 begin 1",
		"1 data 0",  // point 0: 0 and 1 in flight
		"2 data 1",  // point 1
		"2 valid 1", // point 2: "1:7" alone is legal only as "operation 1 applied, 0 not"
		"2 end 1",
		"1 valid 0", // point 3: 0 in flight, 1 ended
		"1 end 0",
		"1 begin 2", "1 end 2",
	}
	buggy := []string{
		"1 begin 0", "2 begin 1",
		"2 data 1",
		"1 both 0", // the flag may persist without the data: "0:0"
		"2 valid 1",
		"2 end 1", "1 end 0",
		"1 begin 2", "1 end 2",
	}
	t.Run("fixed", func(t *testing.T) {
		dir := t.TempDir()
		tr, w := slotTrace(t, dir, slotOps, fixed)
		r := exploreSlots(t, dir, tr, w, Config{Options: Options{Strategies: []string{"exhaustive"}}})
		if len(r.Findings) != 0 || r.Stats.Failures != 0 || r.Stats.Inconclusive != 0 {
			t.Fatalf("findings %+v stats %+v warnings %q", r.Findings, r.Stats, r.Warnings)
		}
		// Points 0-2: no operation ended, 0 and 1 in flight: 5 legal outcomes, 4 prep runs
		// ([0], [1], [0 1], [1 0]); point 3: [1] and [1 0] again, cached.
		st := r.Stats
		if st.CrashPoints != 4 || st.StatesTested != 8 || st.OracleRuns != 5 || st.PrepRuns != 4 {
			t.Errorf("stats %+v, want 4 crash points, 8 states, 5 oracle runs, 4 prep runs", st)
		}
		// With at most one operation in flight, points 0-2 are skipped.
		r = exploreSlots(t, dir, tr, w, Config{Options: Options{MaxInFlight: 1}})
		if st := r.Stats; st.SkippedConcurrent != 3 || st.CrashPoints != 1 || len(r.Findings) != 0 {
			t.Errorf("capped: stats %+v findings %d", st, len(r.Findings))
		}
	})
	t.Run("buggy", func(t *testing.T) {
		dir := t.TempDir()
		tr, w := slotTrace(t, dir, slotOps, buggy)
		r := exploreSlots(t, dir, tr, w, Config{})
		if len(r.Findings) != 1 {
			t.Fatalf("findings %+v, want one", r.Findings)
		}
		f := r.Findings[0]
		c := f.Crash
		if f.Kind != report.OrderingViolation || c.Symptom != scryexec.SymptomOutput || f.Operation.Index != 0 {
			t.Errorf("finding %s %s in operation %d", f.Kind, c.Symptom, f.Operation.Index)
		}
		if len(c.InFlight) != 2 || c.InFlight[0].Index != 0 || c.InFlight[1].Index != 1 || c.Oracles != 5 {
			t.Errorf("in flight %+v, %d oracles; want operations 0 and 1, 5 oracles", c.InFlight, c.Oracles)
		}
		if !strings.Contains(c.DiffCommitted, "+0:0") || !strings.Contains(c.DiffRolledBack, "+0:0") {
			t.Errorf("diffs:\n%s\n%s", c.DiffCommitted, c.DiffRolledBack)
		}
		if c.Input != 3 || !strings.Contains(f.Message, "in flight") {
			t.Errorf("input line %d, message %q", c.Input, f.Message)
		}
		// The image rebuilt from the report, with the operations not begun, prints the bug; the
		// reproduce command carries the environment the runs had (the helper's variable), so it
		// works from an empty one.
		img := filepath.Join(dir, "crash.img")
		if err := Rebuild(c, img, false, nil); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(c.Env, helperEnv+"=slots") {
			t.Errorf("crash env %q lacks the target's variable", c.Env)
		}
		cmd := osexec.Command("/bin/sh", "-c", ReproduceCommand(c.Target, c.Env, c.Workload, c.Input-2, len(slotOps), img))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "0:0") {
			t.Errorf("rerun on the rebuilt image: %q %v", out, err)
		}
	})
}

// TestBlame: a crash point on one thread whose state loses another operation's stores blames
// that operation (its units' px86 origin), not the crash point's: operation 0 stores its data and
// flag and writes nothing back yet; operation 1's fence, on thread 2, is a crash point where 0's
// flag may persist without its data.
func TestBlame(t *testing.T) {
	dir := t.TempDir()
	tr, w := slotTrace(t, dir, slotOps, []string{
		"1 begin 0", "2 begin 1",
		"1 stores 0",
		"2 data 1", // crash points before its fence (thread 2): 0:0 possible
		"2 valid 1",
		"2 end 1",
		"1 sync 0", // the missing fence between 0's data and flag shows here too
		"1 end 0",
		"1 begin 2", "1 end 2",
	})
	r := exploreSlots(t, dir, tr, w, Config{Options: Options{Strategies: []string{"exhaustive"}}})
	if len(r.Findings) == 0 {
		t.Fatalf("no finding: stats %+v", r.Stats)
	}
	for _, f := range r.Findings {
		if f.Operation.Index != 0 || f.Operation.Text != "put 0 5" {
			t.Errorf("finding %s blames operation %d %q, want 0: %s", f.Kind, f.Operation.Index, f.Operation.Text, f.Message)
		}
	}
	if f := r.Findings[0]; !strings.Contains(f.Message, "(in operation 1's thread) during operation 0") {
		t.Errorf("message %q: want the crash point's thread named", f.Message)
	}
}

// TestLegalOutcomeKilled: when the crash-free runs die by a signal (here every run of the
// target is killed: a program missing the environment it needs), a crash image whose run dies
// the same way is not judged legal: its state is inconclusive, with a warning, never a pass.
func TestLegalOutcomeKilled(t *testing.T) {
	dir := t.TempDir()
	tr, w := slotTrace(t, dir, slotOps, []string{
		"1 begin 0", "2 begin 1", "1 data 0", "2 data 1", "2 valid 1", "2 end 1", "1 valid 0", "1 end 0",
		"1 begin 2", "1 end 2",
	})
	r := exploreSlots(t, dir, tr, w, Config{}, "SLOTS_DIE=1")
	st := r.Stats
	if st.StatesTested == 0 || st.Inconclusive != st.StatesTested || st.Failures != 0 {
		t.Errorf("stats %+v: want every state tested inconclusive", st)
	}
	if !slices.ContainsFunc(r.Warnings, func(m string) bool { return strings.Contains(m, "killed by signal 9") }) {
		t.Errorf("warnings %q: want one naming the killed legal outcome", r.Warnings)
	}
}

// TestSequentialSlots checks the two-oracle case on the same program: operations that do not
// overlap have two oracle runs each and no prep run.
func TestSequentialSlots(t *testing.T) {
	dir := t.TempDir()
	tr, w := slotTrace(t, dir, slotOps, []string{
		"1 begin 0", "1 both 0", "1 end 0",
		"2 begin 1", "2 data 1", "2 valid 1", "2 end 1",
		"1 begin 2", "1 end 2",
	})
	r := exploreSlots(t, dir, tr, w, Config{})
	st := r.Stats
	if st.OracleRuns != 4 || st.PrepRuns != 0 || st.CrashPoints != 3 {
		t.Errorf("stats %+v, want 2 oracle runs per operation, no prep run", st)
	}
	if len(r.Findings) != 1 || r.Findings[0].Crash.InFlight != nil || r.Findings[0].Crash.Oracles != 0 {
		t.Errorf("findings %+v, want one ordering violation without in-flight operations", r.Findings)
	}
}

// TestLinearizations checks the enumeration of the legal linearizations of a crash point
// (oracles.go): every subset of the operations in flight, every order of the ended ones and the
// subset consistent with real time, transaction cuts with what may follow them, the bound.
func TestLinearizations(t *testing.T) {
	// An operation is (op, begin, end); end 0 means in flight.
	sp := func(op int, begin, end uint64) span {
		if end == 0 {
			end = inFlight
		}
		return span{op: op, begin: begin, end: end}
	}
	cut := func(op, nth int, event uint64) *txCut { return &txCut{op: op, nth: nth, event: event, quiet: true} }
	for _, tc := range []struct {
		name           string
		done, inflight []span
		cuts           []*txCut
		limit          int
		want           string
	}{
		{name: "one in flight", inflight: []span{sp(3, 1, 0)}, want: "[] [3]"},
		{name: "two in flight, nothing ended", inflight: []span{sp(3, 1, 0), sp(4, 2, 0)},
			want: "[] [3] [4] [3 4] [4 3]"},
		// 0 ended before 1 began: 0 comes first in every order, and before the one in flight.
		{name: "ended before the other began", done: []span{sp(0, 1, 2)}, inflight: []span{sp(1, 3, 0)},
			want: "[0] [0 1]"},
		// 1 began before 0 ended: it may have taken effect first (the old oracle's false finding).
		{name: "in flight began first", done: []span{sp(0, 2, 3)}, inflight: []span{sp(1, 1, 0)},
			want: "[0] [0 1] [1 0]"},
		// Two ended operations that overlapped: either order; a third that began after both ended
		// comes last.
		{name: "ended overlapping", done: []span{sp(0, 1, 3), sp(1, 2, 4)}, inflight: []span{sp(2, 5, 0)},
			want: "[0 1] [1 0] [0 1 2] [1 0 2]"},
		// A chain of ended operations (each ended before the next began) has one order.
		{name: "chain", done: []span{sp(0, 1, 2), sp(1, 3, 4), sp(2, 5, 6)}, want: "[0 1 2]"},
		// 0 ended before 2 began, 1 overlaps both.
		{name: "partial order", done: []span{sp(0, 1, 3), sp(1, 2, 6)}, inflight: []span{sp(2, 4, 0)},
			want: "[0 1] [1 0] [0 1 2] [0 2 1] [1 0 2]"},
		// A sequential operation with two transactions: rolled back, committed, cut after each.
		{name: "transactions", inflight: []span{sp(5, 1, 0)}, cuts: []*txCut{cut(5, 1, 2), cut(5, 2, 3)},
			want: "[] [5] 5.1:[] 5.2:[]"},
		// A cut of 1 at event 4: 0 ended before it (in its image), 2 ended after it and comes
		// after the cut; 3, in flight, applied or not, in either order with 2 (they overlap).
		{name: "cut with what follows", done: []span{sp(0, 1, 3), sp(2, 5, 7)}, inflight: []span{sp(1, 2, 0), sp(3, 6, 0)},
			cuts: []*txCut{cut(1, 1, 4)},
			want: "[0 2] [0 2 1] [0 1 2] [1 0 2] [0 2 3] [0 3 2] [0 2 1 3] [0 2 3 1] [0 1 2 3] [0 1 3 2] [0 3 2 1] [0 3 1 2] [1 0 2 3] [1 0 3 2] 1.1:[2] 1.1:[2 3] 1.1:[3 2]"},
		{name: "bound", inflight: []span{sp(1, 1, 0), sp(2, 2, 0), sp(3, 3, 0)}, limit: 4,
			want: "[] [1] [2] [3] [1 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = 1000
			}
			var got []string
			for _, l := range linearizations(tc.done, tc.inflight, tc.cuts, limit) {
				s := fmt.Sprint(l.seq)
				if l.cut != nil {
					s = fmt.Sprintf("%d.%d:%s", l.cut.op, l.cut.nth, s)
				}
				got = append(got, s)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got  %s\nwant %s", g, tc.want)
			}
		})
	}
	// With nothing ended, M operations in flight give P(M,0)+...+P(M,M) orders, as before.
	for m, want := range []int{1, 2, 5, 16, 65} {
		var fl []span
		for i := 0; i < m; i++ {
			fl = append(fl, sp(10+i, uint64(i+1), 0))
		}
		if got := len(linearizations(nil, fl, nil, 1000)); got != want || legalCount(m) != fmt.Sprint(want) {
			t.Errorf("M=%d: %d orders, legalCount %s, want %d", m, got, legalCount(m), want)
		}
	}
	if l := (linearization{cut: cut(3, 2, 9), seq: []int{4, 5}}); l.String() != "operation 3 applied up to its 2nd transaction, then 4 then 5" {
		t.Errorf("name %q", l.String())
	}
}

// TestInvariantsFindings explores with the invariants strategy and given invariants: only the
// violating states are tested, and the finding names the invariant that chose its state.
func TestInvariantsFindings(t *testing.T) {
	dir := t.TempDir()
	tr, w := slotTrace(t, dir, slotOps, []string{
		"1 begin 0", "1 both 0", "1 end 0",
		"2 begin 1", "2 both 1", "2 end 1",
		"1 begin 2", "1 end 2",
	})
	invs := []crash.Invariant{
		{ID: 1, Rule: "RO2", Before: 10, After: 12, Text: "data before flag"},
		{ID: 2, Rule: "RA1", Sites: []uint32{10, 12}, Text: "data and flag atomic"},
	}
	r := exploreSlots(t, dir, tr, w, Config{Options: Options{Strategies: []string{"invariants"},
		Crash: crash.Options{Invariants: invs}}})
	// Per operation: the flag persisted alone (both invariants) and the data alone (atomicity).
	if st := r.Stats; st.StatesTested != 4 || st.Invariants != 2 {
		t.Errorf("stats %+v, want 4 states and 2 invariants", st)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v, want one cluster (the flag without its data)", r.Findings)
	}
	c := r.Findings[0].Crash
	if c.Strategy != "invariants" || strings.Join(c.Invariants, "|") != "data before flag|data and flag atomic" || r.Findings[0].Count != 2 {
		t.Errorf("strategy %s, invariants %q, count %d", c.Strategy, c.Invariants, r.Findings[0].Count)
	}
	// Without invariants the strategy tests nothing, and says so.
	r = exploreSlots(t, dir, tr, w, Config{Options: Options{Strategies: []string{"invariants"},
		Crash: crash.Options{Invariants: []crash.Invariant{}}}})
	if r.Stats.StatesTested != 0 || len(r.Warnings) == 0 {
		t.Errorf("no invariants: stats %+v warnings %q", r.Stats, r.Warnings)
	}
}

// TestInvariantsInferred records the ordering example with loads, infers its invariants (the
// flag guards the read of the data: the data must persist before the flag) and explores only
// the states violating them: the bug is found from one state per crash point, the fixed
// program has none to test.
func TestInvariantsInferred(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		def  string
		want int
	}{{"", 1}, {"-DFIXED", 0}} {
		t.Run("ordering.c"+tc.def, func(t *testing.T) {
			var defs []string
			if tc.def != "" {
				defs = append(defs, tc.def)
			}
			bin := compile(t, dir, "ordering.c", defs...)
			in, err := os.ReadFile(filepath.Join("testdata", "ordering.ops"))
			if err != nil {
				t.Fatal(err)
			}
			pool, tr := filepath.Join(dir, "pool"), filepath.Join(dir, "loads.trace")
			os.Remove(pool)
			res, err := record.Run(context.Background(), record.Options{
				Trace: tr, PMGlobs: []string{pool}, Args: []string{bin, pool}, Stdin: bytes.NewReader(in),
			})
			if err != nil || res.Failed() {
				t.Fatalf("record: %v %v", res, err)
			}
			args, timeout := []string{bin, "{pool}"}, 5*time.Second
			var env []string
			w, err := workload.Read(filepath.Join("testdata", "ordering.ops"))
			if err != nil {
				t.Fatal(err)
			}
			tf, err := trace.Open(tr)
			if err != nil {
				t.Fatal(err)
			}
			props, err := infer.Infer(tf, infer.Options{Rules: infer.Both})
			tf.Close()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), Config{Trace: tr, Args: args, Workload: w, Options: Options{Pool: pool,
				Crash:      crash.Options{Invariants: Invariants(props)},
				Strategies: []string{"invariants"}, Jobs: 2, Timeout: timeout, Env: env}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Stats.Invariants == 0 {
				t.Fatalf("no invariant inferred: stats %+v, warnings %q", r.Stats, r.Warnings)
			}
			if len(r.Findings) != tc.want {
				t.Fatalf("%d findings, want %d: %+v", len(r.Findings), tc.want, r.Findings)
			}
			if tc.want == 0 {
				if r.Stats.StatesTested != 0 {
					t.Errorf("fixed: %d states tested, want none (no feasible violation)", r.Stats.StatesTested)
				}
				return
			}
			f := r.Findings[0]
			if f.Kind != report.OrderingViolation || f.Crash.Strategy != "invariants" || len(f.Crash.Invariants) == 0 ||
				r.Stats.StatesTested != r.Stats.Failures {
				t.Errorf("finding %s by %s violating %q; stats %+v", f.Kind, f.Crash.Strategy, f.Crash.Invariants, r.Stats)
			}
		})
	}
}

// TestGeneralOracles checks the caching of prep and oracle runs and that a failed prep run makes
// its legal outcomes unusable instead of running them.
func TestGeneralOracles(t *testing.T) {
	e := &explorer{cfg: &Config{Workload: workload.Workload{Ops: []string{"a", "b", "c"}}}, runs: &runs{tmp: t.TempDir()}}
	p := &period{ops: []int{0, 1}, before: "before.img"}
	g := &generalOracles{e: e, pkeys: map[string]int{}, rkeys: map[string]int{}}
	// 0 and 1 in flight; then 0 ended, 1 (which began before 0 ended) still in flight: the
	// orders of {0} ∪ S are [0], [0 1], [1 0].
	a := &item{opsAt: opsAt{per: p, inflight: []int{0, 1}, next: 2,
		lins: linearizations(nil, []span{{0, 1, inFlight}, {1, 2, inFlight}}, nil, 100)}}
	b := &item{opsAt: opsAt{per: p, done: []int{0}, inflight: []int{1}, next: 2,
		lins: linearizations([]span{{0, 1, 3}}, []span{{1, 2, inFlight}}, nil, 100)}}
	ia, ib := g.add(a), g.add(b)
	if len(ia) != 5 || len(ib) != 3 || len(g.runs) != 5 || len(g.preps) != 4 {
		t.Fatalf("runs %v %v: %d oracle runs, %d prep runs; want 5 and 4", ia, ib, len(g.runs), len(g.preps))
	}
	// b's legal outcomes ([0], [0 1], [1 0]) are a's: deduplicated.
	if ib[0] != ia[1] || ib[1] != ia[3] || ib[2] != ia[4] {
		t.Errorf("b's runs %v are not a's %v", ib, ia)
	}
	if got := string(g.preps[g.runs[ia[4]].prep].stdin); got != "b\na\n" {
		t.Errorf("prep of [1 0] reads %q", got)
	}
	// The prep of [1] (index 1) is killed by a signal: its run is not made.
	prepOut := make([]outcome, len(g.preps))
	prepOut[g.runs[ia[2]].prep].target = scryexec.Outcome{ExitCode: -1, Signal: 9}
	jobs := g.jobs(nil, prepOut)
	if len(jobs) != 4 || g.runs[ia[2]].job != -1 || jobs[0].copyFrom != "before.img" || string(jobs[0].stdin) != "c\n" {
		t.Fatalf("jobs %+v", jobs)
	}
	outs := make([]outcome, len(jobs))
	for i := range outs {
		outs[i].target = scryexec.Outcome{Stdout: []byte(fmt.Sprint(i))}
	}
	ls := g.legal(a, ia, outs, nil)
	if !ls.general || string(ls.rolledBack.Stdout) != "0" || ls.committed == nil || string(ls.committed.Stdout) != "2" ||
		len(ls.others) != 3 || ls.others[1].out.Completed() || ls.others[1].name != "operations applied: 1" {
		t.Errorf("legal set %+v", ls)
	}
	// b: rolled back is [0], committed [0 1], and [1 0] another.
	ls = g.legal(b, ib, outs, nil)
	if string(ls.rolledBack.Stdout) != "1" || ls.committed == nil || string(ls.committed.Stdout) != "2" || len(ls.others) != 1 ||
		ls.others[0].name != "operations applied: 1 then 0" {
		t.Errorf("legal set of b %+v", ls)
	}
	// A transaction cut's image is the period's with the cut's patches: its prep starts there,
	// and with nothing to apply after it, its oracle run does.
	c := &txCut{op: 1, nth: 1, event: 2, quiet: true, patches: []crash.Patch{{Offset: 0, Data: []byte{1}}}}
	d := &item{opsAt: opsAt{per: p, done: []int{0}, inflight: []int{1}, next: 2,
		lins: []linearization{{cut: c, seq: []int{0}}, {cut: c}}}}
	g.add(d)
	if n := len(g.preps); n != 5 || g.preps[4].copyFrom != "before.img" || len(g.preps[4].patches) != 1 || string(g.preps[4].stdin) != "a\n" {
		t.Errorf("cut prep %+v", g.preps[n-1])
	}
	r := g.runs[len(g.runs)-1]
	if r.prep != -1 || r.lin.cut != c {
		t.Errorf("cut run without a sequence: %+v", r)
	}
	jobs = g.jobs(nil, make([]outcome, len(g.preps)))
	if j := jobs[r.job]; j.copyFrom != "before.img" || len(j.patches) != 1 {
		t.Errorf("cut oracle job %+v", j)
	}
}

// TestResponses: a linearization whose completed operations print something else in it than in
// the recorded run is no legal outcome (durable linearizability's responses, responses.go); when
// none agrees, none is left out.
func TestResponses(t *testing.T) {
	e := &explorer{cfg: &Config{Workload: workload.Workload{Ops: []string{"put", "get", "end"}}}, runs: &runs{tmp: t.TempDir()},
		warned: map[string]bool{}, res: &Result{}, plan: &plan{outputs: map[int][]byte{1: []byte("1\n")}}}
	p := &period{ops: []int{0, 1}, before: "before.img"}
	g := &generalOracles{e: e, pkeys: map[string]int{}, rkeys: map[string]int{}}
	// An earlier crash point, both in flight: no response to check, so its prep runs are not
	// recorded, and the next point, where the get has ended, must not reuse them.
	before := &item{opsAt: opsAt{per: p, inflight: []int{0, 1}, next: 2,
		lins: linearizations(nil, []span{{0, 1, inFlight}, {1, 2, inFlight}}, nil, 100)}}
	g.add(before)
	for _, r := range g.runs {
		if r.prep >= 0 && g.preps[r.prep].outputs {
			t.Errorf("%v: prep recorded with nothing completed", r.lin.seq)
		}
	}
	// "get" (1) ended and printed 1; "put" (0) is in flight and began first: [1], [1 0], [0 1].
	it := &item{opsAt: opsAt{per: p, done: []int{1}, inflight: []int{0}, next: 2,
		lins: linearizations([]span{{1, 2, 3}}, []span{{0, 1, inFlight}}, nil, 100)}}
	idx := g.add(it)
	for _, i := range idx {
		if r := g.runs[i]; r.prep < 0 || !g.preps[r.prep].outputs {
			t.Errorf("run %d (%v): its prep run does not tell what the operations printed", i, r.lin.seq)
		}
	}
	outs := make([]outcome, 3)
	for i := range outs {
		outs[i].target = scryexec.Outcome{Stdout: []byte(fmt.Sprint(i))}
	}
	g.runs[idx[0]].job, g.runs[idx[1]].job, g.runs[idx[2]].job = 0, 1, 2
	prepOut := make([]outcome, len(g.preps))
	say := func(lin int, s map[int][]byte) { prepOut[g.runs[idx[lin]].prep].outputs = s }
	// The get saw the put only where the put comes first: [0 1] agrees, [1] and [1 0] do not.
	say(0, map[int][]byte{0: []byte("0\n")})
	say(1, map[int][]byte{0: []byte("0\n")})
	say(2, map[int][]byte{1: []byte("1\n")})
	ls := g.legal(it, idx, outs, prepOut)
	if ls.excluded != 2 || len(ls.all()) != 1 || string(ls.rolledBack.Stdout) != "2" || ls.committed != nil {
		t.Errorf("legal set %+v: want [0 1] alone", ls)
	}
	// A prep run's threads may begin its operations in another order than its lines: an
	// operation whose text is one line alone is that line's; repeated texts keep their order.
	h := &outputCollector{outs: map[int][]byte{0: []byte("a"), 1: []byte("b"), 2: []byte("c")},
		texts: map[int]string{0: "get 1", 1: "set 1 1", 2: "get 1"}}
	if got := fmt.Sprint(h.byLine([]byte("set 1 1\nget 1\nget 1\n"))); got != "map[0:[98] 1:[97] 2:[99]]" {
		t.Errorf("byLine: %s", got)
	}
	// Nothing agrees: nothing is left out, with a warning.
	say(2, map[int][]byte{1: []byte("0\n")})
	ls = g.legal(it, idx, outs, prepOut)
	if ls.excluded != 0 || len(ls.all()) != 3 || len(e.res.Warnings) != 1 {
		t.Errorf("legal set %+v, warnings %q: want all three, a warning", ls, e.res.Warnings)
	}
}
