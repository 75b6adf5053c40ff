package examples_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// unrepairable are the examples some of whose findings scry fix declines or cannot repair, with
// a word its reason must contain: an operation that no reordering makes failure-atomic needs a
// transaction or a log (atomicity: the fixed twin adds a redo log; lock-reset: a lock left taken
// by a crash needs the recovery that resets it, which the fixed twin has; mpa-one-pair: stores
// that must persist atomically; bucket-overflow: the failing state is a crash between two
// durable steps with every store issued so far persisted, and its repair moves a store issued
// after the crash point, the overflow slot's, ahead of the count, while scry fix's atomicity
// repair reorders only the stores issued before it: a known limit, docs/repair.md;
// unpersisted-read: the set's one store is lost after another operation read it, and the fix
// persists it before the other thread may read it, across the threads' schedule, which no
// reordering of the set's own stores does; inter-thread-inconsistency and schedule-window: the
// same across threads; persistency-race: no flush or fence keeps a torn store from a crash).
var unrepairable = map[string]string{
	"atomicity":        "transaction",
	"bucket-overflow":  "transaction",
	"lock-reset":       "transaction",
	"mpa-one-pair":     "transaction",
	"unpersisted-read": "transaction",
	// A value visible to another thread before it is durable: the repair persists it before
	// the unlock, a move scry fix does not make; its reason says so.
	"schedule-window": "before the unlock",
	// The same, and the inter-thread-inconsistency finding of the archiver's copy: scry fix
	// computes no repair across threads, and says what would repair it.
	"inter-thread-inconsistency": "before the unlock",
	// The same, found under a schedule witness: both findings come from the witness's trace.
	"schedule-witness": "before the unlock",
	// A plain store a compiler may split: the repair is an atomic store, a change of how the
	// source writes it that scry fix does not make; its reason says so.
	"persistency-race": "atomic",
	// The token stored before the key and value it guards: the repair moves the token's store
	// after their persist, and scry fix moves flushes, fences, persists and TX_ADDs, not stores;
	// its reason says so, and what to do.
	"token-first": "store and persist the others before it",
}

// solverBound are the examples whose repair scry fix finds or not depending on how far the
// solver gets within its per-query timeout, with the word its reason must contain when it does
// not. fresh-node's repair moves the store that publishes the node after the node's fence with
// four edits; a loaded machine makes the solver's queries time out at other points, so the
// DefaultAlternatives candidates it tries differ between runs. Either outcome is checked: a
// declined repair must say why, a repair must pass the independent check below.
var solverBound = map[string]string{
	"fresh-node": "still failed",
}

// repairNotes collects, per example, how its repair compares with the fixed twin; logged at
// the end of TestRepairExamples.
var repairNotes struct {
	sync.Mutex
	lines []string
}

