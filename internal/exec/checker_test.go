package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseChecker(t *testing.T) {
	tests := []struct {
		cmdline, wantErr string
	}{
		{"", "empty checker command"},
		{"   ", "empty checker command"},
		{"pmempool check pool.img", "no {image} in the command"},
		{"pmempool check {image}", ""},
	}
	for _, tc := range tests {
		c, err := ParseChecker(tc.cmdline)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseChecker(%q): error %v, want %q", tc.cmdline, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseChecker(%q): %v", tc.cmdline, err)
			continue
		}
		if len(c.Args) != 3 || c.Args[2] != tc.cmdline || c.Timeout != DefaultTimeout {
			t.Errorf("ParseChecker(%q) = %+v", tc.cmdline, c)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", `it's`, `"q" $HOME ` + "`id`" + ` \n;&|*`, "''"} {
		out, err := runShell(t, "printf %s "+ShellQuote(s))
		if err != nil || out != s {
			t.Errorf("ShellQuote(%q) = %s: the shell gave %q (%v)", s, ShellQuote(s), out, err)
		}
	}
}

func runShell(t *testing.T, script string) (string, error) {
	o := run(context.Background(), []string{"/bin/sh", "-c", script}, nil, nil, t.TempDir(), 5*time.Second)
	if o.Err != nil {
		return "", o.Err
	}
	return string(o.Stdout), nil
}

func TestCheckerRun(t *testing.T) {
	dir := t.TempDir()
	// A path a naive substitution would break, or worse, execute.
	sub := filepath.Join(dir, `it's a "pool" dir`)
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(sub, "good $HOME `touch pwned`; touch pwned.img")
	bad := filepath.Join(sub, "bad 'image'.img")
	if err := os.WriteFile(good, []byte("consistent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("torn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check, err := ParseChecker("test -f {image} && grep -q consistent {image}")
	if err != nil {
		t.Fatal(err)
	}
	hang, err := ParseChecker("sleep 30; test -f {image}")
	if err != nil {
		t.Fatal(err)
	}
	hang.Timeout = shortTimeout
	tests := []struct {
		name       string
		c          Checker
		image      string
		consistent bool
		timedOut   bool
	}{
		{"consistent", check, good, true, false},
		{"inconsistent", check, bad, false, false},
		{"missing image", check, filepath.Join(sub, "none"), false, false},
		{"hang", hang, good, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			o := tc.c.Run(context.Background(), tc.image, work)
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if !o.Failed() != tc.consistent || o.TimedOut != tc.timedOut {
				t.Errorf("%s, stderr %q; want consistent %v, timed out %v", o.Describe(), o.Stderr, tc.consistent, tc.timedOut)
			}
			for _, d := range []string{work, sub, "."} {
				if _, err := os.Stat(filepath.Join(d, "pwned")); err == nil {
					t.Fatalf("the image path was executed by the shell (%s/pwned exists)", d)
				}
			}
		})
	}
}
