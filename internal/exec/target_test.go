package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

// prog is testdata/prog.c, compiled once by TestMain ("" when no C compiler was found);
// scryProg is the same built with `scry cc` ("" when scry is not built), which can be a fork
// server. needProg and needScryProg end a test that needs them when they are missing.
var prog, scryProg string

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeVar); mode != "" {
		os.Exit(testServer(mode, os.Args[1], os.Args[2]))
	}
	dir, err := os.MkdirTemp("", "scry-exec-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if cc, err := osexec.LookPath("cc"); err == nil {
		out := filepath.Join(dir, "prog")
		if b, err := osexec.Command(cc, "-O1", "-o", out, "testdata/prog.c").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "compiling testdata/prog.c: %v\n%s", err, b)
			os.RemoveAll(dir)
			os.Exit(2)
		}
		prog = out
	}
	if scry := filepath.Join(testenv.BuildDir(), "bin", "scry"); fileExists(scry) {
		out := filepath.Join(dir, "prog-scry")
		if b, err := osexec.Command(scry, "cc", "-O1", "-o", out, "testdata/prog.c").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "scry cc testdata/prog.c: %v\n%s", err, b)
			os.RemoveAll(dir)
			os.Exit(2)
		}
		scryProg = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func needProg(t *testing.T) {
	t.Helper()
	if prog == "" {
		testenv.Missing(t, "no C compiler (cc) to build testdata/prog.c")
	}
}

func needScryProg(t *testing.T) {
	t.Helper()
	if scryProg == "" {
		testenv.Missing(t, "%s is not built (run make): no program to serve runs as a fork server", filepath.Join(testenv.BuildDir(), "bin", "scry"))
	}
}

const shortTimeout = 200 * time.Millisecond

// killWait bounds the wait for a killed process to be gone: SIGKILL is delivered
// asynchronously. A failure bound, no assertion about speed.
const killWait = time.Minute

// processGone reports whether pid has exited (gone or a zombie), waiting up to killWait.
func processGone(pid int) bool {
	return testenv.Poll(killWait, func() bool { return testenv.ProcessGone(pid) })
}

// childGone fails the test, killing the process, unless the process whose pid the program wrote
// to dir/child.pid (what: which it is, for the message) has exited.
func childGone(t *testing.T, dir, what string) {
	t.Helper()
	if pid := readPid(t, filepath.Join(dir, "child.pid")); !processGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s (pid %d) survived", what, pid)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the child's pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string // substring; "" for success
		check   func(t *testing.T, tg Target)
	}{
		{name: "empty", args: nil, wantErr: "no target command"},
		{name: "no placeholder", args: []string{"sh", "pool.img"}, wantErr: "no argument contains {pool}"},
		{name: "missing program", args: []string{"./no-such-program-here", "{pool}"}, wantErr: "no-such-program-here"},
		{name: "missing in PATH", args: []string{"no-such-program-in-path", "{pool}"}, wantErr: "no-such-program-in-path"},
		{
			name: "path lookup", args: []string{"sh", "-c", "true", "{pool}"},
			check: func(t *testing.T, tg Target) {
				if !filepath.IsAbs(tg.Args[0]) {
					t.Errorf("program %q is not absolute", tg.Args[0])
				}
				if tg.Timeout != DefaultTimeout || tg.OutputFilter != nil {
					t.Errorf("timeout %v filter %v, want the defaults", tg.Timeout, tg.OutputFilter)
				}
			},
		},
		{
			name: "relative program", args: []string{"./testdata/prog.c", "--pool={pool}"},
			check: func(t *testing.T, tg Target) {
				wd, _ := os.Getwd()
				if want := filepath.Join(wd, "testdata/prog.c"); tg.Args[0] != want {
					t.Errorf("program %q, want %q", tg.Args[0], want)
				}
				if tg.Args[1] != "--pool={pool}" {
					t.Errorf("argument changed: %q", tg.Args[1])
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := ParseTarget(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tg)
		})
	}
}

