package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// PoolPlaceholder is the word in a target's arguments that [Target.Run] replaces with the path
// of the pool (crash image) the run works on.
const PoolPlaceholder = "{pool}"

// DefaultTimeout is how long a run may take when no timeout is given (the CLI's --timeout).
const DefaultTimeout = 10 * time.Second

// Output bounds: standard output is kept up to StdoutLimit bytes (then cut, Outcome.Truncated),
// standard error up to StderrLimit bytes (then cut, with a marker line), so that a program that
// prints without end cannot exhaust memory.
const (
	StdoutLimit = 16 << 20
	StderrLimit = 64 << 10
)

// stdoutLimit is StdoutLimit; tests lower it.
var stdoutLimit = StdoutLimit

// waitDelay bounds the wait for the output pipes after the program's process group has been
// killed: only a process that left the group (setsid) can still hold them open.
const waitDelay = 2 * time.Second

// Target is the program under test: a command line with a {pool} placeholder (docs/crash-exploration.md), e.g. `./mapcli btree {pool}`. The program reads its
// workload from standard input, one operation per line, and must be able to open an existing
// pool and continue, which is how it recovers from a crash image.
type Target struct {
	// Args is the program and its arguments; {pool} occurs in at least one of them, possibly
	// inside a larger argument (--pool={pool}). ParseTarget makes the program path absolute.
	Args []string
	// Env is added to the environment (after the inherited one, so it overrides it).
	Env []string
	// Timeout bounds one run (wall clock); <= 0 means DefaultTimeout. A run that takes longer
	// is a hang: its whole process group is killed.
	Timeout time.Duration
	// OutputFilter, if non-nil, removes the standard-output lines it matches before outputs are
	// compared (Outcome.Normalized), e.g. `^seed:` for mapcli's random seed.
	OutputFilter *regexp.Regexp
	// Client, when set, makes the target a server that the client drives (client.go): a run is
	// a session, {port} in Args is the session's port, and the output is the client's.
	Client *Client
}

// ParseTarget checks a target command line and returns the Target with DefaultTimeout and no
// output filter. The program (args[0]) is made absolute: a name with a slash is resolved against
// the current directory, a bare name is looked up in $PATH. Errors: no arguments, no argument
// containing {pool} (the message says how to write one), a program that cannot be found.
func ParseTarget(args []string) (Target, error) {
	if len(args) == 0 {
		return Target{}, errors.New("no target command: give the program and its arguments, with {pool} where the pool file goes (e.g. ./mapcli btree {pool})")
	}
	found := false
	for _, a := range args {
		if strings.Contains(a, PoolPlaceholder) {
			found = true
			break
		}
	}
	if !found {
		return Target{}, fmt.Errorf("target %q: no argument contains %s: write %s where the program takes the pool file (e.g. %s %s)",
			strings.Join(args, " "), PoolPlaceholder, PoolPlaceholder, args[0], PoolPlaceholder)
	}
	prog, err := ResolveProgram(args[0])
	if err != nil {
		return Target{}, fmt.Errorf("target %q: %w", strings.Join(args, " "), err)
	}
	out := append([]string{prog}, args[1:]...)
	return Target{Args: out, Timeout: DefaultTimeout}, nil
}

// resolveProgram returns the absolute path of a program: a path with a slash is made absolute,
// a bare name is looked up in $PATH.
func ResolveProgram(name string) (string, error) {
	if strings.Contains(name, "/") {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", fmt.Errorf("program %q: %w", name, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("program %q: %w", name, err)
		}
		return abs, nil
	}
	p, err := osexec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("program %q: %w", name, err)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, nil
}

