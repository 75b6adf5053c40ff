package strace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// RecordOptions says what to record.
type RecordOptions struct {
	// Dir is the workload directory: the program's working directory, and the only part of
	// the file system whose changes are recorded.
	Dir string
	// Args is the program and its arguments.
	Args []string
	// Env is added to the inherited environment.
	Env []string
	// Stack asks strace for each call's stack (-k), symbolized for static vulnerabilities.
	Stack bool
	// Workload, if set, is fed to the program's standard input one line at a time (feedLines), and
	// each line the program starts reading becomes an OP_BEGIN record: the operation
	// boundaries of output equivalence. Without it the program's standard input is empty.
	Workload *workload.Workload
	// Stdout and Stderr receive the program's output (nil: discarded). The output is also
	// recorded as OUTPUT records.
	Stdout, Stderr io.Writer
	// Trace is the path of the trace to write (version 6, FS_OP and OUTPUT records).
	Trace string
	// Strace is the strace binary ("" looks up "strace" in $PATH).
	Strace string
	// Timeout, if positive, is the run's time limit: then the process group gets SIGTERM, then
	// SIGKILL after 5 s, and Recorded.TimedOut is set (0: no limit).
	Timeout time.Duration
}

// Recorded tells how a recorded run went.
type Recorded struct {
	// ExitCode is the program's exit status, or -1 when a signal killed it (Signal).
	ExitCode int
	Signal   syscall.Signal
	// Interrupted is the signal (SIGINT, SIGTERM) that stopped the recording, or 0.
	Interrupted syscall.Signal
	// TimedOut is RecordOptions.Timeout when the program was stopped for running longer (0:
	// it was not); the trace covers its run up to that point.
	TimedOut time.Duration
	// Records is the number of FS_OP and OUTPUT records; Warnings what the trace cannot show.
	Records  int
	Warnings []string
	// Elapsed is the wall-clock time of the traced run.
	Elapsed time.Duration
}

// Failed reports whether the program did not exit with status 0.
func (r *Recorded) Failed() bool { return r.ExitCode != 0 || r.Signal != 0 || r.TimedOut > 0 }

// String says how the program ended ("exited with status 1", "was killed by signal 9").
func (r *Recorded) String() string {
	switch {
	case r.Interrupted != 0:
		return fmt.Sprintf("was interrupted by %v", r.Interrupted)
	case r.TimedOut > 0:
		return exec.TimedOut(r.TimedOut, r.Signal)
	case r.Signal != 0:
		return fmt.Sprintf("was killed by signal %d (%v)", int(r.Signal), r.Signal)
	}
	return fmt.Sprintf("exited with status %d", r.ExitCode)
}

// straceArgs returns the strace command line that records args (docs/fs-mode.md): children
// followed (-f), strings printed in full as hexadecimal escapes (-xx -s), descriptors decorated
// with their paths (-y), the calls of tracedCalls only, reads undecoded, no signals, output to
// out; with stack, -k. --seccomp-bpf (strace(1)) stops the program only at the traced calls
// (strace 6.1's filter adds, under -k, the calls that change memory mappings, which its
// unwinder follows): the output is the same, and an untraced call no longer costs two ptrace
// stops.
func straceArgs(strace, out string, stack bool, args []string) []string {
	cmd := []string{strace, "-f", "--seccomp-bpf", "-qq", "-xx", "-y", "-s", strconv.Itoa(stringLimit), "-o", out,
		"-e", "trace=" + strings.Join(tracedCalls, ","), "-e", "raw=" + strings.Join(rawCalls, ","), "-e", "signal=none"}
	if stack {
		cmd = append(cmd, "-k")
	}
	return append(append(cmd, "--"), args...)
}