// TestRepairExamples runs `scry check` on every buggy example (but those of a custom checker), then `scry fix --build` on its
// report (docs/repair.md), in a directory holding a copy of the example's source (the source
// tree the build command rebuilds): the patch must apply with `git apply`, and the program it
// repairs, rebuilt and checked again, must have no correctness finding; an example listed in
// unrepairable must instead get no repair and a reason. Each repair is compared with the
// fixed twin: the same code (comments and blank lines aside), or how many lines differ. An
// example whose want comments expect no correctness finding (only performance or unconfirmed
// ones) must have none in its report, and `scry fix` must say there is nothing to repair and
// write no patch. With SCRY_EXAMPLES_KEEP=DIR, scry fix's output and patch are also copied to
// DIR/<example>_<variant>.fix.
func TestRepairExamples(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tool(t, "z3")  // scry fix solves for the repairs with z3
	testenv.Tool(t, "git") // the patches are applied with git apply
	t.Cleanup(func() {
		repairNotes.Lock()
		defer repairNotes.Unlock()
		sort.Strings(repairNotes.lines)
		for _, l := range repairNotes.lines {
			t.Log(l)
		}
	})
	for _, p := range loadPrograms(t) {
		// scry fix repairs scry's own kinds; a custom checker's (the checker directive) are not.
		if !isBuggy(p.path) || p.checker != "" {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			example := filepath.Dir(strings.Fields(p.name)[0])
			dir := t.TempDir()
			src := filepath.Join(dir, filepath.Base(p.path))
			orig, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(src, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			build := append([]string{scry, driver(p.path)}, p.flags()...)
			build = append(append(build, "-o", "prog", filepath.Base(p.path)), p.libs()...)
			run := func(args ...string) (string, int) {
				t.Helper()
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1", "PATH="+filepath.Dir(scry)+":"+os.Getenv("PATH"))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				var ee *exec.ExitError
				switch {
				case err == nil:
					return out.String(), 0
				case errors.As(err, &ee):
					return out.String(), ee.ExitCode()
				}
				t.Fatalf("%s: %v", strings.Join(args, " "), err)
				return "", 0
			}
			if out, code := run(build...); code != 0 {
				t.Fatalf("%s: exit %d\n%s", strings.Join(build, " "), code, out)
			}
			check := append([]string{scry}, checkArgs(p, dir, filepath.Join(dir, "prog"))...)
			if out, code := run(check...); code != 0 && code != 1 {
				t.Fatalf("%s: exit %d\n%s", strings.Join(check, " "), code, out)
			}
			rep := readReport(t, filepath.Join(dir, "report.json"))
			patch := filepath.Join(dir, "fix.patch")
			fix := []string{scry, "fix", "--build", shellJoin(build), "-o", patch, filepath.Join(dir, "report.json")}
			if !expectsCorrectness(p) {
				if n := rep.correctness(); n > 0 {
					t.Fatalf("%d correctness findings where the want comments expect none: %+v", n, rep.Findings)
				}
				out, code := run(fix...)
				if code != 0 || !strings.Contains(out, "nothing to repair") {
					t.Fatalf("%s: exit %d, want 0 saying there is nothing to repair:\n%s", strings.Join(fix, " "), code, out)
				}
				if _, err := os.Stat(patch); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("scry fix wrote a patch with nothing to repair (stat: %v)", err)
				}
				note(fmt.Sprintf("%s: nothing to repair, as expected (no correctness finding)", p.name))
				return
			}
			if rep.correctness() == 0 {
				t.Fatalf("no correctness finding, where the want comments expect one: %+v", rep.Findings)
			}
			out, code := run(fix...)
			if keep := os.Getenv("SCRY_EXAMPLES_KEEP"); keep != "" {
				// scry fix's output and patch, for comparing the repairs of two builds of scry.
				text, _ := os.ReadFile(patch)
				name := strings.NewReplacer("/", "_", " ", "").Replace(p.name) + ".fix"
				kept := strings.ReplaceAll(fmt.Sprintf("exit %d\n%s\n%s", code, out, text), dir, "DIR")
				if err := os.MkdirAll(keep, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(keep, name), []byte(kept), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			schedules := map[string]bool{}
			for _, f := range rep.Findings {
				schedules[f.Schedule] = true
			}
			if len(schedules) == 1 && strings.Contains(out, "under another") {
				t.Fatalf("%s: a finding left for another schedule's run, where every finding has the same schedule:\n%s", strings.Join(fix, " "), out)
			}
			if want, ok := unrepairable[example]; ok {
				if code != 1 || !strings.Contains(out, "not repaired") || !strings.Contains(out, want) {
					t.Fatalf("%s: exit %d, want 1 with a reason naming %q:\n%s", strings.Join(fix, " "), code, want, out)
				}
				note(fmt.Sprintf("%s: not repaired, as expected (%s)", p.name, want))
				return
			}
			if want, ok := solverBound[example]; ok && code == 1 {
				if !strings.Contains(out, "not repaired") || !strings.Contains(out, want) {
					t.Fatalf("%s: exit 1 without a reason naming %q:\n%s", strings.Join(fix, " "), want, out)
				}
				note(fmt.Sprintf("%s: not repaired in this run (%s; the solver's timeouts decide)", p.name, want))
				return
			}
			if code != 0 {
				t.Fatalf("%s: exit %d, want 0 (every finding repaired):\n%s", strings.Join(fix, " "), code, out)
			}
			text, err := os.ReadFile(patch)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(text, []byte("# scry fix")) || !bytes.Contains(text, []byte("validated")) || !bytes.Contains(text, []byte("@@ scry fix: ")) {
				t.Fatalf("the patch lacks its header or its hunk headings:\n%s", text)
			}
			if out, code := run("git", "apply", "--check", patch); code != 0 {
				t.Fatalf("git apply --check: %s\n%s", out, text)
			}
			if out, code := run("git", "apply", patch); code != 0 {
				t.Fatalf("git apply: %s", out)
			}
			if out, code := run(build...); code != 0 {
				t.Fatalf("rebuilding the repaired program: exit %d\n%s", code, out)
			}
			os.Remove(filepath.Join(dir, "report.json"))
			os.Remove(filepath.Join(dir, poolName))
			if out, code := run(check...); code != 0 {
				t.Fatalf("the repaired program: %s: exit %d, want 0\n%s\npatch:\n%s", strings.Join(check, " "), code, out, text)
			}
			after := readReport(t, filepath.Join(dir, "report.json"))
			if n := after.correctness(); n > 0 {
				t.Fatalf("the repaired program has %d correctness findings: %+v\npatch:\n%s", n, after.Findings, text)
			}
			repaired, _ := os.ReadFile(src)
			fixed, err := os.ReadFile(filepath.Join(filepath.Dir(p.path), "fixed"+filepath.Ext(p.path)))
			if err != nil {
				t.Fatal(err)
			}
			note(fmt.Sprintf("%s: %s", p.name, closeness(string(repaired), string(fixed))))
		})
	}
}

// expectsCorrectness reports whether p's want comments expect a correctness finding
// (wantClass).
func expectsCorrectness(p program) bool {
	return slices.ContainsFunc(p.want, func(w finding) bool {
		class, _ := wantClass(p, kinds, w)
		return class == "correctness"
	})
}

func note(s string) {
	repairNotes.Lock()
	repairNotes.lines = append(repairNotes.lines, s)
	repairNotes.Unlock()
}

// jsonReport is the part of a JSON report the repair test reads.
type jsonReport struct {
	Findings []struct {
		Kind     string `json:"kind"`
		Class    string `json:"class"`
		Location struct {
			Line int `json:"line"`
		} `json:"location"`
		Schedule string `json:"schedule"`
	} `json:"findings"`
}

func (r jsonReport) correctness() int {
	n := 0
	for _, f := range r.Findings {
		if f.Class == "correctness" {
			n++
		}
	}
	return n
}

func readReport(t *testing.T, path string) jsonReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r jsonReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// shellJoin quotes args for /bin/sh.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

var lineCommentRE = regexp.MustCompile(`//.*$`)
var blockCommentRE = regexp.MustCompile(`(?s)/\*.*?\*/`)

// code returns the lines of C code of text: comments, blank lines and indentation removed,
// runs of white space folded.
func code(text string) []string {
	text = blockCommentRE.ReplaceAllString(text, "")
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.Join(strings.Fields(lineCommentRE.ReplaceAllString(l, "")), " ")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// closeness says how the repaired program compares with its fixed twin: the same code, the same
// statements in another order (equivalent here: the statements moved are flushes, fences and
// stores to other cache lines), or the number of code lines that differ.
func closeness(repaired, fixed string) string {
	a, b := code(repaired), code(fixed)
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		return "the same code as fixed.c"
	}
	count := func(ls []string) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			m[l]++
		}
		return m
	}
	ca, cb := count(a), count(b)
	extra, missing := 0, 0
	for l, n := range ca {
		if n > cb[l] {
			extra += n - cb[l]
		}
	}
	for l, n := range cb {
		if n > ca[l] {
			missing += n - ca[l]
		}
	}
	if extra == 0 && missing == 0 {
		return "the statements of fixed.c in another order"
	}
	return fmt.Sprintf("differs from fixed.c: %d code lines only in the repair, %d only in fixed.c", extra, missing)
}