func TestRun(t *testing.T) {
	needProg(t)
	t.Setenv("SCRY_TRACE", "/should/not/be/used")
	t.Setenv("SCRY_PM_GLOBS", "/should/not/be/used")
	tests := []struct {
		name   string
		args   []string // after the program
		env    []string
		stdin  string
		check  func(t *testing.T, o Outcome, dir, pool string)
		failed bool
		desc   string // Describe(); {timeout} stands for the run's timeout
		// hangUntil, for a run that hangs: the run is repeated with the timeout doubled, from
		// shortTimeout, until this file exists in its directory after it.
		hangUntil string
	}{
		{
			name: "echo", args: []string{"echo", "{pool}"}, stdin: "insert 1 2\nget 1\n",
			desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				if !bytes.HasSuffix(o.Stdout, []byte("op: insert 1 2\nop: get 1\n")) {
					t.Errorf("stdout %q", o.Stdout)
				}
				if b, _ := os.ReadFile(pool); string(b) != "insert 1 2\nget 1\n" {
					t.Errorf("pool holds %q", b)
				}
			},
		},
		{
			name: "exit status", args: []string{"exit", "{pool}", "2"}, failed: true, desc: "exited with status 2",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				if o.ExitCode != 2 || string(o.Stderr) != "bye\n" {
					t.Errorf("exit %d stderr %q", o.ExitCode, o.Stderr)
				}
			},
		},
		{
			name: "signal", args: []string{"signal", "{pool}", "11"}, failed: true,
			desc: "killed by signal 11 (segmentation fault)",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				if o.Signal != syscall.SIGSEGV || o.ExitCode != -1 || o.TimedOut {
					t.Errorf("signal %v exit %d timed out %v", o.Signal, o.ExitCode, o.TimedOut)
				}
			},
		},
		{
			name: "placeholder inside arguments", args: []string{"pwd", "--pool={pool}:{pool}"},
			desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				want := fmt.Sprintf("pool: --pool=%s:%s\n", pool, pool)
				if !bytes.HasPrefix(o.Stdout, []byte(want)) {
					t.Errorf("stdout %q, want it to start with %q", o.Stdout, want)
				}
			},
		},
		{
			name: "working directory", args: []string{"pwd", "{pool}"}, desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				lines := strings.Split(strings.TrimSpace(string(o.Stdout)), "\n")
				if got := lines[len(lines)-1]; got != dir {
					t.Errorf("working directory %q, want %q", got, dir)
				}
			},
		},
		{
			name: "environment", args: []string{"env", "{pool}", "PMEM_IS_PMEM_FORCE", "SCRY_TRACE", "SCRY_NO_LOADS", "SCRY_PM_GLOBS", "FOO"},
			env: []string{"FOO=bar", "SCRY_TRACE=/not/this/either"}, desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				want := "PMEM_IS_PMEM_FORCE=1\nSCRY_TRACE=/dev/null\nSCRY_NO_LOADS=1\nSCRY_PM_GLOBS unset\nFOO=bar\n"
				if !bytes.HasSuffix(o.Stdout, []byte(want)) {
					t.Errorf("stdout %q, want it to end with %q", o.Stdout, want)
				}
			},
		},
		{
			// Run with timeouts from shortTimeout up, doubled until the child has started
			// (hangUntil): the child's pid file then exists.
			name: "hang kills the group", args: []string{"hang", "{pool}", "child.pid"}, failed: true,
			desc: "hung: killed after {timeout}", hangUntil: "child.pid",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				if !o.TimedOut || o.Signal != 0 || o.Err != nil {
					t.Errorf("timed out %v signal %v err %v", o.TimedOut, o.Signal, o.Err)
				}
				childGone(t, dir, "the hung program's child")
			},
		},
		{
			name: "background child killed at exit", args: []string{"bgchild", "{pool}", "child.pid"},
			desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				childGone(t, dir, "the program's background child")
			},
		},
		{
			name: "setsid child killed at exit", args: []string{"setsid", "{pool}", "child.pid"},
			desc: "exited with status 0",
			check: func(t *testing.T, o Outcome, dir, pool string) {
				// Had the run waited for the escaped child, which holds its output open and
				// pauses forever, it would have returned only after waitDelay, leaving it alive.
				childGone(t, dir, "the program's child in a session of its own")
			},
		},
	}
	// Each case by exec, and through a fork server (the same program built with scry cc): the
	// outcomes must not tell them apart.
	for _, tc := range tests {
		for _, mode := range []string{"exec", "fork server"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				if mode == "fork server" {
					needScryProg(t)
				}
				t.Parallel()
				dir := t.TempDir()
				pool := filepath.Join(dir, "pool.img")
				tg := Target{Args: append([]string{prog}, tc.args...), Env: tc.env, Timeout: 10 * time.Second} // generous: these runs must not time out
				if tc.hangUntil != "" {
					tg.Timeout = shortTimeout
				}
				// The fork servers' own bound is ten minutes: a run through them is bounded by
				// the timeout RunWithin is given (tg.Timeout), as the explorer bounds runs on
				// crash images.
				var fs *ForkServers
				servers := func() *ForkServers {
					st := tg
					st.Timeout = 10 * time.Minute
					return NewForkServers(st, t.TempDir())
				}
				if mode == "fork server" {
					tg.Args[0] = scryProg
					fs = servers()
					defer fs.Close()
				}
				runs := func() Outcome {
					if fs == nil {
						return tg.Run(context.Background(), pool, []byte(tc.stdin), dir)
					}
					// Twice: the second run is served by the server the first started.
					var o Outcome
					for i := 0; i < 2; i++ {
						os.Remove(pool)
						os.Remove(filepath.Join(dir, "child.pid"))
						o = fs.RunWithin(context.Background(), pool, []byte(tc.stdin), dir, tg.Timeout)
					}
					return o
				}
				o := runs()
				for tc.hangUntil != "" && !fileExists(filepath.Join(dir, tc.hangUntil)) {
					if tg.Timeout >= time.Minute {
						t.Fatalf("%s does not exist after a run of %v", tc.hangUntil, tg.Timeout)
					}
					tg.Timeout *= 2
					if fs != nil {
						fs.Close()
						fs = servers()
						defer fs.Close()
					}
					o = runs()
				}
				if fs != nil {
					if m := fs.Mode(); m != "runs through fork servers" {
						t.Errorf("mode %q", m)
					}
				}
				if o.Err != nil {
					t.Fatalf("run: %v", o.Err)
				}
				if o.Failed() != tc.failed {
					t.Errorf("Failed() = %v, want %v (%s)", o.Failed(), tc.failed, o.Describe())
				}
				if want := strings.ReplaceAll(tc.desc, "{timeout}", tg.Timeout.String()); o.Describe() != want {
					t.Errorf("Describe() = %q, want %q", o.Describe(), want)
				}
				if tc.check != nil {
					tc.check(t, o, dir, pool)
				}
			})
		}
	}
}

