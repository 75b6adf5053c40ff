package fsmode

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// buildTestModel builds the model of a hand-written run: init gives the workload directory's
// files before it ("d/" for a directory), ops its calls, one per string:
//
//	creat P | opentrunc P | append P DATA | write P OFF DATA | trunc P SIZE | fsync P |
//	fdatasync P | sfr P OFF LEN | sync | rename P Q | link P Q | unlink P | mkdir P | rmdir P |
//	out TEXT
//
// The calls go through trace records and BuildModel, as a recorded run does.
func buildTestModel(t testing.TB, init map[string]string, ops []string) *Model {
	t.Helper()
	base, tr := recordTestRun(t, init, ops)
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := BuildModel(base, testRoot, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) > 0 {
		t.Fatalf("model warnings: %v", m.Warnings)
	}
	return m
}

// testRoot is the workload directory's path in the traces of recordTestRun.
const testRoot = "/w"

// recordTestRun writes the snapshot (base) and the trace (a file) of a hand-written run for
// buildTestModel.
func recordTestRun(t testing.TB, init map[string]string, ops []string) (base, tracePath string) {
	t.Helper()
	base = filepath.Join(t.TempDir(), "base")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range init {
			if !yield(k) {
				return
			}
		}
	}) {
		p := filepath.Join(base, strings.TrimSuffix(name, "/"))
		var err error
		if strings.HasSuffix(name, "/") {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte(init[name]), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const root = testRoot
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return root + "/" + p }
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("bad number %q", s)
		}
		return v
	}
	for _, op := range ops {
		f := strings.Fields(op)
		ev := &trace.Event{Kind: trace.KindFSOp}
		switch f[0] {
		case "creat":
			ev.FS, ev.FSFlags, ev.Path = trace.FSOpen, trace.FSCreate|trace.FSWriteOnly, abs(f[1])
		case "opentrunc":
			ev.FS, ev.FSFlags, ev.Path = trace.FSOpen, trace.FSTrunc|trace.FSWriteOnly, abs(f[1])
		case "append":
			ev.FS, ev.FSFlags, ev.Path, ev.Data = trace.FSWrite, trace.FSAppend, abs(f[1]), []byte(f[2])
		case "write":
			ev.FS, ev.Path, ev.FileOffset, ev.Data = trace.FSWrite, abs(f[1]), num(f[2]), []byte(f[3])
		case "trunc":
			ev.FS, ev.Path, ev.Size = trace.FSTruncate, abs(f[1]), num(f[2])
		case "fsync":
			ev.FS, ev.Path = trace.FSFsync, abs(f[1])
			if f[1] == "." {
				ev.Path = root
			}
		case "fdatasync":
			ev.FS, ev.Path = trace.FSFdatasync, abs(f[1])
		case "sfr":
			ev.FS, ev.Path, ev.FileOffset, ev.Size = trace.FSSyncFileRange, abs(f[1]), num(f[2]), num(f[3])
		case "sync":
			ev.FS = trace.FSSync
		case "rename":
			ev.FS, ev.Path, ev.Path2 = trace.FSRename, abs(f[1]), abs(f[2])
		case "link":
			ev.FS, ev.Path, ev.Path2 = trace.FSLink, abs(f[1]), abs(f[2])
		case "unlink":
			ev.FS, ev.Path = trace.FSUnlink, abs(f[1])
		case "mkdir":
			ev.FS, ev.Path = trace.FSMkdir, abs(f[1])
		case "rmdir":
			ev.FS, ev.Path = trace.FSRmdir, abs(f[1])
		case "out":
			ev = &trace.Event{Kind: trace.KindOutput, Handle: 1, Data: []byte(f[1])}
		default:
			t.Fatalf("unknown test operation %q", op)
		}
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tracePath = filepath.Join(t.TempDir(), "run.trace")
	if err := os.WriteFile(tracePath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, tracePath
}

// describeDir renders a crash directory and the output printed before the crash: its entries
// sorted, a directory as "d/", a file as "name=content" with zero bytes shown as 0 and garbage
// (bytes with the high bit set) as ?; "-" for an empty directory; then " | " and the output.
func describeDir(t *testing.T, dir string, stdout []byte) string {
	t.Helper()
	var parts []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			parts = append(parts, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, c := range b {
			switch {
			case c == 0:
				b[i] = '0'
			case c >= 0x80:
				b[i] = '?'
			}
		}
		parts = append(parts, rel+"="+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = "-"
	}
	if len(stdout) > 0 {
		s += " | " + string(stdout)
	}
	return s
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
		seen[describeDir(t, dst, stdout)] = true
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
				if exp, ok := c.deps[apm.Name]; ok {
					if got := opBefore(ms); !slices.Equal(got, exp) {
						t.Errorf("persist-before: got %q, want %q", got, exp)
					}
				}
			})
		}
	}
}

