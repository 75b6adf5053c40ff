package exec

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Fork servers (native/runtime/forkserver.c has the protocol). A program built with `scry cc` stops
// before main when its environment names a socket in SCRY_FORKSRV_FD, and forks a child per
// request that returns into main with the request's arguments and standard streams. A run then
// costs what the program does from main on: exec, the dynamic loader and the libraries'
// constructors (a fifth of a run of a PMDK program on a crash image) are paid once per server.

// forkServerMarker is a symbol every runtime with a fork server defines.
const forkServerMarker = "__scry_forkserver_protocol"

const (
	fsHello = "SCRYFSV1"
	fsMagic = 0x53524651
	// fsHelloTimeout bounds the wait for a server's hello (a program that is no server runs
	// main instead, on a scratch path, and exits or is killed).
	fsHelloTimeout = 5 * time.Second
)

// ForkServers runs a Target's runs through fork servers, one per concurrent run, when its
// program is an executable built with scry's runtime; otherwise, or when a server cannot start,
// by exec as Target.Run does. Its Run has Target.Run's contract. Safe for concurrent use;
// Close stops the servers.
type ForkServers struct {
	t       Target
	scratch string // a directory for the servers' placeholder pool path
	mu      sync.Mutex
	idle    map[string][]*forkServer // by working directory
	all     []*forkServer
	off     string // why runs go by exec ("" while servers are used)
	closed  bool
}

// NewForkServers returns the fork servers of t; scratch is a directory of scry's (the servers
// start with a path in it in place of {pool}, never opened while they serve). Runs go by exec
// when t's program is not an ELF executable with scry's fork server (a script, a wrapper such
// as env, a program built without scry cc).
func NewForkServers(t Target, scratch string) *ForkServers {
	f := &ForkServers{t: t, scratch: scratch, idle: map[string][]*forkServer{}}
	if len(t.Args) == 0 {
		f.off = "no program"
	} else if why := noForkServer(t.Args[0]); why != "" {
		f.off = why
	}
	return f
}

// noForkServer says why the program at path cannot serve runs ("" when it can).
func noForkServer(path string) string {
	return noMarker(path, forkServerMarker, "scry's fork server", "no fork server")
}

// lazyMarker is a symbol every runtime that can make lazy runs defines.
const lazyMarker = "__scry_lazy_protocol"

// NoLazy says why t cannot make lazy runs ("" when it can): its program is not an ELF
// executable whose runtime has lazy support (a script, a wrapper such as env, a program built
// without scry cc or with an older runtime, a black-box program).
func NoLazy(t Target) string {
	if len(t.Args) == 0 {
		return "no program"
	}
	return noMarker(t.Args[0], lazyMarker, "a runtime with lazy support", "its runtime has no lazy support")
}

// noMarker says why the program at path lacks symbol marker, what names ("" when it has it).
func noMarker(path, marker, what, without string) string {
	ef, err := elf.Open(path)
	if err != nil {
		return filepath.Base(path) + " is not an ELF executable"
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		return filepath.Base(path) + " has no symbol table (stripped): cannot tell whether it has " + what
	}
	for _, s := range syms {
		if s.Name == marker {
			return ""
		}
	}
	return filepath.Base(path) + " was not built with scry cc (" + without + ")"
}

// Mode says how runs are made: through fork servers, or by exec and why.
func (f *ForkServers) Mode() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off != "" {
		return "runs by exec: " + f.off
	}
	return "runs through fork servers"
}

// Run runs the target on pool with stdin (Target.Run's contract).
func (f *ForkServers) Run(ctx context.Context, pool string, stdin []byte, dir string) Outcome {
	return f.RunWithin(ctx, pool, stdin, dir, 0)
}

// RunWithin is Run with the run bounded by timeout instead of the target's Timeout (when
// timeout > 0).
func (f *ForkServers) RunWithin(ctx context.Context, pool string, stdin []byte, dir string, timeout time.Duration) Outcome {
	return f.runWithin(ctx, pool, stdin, dir, timeout, nil)
}

