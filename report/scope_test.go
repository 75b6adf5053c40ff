package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// TestScopeResolve checks which functions hunks touch: a hunk overlapping the lines from a
// function's first site to its last touches it (a deletion between two sites too), a hunk outside
// every executed function touches none, and files match by absolute path or trailing components.
func TestScopeResolve(t *testing.T) {
	sites := []trace.Site{
		{ID: 1, Function: "insert", File: "src/kv.c", Line: 10},
		{ID: 2, Function: "insert", File: "src/kv.c", Line: 20},
		{ID: 3, Function: "delete", File: "src/kv.c", Line: 30},
		{ID: 4, Function: "delete", File: "src/kv.c", Line: 34},
		{ID: 5, Function: "helper", File: "/repo/lib/h.h", Line: 5},
		{ID: 6, Function: "main", File: "main.c", Line: 3},
	}
	tests := []struct {
		name    string
		hunks   []Hunk
		want    []string
		outside int
	}{
		{"a line inside insert", []Hunk{{"src/kv.c", 15, 15}}, []string{"insert"}, 0},
		{"a deletion between delete's sites", []Hunk{{"src/kv.c", 31, 32}}, []string{"delete"}, 0},
		{"a comment above every function", []Hunk{{"src/kv.c", 1, 2}}, nil, 1},
		{"across two functions", []Hunk{{"src/kv.c", 18, 31}}, []string{"insert", "delete"}, 0},
		{"another file of the same name elsewhere", []Hunk{{"other/kv.c", 15, 15}}, nil, 1},
		{"an absolute path under the root", []Hunk{{"lib/h.h", 5, 5}}, []string{"helper"}, 0},
		{"a file compiled from its own directory", []Hunk{{"app/main.c", 3, 3}}, []string{"main"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scope{Root: "/repo", Hunks: tc.hunks}
			s.Resolve(sites)
			var got []string
			for _, f := range s.Functions {
				got = append(got, f.Function)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) || s.Outside != tc.outside {
				t.Errorf("touched %v, %d outside; want %v, %d", got, s.Outside, want, tc.outside)
			}
			for _, f := range tc.want {
				in := slices.ContainsFunc(sites, func(st trace.Site) bool {
					return st.Function == f && s.InFrames([]Frame{{Function: "main", File: "main.c"}, {Function: f, File: st.File}})
				})
				if !in {
					t.Errorf("a stack through %s is not in scope", f)
				}
			}
		})
	}
}

// TestScopeHolds checks which findings a scope keeps: by location, related location or frame.
func TestScopeHolds(t *testing.T) {
	s := &Scope{Hunks: []Hunk{{"kv.c", 30, 30}}}
	s.Resolve([]trace.Site{{Function: "delete", File: "kv.c", Line: 30}, {Function: "insert", File: "kv.c", Line: 10}})
	tests := []struct {
		f    Finding
		want bool
	}{
		{Finding{Location: Location{File: "kv.c", Line: 30, Function: "delete"}}, true},
		{Finding{Location: Location{File: "kv.c", Line: 10, Function: "insert"}}, false},
		{Finding{Location: Location{File: "kv.c", Line: 10, Function: "insert"}, Related: []Related{{File: "kv.c", Line: 30, Function: "delete"}}}, true},
		{Finding{Location: Location{File: "kv.c", Line: 10, Function: "insert"}, Stack: []Frame{{Function: "insert", File: "kv.c"}, {Function: "delete", File: "kv.c"}}}, true},
	}
	for i, tc := range tests {
		if got := s.Holds(&tc.f); got != tc.want {
			t.Errorf("finding %d: in scope %v, want %v", i, got, tc.want)
		}
	}
}

// TestChangedSince reads a real git repository's diff: a changed line and a deletion, a file
// added since the revision, and a bad revision refused with git's message.
func TestChangedSince(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("a.c", "1\n2\n3\n4\n5\n6\n")
	git("add", ".")
	git("commit", "-qm", "one")
	write("a.c", "1\n2\nthree\n4\n6\n")
	write("b.c", "x\ny\n")
	git("add", "b.c")
	s, err := ChangedSince(filepath.Join(dir), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	want := []Hunk{{"a.c", 3, 3}, {"a.c", 4, 5}, {"b.c", 1, 2}}
	if !slices.Equal(s.Hunks, want) {
		t.Errorf("hunks %v, want %v", s.Hunks, want)
	}
	if _, err := ChangedSince(dir, "no-such-rev"); err == nil {
		t.Error("a revision git does not know was accepted")
	}
	if _, err := ChangedSince(dir, "--output=/tmp/x"); err == nil {
		t.Error("an option given as a revision was accepted")
	}
}
