// Package record runs an instrumented program (built with `scry cc`) so that its scry runtime
// writes a trace (docs/trace-format.md), and tells how the program ended.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Options configure one recorded run.
type Options struct {
	// Trace is the path the trace is written to; it is replaced if it exists.
	Trace string
	// PMGlobs are shell patterns (fnmatch) of files whose MAP_SHARED mappings are PM.
	PMGlobs []string
	// NoLoads leaves loads out of the trace (smaller traces; inference needs them).
	NoLoads bool
	// NoForcePMEM leaves PMEM_IS_PMEM_FORCE unset; by default it is set to 1 so that PMDK
	// treats ordinary files as PM and flushes with cache-line instructions instead of msync.
	NoForcePMEM bool
	// Args is the program and its arguments.
	Args []string
	// Stdin, Stdout, Stderr are passed to the program (nil: the null device).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is added to the current environment.
	Env []string
}

// Result tells how a recorded program ended.
type Result struct {
	ExitCode int            // exit status, or -1 when killed by a signal
	Signal   syscall.Signal // the signal that killed it, or 0
}

// Failed reports whether the program did not exit with status 0.
func (r *Result) Failed() bool { return r.ExitCode != 0 }

// String describes how the program ended, e.g. "exited with status 1" or "killed by signal
// segmentation fault (SIGSEGV)".
func (r *Result) String() string {
	if r.Signal != 0 {
		return fmt.Sprintf("killed by signal %d (%v)", int(r.Signal), r.Signal)
	}
	return fmt.Sprintf("exited with status %d", r.ExitCode)
}

// ErrNoTrace is returned (wrapped) when the program ran but wrote no trace: it was not built
// with `scry cc`, or it failed before the runtime started.
var ErrNoTrace = errors.New("the program wrote no trace")

// Run starts the program, waits for it and returns how it ended. The error is non-nil when the
// program could not be started (the message names it) or wrote no trace (ErrNoTrace); a program
// that exits non-zero or is killed is not an error: see Result.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if len(opts.Args) == 0 {
		return nil, errors.New("no program to run: give it after `--`")
	}
	trace, err := filepath.Abs(opts.Trace)
	if err != nil {
		return nil, fmt.Errorf("trace path %q: %w", opts.Trace, err)
	}
	if err := os.Remove(trace); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing the old trace: %w", err)
	}
	prog, err := exec.LookPath(opts.Args[0])
	if err != nil {
		return nil, fmt.Errorf("program %q: %w", opts.Args[0], err)
	}
	cmd := exec.CommandContext(ctx, prog, opts.Args[1:]...)
	cmd.Env = append(os.Environ(), "SCRY_TRACE="+trace)
	if len(opts.PMGlobs) > 0 {
		abs := make([]string, len(opts.PMGlobs))
		for i, g := range opts.PMGlobs {
			if !filepath.IsAbs(g) {
				if a, err := filepath.Abs(g); err == nil {
					g = a
				}
			}
			abs[i] = g
		}
		cmd.Env = append(cmd.Env, "SCRY_PM_GLOBS="+strings.Join(abs, ":"))
	}
	if opts.NoLoads {
		cmd.Env = append(cmd.Env, "SCRY_NO_LOADS=1")
	}
	if !opts.NoForcePMEM {
		cmd.Env = append(cmd.Env, "PMEM_IS_PMEM_FORCE=1")
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, opts.Stdout, opts.Stderr
	res := &Result{}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	default:
		return nil, fmt.Errorf("running %s: %w", opts.Args[0], err)
	}
	if _, err := os.Stat(trace); err != nil {
		return res, fmt.Errorf("%w at %s (program %s; was %s built with `scry cc`?)", ErrNoTrace, trace, res, opts.Args[0])
	}
	return res, nil
}
