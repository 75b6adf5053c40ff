// Package record runs an instrumented program (built with `scry cc`) so that its scry runtime
// writes a trace (docs/trace-format.md), or, in black-box mode (Options.BlackBox,
// docs/black-box.md), any program under scry's Valgrind tool, which writes the same trace; and
// tells how the program ended.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/trace"
)

// Options configure one recorded run.
type Options struct {
	// Trace is the path the trace is written to. An earlier trace there (a file that starts
	// with the trace magic, or is empty) is replaced; anything else is an error (see safefile).
	Trace string
	// PMGlobs are shell patterns (fnmatch) of files whose MAP_SHARED mappings are PM.
	PMGlobs []string
	// NoLoads leaves loads out of the trace (smaller traces; inference needs them).
	NoLoads bool
	// OpBegin, when set, names a function whose calls begin workload operations, instead of the
	// lines the program reads from standard input (each call's operation text is the last line
	// read, else the name); OpEnd one whose calls end them. A call the compiler inlined marks
	// nothing (the runtime warns). Passed as $SCRY_OP_BEGIN and $SCRY_OP_END.
	OpBegin, OpEnd string
	// NoForcePMEM leaves PMEM_IS_PMEM_FORCE unset; by default it is set to 1 so that PMDK
	// treats ordinary files as PM and flushes with cache-line instructions instead of msync.
	NoForcePMEM bool
	// BlackBox runs the program, not built with `scry cc`, under scry's Valgrind tool, which
	// writes the trace (docs/black-box.md).
	BlackBox bool
	// Args is the program and its arguments.
	Args []string
	// Stdin, Stdout, Stderr are passed to the program (nil: the null device).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is added to the current environment.
	Env []string
	// Grace is how long the program has to write its trace and exit after scry passes it
	// SIGTERM, before it is killed (0: DefaultGrace).
	Grace time.Duration
	// Timeout, if positive, is the run's time limit: a program still running then gets SIGTERM
	// (its runtime writes the trace so far), then SIGKILL after Grace, and Result.TimedOut is
	// set (0: no limit).
	Timeout time.Duration
	// Client, when set, makes the program a server that the client drives (exec.Client): {port}
	// in Args is replaced by a free port, the program's standard input is the null device and
	// its standard output goes to Stderr, the client is run with Stdin and Stdout once the
	// program listens, and the program gets SIGTERM when the client ends (ending so is no
	// failure). Unless OpBegin is set, each request the program reads from a socket after
	// answering the previous one begins an operation ($SCRY_OP_SOCKET=1; docs/servers.md).
	Client *scryexec.Client
}

// DefaultGrace is the time a program has after SIGTERM before it is killed: the runtime writes
// its buffered records (at most 1 MiB) and an END record in far less.
const DefaultGrace = 5 * time.Second

// ScheduleEnv is the environment variable that runs an instrumented program under the runtime's
// controlled scheduler (native/runtime/sched.c; its value is a spec such as pct:1:1, ops:1 or
// pct:1:1@2.5).
const ScheduleEnv = "SCRY_SCHED"

// Result tells how a recorded program ended.
type Result struct {
	ExitCode int            // exit status, or -1 when killed by a signal
	Signal   syscall.Signal // the signal that killed it, or 0
	// Interrupted is the first SIGINT or SIGTERM scry received while the program ran (0:
	// none): the run was stopped by the user, and the trace covers it up to that point.
	Interrupted syscall.Signal
	// TimedOut is Options.Timeout when the program was stopped for running longer (0: it was
	// not): the trace covers its run up to that point.
	TimedOut time.Duration
	// Client, in client mode, says how the client failed ("" it exited 0), e.g. "exited with
	// status 1" or "did not run: the server exited before it listened on its port".
	Client string
}

// Failed reports whether the program did not exit with status 0, or was stopped at its time
// limit, or its client (Options.Client) failed.
func (r *Result) Failed() bool { return r.ExitCode != 0 || r.TimedOut > 0 || r.Client != "" }

// String describes how the program ended, e.g. "exited with status 1" or "killed by signal
// segmentation fault (SIGSEGV)".
func (r *Result) String() string {
	if r.TimedOut > 0 {
		return scryexec.TimedOut(r.TimedOut, r.Signal)
	}
	if r.Signal != 0 {
		return fmt.Sprintf("killed by signal %d (%v)", int(r.Signal), r.Signal)
	}
	if r.ExitCode == 0 && r.Client != "" {
		return "served its client, which " + r.Client
	}
	return fmt.Sprintf("exited with status %d", r.ExitCode)
}

// ErrNoTrace is returned (wrapped) when the program ran but wrote no trace: it was not built
// with `scry cc`, or it failed before the runtime started.
var ErrNoTrace = errors.New("the program wrote no trace")

// Stopped is the error when a second SIGINT or SIGTERM arrived while the program ran: the
// program was killed at once and its trace is left as it was.
type Stopped struct {
	Prog, Trace string
	Signal      syscall.Signal
}

