package exec

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// lazyLine returns a listed line of n contents, content v filled with byte v+1.
func lazyLine(file uint32, off uint64, n int) LazyLine {
	l := LazyLine{File: file, Offset: off}
	for v := range n {
		var c [LazyLineSize]byte
		for i := range c {
			c[i] = byte(v + 1)
		}
		l.Values = append(l.Values, c)
	}
	return l
}

func TestWriteLazyTable(t *testing.T) {
	good := &LazyTable{LeafTimeout: 1500 * time.Millisecond, Files: []string{"/tmp/w/pool.img"},
		Lines: []LazyLine{lazyLine(0, 0, 2), lazyLine(0, 4096, 3)}}
	var b bytes.Buffer
	if err := WriteLazyTable(&b, good); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "lazy-table.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("table differs from %s (go test -update rewrites it)", golden)
	}
	bad := []struct {
		name  string
		table LazyTable
		want  string
	}{
		{"no file", LazyTable{}, "no file"},
		{"relative path", LazyTable{Files: []string{"pool"}}, "absolute"},
		{"file index", LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(1, 0, 2)}}, "names file 1"},
		{"unaligned", LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(0, 8, 2)}}, "aligned"},
		{"one content", LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(0, 0, 1)}}, "1 contents"},
		{"unsorted", LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(0, 64, 2), lazyLine(0, 0, 2)}}, "not after"},
		{"duplicate", LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(0, 64, 2), lazyLine(0, 64, 2)}}, "not after"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteLazyTable(&bytes.Buffer{}, &tt.table)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// table3 lists three lines of 2, 3 and 2 contents.
var table3 = &LazyTable{Files: []string{"/p"}, Lines: []LazyLine{lazyLine(0, 0, 2), lazyLine(0, 64, 3), lazyLine(0, 128, 2)}}