// runWithin is RunWithin, with files for a lazy run (runWatched).
func (f *ForkServers) runWithin(ctx context.Context, pool string, stdin []byte, dir string, timeout time.Duration, files *runFiles) Outcome {
	t := f.t
	if timeout > 0 {
		t.Timeout = timeout
	}
	byExec := func() Outcome {
		if files == nil {
			return t.Run(ctx, pool, stdin, dir)
		}
		return t.runFiles(ctx, pool, dir, t.Timeout, files)
	}
	s, err := f.get(dir)
	if s == nil {
		if err != nil {
			f.disable(err.Error())
		}
		return byExec()
	}
	abs, args, err := f.t.args(pool)
	if err != nil {
		f.put(s)
		return Outcome{ExitCode: -1, Err: err, filter: t.OutputFilter}
	}
	o, started, err := s.run(ctx, args, stdin, t.Timeout, f.t.OutputFilter, abs, files)
	if err != nil {
		s.stop()
		f.drop(s)
		if ctx.Err() != nil && !started {
			o.Err = ctx.Err()
			return o
		}
		if !started {
			// Nothing ran: the run by exec is the same run.
			f.disable("a fork server failed: " + err.Error())
			return byExec()
		}
		o = Outcome{ExitCode: -1, Err: fmt.Errorf("the fork server running %s failed during the run: %w", args[0], err)}
	} else {
		f.put(s)
	}
	o.filter, o.pool = f.t.OutputFilter, abs
	return o
}

// get returns an idle server or starts one (nil, nil when runs go by exec).
func (f *ForkServers) get(dir string) (*forkServer, error) {
	f.mu.Lock()
	if f.off != "" || f.closed {
		f.mu.Unlock()
		return nil, nil
	}
	if n := len(f.idle[dir]); n > 0 {
		s := f.idle[dir][n-1]
		f.idle[dir] = f.idle[dir][:n-1]
		f.mu.Unlock()
		return s, nil
	}
	f.mu.Unlock()
	args := make([]string, len(f.t.Args))
	for i, a := range f.t.Args {
		args[i] = strings.ReplaceAll(a, PoolPlaceholder, filepath.Join(f.scratch, "forkserver-placeholder.pool"))
	}
	s, err := startForkServer(args, f.t.Env, dir)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		s.stop()
		return nil, nil
	}
	f.all = append(f.all, s)
	return s, nil
}

func (f *ForkServers) put(s *forkServer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		s.stop()
		return
	}
	f.idle[s.dir] = append(f.idle[s.dir], s)
}

func (f *ForkServers) drop(s *forkServer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, x := range f.all {
		if x == s {
			f.all = append(f.all[:i], f.all[i+1:]...)
			break
		}
	}
}

func (f *ForkServers) disable(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off == "" {
		f.off = why
	}
}

// Close stops every server (they exit when their socket closes; Close also kills them).
func (f *ForkServers) Close() {
	f.mu.Lock()
	all := f.all
	f.all, f.idle, f.closed = nil, map[string][]*forkServer{}, true
	f.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
}

// forkServer is one server process and scry's end of its socket.
type forkServer struct {
	cmd  *osexec.Cmd
	sock *os.File
	argc int
	dir  string // its working directory, which its children inherit
	// tag is in the server's own environment, so every process its runs fork without exec
	// carries it in /proc/PID/environ (a run's exec'd processes carry the run's tag).
	tag string
}

