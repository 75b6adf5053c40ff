package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/trace"
)

// buildTestModel builds the model of a hand-written run (fstest.RecordRun): the calls go
// through trace records and BuildModel, as a recorded run does.
func buildTestModel(t testing.TB, init map[string]string, ops []string) *Model {
	t.Helper()
	base, tr := fstest.RecordRun(t, init, ops)
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := BuildModel(base, fstest.Root, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) > 0 {
		t.Fatalf("model warnings: %v", m.Warnings)
	}
	return m
}

// crashResults materializes every legal state of build ms at the end of the run and returns
// the distinct directories they give (describeDir), sorted.
func crashResults(t *testing.T, m *Model, ms []Micro) []string {
	t.Helper()
	states, ok := LegalStates(ms, len(ms), 1<<16)
	if !ok {
		t.Fatal("too many states")
	}
	seen := map[string]bool{}
	tmp := t.TempDir()
	for i, st := range states {
		dst := filepath.Join(tmp, strconv.Itoa(i))
		stdout, _, err := Materialize(m, ms, st, dst)
		if err != nil {
			t.Fatal(err)
		}
		seen[fstest.DescribeDir(t, dst, stdout)] = true
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	})
}

// opBefore lists the persist-before relation lifted to logical operations: "i<j" when a
// micro-operation of j depends directly on one of i.
func opBefore(ms []Micro) []string {
	seen := map[string]bool{}
	var out []string
	for _, mi := range ms {
		for _, d := range mi.Deps {
			if a := ms[d].Op; a != mi.Op {
				k := fmt.Sprintf("%d<%d", a, mi.Op)
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestPersistenceModels is the table of the persistence models (docs/fs-mode.md, "Persistence
// models"): for small runs, the directories a crash after the last call may leave under each
// model (every legal state materialized: exactly these, so a state a model must rule out is
// one missing from its list), and for some the persist-before relation between the calls.
func TestPersistenceModels(t *testing.T) {
	all := func(s ...string) map[string][]string {
		return map[string][]string{"default": s, "ext4-ordered": s, "ext4-journal": s}
	}
	cases := []struct {
		name string
		init map[string]string
		ops  []string
		want map[string][]string // by model: every directory a crash may leave
		deps map[string][]string // by model: opBefore, when given
	}{
		{
			// fsync persists the data, not the new file's name (ALICE §2: a file's fsync does
			// not persist its directory entry); ext4's fsync commits the journal, creat with it.
			name: "append then fsync", ops: []string{"creat a", "append a xy", "fsync a"},
			want: map[string][]string{
				"default":      {"-", "a=xy"},
				"ext4-ordered": {"a=xy"},
				"ext4-journal": {"a=xy"},
			},
			deps: map[string][]string{"default": {"1<2"}, "ext4-ordered": {"0<1", "0<2", "1<2"}},
		},
		{
			// An append may expose zeros or garbage before its data under ALICE's default;
			// ext4 (ordered and journal) writes an append's data before the size that shows it.
			name: "append without sync", ops: []string{"creat a", "append a xy"},
			want: map[string][]string{
				"default":      {"-", "a=", "a=00", "a=??", "a=xy"},
				"ext4-ordered": {"-", "a=", "a=xy"},
				"ext4-journal": {"-", "a=", "a=xy"},
			},
		},
		{
			// Replace by rename without fsync: under the default model the new name may show
			// the file before its data; ext4 persists the data before a rename that replaces a
			// file (auto_da_alloc), and data=journal keeps program order.
			name: "rename over a file without fsync", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"},
			want: map[string][]string{
				"default":      {"f=", "f=000", "f=???", "f=new", "f=old", "f=old t=", "f=old t=000", "f=old t=???", "f=old t=new"},
				"ext4-ordered": {"f=new", "f=old", "f=old t=", "f=old t=new"},
				"ext4-journal": {"f=new", "f=old", "f=old t=", "f=old t=new"},
			},
			deps: map[string][]string{"default": nil, "ext4-ordered": {"0<1", "0<2", "1<2"}, "ext4-journal": {"0<1", "1<2"}},
		},
		{
			// A rename to a new name is not covered by auto_da_alloc: with delayed allocation
			// the name can persist before the data (ext4's zero-length files).
			name: "rename to a new name without fsync", ops: []string{"creat t", "append t new", "rename t f"},
			want: map[string][]string{
				"default":      {"-", "f=", "f=000", "f=???", "f=new", "t=", "t=000", "t=???", "t=new"},
				"ext4-ordered": {"-", "f=", "f=new", "t=", "t=new"},
				"ext4-journal": {"-", "f=new", "t=", "t=new"},
			},
		},
		{
			// The protocol that is correct on every file system.
			name: "write, fsync, rename, fsync the directory", init: map[string]string{"f": "old"},
			ops:  []string{"creat t", "append t new", "fsync t", "rename t f", "fsync ."},
			want: all("f=new"),
		},
		{
			// The same before the directory's fsync: the rename may be lost (never torn).
			name: "write, fsync, rename", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "fsync t", "rename t f"},
			want: map[string][]string{
				"default":      {"f=new", "f=old", "f=old t=new"},
				"ext4-ordered": {"f=new", "f=old t=new"},
				"ext4-journal": {"f=new", "f=old t=new"},
			},
		},
		{
			// Overwrites persist in any order, except under data=journal.
			name: "two overwrites", init: map[string]string{"f": "abcdef"},
			ops: []string{"write f 0 UVW", "write f 3 XYZ"},
			want: map[string][]string{
				"default":      {"f=UVWXYZ", "f=UVWdef", "f=abcXYZ", "f=abcdef"},
				"ext4-ordered": {"f=UVWXYZ", "f=UVWdef", "f=abcXYZ", "f=abcdef"},
				"ext4-journal": {"f=UVWXYZ", "f=UVWdef", "f=abcdef"},
			},
			deps: map[string][]string{"default": nil, "ext4-ordered": nil, "ext4-journal": {"0<1"}},
		},
		{
			// An output is a barrier: later states keep it, but it persists nothing before it.
			name: "output after an unsynced append", ops: []string{"creat a", "append a x", "out ok"},
			want: map[string][]string{
				"default":      {"- | ok", "a= | ok", "a=0 | ok", "a=? | ok", "a=x | ok"},
				"ext4-ordered": {"- | ok", "a= | ok", "a=x | ok"},
				"ext4-journal": {"- | ok", "a= | ok", "a=x | ok"},
			},
		},
		{
			// A sync after a barrier covers what the barrier did not persist.
			name: "fsync after an output", init: map[string]string{"f": "abc"},
			ops:  []string{"write f 0 xyz", "out 1", "fsync f"},
			want: all("f=xyz | 1"),
		},
		{
			// Unlinking a file's last name may truncate it first (ALICE's default); ext4
			// journals it whole.
			name: "unlink", init: map[string]string{"f": "abc"}, ops: []string{"unlink f"},
			want: map[string][]string{
				"default":      {"-", "f=", "f=abc"},
				"ext4-ordered": {"-", "f=abc"},
				"ext4-journal": {"-", "f=abc"},
			},
		},
		{
			// The trapdoor sort: a file truncated in place, then rewritten.
			name: "truncate in place, then append", init: map[string]string{"f": "ba"},
			ops: []string{"opentrunc f", "append f ab"},
			want: map[string][]string{
				"default":      {"f=", "f=00", "f=??", "f=ab", "f=ba"},
				"ext4-ordered": {"f=", "f=ab", "f=ba"},
				"ext4-journal": {"f=", "f=ab", "f=ba"},
			},
		},
		{
			// A file's name is durable with its directory's fsync; the directory's own name
			// needs its parent's.
			name: "mkdir, file, fsyncs", ops: []string{"mkdir d", "creat d/a", "append d/a x", "fsync d/a", "fsync d"},
			want: map[string][]string{
				"default":      {"-", "d/ d/a=x"},
				"ext4-ordered": {"d/ d/a=x"},
				"ext4-journal": {"d/ d/a=x"},
			},
		},
		{
			// sync() persists everything, directory entries too (ALICE's code syncs files only).
			name: "sync", ops: []string{"creat a", "append a x", "mkdir d", "sync"},
			want: all("a=x d/"),
		},
		{
			name: "fsync of a directory", init: map[string]string{"d/": ""}, ops: []string{"creat d/a", "fsync d"},
			want: all("d/ d/a="),
		},
		{
			// A directory's entries are its data: fdatasync persists them (SQLite syncs its
			// directory so). ALICE's code assumed fdatasync is never called on a directory.
			name: "fdatasync of a directory", init: map[string]string{"d/": ""}, ops: []string{"creat d/a", "fdatasync d"},
			want: all("d/ d/a="),
		},
		{
			// Neither fsync nor fdatasync of a file persists its name, under the default model.
			name: "fdatasync of a new file", ops: []string{"creat a", "append a x", "fdatasync a"},
			want: map[string][]string{
				"default":      {"-", "a=x"},
				"ext4-ordered": {"a=x"},
				"ext4-journal": {"a=x"},
			},
		},
		{
			// sync_file_range persists its range's data only.
			name: "sync_file_range", init: map[string]string{"f": "abcdef"},
			ops:  []string{"write f 0 UVW", "write f 3 XYZ", "sfr f 0 3"},
			want: all("f=UVWXYZ", "f=UVWdef"),
		},
		{
			// LMDB's meta page: an overwrite through an O_DSYNC descriptor is durable when the
			// write returns (open(2)), under every model: the output cannot outlive it.
			name: "O_DSYNC overwrite", init: map[string]string{"f": "abcd"},
			ops:  []string{"write f 0 XY +dsync", "out ok"},
			want: all("f=XYcd | ok"),
			// 0 the write, 1 the sync it implies, 2 the output
			deps: map[string][]string{"default": {"0<1", "1<2"}},
		},
		{
			// The durability is the write's byte range only: an earlier unsynced overwrite of
			// other bytes may still be lost, except where program order holds (data=journal).
			name: "O_DSYNC overwrite after an unsynced one", init: map[string]string{"f": "abcdef"},
			ops: []string{"write f 4 QQ", "write f 0 XY +dsync"},
			want: map[string][]string{
				"default":      {"f=XYcdQQ", "f=XYcdef"},
				"ext4-ordered": {"f=XYcdQQ", "f=XYcdef"},
				"ext4-journal": {"f=XYcdQQ"},
			},
		},
		{
			// O_DSYNC persists the data and the size that reads it back, not the new file's name
			// under the default model (as fdatasync); ext4 commits the journal, creat with it.
			name: "O_DSYNC append to a new file", ops: []string{"creat a", "append a xy +dsync", "out ok"},
			want: map[string][]string{
				"default":      {"- | ok", "a=xy | ok"},
				"ext4-ordered": {"a=xy | ok"},
				"ext4-journal": {"a=xy | ok"},
			},
		},
		{
			// O_SYNC (and RWF_SYNC): as O_DSYNC, with the rest of the file's metadata.
			name: "O_SYNC append", init: map[string]string{"f": "ab"}, ops: []string{"append f cd +sync"},
			want: all("f=abcd"),
		},
		{
			// sync_file_range writes no metadata (sync_file_range(2)): an append's bytes, which
			// need the new size, are not guaranteed by it.
			name: "sync_file_range of an append", init: map[string]string{"f": "ab"},
			ops: []string{"append f cd", "sfr f 0 0", "out ok"},
			want: map[string][]string{
				"default":      {"f=ab | ok", "f=ab00 | ok", "f=ab?? | ok", "f=abcd | ok"},
				"ext4-ordered": {"f=ab | ok", "f=abcd | ok"},
				"ext4-journal": {"f=ab | ok", "f=abcd | ok"},
			},
		},
		{
			// fallocate(2): FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE zeros the range inside the
			// file, an overwrite; KEEP_SIZE alone changes nothing visible.
			name: "fallocate punch hole", init: map[string]string{"f": "abcdef"},
			ops:  []string{"falloc f keep 0 100", "falloc f punch 1 2"},
			want: all("f=a00def", "f=abcdef"),
		},
		{
			// Plain allocation past the end extends the size (the new bytes read as zeros).
			name: "fallocate extends", init: map[string]string{"f": "abc"}, ops: []string{"falloc f alloc 0 5"},
			want: map[string][]string{
				"default":      {"f=abc", "f=abc00", "f=abc??"},
				"ext4-ordered": {"f=abc", "f=abc00"},
				"ext4-journal": {"f=abc", "f=abc00"},
			},
		},
		{
			// FALLOC_FL_ZERO_RANGE zeros the bytes inside the file and extends it to the range's
			// end; with KEEP_SIZE it stops at the end (g: 9 bytes from 1 zero 2).
			name: "fallocate zero range", init: map[string]string{"f": "abcdef", "g": "abc"},
			ops: []string{"falloc f zero 4 4", "falloc g zerokeep 1 9", "fsync g"},
			want: map[string][]string{
				"default": {"f=abcd0000 g=a00", "f=abcd00 g=a00", "f=abcd00?? g=a00", "f=abcdef g=a00", "f=abcdef00 g=a00", "f=abcdef?? g=a00"},
				// ext4's fsync of g commits the journal, f's new size with it
				"ext4-ordered": {"f=abcd0000 g=a00", "f=abcdef00 g=a00"},
				"ext4-journal": {"f=abcd0000 g=a00"},
			},
		},
		{
			// open(2)'s O_TMPFILE: a file without a name, written, then named by linkat
			// (AT_EMPTY_PATH). The name may persist before the data except under data=journal.
			name: "O_TMPFILE, then linkat", ops: []string{"tmpfile . 7", "fdappend 7 obj", "fdlink 7 o"},
			want: map[string][]string{
				"default":      {"-", "o=", "o=000", "o=???", "o=obj"},
				"ext4-ordered": {"-", "o=", "o=obj"},
				"ext4-journal": {"-", "o=obj"},
			},
		},
		{
			// copy_file_range writes the source's bytes as the run left them at that point (a's
			// first byte rewritten before the copy), not the snapshot's.
			name: "copy_file_range", init: map[string]string{"a": "hello"},
			ops: []string{"write a 0 J", "creat b", "copy a 0 b 0 2", "fsync b", "fsync ."},
			want: map[string][]string{
				"default":      {"a=Jello b=Je", "a=hello b=Je"},
				"ext4-ordered": {"a=Jello b=Je", "a=hello b=Je"},
				"ext4-journal": {"a=Jello b=Je"},
			},
		},
		{
			// git's loose objects: written to a temporary name, linked to the final one, the
			// temporary unlinked, with no fsync (core.fsyncObjectFiles off). The name may
			// persist without the data under the default model and ext4 with delayed
			// allocation (git's empty objects after a crash); data=journal keeps order.
			name: "link, then unlink the temporary name", ops: []string{"creat tmp", "append tmp obj", "link tmp o", "unlink tmp"},
			want: map[string][]string{
				"default": {"-", "o= tmp=", "o=", "o=000 tmp=000", "o=000", "o=??? tmp=???", "o=???", "o=obj tmp=obj", "o=obj",
					"tmp=", "tmp=000", "tmp=???", "tmp=obj"},
				"ext4-ordered": {"-", "o= tmp=", "o=", "o=obj tmp=obj", "o=obj", "tmp=", "tmp=obj"},
				"ext4-journal": {"-", "o=obj tmp=obj", "o=obj", "tmp=", "tmp=obj"},
			},
		},
	}
	for _, c := range cases {
		m := buildTestModel(t, c.init, c.ops)
		for _, apm := range APMs() {
			t.Run(c.name+"/"+apm.Name, func(t *testing.T) {
				ms := apm.Build(m, apm.Base)
				want := slices.Clone(c.want[apm.Name])
				slices.Sort(want)
				if got := crashResults(t, m, ms); !slices.Equal(got, want) {
					t.Errorf("crash states:\n got %q\nwant %q", got, want)
				}
				checkLegalUnder(t, m, apm, ms, c.want)
				if exp, ok := c.deps[apm.Name]; ok {
					if got := opBefore(ms); !slices.Equal(got, exp) {
						t.Errorf("persist-before: got %q, want %q", got, exp)
					}
				}
			})
		}
	}
}

// checkLegalUnder checks LegalUnder on every legal state of build ms (of apm) at the end of
// the run: it holds under apm itself, and under another model only when that model's list of
// directories (want) has the state's directory (an equivalent state leaves the same one). It
// logs the states whose directory another model allows but LegalUnder does not find (an
// equivalent state with other invisible effects), and fails when there are more than a third.
func checkLegalUnder(t *testing.T, m *Model, apm *APM, ms []Micro, want map[string][]string) {
	t.Helper()
	states, _ := LegalStates(ms, len(ms), 1<<16)
	point := len(m.Ops) - 1
	tmp := t.TempDir()
	missed, total := 0, 0
	for i, st := range states {
		dst := filepath.Join(tmp, strconv.Itoa(i))
		stdout, _, err := Materialize(m, ms, st, dst)
		if err != nil {
			t.Fatal(err)
		}
		dir := fstest.DescribeDir(t, dst, stdout)
		for _, other := range APMs() {
			legal := LegalUnder(m, ms, st, point, other, nil)
			allowed := slices.Contains(want[other.Name], dir)
			switch {
			case other == apm && !legal:
				t.Errorf("state %d (%s) is not legal under its own model", i, dir)
			case legal && !allowed:
				t.Errorf("state %d (%s) legal under %s, which does not allow its directory", i, dir, other.Name)
			case !legal && allowed:
				t.Logf("state %d (%s): %s allows the directory, LegalUnder finds no equivalent state", i, dir, other.Name)
				missed++
			}
			if allowed {
				total++
			}
		}
	}
	if missed*3 > total {
		t.Errorf("LegalUnder misses %d of %d states another model allows", missed, total)
	}
}

// TestLegalStatesBound: LegalStates gives up past its limit, and Free counts what a crash may
// lose.
func TestLegalStatesBound(t *testing.T) {
	m := buildTestModel(t, nil, []string{"creat a", "append a x", "creat b", "append b y"})
	ms := apmDefault.Build(m, apmDefault.Base)
	if n := len(Free(ms, len(ms))); n != 8 {
		t.Fatalf("Free: %d micro-operations, want 8", n)
	}
	if _, ok := LegalStates(ms, len(ms), 255); ok {
		t.Error("LegalStates returned 256 states with a limit of 255")
	}
	if st, ok := LegalStates(ms, len(ms), 256); !ok || len(st) != 256 {
		t.Errorf("LegalStates: %d states, %v; want 256", len(st), ok)
	}
}

// BenchmarkMaterialize builds a crash directory of a workload directory of 60 files of 1 KiB
// in which the run appended to 3 files and renamed one (the size of a small git repository).
func BenchmarkMaterialize(b *testing.B) {
	init := map[string]string{}
	for i := range 60 {
		init[fmt.Sprintf("f%02d", i)] = strings.Repeat("x", 1024)
	}
	m := buildTestModel(b, init, []string{"append f01 abc", "append f02 def", "creat n", "append n ghi", "rename n f03"})
	ms := apmDefault.Build(m, apmDefault.Base)
	st := State{Persisted: make([]bool, len(ms))}
	for i := range st.Persisted {
		st.Persisted[i] = true
	}
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(dir, strconv.Itoa(i))
		if _, _, err := Materialize(m, ms, st, dst); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}