func TestParseLazyResults(t *testing.T) {
	exited := func(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
	tests := []struct {
		name, in string
		want     LazyResults
		err      string
	}{
		{"empty", "", LazyResults{}, ""},
		{"one branch", "inner 10\nleaf 11 0 0 0:0\nleaf 12 256 0 0:1\n", LazyResults{Inner: []int{10}, Leaves: []LazyLeafRecord{
			{PID: 11, Status: exited(0), Choices: []LazyChoice{{0, 0}}},
			{PID: 12, Status: exited(1), Choices: []LazyChoice{{0, 1}}}}}, ""},
		{"nested: the inner child's leaf record is dropped", "inner 10\ninner 11\nleaf 12 9 1 0:0,2:1\nleaf 11 0 0 0:0\nleaf 13 11 0 0:1\n",
			LazyResults{Inner: []int{10, 11}, Leaves: []LazyLeafRecord{
				{PID: 12, Status: 9, TimedOut: true, Choices: []LazyChoice{{0, 0}, {2, 1}}},
				{PID: 13, Status: 11, Choices: []LazyChoice{{0, 1}}}}}, ""},
		{"abort", "inner 10\nabort 11 more than one thread at the first branch\n", LazyResults{Inner: []int{10}, Aborts: []string{"more than one thread at the first branch"}}, ""},
		{"no choices", "leaf 11 0 0 -\n", LazyResults{Leaves: []LazyLeafRecord{{PID: 11}}}, ""},
		{"cut short", "inner 10\nleaf 11 0", LazyResults{}, "no newline"},
		{"unknown record", "branch 10\n", LazyResults{}, "unknown record"},
		{"fields", "leaf 11 0 0\n", LazyResults{}, "4 fields"},
		{"pid", "inner x\n", LazyResults{}, "process number"},
		{"pid zero", "inner 0\n", LazyResults{}, "process number"},
		{"status", "leaf 11 -1 0 0:0\n", LazyResults{}, "wait status"},
		{"timedout", "leaf 11 0 2 0:0\n", LazyResults{}, "neither 0 nor 1"},
		{"line out of the table", "leaf 11 0 0 3:0\n", LazyResults{}, "names no line"},
		{"content out of the line", "leaf 11 0 0 1:3\n", LazyResults{}, "names no line"},
		{"choice syntax", "leaf 11 0 0 1-3\n", LazyResults{}, "LINE:VALUE"},
		{"line twice", "leaf 11 0 0 1:0,1:1\n", LazyResults{}, "chosen twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLazyResults([]byte(tt.in), table3)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// FuzzLazyResults checks that any results file parses without a panic, and that what parses
// names only lines and contents of the table, each line once per leaf, and no inner process
// among the leaves.
func FuzzLazyResults(f *testing.F) {
	for _, s := range []string{"", "inner 10\nleaf 11 0 0 0:0\nleaf 12 256 0 0:1,1:2\n", "abort 3 why\n", "leaf 1 9 1 -\n", "inner 1\nleaf 1 0 0 2:1\n", "leaf 11 0 0 1:0,1:1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseLazyResults(b, table3)
		if err != nil {
			return
		}
		inner := map[int]bool{}
		for _, p := range r.Inner {
			inner[p] = true
		}
		for _, l := range r.Leaves {
			if inner[l.PID] {
				t.Errorf("leaf %d is also inner", l.PID)
			}
			seen := map[int]bool{}
			for _, c := range l.Choices {
				if c.Line < 0 || c.Line >= len(table3.Lines) || c.Value < 0 || c.Value >= len(table3.Lines[c.Line].Values) || seen[c.Line] {
					t.Errorf("leaf %d: choice %v", l.PID, c)
				}
				seen[c.Line] = true
			}
		}
	})
}

// TestRunLazy runs a shell script that plays the runtime's part of the protocol (it writes the
// results and the leaves' output the way coordinators do) and checks the outcome scry builds.
func TestRunLazy(t *testing.T) {
	tests := []struct {
		name   string
		script string
		check  func(t *testing.T, lo LazyOutcome)
	}{
		{"never branched", `read op; echo "root saw $op"; exit 3`, func(t *testing.T, lo LazyOutcome) {
			if lo.Fallback != "" || len(lo.Leaves) != 0 || lo.Root.ExitCode != 3 || string(lo.Root.Stdout) != "root saw a\n" {
				t.Errorf("got %+v", lo)
			}
		}},
		{"two leaves", `echo "inner $$" >> $SCRY_LAZY/results
printf 'x\ny\n' > $SCRY_LAZY/101.out; : > $SCRY_LAZY/101.err
printf 'x\nz\n' > $SCRY_LAZY/102.out; echo oops > $SCRY_LAZY/102.err
echo "leaf 101 0 0 1:2" >> $SCRY_LAZY/results
echo "leaf 102 139 0 1:0,0:1" >> $SCRY_LAZY/results
exit 0`, func(t *testing.T, lo LazyOutcome) {
			if lo.Fallback != "" || len(lo.Leaves) != 2 {
				t.Fatalf("got %+v", lo)
			}
			a, b := lo.Leaves[0], lo.Leaves[1]
			if a.Outcome.ExitCode != 0 || string(a.Outcome.Stdout) != "x\ny\n" || !reflect.DeepEqual(a.Choices, []LazyChoice{{1, 2}}) {
				t.Errorf("leaf 0: %+v", a)
			}
			if b.Outcome.Signal != syscall.SIGSEGV || string(b.Outcome.Stderr) != "oops\n" || !reflect.DeepEqual(b.Choices, []LazyChoice{{1, 0}, {0, 1}}) {
				t.Errorf("leaf 1: %+v", b)
			}
		}},
		{"a leaf timed out", `echo "inner $$" >> $SCRY_LAZY/results; : > $SCRY_LAZY/7.out; : > $SCRY_LAZY/7.err
echo "leaf 7 9 1 0:0" >> $SCRY_LAZY/results`, func(t *testing.T, lo LazyOutcome) {
			if len(lo.Leaves) != 1 || !lo.Leaves[0].Outcome.TimedOut || lo.Leaves[0].Outcome.Signal != 0 {
				t.Errorf("got %+v", lo)
			}
		}},
		{"abort", `echo "abort $$ standard input is not seekable" >> $SCRY_LAZY/results; exit 125`, func(t *testing.T, lo LazyOutcome) {
			if !lo.Abort || lo.Fallback != "standard input is not seekable" {
				t.Errorf("got %+v", lo)
			}
		}},
		{"a leaf without output", `echo "inner $$" >> $SCRY_LAZY/results; echo "leaf 8 0 0 0:0" >> $SCRY_LAZY/results`, func(t *testing.T, lo LazyOutcome) {
			if !strings.Contains(lo.Fallback, "output of leaf 8") {
				t.Errorf("got %+v", lo)
			}
		}},
		{"bad results", `echo "inner $$" >> $SCRY_LAZY/results; echo "leaf 8 0 0 9:0" >> $SCRY_LAZY/results`, func(t *testing.T, lo LazyOutcome) {
			if !strings.Contains(lo.Fallback, "names no line") {
				t.Errorf("got %+v", lo)
			}
		}},
		{"the standard streams are regular files", `test -f /dev/stdin -a -f /dev/stdout -a -f /dev/stderr && test "$(cat $SCRY_LAZY/table | head -c 8)" = SCRYLZY1 && echo files`, func(t *testing.T, lo LazyOutcome) {
			if lo.Root.ExitCode != 0 || string(lo.Root.Stdout) != "files\n" {
				t.Errorf("got %+v", lo)
			}
		}},
	}
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	if err := os.WriteFile(pool, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := &LazyTable{Files: []string{pool}, Lines: []LazyLine{lazyLine(0, 0, 2), lazyLine(0, 64, 3)}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := Target{Args: []string{"/bin/sh", "-c", tt.script, "sh", PoolPlaceholder}}
			lo := tg.RunLazy(context.Background(), pool, []byte("a\nb\n"), "", dir, tbl, time.Minute, time.Minute)
			if lo.Root.Err != nil {
				t.Fatal(lo.Root.Err)
			}
			tt.check(t, lo)
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("the run's directory was left behind: %v", ents)
			}
		})
	}
}

// TestRunLazyHang checks the root's bound before it branches: a root that never branches and
// runs past the leaf timeout is a hang, not a run of the tree's length.
func TestRunLazyHang(t *testing.T) {
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	if err := os.WriteFile(pool, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := &LazyTable{Files: []string{pool}, Lines: []LazyLine{lazyLine(0, 0, 2)}}
	tg := Target{Args: []string{"/bin/sh", "-c", "exec sleep 600", "sh", PoolPlaceholder}}
	lo := tg.RunLazy(context.Background(), pool, nil, "", dir, tbl, 100*time.Millisecond, 10*time.Minute)
	if !lo.Root.TimedOut || lo.Root.Err != nil || lo.Fallback != "" {
		t.Errorf("got %+v, want a hang", lo)
	}
	if d := fmt.Sprint(lo.Root.Describe()); !strings.Contains(d, "hung") {
		t.Errorf("describe: %s", d)
	}
}

// TestRunLazyTree checks the tree's bound: a root that branched (its inner record written) and
// whose tree runs past the bound falls back, whatever the leaf bound.
func TestRunLazyTree(t *testing.T) {
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	if err := os.WriteFile(pool, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := &LazyTable{Files: []string{pool}, Lines: []LazyLine{lazyLine(0, 0, 2)}}
	tg := Target{Args: []string{"/bin/sh", "-c", `echo "inner $$" >> $SCRY_LAZY/results; exec sleep 600`, "sh", PoolPlaceholder}}
	lo := tg.RunLazy(context.Background(), pool, nil, "", dir, tbl, 10*time.Minute, 100*time.Millisecond)
	if lo.Fallback != "the tree of runs did not end within its time bound" || lo.Abort {
		t.Errorf("got %+v", lo)
	}
}
