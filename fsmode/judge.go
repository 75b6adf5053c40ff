package fsmode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/scry-pm/scry/exec"
)

// verdict is how one crash state was judged.
type verdict struct {
	judged bool // the state ran (not left out by --max-states, not interrupted)
	failed bool
	detail string
	stdout string
	err    error
}

// run judges items on the pool's workers and returns their verdicts, in order, with the first
// error (a crash directory that could not be built, a checker that could not start) unless the
// context was cancelled. With --max-states, the items past the bound are left out (warned
// about). The first failing state's time is taken when it is judged, not when its batch ends.
func (e *explorer) run(items []item) ([]verdict, error) {
	if n := e.o.MaxStates; n > 0 && e.res.Stats.StatesTested+len(items) > n {
		keep := max(0, n-e.res.Stats.StatesTested)
		if keep < len(items) {
			e.warn(fmt.Sprintf("--max-states %d: crash states were left untested", n))
			items = items[:keep]
		}
	}
	vs, err := exec.Map(e.ctx, e.o.Pool, items, func(ctx context.Context, w *exec.Worker, it item) verdict {
		v := e.judge(ctx, it, w.Dir)
		if v.failed {
			t := e.o.Now().Sub(e.start)
			e.mu.Lock()
			if e.first == 0 || t < e.first {
				e.first = t
			}
			e.mu.Unlock()
		}
		return v
	})
	for i, v := range vs {
		if !v.judged {
			continue
		}
		e.res.Stats.StatesTested++
		if v.failed {
			e.res.Stats.Failures++
		}
		if items[i].build == 0 {
			e.judged[stateKey(items[i].st)] = true
		}
	}
	if err == nil {
		for _, v := range vs {
			if v.err != nil && e.ctx.Err() == nil {
				err = v.err
				break
			}
		}
	}
	return vs, err
}

// judge materializes a state in dir and runs the checker inside it, with SCRY_STDOUT and
// SCRY_STDERR naming files that hold what the program had printed before the crash and
// SCRY_CRASH_DIR the crash directory.
func (e *explorer) judge(ctx context.Context, it item, dir string) verdict {
	crash := filepath.Join(dir, "crash")
	stdout, stderr, err := Materialize(e.p.m, e.p.micro[it.build], it.st, crash)
	if err != nil {
		return verdict{err: fmt.Errorf("building a crash directory: %w", err)}
	}
	outPath := filepath.Join(dir, "stdout")
	errPath := filepath.Join(dir, "stderr")
	if err := os.WriteFile(outPath, stdout, 0o644); err != nil {
		return verdict{err: err}
	}
	if err := os.WriteFile(errPath, stderr, 0o644); err != nil {
		return verdict{err: err}
	}
	c := e.o.Checker
	c.Env = append(slices.Clone(c.Env), "SCRY_STDOUT="+outPath, "SCRY_STDERR="+errPath, "SCRY_CRASH_DIR="+crash)
	out := c.Run(ctx, crash, crash)
	if out.Err != nil && ctx.Err() != nil {
		return verdict{err: ctx.Err()}
	}
	if out.Err != nil && !out.TimedOut && out.ExitCode == -1 && out.Signal == 0 {
		return verdict{err: fmt.Errorf("checker: %s", out.Describe())}
	}
	v := verdict{judged: true, failed: out.Failed(), stdout: string(stdout), detail: out.Describe()}
	if tail := tail(out.Stdout, out.Stderr, 300); tail != "" {
		v.detail += ": " + tail
	}
	return v
}

// tail returns the end of a run's output (standard output, then error), at most n bytes.
func tail(stdout, stderr []byte, n int) string {
	t := strings.TrimSpace(string(stdout) + string(stderr))
	if len(t) > n {
		t = "..." + t[len(t)-n:]
	}
	return t
}

func runtimeCPUs() int { return runtime.NumCPU() }
