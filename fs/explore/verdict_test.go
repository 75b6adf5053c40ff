package explore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
)

// rewriteRun rewrites f in place (a failing prefix run: the truncation, then the append), then
// logs that it did; logCheck accepts f whole (old or new) and, once the log says ok, new only.
var rewriteRun = []string{"opentrunc f", "append f ab", "creat l", "append l ok"}

const logCheck = `c=$(cat f); [ "$c" = ab ] || [ "$c" = ba ] || { echo "f holds '$c'"; exit 1; }
if grep -q ok l 2>/dev/null; then [ "$c" = ab ] || { echo "the log says ok but f holds $c"; exit 1; }; fi`

// findingPairs lists the findings as kind:a-b (the operations of the first dynamic
// vulnerability), sorted as the report is.
func findingPairs(x *Explored) []string {
	var out []string
	for _, f := range x.Findings {
		d := f.FS.Dynamic[0]
		out = append(out, fmt.Sprintf("%s:%d-%d", f.Kind, d.A, d.B))
	}
	return out
}

// TestAssumeFixed: a failing prefix run does not hide what is inside it. The in-place rewrite of
// f is an atomicity violation (prefix states 0 fail); with it assumed fixed (the truncation and
// the append persisting as one), losing the rewrite while the log's append persists is its own
// ordering violation, which the old rule (the run's operations left out of omit-one) hid. One
// finding per vulnerability: never the rewrite's partial state again as an ordering violation.
func TestAssumeFixed(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "ba"}, rewriteRun)
	m := buildModelFrom(t, base, tr)
	chk := exec.Checker{Args: []string{"/bin/sh", "-c", logCheck}}
	for _, c := range []struct {
		apm  string
		want []string
	}{
		// default: the unit may be lost before the log's append.
		{"default", []string{"fs-atomicity-violation:0-1", "fs-ordering-violation:0-3"}},
		// ext4-ordered journals the truncation and the log's creation in program order: the
		// unit cannot be lost once the log exists.
		{"ext4-ordered", []string{"fs-atomicity-violation:0-1"}},
	} {
		t.Run(c.apm, func(t *testing.T) {
			apm, err := model.APMByName(c.apm)
			if err != nil {
				t.Fatal(err)
			}
			x, err := Explore(context.Background(), m, Options{Jobs: 2}, Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			got := findingPairs(x)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("findings %v, want %v", got, c.want)
				for _, f := range x.Findings {
					t.Logf("%s: %s", f.Kind, f.Message)
				}
			}
			if x.Stats.Inconclusive != 0 {
				t.Errorf("%d inconclusive states, want none", x.Stats.Inconclusive)
			}
		})
	}
}

// TestInconclusive: a checker that is stopped from outside (killed by SIGKILL or SIGTERM, or
// hung until its timeout) on the states the real checker rejects judges nothing there: no
// finding, each such state counted inconclusive and warned about once with the count. A checker
// that crashes by a signal of its own (SIGSEGV, SIGABRT) fails the state, as before.
func TestInconclusive(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "ba"}, rewriteRun)
	m := buildModelFrom(t, base, tr)
	apm, err := model.APMByName("default")
	if err != nil {
		t.Fatal(err)
	}
	// The states logCheck rejects, without a word: how the checker dies there.
	bad := `c=$(cat f); ok=1; [ "$c" = ab ] || [ "$c" = ba ] || ok=0
if grep -q ok l 2>/dev/null && [ "$c" != ab ]; then ok=0; fi
[ $ok = 1 ] && exit 0
`
	for _, c := range []struct {
		name, die    string
		timeout      time.Duration
		inconclusive bool
	}{
		{"SIGKILL", "kill -KILL $$", 0, true},
		{"SIGTERM", "kill -TERM $$", 0, true},
		{"hang", "exec sleep 1000", 300 * time.Millisecond, true},
		{"SIGSEGV", "kill -SEGV $$", 0, false},
		{"SIGABRT", "kill -ABRT $$", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			chk := exec.Checker{Args: []string{"/bin/sh", "-c", bad + c.die}, Timeout: c.timeout}
			x, err := Explore(context.Background(), m, Options{Jobs: 2}, Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var warned []string
			for _, w := range x.Warnings {
				if strings.HasPrefix(w, "inconclusive:") {
					warned = append(warned, w)
				}
			}
			if !c.inconclusive {
				if len(x.Findings) == 0 || x.Stats.Inconclusive != 0 || len(warned) != 0 {
					t.Errorf("%d findings, %d inconclusive, warnings %q: want findings and nothing inconclusive", len(x.Findings), x.Stats.Inconclusive, warned)
				}
				return
			}
			if len(x.Findings) != 0 || x.Stats.Failures != 0 {
				t.Errorf("%d findings (%v), %d failures: want none", len(x.Findings), findingPairs(x), x.Stats.Failures)
			}
			want := fmt.Sprintf("inconclusive: %d crash states were not judged", x.Stats.Inconclusive)
			if x.Stats.Inconclusive == 0 || len(warned) != 1 || !strings.HasPrefix(warned[0], want) {
				t.Errorf("%d inconclusive, warnings %q: want some, warned once with the count", x.Stats.Inconclusive, warned)
			}
			if x.Stats.Inconclusive > x.Stats.StatesTested {
				t.Errorf("%d inconclusive of %d states tested", x.Stats.Inconclusive, x.Stats.StatesTested)
			}
		})
	}
}

// TestStoppedOnConsistentState: a checker stopped on the initial or final state is an error (no
// state can be judged), not ErrCheckerFails and not a finding.
func TestStoppedOnConsistentState(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "ba"}, rewriteRun)
	m := buildModelFrom(t, base, tr)
	apm, _ := model.APMByName("default")
	chk := exec.Checker{Args: []string{"/bin/sh", "-c", "kill -KILL $$"}}
	x, err := Explore(context.Background(), m, Options{Jobs: 2}, Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "killed by signal 9") || len(x.Findings) != 0 {
		t.Fatalf("Explore: %v, %d findings: want an error naming the signal", err, len(x.Findings))
	}
}
