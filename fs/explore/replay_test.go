package explore

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
)

// replayRuns are hand-written runs whose every state the strategies choose is replayed.
var replayRuns = []struct {
	name string
	init map[string]string
	ops  []string
}{
	{"rename over a file", map[string]string{"f": "old"}, []string{"creat t", "append t new", "rename t f"}},
	{"trapdoor sort", map[string]string{"f": "ba", "d/": "", "d/g": "keep"}, []string{"opentrunc f", "append f ab", "out sorted"}},
	{"links and directories", map[string]string{"a": "0123456789"},
		[]string{"mkdir d", "link a d/b", "write a 2 xyz", "creat d/c", "append d/c hello", "fsync d/c", "unlink a", "trunc d/b 4", "out done"}},
}

// TestReplayEveryState: every crash state the strategies choose, under every model, recorded as
// a report's state (clusters.state) and replayed from the snapshot and the trace (a new model
// built from them), gives the directory and the output the exploration built, byte for byte.
func TestReplayEveryState(t *testing.T) {
	for _, run := range replayRuns {
		for _, apm := range model.APMs() {
			t.Run(run.name+"/"+apm.Name, func(t *testing.T) {
				base, tr := fstest.RecordRun(t, run.init, run.ops)
				m := buildModelFrom(t, base, tr)
				p := newPlan(m, apm)
				cl := newClusters(p, nil, t.TempDir())
				items := append(append(p.prefix(), p.omitOne(failingRuns{})...), p.split(failingRuns{})...)
				ex, _ := p.exhaustive(defaultMaxFree)
				items = append(items, ex...)
				if len(items) == 0 {
					t.Fatal("the strategies chose no crash state: nothing to replay")
				}
				fc := &report.FSCrash{APM: apm.Name, Dir: fstest.Root, Snapshot: base, Trace: tr, CheckerCommand: "true"}
				out := t.TempDir()
				for n, it := range items {
					st := cl.state(it, verdict{symptom: exec.SymptomChecker}, t.TempDir())
					if !strings.HasPrefix(st.Digest, "sha256:") {
						t.Fatalf("state %d: digest %q", n, st.Digest)
					}
					dir := filepath.Join(out, fmt.Sprint(n))
					files, cmd, err := Replay(fc, st, dir)
					if err != nil {
						t.Fatalf("state %d (%s): %v", n, it.strategy, err)
					}
					want := filepath.Join(out, fmt.Sprint(n, "-explored"))
					stdout, _, err := model.Materialize(p.m, p.micro[it.build], it.st, want)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := os.ReadFile(files.Stdout)
					if g, w := fstest.DescribeDir(t, dir, got), fstest.DescribeDir(t, want, stdout); g != w {
						t.Errorf("state %d (%s): replayed %s, explored %s", n, it.strategy, g, w)
					}
					if !strings.Contains(cmd, "SCRY_STDOUT="+files.Stdout) || files.Stdin != "" {
						t.Errorf("state %d: command %q, files %+v", n, cmd, files)
					}
				}
				t.Logf("%d states replayed", len(items))
			})
		}
	}
}