func TestRunTruncatesOutput(t *testing.T) {
	needProg(t)
	old := stdoutLimit
	stdoutLimit = 1 << 16
	defer func() { stdoutLimit = old }()
	dir := t.TempDir()
	tg := Target{Args: []string{prog, "flood", "{pool}", "10000"}}
	o := tg.Run(context.Background(), "p", nil, dir)
	if o.Failed() || !o.Truncated || len(o.Stdout) != 1<<16 {
		t.Errorf("%s, truncated %v, %d bytes kept", o.Describe(), o.Truncated, len(o.Stdout))
	}
}

func TestOutputFilter(t *testing.T) {
	needProg(t)
	dir := t.TempDir()
	tg := Target{Args: []string{prog, "echo", "{pool}"}, OutputFilter: regexp.MustCompile(`^seed: `)}
	a := tg.Run(context.Background(), filepath.Join(dir, "a"), []byte("x\n"), dir)
	b := tg.Run(context.Background(), filepath.Join(dir, "a"), []byte("x\n"), dir)
	if bytes.Equal(a.Stdout, b.Stdout) {
		t.Fatalf("the two runs printed the same seed; the test needs varying output:\n%s", a.Stdout)
	}
	if !bytes.Equal(a.Normalized(), b.Normalized()) {
		t.Errorf("normalized outputs differ:\n%s", Diff(b.Normalized(), a.Normalized()))
	}
	// The image's path is written as {pool}: runs on different images print the same.
	if want := "pool: {pool}\nop: x\n"; string(a.Normalized()) != want {
		t.Errorf("normalized %q, want %q", a.Normalized(), want)
	}
	if !Equivalent(a, b) {
		t.Error("runs differing only in filtered lines are not equivalent")
	}
	c := tg.Run(context.Background(), filepath.Join(dir, "other-image"), []byte("x\n"), dir)
	if !Equivalent(a, c) {
		t.Errorf("runs differing only in the pool path they print are not equivalent:\n%s", Diff(a.Normalized(), c.Normalized()))
	}
}