// Outcome tells how one run ended and what it printed.
type Outcome struct {
	// ExitCode is the exit status, or -1 when the program was killed by a signal (including a
	// timeout) or could not be started.
	ExitCode int
	// Signal is the signal that killed the program, or 0. A timeout kills with SIGKILL but is
	// reported as TimedOut with Signal 0.
	Signal syscall.Signal
	// TimedOut: the run exceeded its timeout and its process group was killed (a hang).
	TimedOut bool
	// Stdout is the standard output, at most StdoutLimit bytes; Truncated says it was cut.
	Stdout []byte
	// Stderr is the standard error, at most StderrLimit bytes (a marker line ends a cut one).
	Stderr    []byte
	Truncated bool
	// Duration is the wall-clock time from start to exit.
	Duration time.Duration
	// Err is non-nil when the program could not be started, or when the run was interrupted
	// because the caller's context was cancelled (then it wraps the context's error).
	Err error
	// Timeout is the limit the run had (for Describe).
	Timeout time.Duration
	// Diverged, when > 0, is the line of standard output (from 1) at which the run was stopped
	// because it matched none of the legal outcomes it was compared with as it streamed
	// (WithLegal), however it then ended (its verdict is decided there): ExitCode is then -1,
	// Signal 0, and Stdout ends with that line. LinesLeft is
	// the number of lines the longest legal outcome printed after it: what stopping saved.
	Diverged  int
	LinesLeft int
	// StateHash is the hash of the pool the runtime took at the run's first read of standard
	// input (under WithConverge; "" when it took none), ConvergedTo is i+1 when the run was
	// stopped there because the hash equalled the i-th legal outcome's (converge.go), and
	// ConvergeErr is the runtime's reason when it could not take the hash.
	StateHash   string
	ConvergedTo int
	ConvergeErr string

	filter *regexp.Regexp
	pool   string    // the image's absolute path, which Normalized writes as {pool}
	vary   *Variance // what varies between identical runs, which Normalized masks (WithVariance)
}

// Failed reports whether the run is a failure by itself: it could not start or was
// interrupted, it timed out, it was killed by a signal, or it exited non-zero. Whether a
// non-zero exit is a bug depends on the oracles (see Equivalent).
func (o Outcome) Failed() bool {
	return o.Err != nil || o.TimedOut || o.Signal != 0 || o.ExitCode != 0
}

// Describe says how the run ended: "exited with status 2", "killed by signal 11
// (segmentation fault)", "hung: killed after 10s", "could not start: ...",
// "interrupted: context canceled".
func (o Outcome) Describe() string {
	switch {
	case o.Err != nil && errors.Is(o.Err, context.Canceled), o.Err != nil && errors.Is(o.Err, context.DeadlineExceeded):
		return "interrupted: " + o.Err.Error()
	case o.Err != nil:
		return "could not start: " + o.Err.Error()
	case o.TimedOut:
		return fmt.Sprintf("hung: killed after %v", o.Timeout)
	case o.Diverged > 0:
		return divergedText(o.Diverged)
	case o.Signal != 0:
		return fmt.Sprintf("killed by signal %d (%v)", int(o.Signal), o.Signal)
	default:
		return fmt.Sprintf("exited with status %d", o.ExitCode)
	}
}

// Normalized returns the standard output as outputs are compared: without the lines the
// target's OutputFilter matches (the filter sees a line without its newline), and with the path
// of the image the run worked on written as {pool}, since every run works on an image of its
// own while the program may print its pool's path; then, with a Variance (WithVariance), with
// the fields, lines or block of lines that vary between identical runs written as VariesMark.
// Without any of these it is Stdout itself.
func (o Outcome) Normalized() []byte {
	out := o.Stdout
	if o.filter != nil {
		out = filterLines(out, o.filter)
	}
	if o.pool != "" && bytes.Contains(out, []byte(o.pool)) {
		out = bytes.ReplaceAll(out, []byte(o.pool), []byte(PoolPlaceholder))
	}
	if o.vary != nil {
		out = o.vary.mask(out)
	}
	return out
}

func filterLines(b []byte, re *regexp.Regexp) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if !re.Match(bytes.TrimSuffix(line, []byte("\n"))) {
			out = append(out, line...)
		}
	}
	return out
}