func buildModelFrom(t *testing.T, base, tr string) *model.Model {
	t.Helper()
	fc := &report.FSCrash{Dir: fstest.Root, Snapshot: base, Trace: tr}
	m, err := replayModel(fc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReplayFindings explores a run with a checker (a shell script: the file holds its old or
// its new text, and the new one once "saved" was printed) and replays every finding and every
// variant: the command printed runs the checker in the rebuilt directory, which fails as the
// report says.
func TestReplayFindings(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "old"}, []string{"opentrunc f", "append f new", "out saved", "creat g", "append g x", "fsync g"})
	m := buildModelFrom(t, base, tr)
	check := `c=$(cat f); [ "$c" = old ] || [ "$c" = new ] || { echo "f holds $c"; exit 1; }
if grep -q saved "$SCRY_STDOUT"; then [ "$c" = new ] || { echo "saved but f holds $c"; exit 1; }; fi`
	chk := exec.Checker{Args: []string{"/bin/sh", "-c", check}}
	for _, apm := range model.APMs() {
		t.Run(apm.Name, func(t *testing.T) {
			x, err := Explore(context.Background(), m, Options{Jobs: 2, Strategies: Strategies},
				Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Findings) == 0 {
				t.Fatal("no finding")
			}
			replayed := 0
			for _, f := range x.Findings {
				fc := f.FS
				fc.Dir, fc.Snapshot, fc.Trace, fc.CheckerCommand = fstest.Root, base, tr, check
				states := map[string]*report.FSState{fc.ID: fc.State}
				for _, d := range fc.Dynamic[1:] {
					states[d.ID] = d.State
				}
				for id, st := range states {
					dir := filepath.Join(t.TempDir(), "crash")
					_, cmd, err := Replay(fc, st, dir)
					if err != nil {
						t.Fatalf("%s: %v", id, err)
					}
					out, err := osexec.Command("/bin/sh", "-c", cmd).CombinedOutput()
					var ee *osexec.ExitError
					if !errors.As(err, &ee) || !strings.Contains(string(out), "f holds") {
						t.Errorf("%s (%s): %s gave %v %q, want the checker failing", id, f.Kind, cmd, err, out)
					}
					replayed++
				}
			}
			t.Logf("%d findings, %d states replayed", len(x.Findings), replayed)
		})
	}
}

// TestReplayErrors: what cannot be replayed is an error naming the problem, with nothing left
// behind; a state whose directory differs from the one judged is refused.
func TestReplayErrors(t *testing.T) {
	init := map[string]string{"f": "old"}
	ops := []string{"opentrunc f", "append f new", "out saved", "append f !"}
	base, tr := fstest.RecordRun(t, init, ops)
	m := buildModelFrom(t, base, tr)
	apm, _ := model.APMByName("default")
	p := newPlan(m, apm)
	cl := newClusters(p, nil, t.TempDir())
	good := cl.state(p.prefix()[0], verdict{symptom: exec.SymptomChecker}, "")
	fc := func() *report.FSCrash {
		return &report.FSCrash{APM: "default", Dir: fstest.Root, Snapshot: base, Trace: tr, CheckerCommand: "true",
			Target: []string{"/bin/cat"}, Workload: filepath.Join(t.TempDir(), "gone.txt")}
	}
	with := func(f func(*report.FSState)) *report.FSState {
		st := *good
		f(&st)
		return &st
	}
	exists := filepath.Join(t.TempDir(), "exists")
	os.Mkdir(exists, 0o755)
	side := filepath.Join(t.TempDir(), "c")
	os.WriteFile(side+".stdout", []byte("mine"), 0o644)
	// A copy of the snapshot with a file added: the same micro-operations, another directory.
	tampered := filepath.Join(t.TempDir(), "snap")
	if err := model.Snapshot(base, tampered); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tampered, "extra"), []byte("x"), 0o644)
	for _, tc := range []struct {
		name string
		fc   func(*report.FSCrash)
		st   *report.FSState
		out  string
		want string
	}{
		{"no state", nil, nil, "", "no crash state"},
		{"out exists", nil, good, exists, "exists"},
		{"stdout file exists", nil, good, side, "c.stdout exists"},
		{"snapshot gone", func(f *report.FSCrash) { f.Snapshot = "/nonexistent/initial" }, good, "", "snapshot of the workload directory kept at /nonexistent/initial is gone"},
		{"trace gone", func(f *report.FSCrash) { f.Trace = "/nonexistent/run.trace" }, good, "", "trace kept at /nonexistent/run.trace is gone"},
		{"nothing kept", func(f *report.FSCrash) { f.Trace = "" }, good, "", "names no kept snapshot"},
		{"workload gone", nil, with(func(s *report.FSState) { s.Symptom = exec.SymptomOutput }), "", "gone.txt"},
		{"unknown model", func(f *report.FSCrash) { f.APM = "ext9" }, good, "", "unknown persistence model"},
		{"foreign split", nil, with(func(s *report.FSState) { s.Split = report.FSSplit{Count: 7} }), "", "not one of model default's"},
		{"bad range", nil, with(func(s *report.FSState) { s.Persisted = [][2]int{{3, 1}} }), "", "reversed"},
		{"other trace", nil, with(func(s *report.FSState) { s.Micro++; s.Persisted = nil }), "", "not the ones the report was made from"},
		{"illegal state", nil, with(func(s *report.FSState) { s.Persisted = [][2]int{{s.Micro - 1, s.Micro - 1}} }), "", "not one model default allows"},
		{"tampered snapshot", func(f *report.FSCrash) { f.Snapshot = tampered }, good, "", "differs from the one the exploration judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fc()
			if tc.fc != nil {
				tc.fc(f)
			}
			out := tc.out
			if out == "" {
				out = filepath.Join(t.TempDir(), "crash")
			}
			_, _, err := Replay(f, tc.st, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.out == "" {
				for _, p := range []string{out, out + ".stdout", out + ".stderr", out + ".stdin"} {
					if _, err := os.Lstat(p); err == nil {
						t.Errorf("%s left behind", p)
					}
				}
			}
		})
	}
	if b, _ := os.ReadFile(side + ".stdout"); string(b) != "mine" {
		t.Error("an existing file was changed")
	}
	if ents, _ := os.ReadDir(exists); len(ents) != 0 {
		t.Error("replay wrote into an existing directory")
	}
}