func TestFilterLines(t *testing.T) {
	re := regexp.MustCompile(`^seed`)
	tests := []struct{ in, want string }{
		{"", ""},
		{"seed: 1\n", ""},
		{"a\nseed: 1\nb\n", "a\nb\n"},
		{"a\nseed", "a\n"},
		{"a\nb", "a\nb"},
		{"xseed\n", "xseed\n"},
	}
	for _, tc := range tests {
		if got := string(filterLines([]byte(tc.in), re)); got != tc.want {
			t.Errorf("filterLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRunCancel(t *testing.T) {
	needProg(t)
	dir := t.TempDir()
	ctx := cancelOnFile(t, filepath.Join(dir, "child.pid"))
	tg := Target{Args: []string{prog, "hang", "{pool}", "child.pid"}, Timeout: 10 * time.Minute}
	o := tg.Run(ctx, "p", nil, dir)
	if !errors.Is(o.Err, context.Canceled) || o.TimedOut || !o.Failed() {
		t.Fatalf("err %v timed out %v", o.Err, o.TimedOut)
	}
	if !strings.HasPrefix(o.Describe(), "interrupted: ") {
		t.Errorf("Describe() = %q", o.Describe())
	}
	childGone(t, dir, "the cancelled run's child")
	// An already cancelled context starts nothing.
	if o := tg.Run(ctx, "p", nil, dir); !errors.Is(o.Err, context.Canceled) {
		t.Errorf("run with a cancelled context: %v", o.Err)
	}
}

// cancelOnFile returns a context cancelled once path exists (a hung program's child has
// started), or once killWait has passed without it (the run then fails on the missing file).
func cancelOnFile(t *testing.T, path string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		testenv.Poll(killWait, func() bool { return fileExists(path) })
		cancel()
	}()
	return ctx
}

func TestRunCannotStart(t *testing.T) {
	tg := Target{Args: []string{"/no/such/program", "{pool}"}}
	o := tg.Run(context.Background(), "p", nil, t.TempDir())
	if o.Err == nil || !o.Failed() || !strings.HasPrefix(o.Describe(), "could not start: ") {
		t.Errorf("err %v, Describe() %q", o.Err, o.Describe())
	}
}

func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string // "" no error, else a part of it
	}{
		{nil, ""},
		{[]string{"A=1", "LD_LIBRARY_PATH=/opt/lib", "EMPTY=", "X_2=a=b"}, ""},
		{[]string{"A"}, "not NAME=VALUE"},
		{[]string{"=v"}, "is not a variable name"},
		{[]string{"2A=v"}, "is not a variable name"},
		{[]string{"A-B=v"}, "is not a variable name"},
		{[]string{"SCRY_TRACE=/tmp/x"}, "scry sets"},
	} {
		err := CheckEnv(tc.env)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckEnv(%q) = %v, want %q", tc.env, err, tc.want)
		}
	}
}

// TestReproduceEnv: the reproduce command carries the loader's and PMDK's inherited variables,
// the forced PMEM mode, the target's own variables and the SCRY_ ones, and nothing else.
func TestReproduceEnv(t *testing.T) {
	t.Setenv("LD_LIBRARY_PATH", "/opt/pmdk/lib")
	t.Setenv("PMEMOBJ_LOG_LEVEL", "1")
	t.Setenv("PMEM_IS_PMEM_FORCE", "0") // the runs override it
	t.Setenv("SOME_OTHER", "x")
	got := Target{Env: []string{"MY_CONF=/etc/x"}}.ReproduceEnv()
	for _, want := range []string{"LD_LIBRARY_PATH=/opt/pmdk/lib", "PMEMOBJ_LOG_LEVEL=1", "PMEM_IS_PMEM_FORCE=1", "MY_CONF=/etc/x", "SCRY_TRACE=" + os.DevNull, "SCRY_NO_LOADS=1"} {
		if !slices.Contains(got, want) {
			t.Errorf("ReproduceEnv() = %q, lacks %q", got, want)
		}
	}
	for _, bad := range []string{"SOME_OTHER=x", "PMEM_IS_PMEM_FORCE=0"} {
		if slices.Contains(got, bad) {
			t.Errorf("ReproduceEnv() = %q, has %q", got, bad)
		}
	}
	// --env giving a variable scry sets too: once, with the user's value.
	got = Target{Env: []string{"PMEM_IS_PMEM_FORCE=1", "PMEMOBJ_LOG_LEVEL=3"}}.ReproduceEnv()
	for _, name := range []string{"PMEM_IS_PMEM_FORCE=", "PMEMOBJ_LOG_LEVEL="} {
		if n := len(slices.DeleteFunc(slices.Clone(got), func(kv string) bool { return !strings.HasPrefix(kv, name) })); n != 1 {
			t.Errorf("ReproduceEnv() = %q: %s %d times, want once", got, name, n)
		}
	}
	if !slices.Contains(got, "PMEMOBJ_LOG_LEVEL=3") {
		t.Errorf("ReproduceEnv() = %q, lacks the --env value PMEMOBJ_LOG_LEVEL=3", got)
	}
}

