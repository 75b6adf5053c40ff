package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
)

// crashSrc stores to PM and then dies by SIGSEGV before flushing (or exits cleanly with "ok").
const crashSrc = `#include <libpmem.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	size_t len; int is_pmem;
	char *p = pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, &is_pmem);
	if (!p) { perror(argv[1]); return 3; }
	p[0] = 1;
	pmem_persist(p, 1);
	p[64] = 2; /* never flushed */
	if (strcmp(argv[2], "crash") == 0) raise(SIGSEGV);
	pmem_unmap(p, len);
	return 0;
}
`

// TestBadInput feeds scry what users get wrong: every case must end with a clear message naming
// the problem and exit status 2 (or 1 with findings), never a Go panic.
func TestBadInput(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notTrace := write("notatrace.txt", "hello, this is not a trace\n")
	badVersion := write("v200.trace", "SCRYTRC\x00\xc8\x00\x00\x00\x40\x00\x00\x00") // a version far ahead of this one
	corrupt := write("corrupt.trace", "SCRYTRC\x00\x01\x00\x00\x00\x40\x00\x00\x00\x7f\x01\x02")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flag", []string{"analyze", "--frobnicate", notTrace}, 2, "unknown flag: --frobnicate"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"missing trace", []string{"analyze", filepath.Join(dir, "nope.trace")}, 2, "no such file"},
		{"not a trace", []string{"analyze", notTrace}, 2, "not a scry trace"},
		{"other version", []string{"analyze", badVersion}, 2, "version 200"},
		{"corrupt trace", []string{"analyze", corrupt}, 2, "unknown record kind"},
		{"bad format", []string{"analyze", "--format", "xml", notTrace}, 2, "unknown --format"},
		{"dump not a trace", []string{"trace", "dump", notTrace}, 2, "not a scry trace"},
		{"stats corrupt", []string{"trace", "stats", corrupt}, 2, "unknown record kind"},
		{"infer corrupt", []string{"infer", corrupt}, 2, "unknown record kind"},
		{"infer not a trace", []string{"infer", notTrace}, 2, "not a scry trace"},
		{"verify no args", []string{"trace", "verify"}, 2, "takes a trace file"},
		{"check without program", []string{"check"}, 2, "no program given"},
		{"check missing program", []string{"check", "--", filepath.Join(dir, "no-such-prog")}, 2, "no-such-prog"},
		{"check uninstrumented", []string{"check", "--", "true"}, 2, "wrote no trace"},
		{"missing workload", []string{"check", "--workload", filepath.Join(dir, "no-ops"), "--", "true"}, 2, "no-ops"},
		{"missing suppressions", []string{"analyze", "--suppressions", filepath.Join(dir, "nosupp"), notTrace}, 2, "nosupp"},
		{"unknown oracle before running", []string{"check", "--oracles", "bogus", "--", filepath.Join(dir, "never-run")}, 2, "unknown oracle bogus"},
		{"bad suppressions before running", []string{"check", "--suppressions", notTrace, "--", filepath.Join(dir, "never-run")}, 2, "notatrace.txt:1"},
		{"workload bad ops", []string{"workload", "kv", "--ops", "-5"}, 2, "negative operation count"},
		{"max-states 0", []string{"check", "--max-states", "0", "--", filepath.Join(dir, "never-run"), "{pool}"}, 2, "--max-states 0"},
		{"max-states -5", []string{"explore", "--dry-run", "--max-states", "-5", notTrace}, 2, "--max-states -5"},
		{"time-budget negative", []string{"check", "--time-budget", "-5s", "--", filepath.Join(dir, "never-run"), "{pool}"}, 2, "--time-budget -5s"},
		{"cluster-failures 0", []string{"check", "--cluster-failures", "0", "--", filepath.Join(dir, "never-run"), "{pool}"}, 2, "--cluster-failures 0"},
		{"jobs -1", []string{"check", "--jobs", "-1", "--", filepath.Join(dir, "never-run"), "{pool}"}, 2, "--jobs -1"},
		{"samples -1", []string{"explore", "--dry-run", "--samples", "-1", notTrace}, 2, "--samples -1"},
		{"bad pm glob", []string{"check", "--pm", "[", "--", filepath.Join(dir, "never-run")}, 2, "--pm \"[\""},
		{"op-end alone", []string{"check", "--op-end", "done", "--", filepath.Join(dir, "never-run")}, 2, "--op-end \"done\" needs --op-begin"},
		{"op markers alike", []string{"record", "--op-begin", "op", "--op-end", "op", "--", filepath.Join(dir, "never-run")}, 2, "name the same function"},
		{"env without =", []string{"check", "--env", "LD_LIBRARY_PATH", "--", filepath.Join(dir, "never-run")}, 2, `--env "LD_LIBRARY_PATH": not NAME=VALUE`},
		{"env bad name", []string{"record", "--env", "1A=b", "--", filepath.Join(dir, "never-run")}, 2, "is not a variable name"},
		{"env scry variable", []string{"explore", "--env", "SCRY_TRACE=x", "--trace", notTrace, "--workload", notTrace, "--", filepath.Join(dir, "never-run"), "{pool}"}, 2, "scry sets the SCRY_ variables"},
		{"op marker not a name", []string{"check", "--op-begin", "a b", "--", filepath.Join(dir, "never-run")}, 2, "not a function name"},
		{"trace bogus", []string{"trace", "bogus"}, 2, `unknown command "bogus" for "scry trace"`},
		{"workload bogus", []string{"workload", "bogus"}, 2, `unknown command "bogus" for "scry workload"`},
		{"trace alone", []string{"trace"}, 2, "needs a command"},
		{"replay not a report", []string{"replay", notTrace, "1", "--out", filepath.Join(dir, "x.img")}, 2, "not a JSON report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, dir, "", scry, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("stderr does not mention %q:\n%s", tt.msg, r.stderr)
			}
			if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("Go panic:\n%s", r.stderr)
			}
		})
	}
}