// startForkServer starts args as a fork server (in its own process group, standard streams
// from and to the null device) and waits for its hello. Errors: the program did not start, or
// did not say hello within fsHelloTimeout (it is then killed).
func startForkServer(args, env []string, dir string) (*forkServer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "forkserver"), os.NewFile(uintptr(fds[1]), "forkserver-peer")
	argc := len(args) // the program's; an emulator's prefix is not the server's to replace
	if args, err = Command(args); err != nil {
		ours.Close()
		theirs.Close()
		return nil, err
	}
	cmd := osexec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	tag := fmt.Sprintf("%s=%d.s%d", runTagVar, os.Getpid(), runSerial.Add(1))
	cmd.Env = append(environ(env), "SCRY_FORKSRV_FD=3", tag)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	subreaper() // its runs' orphans are re-parented to scry (reap.go)
	if err := cmd.Start(); err != nil {
		ours.Close()
		theirs.Close()
		return nil, fmt.Errorf("%s: %w", args[0], err)
	}
	theirs.Close()
	s := &forkServer{cmd: cmd, sock: ours, argc: argc, dir: dir, tag: tag}
	hello := make(chan error, 1)
	go func() {
		var b [12]byte
		if _, err := io.ReadFull(ours, b[:]); err != nil {
			hello <- fmt.Errorf("%s did not start a fork server (it ran main: is it built with scry cc and its runtime up to date?)", filepath.Base(args[0]))
			return
		}
		if string(b[:8]) != fsHello {
			hello <- fmt.Errorf("%s wrote something else than a fork server's hello", filepath.Base(args[0]))
			return
		}
		hello <- nil
	}()
	select {
	case err = <-hello:
	case <-time.After(fsHelloTimeout):
		err = fmt.Errorf("%s did not start a fork server within %v", filepath.Base(args[0]), fsHelloTimeout)
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop closes the socket (the server exits) and kills the server's process group.
func (s *forkServer) stop() {
	s.sock.Close()
	if s.cmd.Process != nil {
		killGroup(s.cmd.Process.Pid)
		_ = s.cmd.Wait()
	}
}

// run makes one run: args replace the server's arguments (same count), stdin is the child's
// standard input. started tells whether a child was forked (then an error means its outcome is
// unknown); err is a failure of the server or of the socket. With files (a lazy run) the
// child's standard streams are those files, its tag is their variable (SCRY_LAZY=D), stdin is
// unused and the output, left in the files, is not watched.
func (s *forkServer) run(ctx context.Context, args []string, stdin []byte, timeout time.Duration, filter *regexp.Regexp, pool string, files *runFiles) (o Outcome, started bool, err error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	o = Outcome{ExitCode: -1, Timeout: timeout}
	if len(args) != s.argc {
		return o, false, fmt.Errorf("%d arguments, the server has %d", len(args), s.argc)
	}
	if err := ctx.Err(); err != nil {
		o.Err = err
		return o, false, nil
	}
	var pipes [3][2]*os.File // [stdin, stdout, stderr][read, write]
	for i := range pipes {
		if files != nil {
			break
		}
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				p[0].Close()
				p[1].Close()
			}
			return o, false, err
		}
		pipes[i] = [2]*os.File{r, w}
	}
	childEnds := []*os.File{pipes[0][0], pipes[1][1], pipes[2][1]}
	closeChildEnds := func() {
		for _, f := range childEnds {
			f.Close()
		}
	}
	tag := fmt.Sprintf("%s=%d.%d", runTagVar, os.Getpid(), runSerial.Add(1))
	conv := convergeOf(ctx)
	if files != nil {
		childEnds, closeChildEnds, tag = []*os.File{files.stdin, files.stdout, files.stderr}, func() {}, files.env
		conv = nil // a lazy run's leaves are not compared so
	}
	// The child's variables: the tag, then SCRY_CONVERGE, separated by a NUL byte.
	vars := tag
	if conv != nil {
		conv.prepare()
		vars += "\x00" + conv.env(pool)
	}
	var req bytes.Buffer
	put := func(v uint32) { _ = binary.Write(&req, binary.LittleEndian, v) }
	put(uint32(len(args)))
	for _, a := range args[1:] {
		put(uint32(len(a)))
		req.WriteString(a)
	}
	put(uint32(len(vars)))
	req.WriteString(vars)
	start := time.Now()
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], fsMagic)
	rights := unix.UnixRights(int(childEnds[0].Fd()), int(childEnds[1].Fd()), int(childEnds[2].Fd()))
	sendErr := unix.Sendmsg(int(s.sock.Fd()), magic[:], rights, nil, 0)
	if sendErr == nil {
		_, sendErr = s.sock.Write(req.Bytes())
	}
	closeChildEnds()
	if sendErr != nil {
		for _, p := range pipes {
			p[0].Close()
			p[1].Close()
		}
		return o, false, fmt.Errorf("sending the request: %w", sendErr)
	}
	// Standard input, output and error, as run does.
	stdout := &boundedBuffer{limit: stdoutLimit}
	stderr := &boundedBuffer{limit: StderrLimit}
	var copies sync.WaitGroup
	diverged := make(chan struct{}) // closed by the watch at the first diverging line
	var w *watch
	if files == nil {
		copies.Go(func() {
			_, _ = pipes[0][1].Write(stdin)
			pipes[0][1].Close()
		})
		var out io.Writer = stdout
		w = newWatch(ctx, stdout, filter, pool)
		if w != nil {
			w.stop = func() { close(diverged) }
			out = w
		}
		copies.Go(func() { _, _ = io.Copy(out, pipes[1][0]) })
		copies.Go(func() { _, _ = io.Copy(stderr, pipes[2][0]) })
	}
	readers := func() {
		done := make(chan struct{})
		go func() { copies.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(waitDelay):
			// A process that left the group keeps the output open: give up on it.
		}
		for _, p := range pipes {
			p[0].Close()
			p[1].Close()
		}
		<-done
	}
	pid, err := s.readU32()
	if err != nil {
		readers()
		return o, false, fmt.Errorf("reading the child's pid: %w", err)
	}
	if pid == 0 {
		errno, err := s.readU32()
		readers()
		if err != nil {
			return o, false, fmt.Errorf("reading the fork's error: %w", err)
		}
		return o, false, fmt.Errorf("fork: %w", syscall.Errno(errno))
	}
	statusc := make(chan uint32, 1)
	errc := make(chan error, 1)
	go func() {
		st, err := s.readU32()
		if err != nil {
			errc <- err
			return
		}
		statusc <- st
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var status uint32
	killedBy := ""
wait:
	for {
		select {
		case status = <-statusc:
			break wait
		case err := <-errc:
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
			readers()
			return o, true, fmt.Errorf("reading the child's status: %w", err)
		case <-timer.C:
			killedBy = "timeout"
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
		case <-ctx.Done():
			if killedBy == "" {
				killedBy = "context"
			}
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
		case <-diverged:
			if killedBy == "" {
				killedBy = "diverged"
			}
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
			diverged = nil
		}
	}
	sweepRun(int(pid), s.cmd.Process.Pid, tag, s.tag)
	readers()
	o.Duration = time.Since(start)
	o.Stdout, o.Truncated = stdout.buf.Bytes(), stdout.cut
	o.Stderr = stderr.buf.Bytes()
	if stderr.cut {
		o.Stderr = append(o.Stderr, "\n[scry: standard error truncated]\n"...)
	}
	ws := syscall.WaitStatus(status)
	if ws.Signaled() {
		o.Signal = ws.Signal()
	} else {
		o.ExitCode = ws.ExitStatus()
	}
	conv.collect(&o)
	if k := w.divergedAt(); k > 0 {
		o.diverge(k, w.legal) // however it ended, as in runWatched
	} else if killedBy != "" && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		if killedBy == "context" {
			o.Err = fmt.Errorf("%s: %w", args[0], ctx.Err())
		} else {
			o.TimedOut = true
		}
		o.Signal = 0
	}
	return o, true, nil
}

func (s *forkServer) readU32() (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(s.sock, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, errors.New("the fork server exited")
		}
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}