// TestStrategies checks the crash states each strategy chooses (ALICE, OSDI'14 §4.3) on small
// runs: the crash points of prefix, the (lost, persisted) pairs of omit-one, and how many
// states split and exhaustive build.
func TestStrategies(t *testing.T) {
	cases := []struct {
		name, apm string
		init      map[string]string
		ops       []string
		patch     []int // operations inside failing prefix runs
		points    []int
		omitOne   []string
		split     int
		exhaust   int
	}{
		// Under the default model nothing is ordered: every operation can be lost before each
		// later one. split: the append cut after its zeros and after its garbage (1 piece), the
		// same with its 3 one-byte pieces (8 cuts, each also with an earlier piece lost: 36),
		// and with 4 KiB blocks the one state not seen already (the garbage without the
		// zeros). exhaustive: 1 + 14 + 16 states holding a micro-operation of their crash point.
		{name: "rename over a file", apm: "default", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"}, points: []int{0, 1, 2},
			omitOne: []string{"0-1", "0-2", "1-2"}, split: 2 + 36 + 1, exhaust: 31},
		// ext4-ordered orders the three: no state loses one and keeps a later one, no call is
		// cut (each is one block), one state per crash point.
		{name: "rename over a file", apm: "ext4-ordered", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"}, points: []int{0, 1, 2},
			split: 0, exhaust: 3},
		// Operations in a failing prefix run, and the one after it, are left to prefix by
		// omit-one and split; exhaustive tries them all (the truncation, then 14 states of
		// the truncation and the append's zeros, garbage and data).
		{name: "patched", apm: "default", init: map[string]string{"f": "ba"},
			ops: []string{"opentrunc f", "append f ab"}, patch: []int{0}, points: []int{0, 1}, exhaust: 15},
		// The output is kept by every later state; the write may be lost before it only.
		// split: the write's 3 one-byte pieces, the first, two, the second alone.
		// exhaustive: {write}, {out}, {write, out}, {write, out, fsync}.
		{name: "fsync after an output", apm: "default", init: map[string]string{"f": "abc"},
			ops: []string{"write f 0 xyz", "out 1", "fsync f"}, points: []int{0, 1, 2},
			omitOne: []string{"0-1"}, split: 3, exhaust: 4},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.apm, func(t *testing.T) {
			apm, err := APMByName(c.apm)
			if err != nil {
				t.Fatal(err)
			}
			p := newPlan(buildTestModel(t, c.init, c.ops), apm)
			patch := map[int]bool{}
			for _, i := range c.patch {
				patch[i] = true
			}
			var points []int
			for _, it := range p.prefix() {
				points = append(points, it.point)
				if !slices.Equal(it.st.Persisted, p.upTo(0, it.point).Persisted) {
					t.Errorf("prefix state at %d is not everything issued", it.point)
				}
			}
			if !slices.Equal(points, c.points) {
				t.Errorf("prefix crash points %v, want %v", points, c.points)
			}
			var pairs []string
			for _, it := range p.omitOne(patch) {
				pairs = append(pairs, fmt.Sprintf("%d-%d", it.a, it.b))
				if !Legal(p.micro[0], it.st) {
					t.Errorf("omit-one state %d-%d is illegal", it.a, it.b)
				}
			}
			if !slices.Equal(pairs, c.omitOne) {
				t.Errorf("omit-one pairs %v, want %v", pairs, c.omitOne)
			}
			sp := p.split(patch)
			for _, it := range sp {
				if !Legal(p.micro[it.build], it.st) {
					t.Errorf("split state of %d is illegal", it.a)
				}
			}
			if len(sp) != c.split {
				t.Errorf("split: %d states, want %d", len(sp), c.split)
			}
			ex, skipped := p.exhaustive(DefaultMaxFree)
			if len(ex) != c.exhaust || skipped != 0 {
				t.Errorf("exhaustive: %d states (%d points skipped), want %d", len(ex), skipped, c.exhaust)
			}
		})
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
