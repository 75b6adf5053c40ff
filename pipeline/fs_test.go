package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/internal/testenv"
)

// TestFSCheckErrors: bad input to scry fs check is an error naming the problem, before anything
// runs, and nothing is created in the workload directory.
func TestFSCheckErrors(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(t.TempDir(), "abs.txt")
	if err := os.WriteFile(abs, []byte("echo x > "+dir+"/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    FSCheck
		want string
	}{
		{"no oracle", FSCheck{Dir: dir, Args: []string{"true"}}, "needs an oracle"},
		{"no program", FSCheck{Options: explore.Options{Checker: "true"}, Dir: dir}, "no program"},
		{"missing program", FSCheck{Options: explore.Options{Checker: "true"}, Dir: dir, Args: []string{"./no-such-program"}}, "no-such-program"},
		{"not a directory", FSCheck{Options: explore.Options{Checker: "true"}, Dir: abs, Args: []string{"true"}}, "not a directory"},
		{"unknown model", FSCheck{Options: explore.Options{Checker: "true", APM: "ext9"}, Dir: dir, Args: []string{"true"}}, "unknown persistence model"},
		{"unknown strategy", FSCheck{Options: explore.Options{Checker: "true", Strategies: []string{"all"}}, Dir: dir, Args: []string{"true"}}, "unknown strategy"},
		{"a shard", FSCheck{Options: explore.Options{Checker: "true", Shard: shard.Shard{Index: 0, Count: 2}}, Dir: dir, Args: []string{"true"}}, "explores no shard"},
		{"workload naming the directory", FSCheck{Dir: dir, Args: []string{"sh"}, Workload: abs}, "by its absolute path"},
		{"empty workload", FSCheck{Dir: dir, Args: []string{"sh"}, Workload: empty}, "no operation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("the workload directory holds %d entries", len(ents))
			}
		})
	}
}

// TestResolveChecker: a checker named by a relative path runs from the crash directory as the
// file the user named; the program is the command's first shell word.
func TestResolveChecker(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("tools", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"check.sh", "tools/check"} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs, _ := filepath.Abs("check.sh")
	q := "'" + abs + "'"
	tools, _ := filepath.Abs("tools/check")
	for _, c := range []struct{ in, want string }{
		{"./check.sh", q},
		{"./check.sh --full x", q + " --full x"},
		{"  ./check.sh", "  " + q},
		{"./check.sh\t-v", q + "\t-v"},
		{"./check.sh; exit 1", q + "; exit 1"},
		{"./check.sh;exit 1", q + ";exit 1"},
		{"./check.sh && echo ok", q + " && echo ok"},
		{"./check.sh|grep ok", q + "|grep ok"},
		{"./check.sh>log 2>&1", q + ">log 2>&1"},
		{"./check.sh<in", q + "<in"},
		{"./check.sh&", q + "&"},
		{"./check.sh)", q + ")"},
		{"./check.sh\nexit 1", q + "\nexit 1"},
		{"tools/check", "'" + tools + "'"},
		{"./missing.sh", "./missing.sh"},
		{"./missing.sh; ./check.sh", "./missing.sh; ./check.sh"},
		{"git fsck --full", "git fsck --full"},
		{"/bin/true", "/bin/true"},
		{"test -f ./check.sh", "test -f ./check.sh"},
		{"'./check.sh'", "'./check.sh'"},
		{"\"./check.sh\"", "\"./check.sh\""},
		{"./check$X.sh", "./check$X.sh"},
		{"./check.s?", "./check.s?"},
		{"A=./check.sh ./check.sh", "A=./check.sh ./check.sh"},
		{"(./check.sh)", "(./check.sh)"},
		{"", ""},
	} {
		if got := resolveChecker(c.in); got != c.want {
			t.Errorf("resolveChecker(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzResolveChecker: resolveChecker never panics and changes at most the first word, into the
// quoted absolute path of the file it names.
func FuzzResolveChecker(f *testing.F) {
	for _, s := range []string{"./check.sh; exit 1", "  ./x|y", "", "a b", "./check.sh"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Chdir(dir)
	if err := os.WriteFile("check.sh", []byte("#!/bin/sh\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		got := resolveChecker(cmd)
		if got == cmd {
			return
		}
		abs, _ := filepath.Abs("check.sh")
		lead := len(cmd) - len(strings.TrimLeft(cmd, " \t"))
		word, _ := filepath.Abs(cmd[lead:])
		q := exec.ShellQuote(abs)
		if !strings.HasPrefix(got, cmd[:lead]+q) || !strings.HasSuffix(cmd, got[lead+len(q):]) {
			t.Fatalf("resolveChecker(%q) = %q: changed, but not the first word into the checker's path %s (%s)", cmd, got, q, word)
		}
	})
}

// TestFSRecordExploreErrors: bad input to scry fs record and scry fs explore is an error naming
// the problem; a failed recording leaves no recording directory behind.
func TestFSRecordExploreErrors(t *testing.T) {
	testenv.Tool(t, "strace")
	dir := t.TempDir()
	exists := t.TempDir()
	notRec := t.TempDir()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, fsManifestName), []byte(`{"scry_fs_recording": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "rec")
	r := &FSRecord{Dir: dir, Args: []string{"sh", "-c", "echo x > a"}, Out: rec, Stdout: io.Discard, Stderr: io.Discard}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(t.TempDir(), "failed")
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"record: no --out", func() error {
			_, err := (&FSRecord{Dir: dir, Args: []string{"true"}}).Run(context.Background())
			return err
		}, "--out"},
		{"record: --out exists", func() error {
			_, err := (&FSRecord{Dir: dir, Args: []string{"true"}, Out: exists}).Run(context.Background())
			return err
		}, "exists"},
		{"record: failed run", func() error {
			_, err := (&FSRecord{Dir: dir, Args: []string{"sh", "-c", "exit 3"}, Out: failed}).Run(context.Background())
			if _, serr := os.Stat(failed); serr == nil {
				t.Errorf("the failed recording left %s", failed)
			}
			return err
		}, "exited with status 3"},
		{"explore: not a recording", func() error {
			_, err := (&FSExplore{Options: explore.Options{Checker: "true"}, Recording: notRec}).Run(context.Background())
			return err
		}, "not a recording"},
		{"explore: another format", func() error {
			_, err := (&FSExplore{Options: explore.Options{Checker: "true"}, Recording: bad}).Run(context.Background())
			return err
		}, "not a recording's manifest"},
		{"explore: no oracle", func() error { _, err := (&FSExplore{Recording: rec}).Run(context.Background()); return err }, "needs an oracle"},
		{"explore: --max-states with a shard", func() error {
			_, err := (&FSExplore{Options: explore.Options{Checker: "true", MaxStates: 5, Shard: shard.Shard{Index: 0, Count: 2}}, Recording: rec}).Run(context.Background())
			return err
		}, "--max-states"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
