package integration

import (
	"bufio"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

// mapcliUsages are PMDK mapcli's commands (mapcli.c's help: i/r/c $value, n $value random
// inserts, p print all) as usage strings for `scry workload grammar`.
var mapcliUsages = []string{"--usage", "i <key>", "--usage", "r <key>", "--usage", "c <key>", "--usage", "n <count>", "--usage", "p"}

// TestGrammarWorkloadMapcli: a workload from `scry workload grammar` drives PMDK's mapcli under
// `scry check`, traced (every command ran: mapcli answers each check) and in crash exploration.
func TestGrammarWorkloadMapcli(t *testing.T) {
	scry := testenv.Scry(t)
	mapcli := testenv.Built(t, "mapcli/mapcli")
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops.txt")
	args := append([]string{"workload", "grammar", "--value", "key=1..64", "--value", "count=1..3", "--count", "300", "--seed", "3", "-o", ops}, mapcliUsages...)
	if r := run(t, dir, "", scry, args...); r.code != 0 {
		t.Fatalf("scry workload grammar: exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(ops)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	line := regexp.MustCompile(`^([irc] ([1-9]|[1-5][0-9]|6[0-4])|n [1-3]|p)$`)
	checks := 0
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Fatalf("line %q is not a mapcli command of the usages", l)
		}
		if l[0] == 'c' {
			checks++
		}
	}
	if len(lines) != 300 || checks == 0 {
		t.Fatalf("%d lines, %d checks", len(lines), checks)
	}
	// The report on standard output, the program's output on standard error (with -o it would
	// not be shown).
	r := run(t, dir, "", scry, "check", "--format", "json", "--workload", ops, "--", mapcli, "btree", filepath.Join(dir, "btree.pool"), "1")
	js := r.stdout
	if r.code != 0 {
		t.Fatalf("scry check: exit %d\n%s\n%s", r.code, r.stderr, js)
	}
	for _, f := range parseFindings(t, js) {
		if f.Class == "correctness" {
			t.Errorf("correctness finding: %+v", f)
		}
	}
	// scry check passes the program's output to its standard error: one 0/1 per check.
	answers := 0
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if s := sc.Text(); s == "0" || s == "1" {
			answers++
		}
	}
	if answers != checks {
		t.Errorf("mapcli answered %d checks, the workload has %d", answers, checks)
	}

	// Crash exploration on a short workload.
	short := filepath.Join(dir, "short.txt")
	args = append([]string{"workload", "grammar", "--value", "key=1..16", "--value", "count=1..2", "--count", "12", "--seed", "5", "-o", short}, mapcliUsages...)
	if r := run(t, dir, "", scry, args...); r.code != 0 {
		t.Fatalf("scry workload grammar: exit %d: %s", r.code, r.stderr)
	}
	r = run(t, dir, "", scry, "check", "--workload", short, "--output-filter", "^seed:", "--", mapcli, "btree", "{pool}", "1")
	if r.code != 0 {
		t.Fatalf("scry check (crash exploration): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`crash states: \d+ crash points, (\d+) states tested`).FindStringSubmatch(r.stdout)
	if m == nil || m[1] == "0" {
		t.Errorf("crash exploration tested no state:\n%s", r.stdout)
	}
}

// TestGrammarWorkloadShell: `scry workload grammar --usage-from 'sort --help'` with created
// files makes a workload that sh runs command by command in the directory (each command
// reading /dev/null, so none swallows the later lines), and the user's file there is untouched
// by the generation.
func TestGrammarWorkloadShell(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tools(t, "sh", "sort", "cp")
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(work, "mine.txt")
	if err := os.WriteFile(mine, []byte("b\na\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := func() [32]byte {
		b, err := os.ReadFile(mine)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	cmds := filepath.Join(dir, "cmds.txt")
	r := run(t, dir, "", scry, "workload", "grammar", "--usage-from", "sort --help", "--usage", "cp [-f] <file> <name>",
		"--dir", work, "--files", "5", "--max-file-size", "200000", "--shell", "--count", "60", "--seed", "2", "-o", cmds)
	if r.code != 0 {
		t.Fatalf("scry workload grammar: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "created 5 files in "+work) {
		t.Errorf("no word of the files created: %s", r.stderr)
	}
	if sum() != before {
		t.Fatal("generating the workload changed the user's file")
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 6 {
		t.Fatalf("%d entries in the directory, want the user's file and 5 created", len(entries))
	}
	b, err := os.ReadFile(cmds)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 60 {
		t.Fatalf("%d commands, want 60", n)
	}
	// sh -x traces each command it runs on standard error, prefixed "+ ".
	cmd := exec.Command("sh", "-x")
	cmd.Dir = work
	cmd.Stdin = strings.NewReader(string(b))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	_ = cmd.Run() // commands with random options fail: that is the point
	ran := 0
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "+ sort") || strings.HasPrefix(l, "+ cp") {
			ran++
		}
	}
	if ran != 60 {
		t.Errorf("sh ran %d of the 60 commands\n%s", ran, trunc(stderr.String()))
	}
}

func TestGrammarWorkloadCLI(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	r := run(t, dir, "", scry, "workload", "grammar", "--usage", "git reset [-q] [<commit>] [--] <name>", "--forms")
	if r.code != 0 || strings.Count(r.stdout, "\ngit reset") != 8 {
		t.Errorf("--forms: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gen := func(seed string) string {
		r := run(t, dir, "", scry, "workload", "grammar", "--usage", "x [-a | -b] <number>...", "--seed", seed, "--count", "50")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r.stdout
	}
	if a := gen("9"); a != gen("9") || a == gen("10") {
		t.Error("same seed, different output; or different seeds, same output")
	}
	r = run(t, dir, "", scry, "workload", "grammar", "--usage", "x", "--print-grammar")
	if r.code != 0 || !strings.Contains(r.stdout, `<cmd1> ::= "x"`) {
		t.Errorf("--print-grammar: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	exists := filepath.Join(dir, "exists.txt")
	if err := os.WriteFile(exists, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "no usage"},
		{[]string{"--usage", "git reset [-q"}, "column 11"},
		{[]string{"--usage-from", "/nonexistent/prog --help"}, "could not start"},
		{[]string{"--usage", "x", "--count", "-1"}, "negative"},
		{[]string{"--usage", "x <k>", "--value", "k"}, "not NAME=V1,V2"},
		{[]string{"--usage", "x <file>", "--dir", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"--usage", "x", "-o", exists}, "exists"},
		{[]string{"--usage", "x <file>", "--files", "2", "-o", exists}, "exists"},
		{[]string{"--usage", "x", "--forms", "--print-grammar"}, "none of the others"},
	} {
		r := run(t, dir, "", scry, append([]string{"workload", "grammar"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("scry workload grammar %q: exit %d, %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if b, _ := os.ReadFile(exists); string(b) != "mine" {
		t.Error("-o replaced an existing file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused -o still created files: %d entries", len(entries))
	}
}

// TestGrammarWorkloadInterrupted: Ctrl-C (SIGINT) stops a long generation; scry exits 130 and
// the output file keeps the complete commands written so far.
func TestGrammarWorkloadInterrupted(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "ops.txt")
	cmd := exec.Command(scry, "workload", "grammar", "--usage", "x [-a | -b] <number>...", "--count", "2000000000", "-o", out)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // no-op once it has exited
	testenv.WaitFor(t, func() bool {
		fi, err := os.Stat(out)
		return err == nil && fi.Size() > 0
	}, time.Minute, "scry workload grammar to write commands")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted by SIGINT") {
		t.Fatalf("scry after SIGINT: %v, stderr %q; want exit 130", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Errorf("the output (%d bytes) does not end with a complete command", len(b))
	}
}
