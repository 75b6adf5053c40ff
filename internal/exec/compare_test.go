package exec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

func TestEquivalent(t *testing.T) {
	seed := regexp.MustCompile(`^seed:`)
	ok := func(out string) Outcome { return Outcome{Stdout: []byte(out), filter: seed} }
	exit := func(code int, out string) Outcome {
		return Outcome{ExitCode: code, Stdout: []byte(out), filter: seed}
	}
	sig := func(s syscall.Signal, out string) Outcome {
		return Outcome{ExitCode: -1, Signal: s, Stdout: []byte(out), filter: seed}
	}
	hung := func(out string) Outcome {
		return Outcome{ExitCode: -1, TimedOut: true, Stdout: []byte(out), filter: seed}
	}
	broken := Outcome{ExitCode: -1, Err: errors.New("no such file")}
	committed, rolledBack := ok("seed: 1\nget 1: v1\n"), ok("seed: 2\nget 1: null\n")

	tests := []struct {
		name  string
		got   Outcome
		legal []Outcome
		want  bool
	}{
		{"matches committed", ok("seed: 9\nget 1: v1\n"), []Outcome{committed, rolledBack}, true},
		{"matches rolled back", ok("get 1: null\nseed: 7\n"), []Outcome{committed, rolledBack}, true},
		{"old value (WITCHER IMG1)", ok("seed: 9\nget 1: v0\n"), []Outcome{committed, rolledBack}, false},
		{"no legal outcome", ok("get 1: v1\n"), nil, false},
		{"crash where oracles succeed", sig(syscall.SIGSEGV, "seed: 9\n"), []Outcome{committed, rolledBack}, false},
		{"crash with the right output so far", sig(syscall.SIGSEGV, "seed: 9\nget 1: v1\n"), []Outcome{committed, rolledBack}, false},
		{"non-zero exit where oracles succeed", exit(1, "get 1: v1\n"), []Outcome{committed, rolledBack}, false},
		{"hang", hung("get 1: v1\n"), []Outcome{committed, rolledBack}, false},
		{"could not start", broken, []Outcome{committed, rolledBack}, false},
		{"oracles crash too, same way", sig(syscall.SIGSEGV, "get 1: v1\n"),
			[]Outcome{sig(syscall.SIGSEGV, "get 1: v1\n"), sig(syscall.SIGSEGV, "get 1: null\n")}, true},
		{"oracles crash, other signal", sig(syscall.SIGABRT, "get 1: v1\n"),
			[]Outcome{sig(syscall.SIGSEGV, "get 1: v1\n"), sig(syscall.SIGSEGV, "get 1: null\n")}, false},
		{"oracles crash, got succeeds", ok("get 1: v1\n"),
			[]Outcome{sig(syscall.SIGSEGV, "get 1: v1\n"), sig(syscall.SIGSEGV, "get 1: null\n")}, false},
		{"oracle exits 1, same status", exit(1, "get 1: null\n"), []Outcome{committed, exit(1, "get 1: null\n")}, true},
		{"oracle exits 1, other status", exit(2, "get 1: null\n"), []Outcome{committed, exit(1, "get 1: null\n")}, false},
		{"hung oracle is unusable", hung("get 1: v1\n"), []Outcome{hung("get 1: v1\n")}, false},
		{"one usable oracle", ok("get 1: null\n"), []Outcome{broken, rolledBack}, true},
	}
	for _, tc := range tests {
		if got := Equivalent(tc.got, tc.legal...); got != tc.want {
			t.Errorf("%s: Equivalent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	var long1, long2 strings.Builder
	for i := range 200 {
		fmt.Fprintf(&long1, "line %d\n", i)
		fmt.Fprintf(&long2, "line %d changed\n", i)
	}
	tests := []struct {
		name, got, want string
		contains        []string
		empty           bool
		maxLines        int
	}{
		{name: "equal", got: "a\nb\n", want: "a\nb\n", empty: true},
		{name: "both empty", empty: true},
		{name: "one line changed", got: "get 1: v0\n", want: "get 1: v1\n",
			contains: []string{"--- want\n", "+++ got\n", "-get 1: v1\n", "+get 1: v0\n"}},
		{name: "line missing", got: "a\nc\n", want: "a\nb\nc\n", contains: []string{" a\n", "-b\n", " c\n"}},
		{name: "no final newline", got: "a", want: "a\n", contains: []string{"No newline at end of file"}},
		{name: "long diff cut", got: long2.String(), want: long1.String(),
			contains: []string{"more diff lines)\n"}, maxLines: DiffMaxLines + 1},
	}
	for _, tc := range tests {
		d := Diff([]byte(tc.got), []byte(tc.want))
		if tc.empty {
			if d != "" {
				t.Errorf("%s: Diff = %q, want empty", tc.name, d)
			}
			continue
		}
		for _, s := range tc.contains {
			if !strings.Contains(d, s) {
				t.Errorf("%s: Diff lacks %q:\n%s", tc.name, s, d)
			}
		}
		if n := strings.Count(d, "\n"); tc.maxLines > 0 && n > tc.maxLines {
			t.Errorf("%s: %d lines, want at most %d", tc.name, n, tc.maxLines)
		}
	}
}

// TestDivergedLine checks the output line at which a run leaves every legal outcome: the first
// line it differs from each at, the latest of those; one past its end when it stopped early.
func TestDivergedLine(t *testing.T) {
	ok := func(out string) Outcome { return Outcome{Stdout: []byte(out)} }
	sig := func(out string) Outcome { return Outcome{ExitCode: -1, Signal: syscall.SIGSEGV, Stdout: []byte(out)} }
	committed, rolledBack := ok("1\n0\nv1\nv2\nitems: 2\n"), ok("1\n0\nnull\nv2\nitems: 1\n")
	tests := []struct {
		name     string
		got      Outcome
		legal    []Outcome
		line, of int
	}{
		{"a lookup loses the key", ok("1\n0\nnull\nnull\nitems: 1\n"), []Outcome{committed, rolledBack}, 4, 5},
		{"differs from both at once", ok("1\n1\nv1\nv2\nitems: 2\n"), []Outcome{committed, rolledBack}, 2, 5},
		{"only the last line", ok("1\n0\nv1\nv2\nitems: 3\n"), []Outcome{committed, rolledBack}, 5, 5},
		{"dies after a legal beginning", sig("1\n0\nv1\n"), []Outcome{committed, rolledBack}, 4, 5},
		{"prints more", ok("1\n0\nv1\nv2\nitems: 2\nmore\n"), []Outcome{committed, rolledBack}, 6, 5},
		{"stopped at a diverging line", Outcome{Diverged: 3, Stdout: []byte("1\n0\nx\n")}, []Outcome{committed}, 3, 5},
		{"an unusable legal outcome is left out", ok("1\n0\nnull\nnull\n"), []Outcome{ok("1\n0\n"), sig("1\n0\nnull\nnull\n")}, 3, 2},
		{"no legal outcome", ok("1\n"), nil, 0, 0},
		{"could not run", Outcome{ExitCode: -1, Err: errors.New("no such file")}, []Outcome{committed}, 0, 0},
	}
	for _, tc := range tests {
		if line, of := DivergedLine(tc.got, tc.legal...); line != tc.line || of != tc.of {
			t.Errorf("%s: DivergedLine = %d of %d, want %d of %d", tc.name, line, of, tc.line, tc.of)
		}
	}
}
