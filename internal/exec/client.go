package exec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Servers driven by a client (scry check --client; docs/servers.md).
//
// A server reads no workload from its standard input: a client sends it requests over a socket.
// In client mode every run of the target is a session: the server is started with {port}
// replaced by a free TCP port of the loopback interface, scry waits until it listens there
// (without connecting: /proc/net/tcp), then runs the client, a shell command with {port}
// replaced alike, with the workload (or its suffix) on the client's standard input; the
// client's standard output is the run's output, which the oracles compare. When the client
// ends, the server is stopped with SIGTERM (SIGKILL after ServerGrace) and every process of the
// session is killed. A server that dies by itself during the session (a signal, an exit) makes
// the run fail with its status; otherwise the client's status is the run's.

// PortPlaceholder is replaced by the session's port in the server's arguments and in the
// client's command.
const PortPlaceholder = "{port}"

// ServerGrace is how long a server has to exit after SIGTERM at the end of a session before it
// is killed; a server killed so is not a failure (the client's answers decided the run).
const ServerGrace = 2 * time.Second

// Client is the client of a server under test.
type Client struct {
	// Command is a shell command line (/bin/sh -c) with {port} where the server's port goes.
	// It reads the workload on standard input, sends its requests to 127.0.0.1:{port} and prints
	// what the server answers.
	Command string
}

// ParseClient checks a client command: not empty, with {port} (else the client could not know
// where the server listens).
func ParseClient(command string) (*Client, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("--client: empty command")
	}
	if !strings.Contains(command, PortPlaceholder) {
		return nil, fmt.Errorf("--client %q: no %s: write %s where the client takes the server's port (e.g. ./client 127.0.0.1 %s)", command, PortPlaceholder, PortPlaceholder, PortPlaceholder)
	}
	return &Client{Command: command}, nil
}

// HasPort reports whether an argument of args contains {port}.
func HasPort(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, PortPlaceholder) {
			return true
		}
	}
	return false
}

// WithPort returns args with {port} replaced by port.
func WithPort(args []string, port int) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, PortPlaceholder, strconv.Itoa(port))
	}
	return out
}

// ports are the ports handed out to sessions still running: a port the kernel gives again while
// its session runs (FreePort closes its probe) is not handed out twice by this process.
var ports struct {
	sync.Mutex
	used map[int]bool
}

// FreePort returns a TCP port of 127.0.0.1 that is free now and not in use by another session of
// this process, and the function that releases it when the session ends. Error: no port could
// be bound.
func FreePort() (int, func(), error) {
	ports.Lock()
	defer ports.Unlock()
	if ports.used == nil {
		ports.used = map[int]bool{}
	}
	for try := 0; try < 64; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, nil, fmt.Errorf("choosing a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if ports.used[port] {
			continue
		}
		ports.used[port] = true
		return port, func() {
			ports.Lock()
			delete(ports.used, port)
			ports.Unlock()
		}, nil
	}
	return 0, nil, errors.New("choosing a free port: the kernel kept giving ports already in use")
}

// Listening reports whether a TCP socket listens on port (any address, IPv4 or IPv6), read from
// /proc/net/tcp and /proc/net/tcp6 so that the check opens no connection to the server.
func Listening(port int) bool {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if listensIn(f, port) {
			return true
		}
	}
	return false
}

// listensIn reads the /proc/net/tcp table at path (listensOn).
func listensIn(path string, port int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return listensOn(f, port)
}

// listensOn reads a /proc/net/tcp table, "sl local_address rem_address st ..." with the local
// address as HEX:PORT in hex and st 0A for LISTEN, and reports whether a socket listens on port.
// Lines of another shape are skipped.
func listensOn(r io.Reader, port int) bool {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		_, p, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(p, 16, 16); err == nil && int(n) == port {
			return true
		}
	}
	return false
}

// ErrServerExited is the error of WaitListening when the server ended before it listened;
// ErrNotListening that of a caller whose bound on the wait passed (record: ListenTimeout).
var (
	ErrServerExited = errors.New("the server exited before it listened on its port")
	ErrNotListening = errors.New("the server did not listen")
)

