package exec

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	hashA = "0123456789abcdef0123456789abcdef"
	hashB = "fedcba9876543210fedcba9876543210"
)

func TestParseConverge(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		legal    int
		hash     string
		to       int
		err      string
	}{
		{"hash only", "H " + hashA + "\n", 2, hashA, 0, ""},
		{"converged with the second", "H " + hashB + "\nC 1\n", 2, hashB, 2, ""},
		{"converged with the first", "H " + hashA + "\nC 0\n", 1, hashA, 1, ""},
		{"index out of range", "H " + hashA + "\nC 2\n", 2, hashA, 0, ""},
		{"negative index", "H " + hashA + "\nC -1\n", 2, hashA, 0, ""},
		{"no hash before C", "C 0\n", 2, "", 0, ""},
		{"upper-case hash", "H " + strings.ToUpper(hashA) + "\nC 0\n", 2, "", 0, ""},
		{"short hash", "H 0123\nC 0\n", 2, "", 0, ""},
		{"error", "E cannot open the pool\n", 2, "", 0, "cannot open the pool"},
		{"empty", "", 2, "", 0, ""},
		{"no newline at the end", "H " + hashA + "\nC 0", 1, hashA, 1, ""},
		{"garbage", "\x00\xff junk\nX 1\n", 2, "", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hash, to, err := parseConverge([]byte(tc.in), tc.legal)
			if hash != tc.hash || to != tc.to || err != tc.err {
				t.Errorf("parseConverge(%q, %d) = %q, %d, %q; want %q, %d, %q", tc.in, tc.legal, hash, to, err, tc.hash, tc.to, tc.err)
			}
		})
	}
}

// FuzzParseConverge: the runtime's report never panics the parser, and a match it accepts names
// a legal outcome given and comes with a valid hash.
func FuzzParseConverge(f *testing.F) {
	f.Add([]byte("H "+hashA+"\nC 1\n"), 2)
	f.Add([]byte("E why\n"), 0)
	f.Add([]byte("C 99999999999999999999\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, legal int) {
		hash, to, _ := parseConverge(data, legal)
		if hash != "" && !validHash(hash) {
			t.Fatalf("invalid hash %q accepted", hash)
		}
		if to != 0 && (to < 1 || to > legal || hash == "") {
			t.Fatalf("match %d of %d legal outcomes accepted (hash %q)", to, legal, hash)
		}
	})
}

func TestConvergeEnv(t *testing.T) {
	c := &Converge{Out: "/w/converge", Exclude: [][2]int64{{8192, 8192 + 1024*3072}, {0, 64}}, NeedOpen: true, Legal: []string{hashA, hashB}}
	want := "SCRY_CONVERGE=1\n/w/converge\n/p/pool\n8192+3145728,0+64\n1\n" + hashA + " " + hashB
	if got := c.env("/p/pool"); got != want {
		t.Errorf("env = %q, want %q", got, want)
	}
	c = &Converge{Out: "/w/c"}
	if got, want := c.env("/p"), "SCRY_CONVERGE=1\n/w/c\n/p\n\n0\n"; got != want {
		t.Errorf("env = %q, want %q", got, want)
	}
}

// TestConvergeCollect: the report is read into the outcome and removed; a run that left none
// gets nothing.
func TestConvergeCollect(t *testing.T) {
	out := filepath.Join(t.TempDir(), "converge")
	c := &Converge{Out: out, Legal: []string{hashA}}
	if err := os.WriteFile(out, []byte("H "+hashA+"\nC 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var o Outcome
	c.collect(&o)
	if o.StateHash != hashA || o.ConvergedTo != 1 {
		t.Errorf("collected %q, %d; want %q, 1", o.StateHash, o.ConvergedTo, hashA)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the report is still there: %v", err)
	}
	o = Outcome{}
	c.collect(&o)
	if o.StateHash != "" || o.ConvergedTo != 0 {
		t.Errorf("no report collected %q, %d", o.StateHash, o.ConvergedTo)
	}
	var nilConv *Converge
	nilConv.collect(&o) // a run without convergence
	nilConv.prepare()
}

func TestConvergedOutcome(t *testing.T) {
	filter := regexp.MustCompile(`^seed:`)
	legal := Outcome{ExitCode: 0, Stdout: []byte("seed: 1\nopened /p/a\nv 1\nv 2\n"), filter: filter, pool: "/p/a"}
	for _, tc := range []struct {
		name string
		got  Outcome
		ok   bool
	}{
		{"prefix", Outcome{ConvergedTo: 1, Stdout: []byte("seed: 7\nopened /p/b\n"), filter: filter, pool: "/p/b"}, true},
		{"nothing printed", Outcome{ConvergedTo: 1}, true},
		{"not converged", Outcome{Stdout: []byte("seed: 7\n")}, false},
		{"different line", Outcome{ConvergedTo: 1, Stdout: []byte("recovered\n")}, false},
		{"failed to start", Outcome{ConvergedTo: 1, Err: os.ErrNotExist}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.got.Duration = 3
			c, ok := tc.got.ConvergedOutcome(legal)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if string(c.Normalized()) != string(legal.Normalized()) || c.ExitCode != 0 || c.Duration != 3 || c.ConvergedTo != 1 {
				t.Errorf("converged outcome %+v: want the legal outcome's output and exit, the run's duration", c)
			}
		})
	}
	// A legal outcome that did not complete is nothing to converge with.
	if _, ok := (Outcome{ConvergedTo: 1}).ConvergedOutcome(Outcome{TimedOut: true}); ok {
		t.Error("converged with a legal outcome that timed out")
	}
}