// Run runs the target on pool: every {pool} in its arguments becomes the absolute path of pool;
// the working directory is dir ("" scry's own; relative paths in the arguments other than the
// program resolve against it); standard input is stdin. The program runs in its own process
// group; when the timeout expires or ctx is cancelled the whole group gets SIGKILL, and it also
// does when the program exits, so that no background child outlives the run. The environment is
// the inherited one without SCRY_* variables, with PMEM_IS_PMEM_FORCE=1 (PMDK flushes ordinary
// files with cache-line instructions), then t.Env, then SCRY_TRACE=/dev/null, SCRY_NO_LOADS=1,
// SCRY_INERT=1 and SCRY_RUN_ID, a tag of the run: when the program exits, the processes that carry the tag
// but left the process group (setsid) are killed too. The scry runtime has no switch to turn
// tracing off (native/runtime/writer.c reads only SCRY_TRACE, defaulting to ./scry.trace), so an
// instrumented program traces into the null device and never overwrites a real trace. Run never returns an error: see Outcome.Err.
func (t Target) Run(ctx context.Context, pool string, stdin []byte, dir string) Outcome {
	abs, args, err := t.args(pool)
	if err != nil {
		return Outcome{ExitCode: -1, Err: err, filter: t.OutputFilter}
	}
	var o Outcome
	if t.Client != nil {
		o = t.runServed(ctx, args, stdin, dir)
	} else {
		o = runWatched(ctx, args, t.Env, stdin, dir, t.Timeout, t.OutputFilter, abs, nil)
	}
	o.filter, o.pool = t.OutputFilter, abs
	return o
}

// args returns pool's absolute path and the target's arguments with {pool} replaced by it.
func (t Target) args(pool string) (string, []string, error) {
	abs, err := filepath.Abs(pool)
	if err != nil {
		return "", nil, fmt.Errorf("pool path %q: %w", pool, err)
	}
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		args[i] = strings.ReplaceAll(a, PoolPlaceholder, abs)
	}
	return abs, args, nil
}

// environ builds a run's environment (see Target.Run).
func environ(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SCRY_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PMEM_IS_PMEM_FORCE=1")
	env = append(env, extra...)
	// Last, so that nothing overrides them (os/exec keeps the last value of a duplicate).
	return append(env, scryEnv...)
}

// scryEnv is what every run gets last: an instrumented program's runtime stays inert (no trace,
// no PM regions, so its loads and stores skip the callbacks: SCRY_INERT=1), and one built before
// that switch traces into the null device.
var scryEnv = []string{"SCRY_TRACE=" + os.DevNull, "SCRY_NO_LOADS=1", "SCRY_INERT=1"}

// carried reports whether an inherited variable is one a run's behaviour may depend on that
// another shell may lack: the dynamic loader's (LD_LIBRARY_PATH, LD_PRELOAD) and PMDK's
// (PMEM_*, PMEMOBJ_*, PMEMBLK_*, PMEMLOG_*, PMEMPOOL_*).
func carried(name string) bool {
	switch name {
	case "LD_LIBRARY_PATH", "LD_PRELOAD":
		return true
	}
	for _, p := range []string{"PMEM_", "PMEMOBJ_", "PMEMBLK_", "PMEMLOG_", "PMEMPOOL_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ReproduceEnv returns the variables a command that reproduces one of t's runs by hand must set
// (NAME=VALUE, in the order Run sets them): the inherited ones a run may depend on (carried:
// the loader's and PMDK's), PMEM_IS_PMEM_FORCE=1, t.Env, and the SCRY_ variables every run
// gets. The rest of the environment is the caller's.
func (t Target) ReproduceEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, ok := strings.Cut(kv, "="); ok && carried(name) && name != "PMEM_IS_PMEM_FORCE" {
			env = append(env, kv)
		}
	}
	env = append(env, "PMEM_IS_PMEM_FORCE=1")
	env = append(env, t.Env...)
	return lastWins(append(env, scryEnv...))
}

// lastWins returns env with each variable once, at its last assignment (the value a run gets:
// os/exec keeps the last of duplicates), so that a command to copy does not repeat one that
// --env gives again (PMEM_IS_PMEM_FORCE=1).
func lastWins(env []string) []string {
	last := map[string]int{}
	for i, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		last[name] = i
	}
	out := env[:0:0]
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); last[name] == i {
			out = append(out, kv)
		}
	}
	return out
}

// CheckEnv checks NAME=VALUE assignments given by a user (--env): each needs a name made of
// letters, digits and underscores, not starting with a digit, and not one scry sets itself
// (SCRY_*). The error names the first bad one.
func CheckEnv(env []string) error {
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("--env %q: not NAME=VALUE", kv)
		}
		valid := name != "" && !(name[0] >= '0' && name[0] <= '9')
		for _, c := range name {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				valid = false
			}
		}
		if !valid {
			return fmt.Errorf("--env %q: %q is not a variable name", kv, name)
		}
		if strings.HasPrefix(name, "SCRY_") {
			return fmt.Errorf("--env %q: scry sets the SCRY_ variables of a run itself", kv)
		}
	}
	return nil
}