// FuzzCheckEnv: any list of assignments is accepted or rejected with an error naming it, never a
// panic; an accepted one has a valid name that scry does not set.
func FuzzCheckEnv(f *testing.F) {
	for _, s := range []string{"A=1", "LD_LIBRARY_PATH=/x", "=v", "2A=v", "SCRY_TRACE=x", "A", "é=1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		err := CheckEnv([]string{kv})
		name, _, ok := strings.Cut(kv, "=")
		if err == nil && (!ok || name == "" || strings.HasPrefix(name, "SCRY_") || name[0] >= '0' && name[0] <= '9') {
			t.Errorf("CheckEnv accepted %q", kv)
		}
		if err != nil && !strings.Contains(err.Error(), "--env") {
			t.Errorf("error %q does not name the flag", err)
		}
	})
}

// TestEscapedKilledWithoutScan: a child the program started in a session of its own (setsid),
// which outlives the program, is killed when the run ends, by exec and through a fork server,
// without a scan of /proc (scry is a child subreaper: reap.go).
func TestEscapedKilledWithoutScan(t *testing.T) {
	needProg(t)
	if !subreaper() {
		testenv.Missing(t, "scry cannot be a child subreaper here (prctl or /proc/self/task/TID/children missing)")
	}
	for _, mode := range []string{"exec", "fork server"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			pool := filepath.Join(dir, "pool.img")
			tg := Target{Args: []string{prog, "setsid", "{pool}", "child.pid"}, Timeout: 10 * time.Minute}
			run := func() Outcome { return tg.Run(context.Background(), pool, nil, dir) }
			if mode == "fork server" {
				needScryProg(t)
				tg.Args[0] = scryProg
				fs := NewForkServers(tg, t.TempDir())
				defer fs.Close()
				fs.Run(context.Background(), pool, nil, dir) // starts the server
				os.Remove(filepath.Join(dir, "child.pid"))
				run = func() Outcome { return fs.Run(context.Background(), pool, nil, dir) }
			}
			before := procScans.Load()
			o := run()
			if o.Failed() {
				t.Fatalf("run %s", o.Describe())
			}
			childGone(t, dir, "the program's child in a session of its own")
			if n := procScans.Load() - before; n != 0 {
				t.Errorf("%d scans of /proc during the run, want none", n)
			}
		})
	}
}

// TestSweepDyingLeader: the run's leader may not have exited yet when the run is swept (it is
// still dying from the group's SIGKILL), so its children are not scry's yet; its child in the
// group and the grandchild that child started in a session of its own must not outlive the
// sweep.
func TestSweepDyingLeader(t *testing.T) {
	if !subreaper() {
		testenv.Missing(t, "scry cannot be a child subreaper here (prctl or /proc/self/task/TID/children missing)")
	}
	dir := t.TempDir()
	tag := "SCRY_RUN_ID=sweep-test." + filepath.Base(dir)
	script := `sh -c 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > r.pid; exec sleep 1000' &
echo $! > q.pid
exec sleep 1000`
	cmd := osexec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	alive := func(pid int) bool {
		st, _, ok := procStat(pid)
		return ok && st != 'Z' && st != 'X'
	}
	pidOf := func(name string) int {
		var pid int
		testenv.WaitFor(t, func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			return pid != 0 && alive(pid)
		}, 10*time.Second, name)
		return pid
	}
	q, r := pidOf("q.pid"), pidOf("r.pid")
	// As the callers do: the group killed, then swept at once, its leader still dying.
	killGroup(cmd.Process.Pid)
	sweepRun(cmd.Process.Pid, 0, tag)
	for name, pid := range map[string]int{"the leader's child": q, "its child in a session of its own": r} {
		// Killed by the sweep, it may take a moment to die.
		if !testenv.Poll(5*time.Second, func() bool { return !alive(pid) }) {
			st, _, _ := procStat(pid)
			t.Errorf("%s (%d) outlived the sweep (state %c)", name, pid, st)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
