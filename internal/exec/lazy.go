package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Lazy runs (Jaaru, ASPLOS'21, §3–4: lazy exploration of crash states). One run of the target
// on a crash point's fully applied image stands for every crash state of that point: the
// runtime linked into a program built with `scry cc` protects the pages of the cache lines a
// table lists (their content is undetermined by the crash) and, at the first access to one
// such line, forks one child per content the line can have, each child writing its content
// into the line and going on; nested accesses branch again. The leaves of that tree are the
// crash states that behave differently. scry and the runtime talk through a directory D named
// by SCRY_LAZY=D in the run's environment: D/table (WriteLazyTable) in, D/results
// (ParseLazyResults) and each leaf's output, D/PID.out and D/PID.err, out. docs/lazy-exploration.md
// describes the protocol.

// LazyMagic opens a lazy run's table.
const LazyMagic = "SCRYLZY1"

// LazyVar is the variable that names a lazy run's directory in its environment.
const LazyVar = "SCRY_LAZY"

// LazyLineSize is the size in bytes of a line's content in the table: one cache line.
const LazyLineSize = 64

// LazyAbortStatus is the exit status of a process that found lazy branching impossible (it
// wrote an abort record first).
const LazyAbortStatus = 125

// LazyTable is what a lazy run may branch on: the files whose mappings are watched and the
// cache lines of them whose content the crash leaves undetermined.
type LazyTable struct {
	// LeafTimeout bounds each leaf, from its fork (0: none).
	LeafTimeout time.Duration
	// Files are the absolute paths of the working copies (one today: the pool's).
	Files []string
	// Lines are sorted by (File, Offset), unique.
	Lines []LazyLine
}

// LazyLine is one listed cache line: its file (an index into LazyTable.Files), its byte offset
// in that file (a multiple of LazyLineSize) and its possible contents, at least two, distinct,
// in the order the choices of the results name them.
type LazyLine struct {
	File   uint32
	Offset uint64
	Values [][LazyLineSize]byte
}

// check reports what makes the table one the runtime would reject.
func (t *LazyTable) check() error {
	if len(t.Files) == 0 {
		return errors.New("lazy table: no file")
	}
	for _, f := range t.Files {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("lazy table: %q is not an absolute path", f)
		}
	}
	if ms := t.LeafTimeout.Milliseconds(); ms < 0 || ms > 1<<32-1 {
		return fmt.Errorf("lazy table: leaf timeout %v out of range", t.LeafTimeout)
	}
	for i, l := range t.Lines {
		switch {
		case int(l.File) >= len(t.Files):
			return fmt.Errorf("lazy table: line %d names file %d of %d", i, l.File, len(t.Files))
		case l.Offset%LazyLineSize != 0:
			return fmt.Errorf("lazy table: line %d at offset %d is not %d-byte aligned", i, l.Offset, LazyLineSize)
		case len(l.Values) < 2:
			return fmt.Errorf("lazy table: line %d has %d contents (at least 2 are listed)", i, len(l.Values))
		case i > 0 && (t.Lines[i-1].File > l.File || t.Lines[i-1].File == l.File && t.Lines[i-1].Offset >= l.Offset):
			return fmt.Errorf("lazy table: line %d is not after line %d (sorted by file and offset, unique)", i, i-1)
		}
	}
	return nil
}