// TestCrashedProgram: a program killed by a signal keeps its trace; scry says how it ended,
// analyses everything up to the crash, and leaves the exit-time durability check out (the
// program did not exit). A truncated trace analyses up to its last complete record.
func TestCrashedProgram(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "crash.c")
	if err := os.WriteFile(src, []byte(crashSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := compile(t, dir, src, "-lpmem")
	tr := filepath.Join(dir, "crash.trace")
	r := run(t, dir, "", scry, "check", "--trace", tr, "--", bin, filepath.Join(dir, "p.pool"), "crash")
	if r.code != 2 {
		t.Errorf("check on a crashing program without correctness findings before the crash: exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"killed by signal 11", "results cover its run up to that point", "its trace is in " + tr} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "stores not yet persisted when it died are not reported") {
		t.Errorf("report does not warn that the exit-time check was left out:\n%s", r.stdout)
	}
	if _, err := os.Stat(tr); err != nil {
		t.Fatalf("trace not kept: %v", err)
	}
	// The same program exiting normally leaves p[64] unpersisted: a correctness finding.
	r = run(t, dir, "", scry, "check", "--format", "json", "--", bin, filepath.Join(dir, "q.pool"), "exit")
	if r.code != 1 {
		t.Errorf("check on the exiting program: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := parseFindings(t, r.stdout)
	if len(got) != 1 || got[0].Kind != "unpersisted-store" || got[0].Location.Line != 11 {
		t.Errorf("findings %+v, want one unpersisted-store at line 11", got)
	}

	// A pool that cannot be created: the program's own message names it, scry's names how the
	// program ended, and the status is 2.
	r = run(t, dir, "", scry, "check", "--", bin, filepath.Join(dir, "no-such-dir", "p.pool"), "exit")
	if r.code != 2 || !strings.Contains(r.stderr, "no-such-dir/p.pool") || !strings.Contains(r.stderr, "exited with status 3") {
		t.Errorf("check with a missing pool directory: exit %d, want 2 naming the pool and the status\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Cut the good trace in the middle: analyze warns and reports what it saw.
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "", scry, "analyze", cut)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "truncated") {
		t.Errorf("analyze of a truncated trace: exit %d, want 0 and a truncation warning\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, dir, "", scry, "trace", "stats", cut)
	if r.code != 0 || !strings.Contains(r.stderr, "truncated") {
		t.Errorf("trace stats of a truncated trace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Verify against a pool that was removed: a clear error naming the file.
	os.Remove(filepath.Join(dir, "p.pool"))
	r = run(t, dir, "", scry, "trace", "verify", tr)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "p.pool") {
		t.Errorf("verify with a missing pool: exit %d, want 1 naming the pool\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestVersion: scry version and scry --version name the build, the trace format versions and
// the LLVM versions the install has pass plugins for, and exit 0.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		r := run(t, t.TempDir(), "", testenv.Scry(t), arg)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "scry version ") || !strings.Contains(r.stdout, "go1.") ||
			!strings.Contains(r.stdout, "trace format: writes version ") || !strings.Contains(r.stdout, "pass plugins: LLVM ") {
			t.Errorf("scry %s: exit %d\n%s%s", arg, r.code, r.stdout, r.stderr)
		}
	}
}

// goTypes matches what only Go's own error texts show: its type names ("Go value of type
// struct { Findings *[]report.Finding }", "a result of type <nil>, declared *infer.Result").
var goTypes = regexp.MustCompile(`Go (value|struct)|of type|struct \{|interface \{|<nil>|\*?\[\][a-z]+\.[A-Z]|\b(report|trace|infer|analysis|explore|pipeline|exec|crash|px86|safefile|record|strace)\.[A-Z][A-Za-z]*`)

// TestBadInputSweep gives every command that reads a file the wrong file (empty, another kind,
// a directory, missing, a trace cut inside its header or in its records, a JSON report of the
// wrong shape) and every command that writes one an existing file of the user's. Each case ends
// with the documented status (2; 0 with a warning for a trace cut in its records), a message
// naming the file once and the problem, never a Go type name, a repeated file name or a bare
// ": exists", and never a panic.
func TestBadInputSweep(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	write := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := analysistest.New().Map(1, 0x10000, 0x1000).Store(3, 0x10000, 8).Persist(4, 0x10000, 8).
		Store(5, 0x10040, 8).Persist(6, 0x10040, 8).Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	inputs := []struct {
		kind, path, msg string
	}{
		{"empty", write("empty.trace", nil), "the file is empty"},
		{"text", write("notes.txt", []byte("hello, this is not a trace nor a report\n")), "not"},
		{"magic prefix", write("cut-header.trace", []byte("SCRYTRC")), "not a scry trace: the file of 7 bytes ends inside the 16-byte header"},
		{"directory", filepath.Join(dir, "adir"), "is a directory"},
		{"missing", filepath.Join(dir, "missing.trace"), "no such file"},
		{"array JSON", write("array.json", []byte("[1, 2]\n")), "not"},
		{"findings a number", write("number.json", []byte(`{"findings": 3}`)), "not"},
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := write("good.trace", good)
	cut := write("cut.trace", good[:len(good)-3])
	user := write("user.txt", []byte("the user's notes\n"))
	prog := filepath.Join(dir, "never-run") // where the program is not looked up
	ops := write("ops.txt", []byte("op\n"))
	const cat = "/bin/cat" // a program that exists, never run: the bad file stops scry first

	type tcase struct {
		args []string
		code int
		msg  string
		file string // the file the message must name, once
	}
	var cases []tcase
	traceCmds := [][]string{{"analyze"}, {"infer"}, {"trace", "dump"}, {"trace", "stats"}, {"trace", "verify"}, {"explore", "--dry-run"}}
	reportCmds := []func(string) []string{
		func(p string) []string { return []string{"replay", p, "1", "--out", filepath.Join(dir, "x.img")} },
		func(p string) []string { return []string{"fix", p} },
		func(p string) []string { return []string{"report", "--format", "html", p} },
	}
	for _, in := range inputs {
		msg := in.msg
		if msg == "not" {
			msg = "not a scry trace"
		}
		for _, c := range traceCmds {
			cases = append(cases, tcase{append(slices.Clone(c), in.path), 2, msg, in.path})
		}
		cases = append(cases, tcase{[]string{"explore", "--trace", in.path, "--workload", ops, "--", cat, "{pool}"}, 2, msg, in.path})
		msg = in.msg
		switch in.kind {
		case "text", "array JSON", "findings a number", "magic prefix":
			msg = "is not a JSON report of scry"
		}
		for _, c := range reportCmds {
			cases = append(cases, tcase{c(in.path), 2, msg, in.path})
		}
		if in.kind == "directory" || in.kind == "missing" {
			cases = append(cases, tcase{[]string{"analyze", "--suppressions", in.path, trace}, 2, in.msg, in.path},
				tcase{[]string{"check", "--workload", in.path, "--", cat, "{pool}"}, 2, in.msg, in.path})
		}
	}
	// A trace cut in its records is analysed up to the cut, with a warning (verify: see
	// TestCrashedProgram).
	for _, c := range traceCmds {
		if c[0] != "trace" || c[1] != "verify" {
			cases = append(cases, tcase{append(slices.Clone(c), cut), 0, "truncated", ""})
		}
	}
	// A trace where a report belongs.
	for _, c := range reportCmds {
		cases = append(cases, tcase{c(trace), 2, "is not a JSON report of scry: not JSON", trace})
	}
	// An existing file of the user's where scry would write.
	exists := "exists"
	for _, args := range [][]string{
		{"analyze", "-o", user, trace},
		{"infer", "-o", user, trace},
		{"workload", "kv", "-o", user},
		{"workload", "grammar", "--usage", "prog a", "-o", user},
		{"fix", "-o", user, trace},
		{"report", "--format", "html", "-o", user, write("empty-report.json", []byte(`{"findings": []}`))},
		{"record", "--trace", user, "--", "true"},
		{"check", "-o", user, "--", prog},
		{"check", "--trace", user, "--", "true"},
		{"explore", "-o", user, "--trace", trace, "--workload", ops, "--", prog, "{pool}"},
		{"fs", "check", "-o", user, "--dir", dir, "--checker", "true", "--", "true"},
		{"fs", "check", "--trace", user, "--dir", dir, "--checker", "true", "--", "true"},
	} {
		cases = append(cases, tcase{args, 2, exists, user})
	}
	// Counts and durations: one meaning in check and fs check.
	for _, c := range [][]string{{"check"}, {"fs", "check", "--dir", dir, "--checker", "true"}} {
		for _, f := range []struct{ flag, value, msg string }{
			{"--max-states", "0", "--max-states 0: give a positive number of states, or -1 for no cap"},
			{"--max-states", "-2", "--max-states -2"},
			{"--jobs", "-1", "--jobs -1"},
			{"--timeout", "-1s", "--timeout -1s: give a positive duration, or 0 for"},
			{"--time-budget", "-1s", "--time-budget -1s"},
			{"--record-timeout", "-1s", "--record-timeout -1s: give a positive duration, or 0 for no limit"},
		} {
			args := append(slices.Clone(c), f.flag, f.value, "--", prog, "{pool}")
			cases = append(cases, tcase{args, 2, f.msg, ""})
		}
	}
	// workload kv --ops over the bound: TestWorkloadBound (package cli), whose output is bounded.

	for _, tc := range cases {
		name := strings.ReplaceAll(strings.Join(tc.args, " "), dir+"/", "")
		t.Run(name, func(t *testing.T) {
			r := run(t, dir, "", scry, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			msg := r.stderr
			if !strings.Contains(r.stdout+msg, tc.msg) { // a text report's warnings are on stdout
				t.Errorf("stderr does not say %q:\n%s", tc.msg, msg)
			}
			if tc.file != "" && strings.Count(msg, filepath.Base(tc.file)) != 1 {
				t.Errorf("stderr does not name %s exactly once:\n%s", filepath.Base(tc.file), msg)
			}
			if m := goTypes.FindString(msg); m != "" {
				t.Errorf("stderr shows Go's %q:\n%s", m, msg)
			}
			for _, line := range strings.Split(strings.TrimSpace(msg), "\n") {
				if strings.HasSuffix(line, ": exists") {
					t.Errorf("a message ends in a bare \": exists\": %s", line)
				}
			}
			if strings.Contains(msg, "panic:") || strings.Contains(msg, "goroutine ") {
				t.Errorf("Go panic:\n%s", msg)
			}
			if b, _ := os.ReadFile(user); string(b) != "the user's notes\n" {
				t.Fatalf("the user's file changed: %q", b)
			}
		})
	}
}
