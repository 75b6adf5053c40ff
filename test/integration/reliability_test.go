package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

// relSrc is one small PM program with modes, for the reliability tests (docs/reliability.md).
// rel POOL MODE maps a 4 KiB pool file (MAP_SHARED; clwb and sfence) and then, by MODE:
//
//	wait      stores and persists a value, prints "ready PID" (its process id), waits for signals
//	stubborn  as wait, but ignores SIGINT, printing "ignored SIGINT" each time
//	ops       reads its workload: "set V" appends V (data, clwb, sfence, then its valid flag,
//	          clwb, sfence: correct), "get" prints the values
//	slow      as ops, but a run on an existing pool (a re-execution) first appends a line to
//	          the file $REL_RUNS names, if set, and sleeps 200 ms
//	path      prints the pool's path, then as ops
//	excl      creates the pool with O_EXCL, so it cannot reopen an existing one; then as ops
//	fail      as ops, then stores a value it never flushes and exits with status 3
//	noread    stores and persists a value and exits without reading its workload
const relSrc = `#include <fcntl.h>
#include <immintrin.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct slot { uint64_t data; char pad1[56]; uint64_t valid; char pad2[56]; };
enum { NSLOTS = 4096 / sizeof(struct slot) - 1 };

static void persist(void *p) { _mm_clwb(p); _mm_sfence(); }
static void on_int(int sig) { (void)sig; write(1, "ignored SIGINT\n", 15); }

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *mode = argv[2];
	struct stat st;
	int existed = stat(argv[1], &st) == 0 && st.st_size > 0;
	int flags = O_RDWR | O_CREAT | (strcmp(mode, "excl") == 0 ? O_EXCL : 0);
	int fd = open(argv[1], flags, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	struct slot *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (strcmp(mode, "wait") == 0 || strcmp(mode, "stubborn") == 0 || strcmp(mode, "noread") == 0) {
		s[NSLOTS].data = 42;
		persist(&s[NSLOTS].data);
		if (strcmp(mode, "noread") == 0)
			return 0;
		if (strcmp(mode, "stubborn") == 0)
			signal(SIGINT, on_int);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	if (strcmp(mode, "path") == 0)
		printf("pool: %s\n", argv[1]);
	if (strcmp(mode, "slow") == 0 && existed) {
		const char *runs = getenv("REL_RUNS");
		FILE *f = runs ? fopen(runs, "a") : NULL;
		if (f) {
			fputs("run\n", f);
			fclose(f);
		}
		usleep(200000);
	}
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		unsigned long v;
		if (sscanf(line, "set %lu", &v) == 1) {
			int i = 0;
			while (i < NSLOTS && s[i].valid)
				i++;
			if (i == NSLOTS)
				return 4;
			s[i].data = v;
			persist(&s[i].data);
			s[i].valid = 1;
			persist(&s[i].valid);
		} else if (strncmp(line, "get", 3) == 0) {
			for (int i = 0; i < NSLOTS && s[i].valid; i++)
				printf("%lu ", (unsigned long)s[i].data);
			printf("\n");
		}
	}
	fflush(stdout);
	if (strcmp(mode, "fail") == 0) {
		s[NSLOTS].valid = 7; /* never flushed */
		return 3;
	}
	return 0;
}
`

// relProgram compiles relSrc with scry cc once per test into dir.
func relProgram(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "rel.c")
	if err := os.WriteFile(src, []byte(relSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	return compile(t, dir, src)
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// relReport is the part of a JSON report the reliability tests read.
type relReport struct {
	Findings []struct {
		Kind  string `json:"kind"`
		Class string `json:"class"`
		Crash *struct {
			ID string `json:"id"`
		} `json:"crash"`
	} `json:"findings"`
	Warnings []string `json:"warnings"`
	Stats    *struct {
		CrashPoints  int `json:"crash_points"`
		StatesTested int `json:"states_tested"`
		OracleRuns   int `json:"oracle_runs"`
	} `json:"stats"`
}

func readRelReport(t *testing.T, path string) relReport { return readJSON[relReport](t, path) }

func (r relReport) warns(sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes to it; written receives a
// value (without blocking: one pending is enough) after each write, for waitFor.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{}
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{written: make(chan struct{}, 1)} }

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	select {
	case l.written <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// background is scry started in a session of its own (no controlling terminal, as in CI), so
// that signals reach it alone, as a CI runner's or kill(1)'s do.
type background struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan struct{}
	code   int
}

func startScry(t *testing.T, dir string, env []string, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(testenv.Scry(t), args...), stdout: newLockedBuffer(), stderr: newLockedBuffer(), done: make(chan struct{})}
	b.cmd.Dir = dir
	b.cmd.Env = append(os.Environ(), env...)
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	b.cmd.WaitDelay = 5 * time.Second // a program left behind must not block the test
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = b.cmd.Wait()
		b.code = b.cmd.ProcessState.ExitCode()
		close(b.done)
	}()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
		}
	})
	return b
}