func (e *Stopped) Error() string {
	return fmt.Sprintf("%s stopped by a second %v: killed at once; its trace %s is left as it was", e.Prog, e.Signal, e.Trace)
}

// Run starts the program, waits for it and returns how it ended. The error is non-nil when the
// trace path may not be written (TracePolicy), the program could not be started (the message
// names it), it wrote no trace (ErrNoTrace) or it was stopped by a second signal (*Stopped);
// a program that exits non-zero or is killed is not an error: see Result.
//
// Signals: SIGINT and SIGTERM reach the program, whose runtime then writes what it buffered and
// an END record naming the signal (docs/trace-format.md). When scry runs in the foreground of a
// terminal, the program shares scry's process group, so that it can read the terminal and a
// Ctrl-C reaches it from the terminal itself; otherwise (CI, scripts) it gets a process group
// of its own and scry passes both signals on to that group. After SIGTERM the program has
// opts.Grace to exit before its process (group) is killed; a second signal kills it at once.
// Cancelling ctx acts as SIGTERM. A program still running after opts.Timeout is stopped the
// same way: SIGTERM, then SIGKILL after opts.Grace, to its process group when it has one of its
// own (outside a terminal's foreground), and whatever is left of that group is killed once it
// has exited (Result.TimedOut).
func Run(ctx context.Context, opts Options) (*Result, error) {
	if len(opts.Args) == 0 {
		return nil, errors.New("no program to run: give it after `--`")
	}
	tracePath, err := filepath.Abs(opts.Trace)
	if err != nil {
		return nil, fmt.Errorf("trace path %q: %w", opts.Trace, err)
	}
	for _, a := range opts.Args[1:] {
		if abs, err := filepath.Abs(a); err == nil && abs == tracePath {
			return nil, fmt.Errorf("the trace %s is also an argument of the program: name another trace path", opts.Trace)
		}
	}
	prog, err := exec.LookPath(opts.Args[0])
	if err != nil {
		return nil, fmt.Errorf("program %q: %w", opts.Args[0], err)
	}
	// The trace file is created here, empty, so that it is one scry made; the runtime truncates
	// and fills it.
	f, err := safefile.Create(tracePath, trace.FilePolicy("the trace"))
	if err != nil {
		return nil, err
	}
	f.Close()
	args := opts.Args
	var release func()
	var port int
	if opts.Client != nil && !scryexec.HasPort(args) {
		os.Remove(tracePath)
		return nil, fmt.Errorf("--client: no argument of %s contains %s: write %s where the server takes its port (e.g. -p %s)", args[0], scryexec.PortPlaceholder, scryexec.PortPlaceholder, scryexec.PortPlaceholder)
	}
	if opts.Client != nil {
		if port, release, err = scryexec.FreePort(); err != nil {
			os.Remove(tracePath)
			return nil, err
		}
		defer release()
		args = scryexec.WithPort(args, port)
	}
	run, err := scryexec.Command(append([]string{prog}, args[1:]...))
	if err != nil {
		os.Remove(tracePath)
		return nil, err
	}
	cmd := exec.Command(run[0], run[1:]...)
	var bb *blackBox
	if opts.BlackBox {
		if bb, err = newBlackBox(prog, tracePath, opts); err != nil {
			os.Remove(tracePath)
			return nil, err
		}
		cmd = exec.Command(bb.args[0], bb.args[1:]...)
	}
	cmd.Env = append(os.Environ(), "SCRY_TRACE="+tracePath)
	if bb != nil {
		cmd.Env = append(cmd.Env, bb.env...)
	}
	if len(opts.PMGlobs) > 0 {
		cmd.Env = append(cmd.Env, "SCRY_PM_GLOBS="+strings.Join(absGlobs(opts.PMGlobs), ":"))
	}
	if opts.NoLoads {
		cmd.Env = append(cmd.Env, "SCRY_NO_LOADS=1")
	}
	if opts.OpBegin != "" {
		cmd.Env = append(cmd.Env, "SCRY_OP_BEGIN="+opts.OpBegin)
	}
	if opts.OpEnd != "" {
		cmd.Env = append(cmd.Env, "SCRY_OP_END="+opts.OpEnd)
	}
	if opts.Client != nil && opts.OpBegin == "" {
		cmd.Env = append(cmd.Env, "SCRY_OP_SOCKET=1")
	}
	if !opts.NoForcePMEM {
		cmd.Env = append(cmd.Env, "PMEM_IS_PMEM_FORCE=1")
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, opts.Stdout, opts.Stderr
	if opts.Client != nil {
		cmd.Stdin, cmd.Stdout = nil, opts.Stderr
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// Output pipes held open by a background child of the program do not block the wait.
	cmd.WaitDelay = grace
	interactive := foreground()
	if !interactive {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		os.Remove(tracePath)
		return nil, fmt.Errorf("running %s: %w", opts.Args[0], err)
	}
	pid := cmd.Process.Pid
	send := func(sig syscall.Signal) {
		if interactive {
			_ = cmd.Process.Signal(sig)
		} else {
			_ = syscall.Kill(-pid, sig)
		}
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(exited)
		done <- err
	}()
	res := &Result{}
	// Client mode: the client runs once the program listens; its end stops the program.
	type clientEnd struct {
		code int
		sig  syscall.Signal
		err  error
	}
	var clientDone chan clientEnd
	stoppedClient := false
	clientCtx, cancelClient := context.WithCancel(ctx)
	defer cancelClient()
	if opts.Client != nil {
		clientDone = make(chan clientEnd, 1)
		go func() {
			listenCtx, cancel := clientCtx, context.CancelFunc(func() {})
			if opts.Timeout <= 0 {
				listenCtx, cancel = context.WithTimeout(clientCtx, scryexec.ListenTimeout)
			}
			err := scryexec.WaitListening(listenCtx, port, exited)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w on its port %d within %v", scryexec.ErrNotListening, port, scryexec.ListenTimeout)
			}
			if err != nil {
				clientDone <- clientEnd{code: -1, err: err}
				return
			}
			code, sig, err := opts.Client.RunClient(clientCtx, port, "", opts.Stdin, opts.Stdout, opts.Stderr)
			clientDone <- clientEnd{code: code, sig: sig, err: err}
		}()
	}
	var kill, limit <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		limit = t.C
	}
	ctxDone := ctx.Done()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case ce := <-clientDone:
			clientDone = nil
			res.Client = describeClient(ce.code, ce.sig, ce.err)
			if res.Interrupted == 0 && kill == nil {
				stoppedClient = true
				send(syscall.SIGTERM)
				kill = time.After(grace)
			}
		case <-limit:
			limit = nil
			if res.Interrupted == 0 && kill == nil {
				res.TimedOut = opts.Timeout
				send(syscall.SIGTERM)
				kill = time.After(grace)
			}
		case <-ctxDone:
			ctxDone = nil
			if res.Interrupted == 0 {
				res.Interrupted = syscall.SIGTERM
				send(syscall.SIGTERM)
				kill = time.After(grace)
			}
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			if res.Interrupted != 0 {
				send(syscall.SIGKILL)
				<-done
				return res, &Stopped{Prog: opts.Args[0], Trace: tracePath, Signal: sig}
			}
			res.Interrupted = sig
			// From a terminal, Ctrl-C has reached the program already.
			if sig != syscall.SIGINT || !interactive {
				send(sig)
			}
			if sig == syscall.SIGTERM {
				kill = time.After(grace)
			}
		case <-kill:
			kill = nil
			send(syscall.SIGKILL)
		}
	}
	if res.TimedOut > 0 && !interactive {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the children it left behind
	}
	// An ExitError or ErrWaitDelay (a background child kept the output open) leave the exit
	// status valid.
	ps := cmd.ProcessState
	if ps == nil {
		return nil, fmt.Errorf("running %s: %w", opts.Args[0], err)
	}
	res.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	if clientDone != nil {
		// The program ended before its client: the client cannot finish.
		cancelClient()
		ce := <-clientDone
		res.Client = describeClient(ce.code, ce.sig, ce.err)
	}
	if stoppedClient && (res.Signal == syscall.SIGTERM || res.Signal == syscall.SIGKILL) {
		// Stopped by scry once its client ended: no failure of the server.
		res.Signal, res.ExitCode = 0, 0
	}
	if bb != nil {
		if err := bb.finish(); err != nil {
			return res, err
		}
	}
	if fi, err := os.Stat(tracePath); err != nil || fi.Size() == 0 {
		if err == nil {
			os.Remove(tracePath) // the empty file scry created
		}
		if bb != nil {
			return res, fmt.Errorf("%w at %s (program %s under valgrind --tool=scry: did Valgrind start? its messages are above)", ErrNoTrace, tracePath, res)
		}
		return res, fmt.Errorf("%w at %s (program %s; was %s built with `scry cc`?)", ErrNoTrace, tracePath, res, opts.Args[0])
	}
	return res, nil
}

// foreground reports whether scry runs in the foreground process group of its controlling
// terminal, where a Ctrl-C is delivered to the whole group.
func foreground() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	pg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// describeClient says how a client ended, for Result.Client ("" exit status 0).
func describeClient(code int, sig syscall.Signal, err error) string {
	switch {
	case errors.Is(err, scryexec.ErrServerExited), errors.Is(err, scryexec.ErrNotListening):
		return "did not run: " + err.Error()
	case errors.Is(err, context.Canceled):
		return "was stopped: the program ended first"
	case err != nil:
		return "failed: " + err.Error()
	case sig != 0:
		return fmt.Sprintf("was killed by signal %d (%v)", int(sig), sig)
	case code != 0:
		return fmt.Sprintf("exited with status %d", code)
	}
	return ""
}