// WriteLazyTable writes t in the table's format (little-endian): the magic, the leaf timeout
// in milliseconds (u32), the files (u32 count; u32 length and bytes each), the lines (u32
// count; u32 file, u64 offset, u32 number of contents and LazyLineSize bytes per content each).
// Errors: a table the runtime would reject (LazyTable's rules), or w's.
func WriteLazyTable(w io.Writer, t *LazyTable) error {
	if err := t.check(); err != nil {
		return err
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString(LazyMagic)
	b.Write(le.AppendUint32(nil, uint32(t.LeafTimeout.Milliseconds())))
	b.Write(le.AppendUint32(nil, uint32(len(t.Files))))
	for _, f := range t.Files {
		b.Write(le.AppendUint32(nil, uint32(len(f))))
		b.WriteString(f)
	}
	b.Write(le.AppendUint32(nil, uint32(len(t.Lines))))
	for _, l := range t.Lines {
		b.Write(le.AppendUint32(nil, l.File))
		b.Write(le.AppendUint64(nil, l.Offset))
		b.Write(le.AppendUint32(nil, uint32(len(l.Values))))
		for _, v := range l.Values {
			b.Write(v[:])
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// LazyChoice is one branch taken: line Line of the table got content Value.
type LazyChoice struct{ Line, Value int }

// LazyLeafRecord is a leaf of D/results: the process, its wait status, whether its
// coordinator saw it reach the leaf timeout, and its choices in the order it made them.
type LazyLeafRecord struct {
	PID      int
	Status   syscall.WaitStatus
	TimedOut bool
	Choices  []LazyChoice
}

// LazyResults is D/results parsed: the leaves (in the order they were written, without those
// whose process became a coordinator itself) and the abort records' reasons.
type LazyResults struct {
	Leaves []LazyLeafRecord
	Aborts []string
	// Inner lists the processes that became coordinators, in order.
	Inner []int
}

// ParseLazyResults parses the contents of D/results for table t: lines "inner PID",
// "leaf PID STATUS TIMEDOUT CHOICES" (CHOICES comma-separated LINE:VALUE, or "-") and
// "abort PID REASON...". A leaf whose PID also has an inner record is dropped; a choice must
// name a line of t and one of its contents, and a leaf may choose each line once. Errors: a
// malformed line (its number and why); a last line without its newline is one a coordinator
// killed mid-write left and is an error too.
func ParseLazyResults(b []byte, t *LazyTable) (LazyResults, error) {
	var r LazyResults
	inner := map[int]bool{}
	var leaves []LazyLeafRecord
	for n := 1; len(b) > 0; n++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return r, fmt.Errorf("results line %d: no newline at its end (a record cut short)", n)
		}
		line := string(b[:i])
		b = b[i+1:]
		bad := func(why string, a ...any) error {
			return fmt.Errorf("results line %d %q: %s", n, line, fmt.Sprintf(why, a...))
		}
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "inner":
			pid, err := lazyPID(rest)
			if err != nil {
				return r, bad("%v", err)
			}
			inner[pid] = true
			r.Inner = append(r.Inner, pid)
		case "abort":
			p, reason, _ := strings.Cut(rest, " ")
			if _, err := lazyPID(p); err != nil {
				return r, bad("%v", err)
			}
			r.Aborts = append(r.Aborts, reason)
		case "leaf":
			f := strings.Split(rest, " ")
			if len(f) != 4 {
				return r, bad("a leaf has 4 fields (PID STATUS TIMEDOUT CHOICES), not %d", len(f))
			}
			pid, err := lazyPID(f[0])
			if err != nil {
				return r, bad("%v", err)
			}
			st, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				return r, bad("status %q is not a wait status", f[1])
			}
			if f[2] != "0" && f[2] != "1" {
				return r, bad("TIMEDOUT %q is neither 0 nor 1", f[2])
			}
			leaf := LazyLeafRecord{PID: pid, Status: syscall.WaitStatus(st), TimedOut: f[2] == "1"}
			if leaf.Choices, err = lazyChoices(f[3], t); err != nil {
				return r, bad("%v", err)
			}
			leaves = append(leaves, leaf)
		default:
			return r, bad("unknown record %q", kind)
		}
	}
	for _, l := range leaves {
		if !inner[l.PID] {
			r.Leaves = append(r.Leaves, l)
		}
	}
	return r, nil
}

func lazyPID(s string) (int, error) {
	pid, err := strconv.ParseUint(s, 10, 31)
	if err != nil || pid == 0 {
		return 0, fmt.Errorf("PID %q is not a process number", s)
	}
	return int(pid), nil
}

