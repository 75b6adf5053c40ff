package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// buildKVServer builds examples/kv-server's twin (buggy or fixed) with scry cc into dir.
func buildKVServer(t *testing.T, dir, twin string) (bin, example string) {
	t.Helper()
	example = filepath.Join(testenv.Root(), "examples", "kv-server")
	bin = filepath.Join(dir, "kv-server-"+twin)
	r := run(t, dir, "", testenv.Scry(t), "cc", "-O0", "-g", "-mclwb", "-I", filepath.Join(testenv.Root(), "examples", "include"),
		"-o", bin, filepath.Join(example, twin+".c"), "-lpmem")
	if r.code != 0 {
		t.Fatalf("scry cc: exit %d\n%s", r.code, r.stderr)
	}
	return bin, example
}

// alive returns the processes whose executable is bin, or whose command line contains s ("" not
// looked for).
func alive(bin, s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if exe == bin || (s != "" && bytes.Contains(cmd, []byte(s))) {
			out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// TestServerClient checks a server in client mode (docs/servers.md) end to end on
// examples/kv-server: the buggy twin's ordering violation is proved by a crash image through the
// client, named by the request in flight (the runtime marked each request the server read from
// its socket as an operation), with a replay command whose session prints the failing answer; the
// fixed twin has no finding; and no server or client process outlives the check.
func TestServerClient(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	for _, twin := range []string{"buggy", "fixed"} {
		t.Run(twin, func(t *testing.T) {
			bin, example := buildKVServer(t, dir, twin)
			client := "bash " + filepath.Join(example, "client.sh") + " {port}"
			out := filepath.Join(dir, twin+".json")
			r := run(t, dir, "", scry, "check", "--client", client, "--workload", filepath.Join(example, "workload.txt"),
				"--format", "json", "-o", out, "--", bin, "{pool}", "{port}")
			if left := alive(bin, filepath.Join(example, "client.sh")); len(left) > 0 {
				t.Errorf("processes left after the check: %q", left)
			}
			rep := readReport(t, out)
			if rep.Stats == nil || rep.Stats.StatesTested == 0 {
				t.Fatalf("no crash state tested: %+v\n%s", rep.Stats, r.stderr)
			}
			if twin == "fixed" {
				if r.code != 0 || len(rep.Findings) > 0 {
					t.Fatalf("fixed twin: exit %d, findings %+v\n%s", r.code, rep.Findings, r.stderr)
				}
				return
			}
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			var f *report.Finding
			for i := range rep.Findings {
				if rep.Findings[i].Kind == report.OrderingViolation {
					f = &rep.Findings[i]
				}
			}
			if f == nil || f.Crash == nil {
				t.Fatalf("no ordering-violation crash finding: %+v", rep.Findings)
			}
			if f.Location.Line != 51 || f.Operation == nil || f.Operation.Text != "set 1 10" || f.Crash.Client != client {
				t.Errorf("finding at line %d, operation %+v, client %q; want line 51, operation \"set 1 10\", client %q", f.Location.Line, f.Operation, f.Crash.Client, client)
			}
			// The replay command runs a session on the rebuilt image: the server answers the
			// lost value.
			rr := run(t, dir, "", scry, "replay", out, f.Crash.ID, "--out", filepath.Join(dir, "crash.img"))
			if rr.code != 0 {
				t.Fatalf("scry replay: exit %d\n%s", rr.code, rr.stderr)
			}
			cmd := exec.Command("bash", "-c", strings.TrimSpace(rr.stdout))
			cmd.Dir = dir
			got, err := cmd.Output()
			if err != nil || !strings.Contains(string(got), "1 = 0\n") {
				t.Errorf("the replay command %s: %v, printed %q, want the lost value (1 = 0)", rr.stdout, err, got)
			}
		})
	}
}

// TestServerClientInterrupt: SIGTERM to `scry check --client` while it explores stops it within
// 2 s with the states judged so far in its report, and kills every server and client session.
func TestServerClientInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin, example := buildKVServer(t, dir, "buggy")
	runs := filepath.Join(dir, "runs") // a line per session, as its client starts
	client := "echo run >> " + runs + "; sleep 0.5; bash " + filepath.Join(example, "client.sh") + " {port}"
	out := filepath.Join(dir, "rep.json")
	b := startScry(t, dir, nil, "check", "--client", client, "--workload", filepath.Join(example, "workload.txt"), "-j", "2",
		"--format", "json", "-o", out, "--", bin, "{pool}", "{port}")
	// The recording's session, then two rounds of crash-image sessions.
	testenv.WaitFor(t, func() bool {
		b, _ := os.ReadFile(runs)
		return bytes.Count(b, []byte("\n")) >= 5
	}, exitTimeout, "five client sessions")
	start := time.Now()
	b.signal(t, syscall.SIGTERM)
	if code := b.wait(t); code != 143 {
		t.Fatalf("exit %d, want 143\n%s", code, b.stderr.String())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("scry took %v to stop after SIGTERM, want at most 2s", d)
	}
	r := readRelReport(t, out)
	if !r.warns("interrupted by SIGTERM") {
		t.Errorf("report warnings %q do not say it was interrupted", r.Warnings)
	}
	if r.Stats == nil || r.Stats.StatesTested == 0 {
		t.Errorf("stats %+v: the states judged before the signal are not counted", r.Stats)
	}
	testenv.WaitFor(t, func() bool { return len(alive(bin, runs)) == 0 }, 5*time.Second, "no session left")
}

// TestServerClientBadInput: a client command without {port}, or a server whose arguments lack
// it, is refused with a message that says what to write, before anything runs.
func TestServerClientBadInput(t *testing.T) {
	dir := t.TempDir()
	bin, example := buildKVServer(t, dir, "buggy")
	w := filepath.Join(example, "workload.txt")
	for _, tc := range []struct {
		name   string
		client string
		args   []string
		want   string
	}{
		{"client without port", "bash client.sh", []string{bin, "{pool}", "{port}"}, "no {port}"},
		{"server without port", "bash client.sh {port}", []string{bin, "{pool}", "7000"}, "where the server takes its port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, dir, "", testenv.Scry(t), append([]string{"check", "--client", tc.client, "--workload", w, "--"}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}
