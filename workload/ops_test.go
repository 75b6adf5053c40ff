package workload

import (
	"strings"
	"testing"
)

func TestSuffixAndLines(t *testing.T) {
	w := Workload{Ops: []string{"a", "b", "c"}}
	for k, want := range []string{"a\nb\nc\n", "b\nc\n", "c\n", ""} {
		if got := string(w.Suffix(k - 1)); got != want {
			t.Errorf("Suffix(%d) = %q, want %q", k-1, got, want)
		}
	}
	if got := string(w.Lines([]int{2, 0})); got != "c\na\n" {
		t.Errorf("Lines = %q", got)
	}
}

// FuzzParseWorkload: any input splits into lines that, rejoined, give the input back (up to a
// final newline), and every suffix fed to a re-execution is well formed.
func FuzzParseWorkload(f *testing.F) {
	for _, seed := range []string{"", "i 1\ni 2\n", "set 5\r\nget\r\n", "no newline", "\n\n\n", "a\x00b\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := Parse("w.txt", b)
		joined := strings.Join(w.Ops, "\n")
		if len(w.Ops) > 0 && len(b) > 0 && b[len(b)-1] == '\n' {
			joined += "\n"
		}
		if joined != string(b) {
			t.Fatalf("lines %q do not rejoin to %q", w.Ops, b)
		}
		for k := -1; k < len(w.Ops); k++ {
			s := w.Suffix(k)
			if n := strings.Count(string(s), "\n"); n < len(w.Ops)-k-1 {
				t.Fatalf("suffix after %d has %d lines, want at least %d", k, n, len(w.Ops)-k-1)
			}
		}
	})
}