// Record runs the program under strace in o.Dir and writes its trace to o.Trace. The program
// runs in its own process group; when ctx is cancelled (Ctrl-C, SIGTERM through
// exec.SignalContext) the group gets SIGTERM, then SIGKILL after 5 s, and the trace holds what
// ran (Recorded.Interrupted says so); the same at o.Timeout (Recorded.TimedOut). Errors: strace or the program cannot be found or started,
// the strace output cannot be read (the trace so far is kept), the trace cannot be written.
func Record(ctx context.Context, o RecordOptions) (*Recorded, error) {
	if len(o.Args) == 0 {
		return nil, errors.New("no program given: put it after `--`, e.g. `scry fs check --dir DIR -- ./prog`")
	}
	root, err := canonicalDir(o.Dir)
	if err != nil {
		return nil, err
	}
	st := o.Strace
	if st == "" {
		if st, err = osexec.LookPath("strace"); err != nil {
			return nil, errors.New("strace not found: install Debian's strace (make deps)")
		}
	}
	tmp, err := os.MkdirTemp("", "scry-strace-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "strace.out")
	args := straceArgs(st, out, o.Stack, o.Args)
	cmd := osexec.Command(args[0], args[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Env = append(cmd.Env, shimEnv(cmd.Env)...) // writes through shared mappings (mmap.go)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	var feed *os.File
	if o.Workload != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		defer w.Close()
		cmd.Stdin, feed = r, w
	}
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting strace: %w", err)
	}
	done := make(chan struct{})
	res := &Recorded{}
	if feed != nil {
		go feedLines(feed, o.Workload.Lines(allOps(len(o.Workload.Ops))), done)
	}
	var limit <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		limit = t.C
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			var ie *exec.Interrupted
			if errors.As(context.Cause(ctx), &ie) {
				res.Interrupted = ie.Signal
			} else {
				res.Interrupted = syscall.SIGTERM
			}
		case <-limit:
			res.TimedOut = o.Timeout
		case <-done:
			return
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	werr := cmd.Wait()
	close(done)
	<-stopped // res is the goroutine's no more
	if res.TimedOut > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the children it left behind
	}
	res.Elapsed = time.Since(start)
	ps := cmd.ProcessState
	if ps == nil {
		return nil, fmt.Errorf("running strace: %w", werr)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		res.ExitCode, res.Signal = -1, ws.Signal()
	} else {
		res.ExitCode = ws.ExitStatus()
	}
	if _, err := os.Stat(out); err != nil {
		return nil, fmt.Errorf("strace wrote no output (exit status %d): is %s a program? %v", res.ExitCode, o.Args[0], werr)
	}
	var input []string
	if o.Workload != nil {
		input = o.Workload.Ops
	}
	if err := writeTrace(out, root, o.Trace, input, res); err != nil {
		return res, err
	}
	return res, nil
}

// writeTrace converts strace's output file into the trace at path; input are the lines fed to
// the program's standard input.
func writeTrace(straceOut, root, path string, input []string, res *Recorded) error {
	in, err := os.Open(straceOut)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := safefile.Create(path, trace.FilePolicy("the trace"))
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := trace.NewWriter(f, 64)
	if err != nil {
		return err
	}
	n, warns, cerr := convert(in, root, w, newSymbolizer(), input)
	res.Records, res.Warnings = n, warns
	end := &trace.Event{Kind: trace.KindEnd, How: trace.EndExit, Status: int64(res.ExitCode)}
	if res.Signal != 0 {
		end.How, end.Status = trace.EndSignal, int64(res.Signal)
	}
	if res.Interrupted == 0 && cerr == nil {
		if err := w.Write(end); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("reading strace's output: %w", cerr)
	}
	return f.Close()
}

// canonicalDir returns dir made absolute with its symbolic links resolved (the form strace's
// -y paths take). Errors: dir does not exist or is not a directory.
func canonicalDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no workload directory: give --dir DIR")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workload directory: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("workload directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workload directory %s is not a directory", dir)
	}
	return real, nil
}

func allOps(n int) []int {
	ops := make([]int, n)
	for i := range ops {
		ops[i] = i
	}
	return ops
}

// feedLines writes input to the pipe w one line at a time, each once the program has read
// everything before it (the pipe is empty: FIONREAD, alias TIOCINQ), then closes w; it stops when done is
// closed or a write fails (the program exited). A program reading its standard input with
// large reads (stdio, a shell) so gets one line per read, so the read that returns a line's
// first byte is where its operation begins, whatever the program's buffering. The wait polls
// every 50 µs at first, backing off to 2 ms while the program works on a line.
func feedLines(w *os.File, input []byte, done <-chan struct{}) {
	defer w.Close()
	for len(input) > 0 {
		n := bytes.IndexByte(input, '\n') + 1
		if n == 0 {
			n = len(input)
		}
		if _, err := w.Write(input[:n]); err != nil {
			return
		}
		input = input[n:]
		for wait := 50 * time.Microsecond; ; wait = min(2*wait, 2*time.Millisecond) {
			if left, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ); err != nil || left == 0 {
				break
			}
			select {
			case <-done:
				return
			case <-time.After(wait):
			}
		}
	}
}