// lazyChoices parses CHOICES against table t.
func lazyChoices(s string, t *LazyTable) ([]LazyChoice, error) {
	if s == "-" {
		return nil, nil
	}
	var out []LazyChoice
	for _, c := range strings.Split(s, ",") {
		l, v, ok := strings.Cut(c, ":")
		line, err1 := strconv.ParseUint(l, 10, 31)
		value, err2 := strconv.ParseUint(v, 10, 31)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("choice %q is not LINE:VALUE", c)
		}
		if int(line) >= len(t.Lines) || int(value) >= len(t.Lines[line].Values) {
			return nil, fmt.Errorf("choice %q names no line and content of the table (%d lines)", c, len(t.Lines))
		}
		if slices.ContainsFunc(out, func(x LazyChoice) bool { return x.Line == int(line) }) {
			return nil, fmt.Errorf("line %d chosen twice", line)
		}
		out = append(out, LazyChoice{int(line), int(value)})
	}
	return out, nil
}

// LazyOutcome is what a lazy run showed.
type LazyOutcome struct {
	// Root is the first process's outcome. When the run never branched (no Leaves, no Abort,
	// no Fallback) it is the outcome of every crash state of the table.
	Root Outcome
	// Leaves are the leaves' outcomes, each with its choices.
	Leaves []LazyLeaf
	// Fallback, when not "", says why the run judges nothing and its crash states must be
	// explored one by one: an abort record's reason (Abort is then set), or the tree that did
	// not end within its bound, or results that cannot be read.
	Fallback string
	Abort    bool
}

// LazyLeaf is one leaf of a lazy run: its outcome (as a run of its own: status, output) and
// the contents its lines got.
type LazyLeaf struct {
	Outcome Outcome
	Choices []LazyChoice
}

// lazySerial numbers lazy runs' directories.
var lazySerial atomic.Uint64

// runFiles are the standard streams of a lazy run, regular files (the runtime seeks standard
// input back and copies standard output and error for each branch), and the variable naming
// its directory.
type runFiles struct {
	stdin, stdout, stderr *os.File
	env                   string
}

// lazyRun makes a lazy run of table t in a new directory under parent, through run (a
// process run whose standard streams are files, bounded by timeout): stdin is its standard
// input; leaf bounds the root until it branches (then the tree has tree); the leaves' outcomes
// are normalised with filter and pool like any run's. The directory is removed before it
// returns. Errors (the directory, the table or the streams could not be made) come back as
// Root.Err.
func lazyRun(ctx context.Context, parent string, t *LazyTable, stdin []byte, leaf, tree time.Duration, run func(ctx context.Context, f *runFiles, timeout time.Duration) Outcome) LazyOutcome {
	var lo LazyOutcome
	d := filepath.Join(parent, fmt.Sprintf("lazy-%d", lazySerial.Add(1)))
	fail := func(err error) LazyOutcome {
		lo.Root = Outcome{ExitCode: -1, Err: err}
		return lo
	}
	if err := os.Mkdir(d, 0o700); err != nil {
		return fail(err)
	}
	defer os.RemoveAll(d)
	f, err := os.OpenFile(filepath.Join(d, "table"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	err = WriteLazyTable(f, t)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(d, "stdin"), stdin, 0o600); err != nil {
		return fail(err)
	}
	rf := &runFiles{env: LazyVar + "=" + d}
	for _, s := range []struct {
		f    **os.File
		name string
		flag int
	}{{&rf.stdin, "stdin", os.O_RDONLY}, {&rf.stdout, "root.out", os.O_RDWR | os.O_CREATE | os.O_EXCL}, {&rf.stderr, "root.err", os.O_RDWR | os.O_CREATE | os.O_EXCL}} {
		if *s.f, err = os.OpenFile(filepath.Join(d, s.name), s.flag, 0o600); err != nil {
			return fail(err)
		}
		defer (*s.f).Close()
	}
	// The root gets the leaf's bound until it branches (it then wrote its inner record): a
	// root that hangs before any branch is a hang like any run's.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var hung atomic.Bool
	results := filepath.Join(d, "results")
	if leaf > 0 {
		w := time.AfterFunc(leaf, func() {
			if fi, err := os.Stat(results); err != nil || fi.Size() == 0 {
				hung.Store(true)
				cancel()
			}
		})
		defer w.Stop()
	}
	lo.Root = run(runCtx, rf, tree)
	lo.Root.Stdout, lo.Root.Truncated = readBounded(rf.stdout, StdoutLimit)
	lo.Root.Stderr, _ = readBounded(rf.stderr, StderrLimit)
	if hung.Load() && ctx.Err() == nil {
		lo.Root.Err, lo.Root.TimedOut, lo.Root.Signal, lo.Root.Timeout = nil, true, 0, leaf
		return lo
	}
	if lo.Root.Err != nil {
		return lo
	}
	b, err := os.ReadFile(results)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		lo.Fallback = "the results cannot be read: " + err.Error()
		return lo
	}
	res, err := ParseLazyResults(b, t)
	switch {
	case err != nil:
		lo.Fallback = err.Error()
		return lo
	case len(res.Aborts) > 0:
		lo.Fallback, lo.Abort = res.Aborts[0], true
		return lo
	case lo.Root.TimedOut && len(res.Inner) > 0:
		lo.Fallback = "the tree of runs did not end within its time bound"
		return lo
	case len(res.Inner) == 0:
		return lo // never branched: the root is the only run
	}
	for _, r := range res.Leaves {
		o := Outcome{ExitCode: -1, Timeout: t.LeafTimeout, filter: lo.Root.filter, pool: lo.Root.pool}
		switch {
		case r.TimedOut:
			o.TimedOut = true
		case r.Status.Signaled():
			o.Signal = r.Status.Signal()
		default:
			o.ExitCode = r.Status.ExitStatus()
		}
		var err error
		if o.Stdout, o.Truncated, err = readFileBounded(filepath.Join(d, strconv.Itoa(r.PID)+".out"), StdoutLimit); err == nil {
			o.Stderr, _, err = readFileBounded(filepath.Join(d, strconv.Itoa(r.PID)+".err"), StderrLimit)
		}
		if err != nil {
			lo.Fallback = fmt.Sprintf("the output of leaf %d cannot be read: %v", r.PID, err)
			return lo
		}
		lo.Leaves = append(lo.Leaves, LazyLeaf{Outcome: o, Choices: r.Choices})
	}
	if len(lo.Leaves) == 0 {
		lo.Fallback = "the run branched but no leaf was recorded"
	}
	return lo
}

