package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/scry-pm/scry/internal/testenv"
)

// TestRecordTimeout: a recorded run that hangs (testdata/hang.c; in file-system mode a shell
// script) is stopped at --record-timeout in record, check and fs check: exit 2 with a message
// naming the limit, the trace so far kept and readable, and the hanging child the program left
// in its process group killed too.
func TestRecordTimeout(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tools(t, "strace")
	dir := t.TempDir()
	bin := compile(t, dir, filepath.Join(testenv.Root(), "test", "integration", "testdata", "hang.c"), "-lpmem")
	ops := writeFile(t, dir, "ops.txt", "op\n", 0o644)
	wdir := filepath.Join(dir, "w")
	if err := os.Mkdir(wdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args func(trace, pidFile string) []string
		dump string // in the trace's dump
	}{
		{"record", func(tr, pid string) []string {
			return []string{"record", "--record-timeout", "1s", "--trace", tr, "--", bin, filepath.Join(dir, "r.pool"), pid}
		}, "END"},
		{"check", func(tr, pid string) []string {
			return []string{"check", "--record-timeout", "1s", "--trace", tr, "--", bin, filepath.Join(dir, "c.pool"), pid}
		}, "END"},
		{"check with {pool}", func(tr, pid string) []string {
			return []string{"check", "--record-timeout", "1s", "--trace", tr, "--workload", ops, "--", bin, "{pool}", pid}
		}, "END"},
		{"fs check", func(tr, pid string) []string {
			return []string{"fs", "check", "--record-timeout", "1s", "--trace", tr, "--dir", wdir, "--checker", "true", "--",
				"/bin/sh", "-c", `echo data > f; sleep 100000 & echo $! > "$0"; wait`, pid}
		}, "FS_OP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := strings.NewReplacer(" ", "-", "{", "", "}", "").Replace(tc.name) // no {pool} in the paths
			tr, pidFile := filepath.Join(dir, base+".trace"), filepath.Join(dir, base+".pid")
			r := run(t, dir, "", scry, tc.args(tr, pidFile)...)
			if r.code != 2 || !strings.Contains(r.stderr, "ran longer than its time limit of 1s (--record-timeout) and was stopped") {
				t.Errorf("exit %d, want 2 and the time limit named\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if d := run(t, dir, "", scry, "trace", "dump", tr); d.code != 0 || !strings.Contains(d.stdout, tc.dump) {
				t.Errorf("the trace so far: dump exit %d, no %s record\n%s%s", d.code, tc.dump, d.stdout, d.stderr)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the program wrote no child pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			waitGone(t, pid)
		})
	}
}

// waitGone waits for process pid, not a child of the test, to end (a zombie counts as ended):
// its pidfd becomes readable when it exits. It fails the test when pid is still running after
// the bound, which is far beyond the SIGKILL's delivery.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone and reaped already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 30_000); err != nil || n == 0 {
		t.Errorf("the program's child %d outlived the time limit: %v", pid, err)
	}
}
