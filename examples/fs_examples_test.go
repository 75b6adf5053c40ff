package examples

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/explore"
	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// TestFSExamples builds every file-system example (examples/fs/NAME/{buggy,fixed}.c) with gcc
// -g, runs `scry fs check` on a copy of its init/ directory (none: an empty one) with its
// arguments (args, optional), its checker (checker.sh, optional) and its workload (workload,
// optional: output equivalence), under the default and ext4-ordered models, and checks that the
// buggy program's findings are exactly the `// want "KIND"` comments of its source (kind and
// line; under ext4-ordered a subset of them) and that the fixed twin has none. Every finding
// and variant of the buggy program is replayed (replayFS); the fixed twin keeps nothing to
// replay.
func TestFSExamples(t *testing.T) {
	for _, tool := range []string{"strace", "gcc"} {
		testenv.Tool(t, tool)
	}
	// The recording loads scry's mapping shim from the build (examples/fs/mmap needs it).
	testenv.Built(t, "lib/scry/libscry_fsshim.so")
	t.Setenv("SCRY_HOME", testenv.BuildDir())
	dirs, _ := filepath.Glob("fs/*")
	want := regexp.MustCompile(`// want "([a-z-]+)"`)
	for _, dir := range dirs {
		name := filepath.Base(dir)
		argsB, err := os.ReadFile(filepath.Join(dir, "args"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		checker, _ := filepath.Abs(filepath.Join(dir, "checker.sh"))
		if _, err := os.Stat(checker); err != nil {
			checker = ""
		}
		wl := filepath.Join(dir, "workload")
		if _, err := os.Stat(wl); err != nil {
			wl = ""
		}
		if checker == "" && wl == "" {
			t.Fatalf("%s: an example needs checker.sh, workload, or both", dir)
		}
		for _, apm := range []string{"default", "ext4-ordered"} {
			for _, v := range []string{"buggy", "fixed"} {
				t.Run(name+"/"+v+"/"+apm, func(t *testing.T) {
					src := filepath.Join(dir, v+".c")
					bin := filepath.Join(t.TempDir(), v)
					if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
						t.Fatalf("gcc: %v\n%s", err, out)
					}
					wd := filepath.Join(t.TempDir(), "w")
					if _, err := os.Stat(filepath.Join(dir, "init")); err != nil {
						if err := os.Mkdir(wd, 0o755); err != nil {
							t.Fatal(err)
						}
					} else if out, err := exec.Command("cp", "-r", filepath.Join(dir, "init"), wd).CombinedOutput(); err != nil {
						t.Fatalf("cp: %v %s", err, out)
					}
					keep := t.TempDir()
					c := &pipeline.FSCheck{Options: explore.Options{Checker: checker, APM: apm, Jobs: 2},
						Dir: wd, Args: append([]string{bin}, strings.Fields(string(argsB))...), Workload: wl, KeepDir: keep}
					rep, err := c.Run(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if len(rep.Warnings) > 0 {
						t.Errorf("warnings: %v", rep.Warnings)
					}
					var got []string
					for _, f := range rep.Findings {
						got = append(got, filepath.Base(f.Location.File)+":"+itoa(f.Location.Line)+": "+string(f.Kind))
					}
					var exp []string
					if v == "buggy" {
						b, _ := os.ReadFile(src)
						for i, line := range strings.Split(string(b), "\n") {
							for _, m := range want.FindAllStringSubmatch(line, -1) {
								exp = append(exp, v+".c:"+itoa(i+1)+": "+m[1])
							}
						}
					}
					if v == "buggy" {
						replayFS(t, rep)
					} else if ents, _ := os.ReadDir(keep); len(ents) > 0 {
						t.Errorf("the fixed twin kept %s", ents[0].Name())
					}
					sort.Strings(got)
					sort.Strings(exp)
					if apm != "default" && v == "buggy" {
						// A stricter model may rule some states out: the findings must be a
						// subset of the expected ones, and the trapdoors still show.
						for _, g := range got {
							if !contains(exp, g) {
								t.Errorf("unexpected finding %s", g)
							}
						}
						if len(got) == 0 {
							t.Errorf("no finding under %s; want some of %v", apm, exp)
						}
						return
					}
					if strings.Join(got, "\n") != strings.Join(exp, "\n") {
						t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
					}
				})
			}
		}
	}
}

// replayFS rebuilds the crash directory of every finding and variant of rep (explore.Replay,
// what `scry replay` runs) and runs the command it prints: the checker must fail again, with
// the message the report quotes for the finding's own state; a re-execution must print again
// the lines the report's diff shows it printed where the committed outcome did not (but for
// lines whose fields vary between identical runs).
func replayFS(t *testing.T, rep *report.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		fc := f.FS
		if fc == nil || fc.State == nil || fc.Snapshot == "" {
			t.Errorf("%s: nothing to replay it from: %+v", f.Kind, fc)
			continue
		}
		ids := []string{fc.ID}
		states := []*report.FSState{fc.State}
		for _, d := range fc.Dynamic[1:] {
			ids, states = append(ids, d.ID), append(states, d.State)
		}
		for i, st := range states {
			dir := filepath.Join(t.TempDir(), "crash")
			_, cmd, err := explore.Replay(fc, st, dir)
			if err != nil {
				t.Errorf("replay %s: %v", ids[i], err)
				continue
			}
			c := exec.Command("/bin/sh", "-c", cmd)
			var stdout, stderr strings.Builder
			c.Stdout, c.Stderr = &stdout, &stderr
			err = c.Run()
			if st.Symptom == "checker" {
				var ee *exec.ExitError
				first, _, _ := strings.Cut(strings.TrimSpace(stdout.String()+stderr.String()), "\n")
				if !errors.As(err, &ee) || i == 0 && !strings.Contains(fc.Checker, first) {
					t.Errorf("replay %s: %s: %v %q; the report says %q", ids[i], cmd, err, stdout.String()+stderr.String(), fc.Checker)
				}
				continue
			}
			if err != nil && st.Symptom != "exit" && st.Symptom != "signal" {
				t.Errorf("replay %s: %s: %v", ids[i], cmd, err)
			}
			if i > 0 {
				continue
			}
			rest := stdout.String()
			for _, l := range strings.Split(fc.DiffCommitted, "\n") {
				// A line with fields that vary between runs (examples/fs/stamped) is printed
				// again with other values.
				if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") && !strings.Contains(l, scryexec.VariesMark) {
					k := strings.Index(rest, l[1:]+"\n")
					if k < 0 {
						t.Errorf("replay %s: %s printed %q, not the line %q the report shows", ids[i], cmd, stdout.String(), l[1:])
						break
					}
					rest = rest[k+len(l):]
				}
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
