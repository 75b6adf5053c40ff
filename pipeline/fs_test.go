package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"no program", FSCheck{Dir: dir, Checker: "true"}, "no program"},
		{"missing program", FSCheck{Dir: dir, Checker: "true", Args: []string{"./no-such-program"}}, "no-such-program"},
		{"not a directory", FSCheck{Dir: abs, Checker: "true", Args: []string{"true"}}, "not a directory"},
		{"unknown model", FSCheck{Dir: dir, Checker: "true", Args: []string{"true"}, APM: "ext9"}, "unknown persistence model"},
		{"unknown strategy", FSCheck{Dir: dir, Checker: "true", Args: []string{"true"}, Strategies: []string{"all"}}, "unknown strategy"},
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
// file the user named.
func TestResolveChecker(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("check.sh", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("check.sh")
	for in, want := range map[string]string{
		"./check.sh":          "'" + abs + "'",
		"./check.sh --full x": "'" + abs + "' --full x",
		"./missing.sh":        "./missing.sh",
		"git fsck --full":     "git fsck --full",
		"/bin/true":           "/bin/true",
		"./check.sh; rm x":    "./check.sh; rm x",
		"test -f ./check.sh":  "test -f ./check.sh",
	} {
		if got := resolveChecker(in); got != want {
			t.Errorf("resolveChecker(%q) = %q, want %q", in, got, want)
		}
	}
}