// RunCommand runs a command that is not a target (a program's --help, git): args[0] looked up
// in $PATH when it has no slash, in dir ("" scry's own), with empty standard input and the
// process-group, timeout, environment and output rules of Target.Run. It never returns an
// error: see Outcome.Err.
func RunCommand(ctx context.Context, args []string, dir string, timeout time.Duration) Outcome {
	return run(ctx, args, nil, nil, dir, timeout)
}

// run runs args in its own process group with a timeout; see Target.Run.
func run(ctx context.Context, args, env []string, stdin []byte, dir string, timeout time.Duration) Outcome {
	return runWatched(ctx, args, env, stdin, dir, timeout, nil, "", nil)
}

// runWatched is run, stopping the run at its first diverging line of output when ctx carries
// legal outcomes (WithLegal; filter and pool normalize its lines as Normalized does). With
// files (a lazy run), the standard streams are those files and its variable is set, stdin is
// unused, the output stays in the files and is not watched.
func runWatched(ctx context.Context, args, env []string, stdin []byte, dir string, timeout time.Duration, filter *regexp.Regexp, pool string, files *runFiles) Outcome {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	o := Outcome{ExitCode: -1, Timeout: timeout}
	if len(args) == 0 {
		o.Err = errors.New("no command to run")
		return o
	}
	if err := ctx.Err(); err != nil {
		o.Err = err
		return o
	}
	args, err := Command(args)
	if err != nil {
		o.Err = err
		return o
	}
	// The clock starts before the deadline is set, so that a run killed at its timeout never
	// reports a duration shorter than the timeout.
	start := time.Now()
	subreaper() // before the start: the run's orphans are re-parented to scry (reap.go)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := osexec.CommandContext(runCtx, args[0], args[1:]...)
	cmd.Dir = dir
	tag := fmt.Sprintf("%s=%d.%d", runTagVar, os.Getpid(), runSerial.Add(1))
	cmd.Env = append(environ(env), tag)
	conv := convergeOf(ctx)
	if files != nil {
		conv = nil // a lazy run's leaves are not compared so
	}
	if conv != nil {
		conv.prepare()
		cmd.Env = append(cmd.Env, conv.env(pool))
	}
	cmd.Stdin = bytes.NewReader(stdin)
	stdout := &boundedBuffer{limit: stdoutLimit}
	stderr := &boundedBuffer{limit: StderrLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var w *watch
	if files != nil {
		cmd.Env = append(cmd.Env, files.env)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = files.stdin, files.stdout, files.stderr
	} else {
		w = newWatch(ctx, stdout, filter, pool)
	}
	if w != nil {
		// Called from os/exec's copying goroutine, which starts after cmd.Process is set.
		w.stop = func() { killGroup(cmd.Process.Pid) }
		cmd.Stdout = w
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = waitDelay

	if err := cmd.Start(); err != nil {
		o.Err = fmt.Errorf("%s: %w", args[0], err)
		return o
	}
	pid := cmd.Process.Pid
	// Wait for the leader to exit without reaping it: while it is a zombie its process group ID
	// cannot be reused, so killing the group cannot hit an unrelated process.
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	killGroup(pid)
	sweepRun(pid, 0, tag) // before the wait: an escaped process may hold the output pipes open
	err = cmd.Wait()
	o.Duration = time.Since(start)
	o.Stdout, o.Truncated = stdout.buf.Bytes(), stdout.cut
	o.Stderr = stderr.buf.Bytes()
	if stderr.cut {
		o.Stderr = append(o.Stderr, "\n[scry: standard error truncated]\n"...)
	}

	ps := cmd.ProcessState
	if ps == nil {
		o.Err = fmt.Errorf("%s: %w", args[0], err)
		return o
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		o.Signal = ws.Signal()
	} else {
		o.ExitCode = ps.ExitCode()
	}
	conv.collect(&o)
	if k := w.divergedAt(); k > 0 {
		// Decided at line k, however the program then ended (it may have exited before the
		// signal landed): the outcome does not depend on timing.
		o.diverge(k, w.legal)
	} else if ctx.Err() != nil && (ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
		o.Err = fmt.Errorf("%s: %w", args[0], ctx.Err())
		o.Signal = 0
	} else if runCtx.Err() != nil && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		o.TimedOut = true
		o.Signal = 0
	}
	// Other errors (ErrWaitDelay: a process that left the group kept the output open) leave the
	// exit status valid; the output may then be incomplete.
	return o
}

// runTagVar is the environment variable that tags every process of one run (the program and
// whatever it starts), so that sweepRun (or, without the subreaper, killTagged) finds those that
// left the run's process group.
const runTagVar = "SCRY_RUN_ID"

var runSerial atomic.Uint64

// killTagged sends SIGKILL to every process, but the one numbered except (0: none), whose
// environment holds one of tags (VAR=value): the processes of a run that escaped its process
// group (setsid, a daemon), which killGroup misses. Runs use it only when scry cannot be a child
// subreaper (sweepRun); KillRuns, the last sweep at exit, scans so too. It reads /proc/PID/environ, the environment
// each process was started with; a process that rewrote its environment, or one that is not ours
// to read, escapes. The scan is repeated until one finds no such process alive (killTagged gives
// up after waitDelay): a process forking while the scan passed may leave a child the scan had
// already passed, while one killed cannot fork any more (fork(2) fails once a fatal signal is
// pending), so a scan that finds none means none is left.
func killTagged(except int, tags ...string) {
	want := make([][]byte, len(tags))
	for i, t := range tags {
		want[i] = []byte(t)
	}
	killMatching(except, func(kv []byte) bool {
		return slices.ContainsFunc(want, func(w []byte) bool { return bytes.Equal(kv, w) })
	})
}

// KillRuns kills every process still alive that a run of this scry process started (Target.Run,
// Checker.Run, RunCommand, the fork servers: every process whose environment carries
// SCRY_RUN_ID=PID.N, PID scry's), as killTagged does: the last sweep when scry stops, on every
// path (the commands call it before they exit, SignalContext on a second signal). A run kills its
// own processes when it ends; KillRuns catches those of runs cut short.
func KillRuns() {
	prefix := []byte(fmt.Sprintf("%s=%d.", runTagVar, os.Getpid()))
	killMatching(0, func(kv []byte) bool { return bytes.HasPrefix(kv, prefix) })
}

// runsAlive reports whether a process a run of this scry started is alive (see KillRuns).
func runsAlive() bool {
	prefix := []byte(fmt.Sprintf("%s=%d.", runTagVar, os.Getpid()))
	found := false
	scanProcs(0, func(pid int, env []byte) bool {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, prefix) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// scanProcs calls f with the number and the environment (/proc/PID/environ) of every process
// but this one and except, while f returns true.
func scanProcs(except int, f func(pid int, env []byte) bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	procScans.Add(1)
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == except {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if !f(pid, b) {
			return
		}
	}
}

// killMatching sends SIGKILL to every process but this one and except whose environment has a
// variable match accepts, scanning /proc until a scan finds none (see killTagged).
func killMatching(except int, match func(kv []byte) bool) {
	deadline := time.Now().Add(waitDelay)
	for {
		found := false
		scanProcs(except, func(pid int, env []byte) bool {
			for _, kv := range bytes.Split(env, []byte{0}) {
				if match(kv) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					found = true
					break
				}
			}
			return true
		})
		if !found || time.Now().After(deadline) {
			return
		}
	}
}

// killGroup sends SIGKILL to the process group pgid (errors ignored: the group may be gone).
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// boundedBuffer keeps the first limit bytes written to it and drops the rest, remembering that
// it did. It never returns an error, so the program is not stopped by a full buffer.
type boundedBuffer struct {
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); room < len(p) {
		b.cut = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

var _ io.Writer = (*boundedBuffer)(nil)

// TimedOut says how a program stopped at its time limit limit ended (sig: the signal that
// killed it, 0 when it exited on SIGTERM by itself), for the recordings of PM mode (pm/record)
// and file-system mode (fs/strace) alike: "ran longer than its time limit of 5s
// (--record-timeout) and was stopped (killed by signal 15 (terminated))".
func TimedOut(limit time.Duration, sig syscall.Signal) string {
	how := "SIGTERM"
	if sig != 0 {
		how = fmt.Sprintf("killed by signal %d (%v)", int(sig), sig)
	}
	return fmt.Sprintf("ran longer than its time limit of %v (--record-timeout) and was stopped (%s)", limit, how)
}