// exitTimeout bounds the waits for scry's output and exit: a failure bound (scry hangs), no
// assertion about speed.
const exitTimeout = 2 * time.Minute

// waitFor waits until scry's standard output or error contains s, woken by each write.
func (b *background) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(exitTimeout)
	for !strings.Contains(b.stderr.String(), s) && !strings.Contains(b.stdout.String(), s) {
		select {
		case <-b.stdout.written:
		case <-b.stderr.written:
		case <-b.done:
			if !strings.Contains(b.stderr.String(), s) && !strings.Contains(b.stdout.String(), s) {
				t.Fatalf("scry exited (%d) before printing %q:\n%s", b.code, s, b.stderr.String())
			}
		case <-timeout:
			t.Fatalf("scry did not print %q within %v:\n%s", s, exitTimeout, b.stderr.String())
		}
	}
}

// programPid returns the process id the rel program printed on its "ready PID" line (which
// `scry check` passes on to its standard error, `scry record` to its standard output).
func (b *background) programPid(t *testing.T) int {
	t.Helper()
	out := b.stdout.String() + b.stderr.String()
	m := regexp.MustCompile(`ready (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"ready PID\" line:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// programGone fails the test unless process pid (the recorded program) is gone, waiting for it
// (SIGKILL is delivered asynchronously).
func programGone(t *testing.T, pid int) {
	t.Helper()
	if !testenv.Poll(exitTimeout, func() bool { return testenv.ProcessGone(pid) }) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the recorded program (pid %d) outlived scry", pid)
	}
}

// signal sends sig to scry (not to its group).
func (b *background) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := b.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait waits for scry to exit and returns its status.
func (b *background) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(exitTimeout):
		t.Fatalf("scry did not exit within %v:\n%s", exitTimeout, b.stderr.String())
	}
	return -1
}

// TestInterruptRecording (reliability items 1, 2 and 9): SIGINT or SIGTERM to scry while it
// records reaches the program, whose runtime writes its trace with an END record naming the
// signal; scry analyses that trace, writes the report with a warning that the run was
// interrupted, and exits with 128 + the signal. A second SIGINT stops scry at once.
func TestInterruptRecording(t *testing.T) {
	dir := t.TempDir()
	rel := relProgram(t, dir)
	// Should a test fail, no waiting program outlives it.
	t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", rel).Run() })
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
		cmd  string // check or record
	}{
		{"check SIGINT", syscall.SIGINT, 130, "check"},
		{"check SIGTERM", syscall.SIGTERM, 143, "check"},
		{"record SIGINT", syscall.SIGINT, 130, "record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			tr := filepath.Join(d, "run.trace")
			args := []string{tc.cmd, "--trace", tr, "--pm", filepath.Join(d, "*.pool")}
			if tc.cmd == "check" {
				// The report on standard output: the program's "ready" is then on standard error
				// (with -o it would not be shown).
				args = append(args, "--format", "json")
			}
			b := startScry(t, d, nil, append(args, "--", rel, filepath.Join(d, "p.pool"), "wait")...)
			b.waitFor(t, "ready")
			pid := b.programPid(t)
			b.signal(t, tc.sig)
			if code := b.wait(t); code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, b.stderr.String())
			}
			programGone(t, pid)
			// The trace is complete: END with the signal (not truncated).
			d2 := run(t, d, "", testenv.Scry(t), "trace", "dump", tr)
			if d2.code != 0 || !strings.Contains(d2.stdout, "END") || !strings.Contains(d2.stdout, "signal") {
				t.Errorf("trace dump: exit %d, no END naming the signal:\n%s%s", d2.code, tail(d2.stdout), d2.stderr)
			}
			if tc.cmd == "check" {
				r := parseRel(t, b.stdout.String())
				if want := fmt.Sprintf("interrupted by %s", map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[tc.sig]); !r.warns(want) {
					t.Errorf("report warnings %q do not say %q", r.Warnings, want)
				}
			}
		})
	}

	t.Run("second SIGINT", func(t *testing.T) {
		d := t.TempDir()
		b := startScry(t, d, nil, "check", "--pm", filepath.Join(d, "*.pool"), "--", rel, filepath.Join(d, "p.pool"), "stubborn")
		b.waitFor(t, "ready")
		pid := b.programPid(t)
		b.signal(t, syscall.SIGINT)
		b.waitFor(t, "ignored SIGINT")
		// The program ignores SIGINT and would wait forever: scry exits only if the second
		// SIGINT stops it, killing the program.
		b.signal(t, syscall.SIGINT)
		if code := b.wait(t); code != 130 {
			t.Errorf("exit %d, want 130\n%s", code, b.stderr.String())
		}
		if !strings.Contains(b.stderr.String(), "stopped by a second") {
			t.Errorf("stderr does not say the program was stopped:\n%s", b.stderr.String())
		}
		programGone(t, pid)
	})
}

// tail returns the last lines of s.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}

// TestInterruptExploration (items 2 and 9): SIGTERM during crash exploration kills the runs,
// removes scry's temporary files, and writes a report whose statistics count the runs that were
// done and whose warnings say the exploration was interrupted; the status is 143.
func TestInterruptExploration(t *testing.T) {
	dir := t.TempDir()
	rel := relProgram(t, dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	var ops strings.Builder
	for i := 1; i <= 25; i++ { // the pool holds 31 slots
		fmt.Fprintf(&ops, "set %d\n", i)
	}
	wl := writeFile(t, dir, "ops.txt", ops.String(), 0o644)
	rep := filepath.Join(dir, "rep.json")
	runs := filepath.Join(dir, "runs")
	b := startScry(t, dir, []string{"TMPDIR=" + tmp}, "check", "--format", "json", "-o", rep, "--workload", wl, "-j", "2",
		"--env", "REL_RUNS="+runs, "--", rel, "{pool}", "slow")
	// Every re-execution appends a line to runs as it starts. Ten started on two workers: each
	// worker has finished runs before its last, so crash images have been run and judged.
	testenv.WaitFor(t, func() bool {
		b, _ := os.ReadFile(runs)
		return bytes.Count(b, []byte("\n")) >= 10
	}, exitTimeout, "ten re-executions to start")
	b.signal(t, syscall.SIGTERM)
	if code := b.wait(t); code != 143 {
		t.Fatalf("exit %d, want 143\n%s", code, b.stderr.String())
	}
	r := readRelReport(t, rep)
	if !r.warns("interrupted by SIGTERM during crash exploration") {
		t.Errorf("warnings %q do not say the exploration was interrupted", r.Warnings)
	}
	if r.Stats == nil || r.Stats.StatesTested == 0 || r.Stats.CrashPoints == 0 {
		t.Errorf("stats %+v: the runs done before SIGTERM are not counted", r.Stats)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

// sum is the SHA-256 of a file's contents.
func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestUserFiles (item 3): scry never replaces, deletes or writes through a file it did not
// write: a trace path that is the user's file, a directory, a link or the program's own pool;
// a report path that is not a report; a crash image path that exists (without --force), or is
// a link (even with --force). The files' checksums are unchanged.
func TestUserFiles(t *testing.T) {
	dir := t.TempDir()
	rel := relProgram(t, dir)
	data := writeFile(t, dir, "data.bin", strings.Repeat("precious user data\n", 5000), 0o644)
	orig := sum(t, data)
	link := filepath.Join(dir, "link.trace")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, sub, "keep.txt", "keep\n", 0o644)
	pool := filepath.Join(dir, "same.pool")
	pm := filepath.Join(dir, "*.pool")
	scry := testenv.Scry(t)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"trace is a user file", []string{"check", "--trace", data, "--pm", pm, "--", rel, filepath.Join(dir, "a.pool"), "ops"}, "scry did not write it"},
		{"trace is a link", []string{"check", "--trace", link, "--pm", pm, "--", rel, filepath.Join(dir, "b.pool"), "ops"}, "symbolic link"},
		{"trace is a directory", []string{"record", "--trace", sub, "--pm", pm, "--", rel, filepath.Join(dir, "c.pool"), "ops"}, "is a directory"},
		{"trace is the pool", []string{"check", "--trace", pool, "--pm", pm, "--", rel, pool, "ops"}, "also an argument of the program"},
		{"report is a user file", []string{"check", "-o", data, "--pm", pm, "--", rel, filepath.Join(dir, "d.pool"), "ops"}, "scry did not write it"},
		{"report through a link", []string{"check", "-o", link, "--pm", pm, "--", rel, filepath.Join(dir, "e.pool"), "ops"}, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, dir, "set 1\n", scry, tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("exit %d, want 2 saying %q\n%s", r.code, tt.msg, r.stderr)
			}
			if sum(t, data) != orig {
				t.Fatal("the user's file changed")
			}
			if _, err := os.Stat(filepath.Join(sub, "keep.txt")); err != nil {
				t.Fatalf("the user's directory lost a file: %v", err)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the user's link is gone: %v", err)
			}
		})
	}
	if _, err := os.Stat(pool); err == nil {
		t.Errorf("scry created %s although it refused to run", pool)
	}

	// A report scry wrote, and a trace scry wrote, are replaced on the next run.
	rep := filepath.Join(dir, "rep.txt")
	tr := filepath.Join(dir, "again.trace")
	for i := range 2 {
		if r := run(t, dir, "set 1\n", scry, "check", "-o", rep, "--trace", tr, "--pm", pm, "--", rel, filepath.Join(dir, fmt.Sprintf("f%d.pool", i)), "ops"); r.code != 0 {
			t.Fatalf("run %d writing a report over scry's own: exit %d\n%s", i, r.code, r.stderr)
		}
	}

	// scry replay --out: refuse an existing file unless --force, never a link.
	ordering := filepath.Join(dir, "ordering")
	if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-o", ordering, filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.c")); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	crep := filepath.Join(dir, "crash.json")
	if r := run(t, dir, "", scry, "check", "--format", "json", "-o", crep, "--workload", filepath.Join(testenv.Root(), "pm", "explore", "testdata", "ordering.ops"), "--", ordering, "{pool}"); r.code != 1 {
		t.Fatalf("scry check ordering: exit %d\n%s", r.code, r.stderr)
	}
	// The crash finding's number, as the text report numbers it.
	nth := ""
	for i, f := range readCrashReport(t, crep).Findings {
		if f.Crash != nil {
			nth = strconv.Itoa(i + 1)
			break
		}
	}
	if nth == "" {
		t.Fatalf("%s has no crash finding", crep)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"existing file", []string{"--out", data}, 2, "pass --force"},
		{"link with --force", []string{"--out", link, "--force"}, 2, "symbolic link"},
		{"directory with --force", []string{"--out", sub, "--force"}, 2, "is a directory"},
	} {
		r := run(t, dir, "", scry, append([]string{"replay", crep, nth}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("replay %s: exit %d, want %d saying %q\n%s", tc.name, r.code, tc.code, tc.msg, r.stderr)
		}
		if sum(t, data) != orig {
			t.Fatalf("replay %s changed the user's file", tc.name)
		}
	}
	img := writeFile(t, dir, "old.img", "old image\n", 0o644)
	if r := run(t, dir, "", scry, "replay", crep, nth, "--out", img, "--force"); r.code != 0 {
		t.Errorf("replay --force over a regular file: exit %d\n%s", r.code, r.stderr)
	}
}

// TestNothingTested (items 4, 5 and 11): a crash exploration whose program cannot run on the
// consistent images is an error quoting the program, not a clean result; a target named
// relative to the current directory runs there; a program that maps no PM, or reads no
// workload, gets a warning, and --strict makes those exit 2.
func TestNothingTested(t *testing.T) {
	dir := t.TempDir()
	rel := relProgram(t, dir)
	scry := testenv.Scry(t)
	wl := writeFile(t, dir, "ops.txt", "set 5\nget\nset 7\nget\n", 0o644)
	// A wrapper run as ./wrap.sh that runs ./rel: both relative to the current directory.
	writeFile(t, dir, "wrap.sh", "#!/bin/sh\nexec ./rel \"$1\" ops\n", 0o755)

	rep := filepath.Join(dir, "wrap.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", wl, "--", "./wrap.sh", "{pool}")
	if r.code != 0 {
		t.Fatalf("relative wrapper: exit %d, want 0\n%s", r.code, r.stderr)
	}
	if rr := readRelReport(t, rep); rr.Stats == nil || rr.Stats.StatesTested == 0 || len(rr.Findings) != 0 {
		t.Errorf("relative wrapper: stats %+v, findings %+v: want states tested and no finding", rr.Stats, rr.Findings)
	}

	r = run(t, dir, "", scry, "check", "--workload", wl, "--", rel, "{pool}", "excl")
	if r.code != 2 || !strings.Contains(r.stderr, "the program fails on a consistent image") || !strings.Contains(r.stderr, "File exists") {
		t.Errorf("a program that cannot reopen its pool: exit %d, want 2 quoting its error\n%s", r.code, r.stderr)
	}

	r = run(t, dir, "", scry, "check", "--workload", wl, "--checker", "no-such-checker {image}", "--", rel, "{pool}", "ops")
	if r.code != 2 || !strings.Contains(r.stderr, "the checker fails on a consistent image") || !strings.Contains(r.stderr, "no-such-checker") {
		t.Errorf("a broken checker: exit %d, want 2 quoting it\n%s", r.code, r.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		warn string
	}{
		{"no PM", []string{"check", "--format", "json", "--", rel, filepath.Join(dir, "nopm.pool"), "ops"}, "no persistent memory was mapped"},
		{"no workload read", []string{"check", "--format", "json", "--workload", wl, "--", rel, "{pool}", "noread"}, "no crash point inside an operation"},
	} {
		for _, strict := range []bool{false, true} {
			args := tc.args
			want := 0
			if strict {
				args, want = append([]string{args[0], "--strict"}, args[1:]...), 2
			}
			r := run(t, dir, "set 1\n", scry, args...)
			if r.code != want {
				t.Errorf("%s (strict %v): exit %d, want %d\n%s", tc.name, strict, r.code, want, r.stderr)
			}
			var rr relReport
			if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil {
				t.Fatalf("%s: report: %v\n%s", tc.name, err, r.stdout)
			}
			if !rr.warns(tc.warn) {
				t.Errorf("%s: warnings %q do not say %q", tc.name, rr.Warnings, tc.warn)
			}
		}
	}
}

// TestOutputAndStatus (items 6, 7 and 10): a correct program that prints its pool's path has no
// crash finding; with --format json the report on standard output parses although the program
// prints to its standard output; a program that exits 3 with a correctness finding gives 1 in
// both modes, with a warning saying how it ended.
func TestOutputAndStatus(t *testing.T) {
	dir := t.TempDir()
	rel := relProgram(t, dir)
	scry := testenv.Scry(t)
	wl := writeFile(t, dir, "ops.txt", "set 5\nget\nset 7\nget\n", 0o644)
	pm := filepath.Join(dir, "*.pool")

	r := run(t, dir, "", scry, "check", "--format", "json", "--workload", wl, "--", rel, "{pool}", "path")
	if r.code != 0 {
		t.Errorf("a program printing its pool path: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rr := parseRel(t, r.stdout); len(rr.Findings) != 0 || rr.Stats == nil || rr.Stats.StatesTested == 0 {
		t.Errorf("a program printing its pool path: findings %+v, stats %+v", rr.Findings, rr.Stats)
	}

	r = run(t, dir, "set 5\nget\n", scry, "check", "--format", "json", "--pm", pm, "--", rel, filepath.Join(dir, "plain.pool"), "ops")
	if r.code != 0 {
		t.Errorf("plain check: exit %d\n%s", r.code, r.stderr)
	}
	parseRel(t, r.stdout)
	if !strings.Contains(r.stderr, "5 \n") {
		t.Errorf("the program's output is not on standard error:\n%s", r.stderr)
	}
	// With -o FILE the terminal is scry's: the program's output is not shown.
	out := filepath.Join(dir, "quiet.json")
	r = run(t, dir, "set 5\nget\n", scry, "check", "--format", "json", "-o", out, "--pm", pm, "--", rel, filepath.Join(dir, "quiet.pool"), "ops")
	if r.code != 0 {
		t.Errorf("check -o: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "5 \n") || r.stdout != "" {
		t.Errorf("check -o: the program's output is shown:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plain", []string{"check", "--format", "json", "--pm", pm, "--", rel, filepath.Join(dir, "fail.pool"), "fail"}},
		{"crash mode", []string{"check", "--format", "json", "--workload", wl, "--", rel, "{pool}", "fail"}},
	} {
		r := run(t, dir, "set 1\n", scry, tc.args...)
		if r.code != 1 {
			t.Errorf("%s: a program exiting 3 with a correctness finding: exit %d, want 1\n%s", tc.name, r.code, r.stderr)
		}
		if rr := parseRel(t, r.stdout); !rr.warns("exited with status 3") {
			t.Errorf("%s: warnings %q do not say how the program ended", tc.name, rr.Warnings)
		}
	}
}

func parseRel(t *testing.T, s string) relReport {
	t.Helper()
	var rr relReport
	if err := json.Unmarshal([]byte(s), &rr); err != nil {
		t.Fatalf("the report on standard output does not parse: %v\n%s", err, s)
	}
	return rr
}