// WaitListening waits until something listens on port, polling from every 2 ms (a server
// that starts at once) to every 50 ms (one that recovers a large pool first). It returns
// ErrServerExited when exited is closed first, or ctx's error when ctx ends first.
func WaitListening(ctx context.Context, port int, exited <-chan struct{}) error {
	wait := 2 * time.Millisecond
	for {
		if Listening(port) {
			return nil
		}
		select {
		case <-exited:
			if Listening(port) {
				return nil
			}
			return ErrServerExited
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// ListenTimeout bounds the wait for a recorded server to listen (record.Options.Client), when
// the recording has no time limit of its own.
const ListenTimeout = time.Minute

// RunClient runs the client's command for port in its own process group, in dir ("" the current
// directory), with stdin, stdout and stderr, and the environment without SCRY_ variables (an
// instrumented client must not write into the server's trace). Cancelling ctx kills its group.
// It returns the client's exit status (-1 with the signal when killed by one) and the error of a
// client that could not start or was cancelled.
func (c *Client) RunClient(ctx context.Context, port int, dir string, stdin io.Reader, stdout, stderr io.Writer) (int, syscall.Signal, error) {
	cmd := osexec.CommandContext(ctx, "/bin/sh", "-c", strings.ReplaceAll(c.Command, PortPlaceholder, strconv.Itoa(port)))
	cmd.Dir = dir
	tag := fmt.Sprintf("%s=%d.%d", runTagVar, os.Getpid(), runSerial.Add(1))
	cmd.Env = append(environ(nil), tag)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return -1, 0, fmt.Errorf("client %q: %w", c.Command, err)
	}
	err := cmd.Wait()
	killGroup(cmd.Process.Pid)
	sweepRun(cmd.Process.Pid, 0, tag)
	ps := cmd.ProcessState
	if ps == nil {
		return -1, 0, fmt.Errorf("client %q: %w", c.Command, err)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if ctx.Err() != nil {
			return -1, ws.Signal(), fmt.Errorf("client %q: %w", c.Command, ctx.Err())
		}
		return -1, ws.Signal(), nil
	}
	return ps.ExitCode(), 0, nil
}

// runServed is Target.Run in client mode: one session (see Client) on the image at abs, args
// with {pool} replaced, the client fed stdin. The outcome's standard output is the client's; its
// standard error is the server's, then the client's after a marker line. The run's timeout
// bounds the whole session: a server that never listens, or a session that does not end, is a
// hang.
func (t Target) runServed(ctx context.Context, args []string, stdin []byte, dir string) Outcome {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	o := Outcome{ExitCode: -1, Timeout: timeout}
	if err := ctx.Err(); err != nil {
		o.Err = err
		return o
	}
	port, release, err := FreePort()
	if err != nil {
		o.Err = err
		return o
	}
	defer release()
	args = WithPort(args, port)
	if args, err = Command(args); err != nil {
		o.Err = err
		return o
	}
	start := time.Now()
	subreaper()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	srv := osexec.Command(args[0], args[1:]...)
	srv.Dir = dir
	tag := fmt.Sprintf("%s=%d.%d", runTagVar, os.Getpid(), runSerial.Add(1))
	srv.Env = append(environ(t.Env), tag)
	srvErr := &boundedBuffer{limit: StderrLimit}
	srv.Stdout, srv.Stderr = io.Discard, srvErr
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	srv.WaitDelay = waitDelay
	if err := srv.Start(); err != nil {
		o.Err = fmt.Errorf("%s: %w", args[0], err)
		return o
	}
	pid := srv.Process.Pid
	// Wait for the server's exit without reaping it (its process group ID stays reserved, as
	// in runWatched).
	exited := make(chan struct{})
	go func() {
		for {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	stdout := &boundedBuffer{limit: stdoutLimit}
	cliErr := &boundedBuffer{limit: StderrLimit}
	var cliCode int
	var cliSig syscall.Signal
	var cliRunErr error
	werr := WaitListening(runCtx, port, exited)
	if werr == nil {
		cliCode, cliSig, cliRunErr = t.Client.RunClient(runCtx, port, dir, bytes.NewReader(stdin), stdout, cliErr)
	}
	// Stop the server unless it ended by itself.
	diedAlone := false
	select {
	case <-exited:
		diedAlone = true
	default:
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(ServerGrace):
		case <-ctx.Done():
		}
	}
	killGroup(pid)
	sweepRun(pid, 0, tag)
	_ = srv.Wait()
	o.Duration = time.Since(start)
	o.Stdout, o.Truncated = stdout.buf.Bytes(), stdout.cut
	o.Stderr = srvErr.buf.Bytes()
	if cliErr.buf.Len() > 0 {
		o.Stderr = append(append(o.Stderr, "[scry: the client's standard error]\n"...), cliErr.buf.Bytes()...)
	}
	ws, _ := srv.ProcessState.Sys().(syscall.WaitStatus)
	// A signal scry does not send (it sends SIGTERM, then SIGKILL) killed the server by itself:
	// a crash, however the session looked when the client ended (a client that saw the
	// connection close may end before the server's death can be observed).
	crashed := ws.Signaled() && ws.Signal() != syscall.SIGTERM && ws.Signal() != syscall.SIGKILL
	switch {
	case ctx.Err() != nil:
		o.Err = fmt.Errorf("%s: %w", args[0], ctx.Err())
	case runCtx.Err() != nil:
		o.TimedOut = true
	case crashed:
		o.Signal = ws.Signal()
	case errors.Is(werr, ErrServerExited) || diedAlone:
		// The server's own ending decides: a signal (a crash), or its exit status; one that
		// exited 0 while its client still needed it fails by the client's status.
		if ws.Signaled() {
			o.Signal = ws.Signal()
		} else if ws.ExitStatus() != 0 || werr != nil {
			o.ExitCode = ws.ExitStatus()
			if o.ExitCode == 0 {
				o.ExitCode = 1
				o.Stderr = append(o.Stderr, fmt.Sprintf("[scry: %v %d]\n", ErrServerExited, port)...)
			}
		} else {
			o.ExitCode, o.Signal = cliCode, cliSig
		}
	case werr != nil:
		o.Err = werr
	case cliRunErr != nil:
		o.Err = cliRunErr
	default:
		o.ExitCode, o.Signal = cliCode, cliSig
	}
	return o
}