// readBounded reads f from its start, at most limit bytes; cut says there was more.
func readBounded(f *os.File, limit int) (b []byte, cut bool) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, int64(limit)+1))
	if err != nil {
		return nil, false
	}
	if len(b) > limit {
		return b[:limit], true
	}
	return b, false
}

func readFileBounded(path string, limit int) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, cut := readBounded(f, limit)
	return b, cut, nil
}

// RunLazy makes a lazy run of the target on pool (Run's rules: {pool}, dir, the environment,
// the process group) with the table t, whose files must include pool's absolute path, and
// SCRY_LAZY naming a new directory under parent. The root is bounded by leaf until it
// branches, the whole tree by tree. Its output is not compared as it streams (no stop at the
// first diverging line: a branch's output starts with what the root printed).
func (t Target) RunLazy(ctx context.Context, pool string, stdin []byte, dir, parent string, tbl *LazyTable, leaf, tree time.Duration) LazyOutcome {
	return lazyRun(ctx, parent, tbl, stdin, leaf, tree, func(ctx context.Context, f *runFiles, timeout time.Duration) Outcome {
		return t.runFiles(ctx, pool, dir, timeout, f)
	})
}

// runFiles runs the target on pool by exec with a lazy run's files, bounded by timeout.
func (t Target) runFiles(ctx context.Context, pool, dir string, timeout time.Duration, f *runFiles) Outcome {
	abs, args, err := t.args(pool)
	if err != nil {
		return Outcome{ExitCode: -1, Err: err, filter: t.OutputFilter}
	}
	o := runWatched(ctx, args, t.Env, nil, dir, timeout, nil, "", f)
	o.filter, o.pool = t.OutputFilter, abs
	return o
}

// RunLazy is Target.RunLazy through a fork server (the per-run tag carries SCRY_LAZY), or by
// exec when servers are off.
func (f *ForkServers) RunLazy(ctx context.Context, pool string, stdin []byte, dir, parent string, tbl *LazyTable, leaf, tree time.Duration) LazyOutcome {
	return lazyRun(ctx, parent, tbl, stdin, leaf, tree, func(ctx context.Context, rf *runFiles, timeout time.Duration) Outcome {
		return f.runWithin(ctx, pool, nil, dir, timeout, rf)
	})
}
