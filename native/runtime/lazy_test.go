package scryrt_test

// Tests of lazy crash-state exploration's runtime side (lazy.c, docs/lazy-exploration.md): a
// table written here by hand, programs built with the build's `scry cc` and run with SCRY_LAZY,
// their D/results and the leaves' outputs checked.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// lazyLine is a line of the table: its offset in the working copy and its possible contents.
type lazyLine struct {
	off    uint64
	values [][]byte
}

// lazyTable is the content of D/table (lazy.c's header comment gives the layout).
func lazyTable(timeoutMS uint32, file string, lines []lazyLine) []byte {
	var b bytes.Buffer
	b.WriteString("SCRYLZY1")
	put := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	put(timeoutMS)
	put(uint32(1))
	put(uint32(len(file)))
	b.WriteString(file)
	put(uint32(len(lines)))
	for _, l := range lines {
		put(uint32(0))
		put(l.off)
		put(uint32(len(l.values)))
		for _, v := range l.values {
			b.Write(v)
		}
	}
	return b.Bytes()
}

// fill is a cache line holding b in every byte.
func fill(b byte) []byte { return bytes.Repeat([]byte{b}, 64) }

// hex8 is how lazymap prints the 8 bytes of a line filled with b.
func hex8(b byte) string { return strings.Repeat(fmt.Sprintf("%02x", b), 8) }

// le8 is how lazymap prints the 8 bytes b.
func le8(b string) string { return fmt.Sprintf("%016x", binary.LittleEndian.Uint64([]byte(b))) }

// lazyRec is a record of D/results.
type lazyRec struct {
	kind     string // inner, leaf or abort
	pid      int
	status   syscall.WaitStatus
	timedOut bool
	choices  string
	reason   string
}

func readResults(t *testing.T, dir string) []lazyRec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var recs []lazyRec
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("results: bad line %q", line)
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("results: bad pid in %q", line)
		}
		r := lazyRec{kind: f[0], pid: pid}
		switch {
		case f[0] == "inner" && len(f) == 2:
		case f[0] == "abort" && len(f) > 2:
			r.reason = strings.Join(f[2:], " ")
		case f[0] == "leaf" && len(f) == 5:
			st, err1 := strconv.ParseUint(f[2], 10, 32)
			if err1 != nil || (f[3] != "0" && f[3] != "1") {
				t.Fatalf("results: bad leaf %q", line)
			}
			r.status, r.timedOut, r.choices = syscall.WaitStatus(st), f[3] == "1", f[4]
		default:
			t.Fatalf("results: bad line %q", line)
		}
		recs = append(recs, r)
	}
	return recs
}

// leaves returns the leaf records by their choices, failing on a choice list seen twice and on a
// leaf record for a process that became a coordinator.
func leaves(t *testing.T, recs []lazyRec) map[string]lazyRec {
	t.Helper()
	inner := map[int]bool{}
	for _, r := range recs {
		if r.kind == "inner" {
			inner[r.pid] = true
		}
	}
	m := map[string]lazyRec{}
	for _, r := range recs {
		if r.kind != "leaf" {
			continue
		}
		if inner[r.pid] {
			t.Errorf("leaf record for %d, which became a coordinator", r.pid)
		}
		if _, dup := m[r.choices]; dup {
			t.Errorf("two leaves chose %s", r.choices)
		}
		m[r.choices] = r
	}
	return m
}

// scryCC builds testdata/<name>.c with the build's scry cc.
func scryCC(t *testing.T, name string, libs ...string) string {
	t.Helper()
	scry := testenv.Scry(t)
	exe := filepath.Join(t.TempDir(), name)
	args := append([]string{"cc", "-O1", "-g", "-o", exe, filepath.Join("testdata", name+".c")}, libs...)
	if out, err := exec.Command(scry, args...).CombinedOutput(); err != nil {
		t.Fatalf("scry cc %s: %v\n%s", name, err, out)
	}
	return exe
}

// lazyEnv is the environment of a lazy run on directory d (d empty: no lazy run).
func lazyEnv(d string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SCRY_") {
			env = append(env, e)
		}
	}
	env = append(env, "SCRY_INERT=1")
	if d != "" {
		env = append(env, "SCRY_LAZY="+d)
	}
	return env
}

// lazyIO is how lazyRun gives a run its standard input and output.
type lazyIO struct {
	input     string
	pipe      bool     // standard input is a pipe (else a file holding input)
	wronlyOut bool     // standard output is opened write-only (else read-write)
	env       []string // added to the environment
	plain     bool     // no SCRY_LAZY (d only holds the run's files)
}

// inputFile writes input into dir/stdin and opens it for reading; it is closed when the test ends.
func inputFile(t *testing.T, dir, input string) *os.File {
	t.Helper()
	in := filepath.Join(dir, "stdin")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// lazyRun runs exe with args in a lazy run on directory d (a plain run when io.plain), standard
// input, output and error in files of d's parent; returns the root's wait status and its standard
// output.
func lazyRun(t *testing.T, exe, d string, io lazyIO, args ...string) (syscall.WaitStatus, string) {
	t.Helper()
	parent := filepath.Dir(d)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(lazyEnv(d), io.env...)
	if io.plain {
		cmd.Env = append(lazyEnv(""), io.env...)
	}
	input := io.input
	if io.pipe {
		cmd.Stdin = strings.NewReader(input)
	} else {
		cmd.Stdin = inputFile(t, parent, input)
	}
	outPath := filepath.Join(parent, "stdout")
	flag := os.O_RDWR
	if io.wronlyOut {
		flag = os.O_WRONLY
	}
	out, err := os.OpenFile(outPath, flag|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.Create(filepath.Join(parent, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), string(b)
}

// lazyDir makes a fresh D holding table, and the working copy file of size bytes holding, on
// every listed line, its first value.
func lazyDir(t *testing.T, size int, timeoutMS uint32, lines []lazyLine) (d, pool string) {
	t.Helper()
	parent := t.TempDir()
	d, pool = filepath.Join(parent, "lazy"), filepath.Join(parent, "pool")
	img := make([]byte, size)
	for _, l := range lines {
		copy(img[l.off:], l.values[0])
	}
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pool, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "table"), lazyTable(timeoutMS, pool, lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return d, pool
}

// leafWant is a leaf expected in D/results: its exit (code >= 0, or the signal that killed it),
// whether it timed out, and its standard output.
type leafWant struct {
	code     int
	sig      syscall.Signal
	timedOut bool
	out      string
}

func (w leafWant) check(t *testing.T, d string, r lazyRec) {
	t.Helper()
	switch {
	case w.timedOut != r.timedOut:
		t.Errorf("leaf %s: timed out %v, want %v", r.choices, r.timedOut, w.timedOut)
	case w.sig != 0 && (!r.status.Signaled() || r.status.Signal() != w.sig):
		t.Errorf("leaf %s: status %#x, want killed by %v", r.choices, int(r.status), w.sig)
	case w.sig == 0 && (!r.status.Exited() || r.status.ExitStatus() != w.code):
		t.Errorf("leaf %s: status %#x, want exit %d", r.choices, int(r.status), w.code)
	}
	out, err := os.ReadFile(filepath.Join(d, fmt.Sprintf("%d.out", r.pid)))
	if err != nil || string(out) != w.out {
		t.Errorf("leaf %s: output %q (%v), want %q", r.choices, out, err, w.out)
	}
	// Standard error was written before the branch: every leaf's file starts with it.
	if e, err := os.ReadFile(filepath.Join(d, fmt.Sprintf("%d.err", r.pid))); err != nil || !strings.HasPrefix(string(e), "err\n") {
		t.Errorf("leaf %s: standard error %q (%v), want it to start with the parent's \"err\\n\"", r.choices, e, err)
	}
}

// TestLazyBranching: lazymap (plain mmap) on a table of lines filled with distinct bytes: a leaf
// per combination of the values of the lines the run touches, in the order it touches them;
// untouched lines (on other pages, or on the touched page) give no branch; each leaf's output
// holds what the parent wrote before the branch (flushed, and left in libc's buffer), the values
// it saw and the rest of standard input, read with read(2) from the offset of the branch.
func TestLazyBranching(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "lazymap")
	const pre = "start\npre\n"
	zero := "0000000000000000"
	ab := []lazyLine{{0, [][]byte{fill(0xa0), fill(0xa1)}}, {2*4096 + 128, [][]byte{fill(0xb0), fill(0xb1), fill(0xb2)}}, {3 * 4096, [][]byte{fill(0xc0), fill(0xc1)}}}
	samePage := []lazyLine{{64, [][]byte{fill(0xd0), fill(0xd1)}}, {1024, [][]byte{fill(0xe0), fill(0xe1), fill(0xe2)}}}
	nested := map[string]leafWant{}
	for i := range 2 {
		for j := range 3 {
			nested[fmt.Sprintf("0:%d,1:%d", i, j)] = leafWant{out: fmt.Sprintf("%sr 0 %s\nr 8320 %s\nr 4096 %s\nend\n", pre, hex8(0xa0+byte(i)), hex8(0xb0+byte(j)), zero)}
		}
	}
	restored := map[string]leafWant{}
	for c, w := range nested {
		i, j := c[2]-'0', c[6]-'0'
		w.out = fmt.Sprintf("%sr 0 %s\nr 400 0000000000000011\nr 200 %s\nr 8320 %s\nr 300 %s\nr 200 00000000000000ff\nend\n", pre, hex8(0xa0+i), zero, hex8(0xb0+j), zero)
		restored[c] = w
	}
	for _, tc := range []struct {
		name      string
		mode      string
		input     string
		lines     []lazyLine
		timeoutMS uint32
		wronly    bool
		want      map[string]leafWant
	}{
		{name: "nested shared", mode: "shared", input: "r 0\nr 8320\nr 4096\n", lines: ab, want: nested},
		{name: "nested private", mode: "private", input: "r 0\nr 8320\nr 4096\n", lines: ab, want: nested},
		{name: "write-only output", mode: "shared", input: "r 0\nr 8320\nr 4096\n", lines: ab, wronly: true, want: nested},
		// Leaves write the pool: each sibling starts from the content at its parent's branch
		// (200 written before the nested branch stays, 300 written by a leaf does not).
		// (400, written by the parent before the first branch, keeps the parent's content).
		{name: "restore", mode: "shared", input: "w 400 11\nr 0\nr 400\nw 400 ff\nr 200\nw 200 ff\nr 8320\nr 300\nw 300 ee\nr 200\n", lines: ab, want: restored},
		// read(2) into the pool: into a page with a listed line (which branches first), and, in a
		// child, into a page it has not written (without write access until then).
		{name: "read into the pool", mode: "shared", input: "rd 8\nr 8\nrd 4096\nr 4096\n", lines: ab, want: map[string]leafWant{
			"0:0": {out: pre + "r 8 " + le8("log0\xa0\xa0\xa0\xa0") + "\nr 4096 " + le8("log0\x00\x00\x00\x00") + "\nend\n"},
			"0:1": {out: pre + "r 8 " + le8("log0\xa1\xa1\xa1\xa1") + "\nr 4096 " + le8("log0\x00\x00\x00\x00") + "\nend\n"},
		}},
		// Leaves append to a file the parent opened: each from the parent's offset.
		{name: "own files", mode: "shared", input: "r 0\nlog\nshowlog\n", lines: ab, want: map[string]leafWant{
			"0:0": {out: pre + "r 0 " + hex8(0xa0) + "\nlog: log0\nleaf\nend\n"},
			"0:1": {out: pre + "r 0 " + hex8(0xa1) + "\nlog: log0\nleaf\nend\n"},
		}},
		{name: "reverse order", mode: "shared", input: "r 8320\nr 0\n", lines: ab, want: map[string]leafWant{
			"1:0,0:0": {out: pre + "r 8320 " + hex8(0xb0) + "\nr 0 " + hex8(0xa0) + "\nend\n"},
			"1:0,0:1": {out: pre + "r 8320 " + hex8(0xb0) + "\nr 0 " + hex8(0xa1) + "\nend\n"},
			"1:1,0:0": {out: pre + "r 8320 " + hex8(0xb1) + "\nr 0 " + hex8(0xa0) + "\nend\n"},
			"1:1,0:1": {out: pre + "r 8320 " + hex8(0xb1) + "\nr 0 " + hex8(0xa1) + "\nend\n"},
			"1:2,0:0": {out: pre + "r 8320 " + hex8(0xb2) + "\nr 0 " + hex8(0xa0) + "\nend\n"},
			"1:2,0:1": {out: pre + "r 8320 " + hex8(0xb2) + "\nr 0 " + hex8(0xa1) + "\nend\n"},
		}},
		{name: "one line of a page", mode: "shared", input: "r 1024\nr 0\nr 128\n", lines: samePage, want: map[string]leafWant{
			"1:0": {out: pre + "r 1024 " + hex8(0xe0) + "\nr 0 " + zero + "\nr 128 " + zero + "\nend\n"},
			"1:1": {out: pre + "r 1024 " + hex8(0xe1) + "\nr 0 " + zero + "\nr 128 " + zero + "\nend\n"},
			"1:2": {out: pre + "r 1024 " + hex8(0xe2) + "\nr 0 " + zero + "\nr 128 " + zero + "\nend\n"},
		}},
		{name: "timeout", mode: "shared", input: "if 0 a1 loop\nr 0\n", lines: ab, timeoutMS: 200, want: map[string]leafWant{
			"0:0": {out: pre + "r 0 " + hex8(0xa0) + "\nend\n"},
			"0:1": {sig: syscall.SIGKILL, timedOut: true, out: "start\n"},
		}},
		{name: "signal", mode: "shared", input: "if 0 a1 abort\nr 0\n", lines: ab, want: map[string]leafWant{
			"0:0": {out: pre + "r 0 " + hex8(0xa0) + "\nend\n"},
			"0:1": {sig: syscall.SIGABRT, out: "start\n"},
		}},
		{name: "program's handler", mode: "shared", input: "r 0\nsegv\n", lines: ab, want: map[string]leafWant{
			"0:0": {code: 3, out: "start\ncaught\n"},
			"0:1": {code: 3, out: "start\ncaught\n"},
		}},
		// A leaf signals its coordinator, whose default action would kill it: the coordinator
		// blocks the program's signals and runs the next leaf.
		{name: "signal to the coordinator", mode: "shared", input: "r 0\nif 0 a0 usr1parent\n", lines: ab, want: map[string]leafWant{
			"0:0": {out: pre + "r 0 " + hex8(0xa0) + "\nend\n"},
			"0:1": {out: pre + "r 0 " + hex8(0xa1) + "\nend\n"},
		}},
		{name: "exit status", mode: "private", input: "if 0 a0 exit 7\nend\n", lines: ab, want: map[string]leafWant{
			"0:0": {code: 7, out: pre},
			"0:1": {out: pre + "end\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, pool := lazyDir(t, 4*4096, tc.timeoutMS, tc.lines)
			st, out := lazyRun(t, exe, d, lazyIO{input: tc.input, wronlyOut: tc.wronly}, pool, tc.mode)
			if !st.Exited() || st.ExitStatus() != 0 {
				t.Errorf("root: status %#x, want exit 0 (a coordinator)", int(st))
			}
			if out != "start\n" {
				t.Errorf("root's standard output %q, want only what it flushed before the branch", out)
			}
			got := leaves(t, readResults(t, d))
			if k1, k2 := slices.Sorted(mapKeys(got)), slices.Sorted(mapKeys(tc.want)); !slices.Equal(k1, k2) {
				t.Fatalf("leaves' choices %v, want %v", k1, k2)
			}
			for c, w := range tc.want {
				w.check(t, d, got[c])
			}
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestLazyNoBranch: a run that touches no listed line, or that has no SCRY_LAZY, is one plain
// run: no results, its output where it was given.
func TestLazyNoBranch(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "lazymap")
	lines := []lazyLine{{0, [][]byte{fill(0xa0), fill(0xa1)}}}
	for _, lazy := range []bool{true, false} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			d, pool := lazyDir(t, 2*4096, 0, lines)
			st, out := lazyRun(t, exe, d, lazyIO{input: "r 4096\nr 64\n", plain: !lazy}, pool, "shared")
			if !st.Exited() || st.ExitStatus() != 0 {
				t.Errorf("status %#x, want exit 0", int(st))
			}
			if want := "start\npre\nr 4096 0000000000000000\nr 64 0000000000000000\nend\n"; out != want {
				t.Errorf("output %q, want %q", out, want)
			}
			if recs := readResults(t, d); len(recs) != 0 {
				t.Errorf("results %+v, want none", recs)
			}
		})
	}
}

// TestLazyAbort: lazy branching impossible: the run writes an abort record with the reason and
// exits 125 (after a branch, the coordinator that cannot go on does).
func TestLazyAbort(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "lazymap")
	lines := []lazyLine{{0, [][]byte{fill(0xa0), fill(0xa1)}}}
	for _, tc := range []struct {
		name, input string
		pipe        bool
		env         []string
		table       []byte // replaces the table when set
		reason      string
	}{
		{name: "tracing", input: "r 0\n", env: []string{"SCRY_INERT=0", "SCRY_TRACE=" + filepath.Join(t.TempDir(), "t.trace")}, reason: "needs an inert runtime"},
		{name: "stdin a pipe", input: "r 0\n", pipe: true, reason: "standard input is not seekable"},
		{name: "threads", input: "thread\nr 0\n", reason: "more than one thread"},
		// A leaf writes the pool with pwrite(2): its coordinator cannot restore the page.
		{name: "pwrite", input: "r 0\npw 200 ff\n", reason: "a system call wrote a working copy"},
		{name: "bad magic", input: "r 0\n", table: []byte("SCRYLZY0\x00\x00\x00\x00"), reason: "malformed table"},
		{name: "truncated", input: "r 0\n", table: []byte("SCRYLZY1\x00\x00"), reason: "malformed table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, pool := lazyDir(t, 2*4096, 0, lines)
			if tc.table != nil {
				if err := os.WriteFile(filepath.Join(d, "table"), tc.table, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := lazyRun(t, exe, d, lazyIO{input: tc.input, pipe: tc.pipe, env: tc.env}, pool, "shared")
			if !st.Exited() || st.ExitStatus() != 125 {
				t.Errorf("status %#x, want exit 125", int(st))
			}
			recs := readResults(t, d)
			if !slices.ContainsFunc(recs, func(r lazyRec) bool { return r.kind == "abort" && strings.Contains(r.reason, tc.reason) }) {
				t.Errorf("results %+v, want an abort saying %q", recs, tc.reason)
			}
		})
	}
}

// TestLazyPmemobj: libpmemobj reads the pool itself: pmemobj_open reads the pool header's first
// line inside the library (a zeroed header fails the open), the program copies the root object
// with libc's memcpy; both branch.
func TestLazyPmemobj(t *testing.T) {
	havePMDK(t)
	exe := scryCC(t, "lazyobj", "-lpmemobj")
	parent := t.TempDir()
	orig := filepath.Join(parent, "orig")
	cmd := exec.Command(exe, "create", orig, "hello")
	cmd.Env = lazyEnv("")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	root, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("create printed %q", out)
	}
	img, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	line := root &^ 63
	text := func(s string) []byte {
		v := slices.Clone(img[line : line+64])
		copy(v[root-line:], s+"\x00")
		return v
	}
	lines := []lazyLine{
		{0, [][]byte{slices.Clone(img[:64]), make([]byte, 64)}},
		{line, [][]byte{text("hello"), text("world"), text("xyz")}},
	}
	d, pool := lazyDir(t, len(img), 0, lines)
	if err := os.WriteFile(pool, img, 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := lazyRun(t, exe, d, lazyIO{}, "open", pool)
	if !st.Exited() || st.ExitStatus() != 0 {
		t.Errorf("root: status %#x, want exit 0", int(st))
	}
	got := leaves(t, readResults(t, d))
	want := map[string]string{"0:0,1:0": "root hello\n", "0:0,1:1": "root world\n", "0:0,1:2": "root xyz\n", "0:1": "open failed: "}
	if k1, k2 := slices.Sorted(mapKeys(got)), slices.Sorted(mapKeys(want)); !slices.Equal(k1, k2) {
		t.Fatalf("leaves' choices %v, want %v", k1, k2)
	}
	for c, w := range want {
		b, err := os.ReadFile(filepath.Join(d, fmt.Sprintf("%d.out", got[c].pid)))
		if err != nil || !strings.HasPrefix(string(b), w) {
			t.Errorf("leaf %s: output %q (%v), want %q", c, b, err, w)
		}
	}
}

// forkServer is a program started as a fork server (forkserver.c gives the protocol, which
// internal/exec speaks for scry).
type forkServer struct {
	cmd  *exec.Cmd
	sock int
}

func startForkServer(t *testing.T, exe string, args ...string) *forkServer {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	child := os.NewFile(uintptr(fds[1]), "forkserver-sock")
	cmd := exec.Command(exe, args...)
	cmd.Env = append(lazyEnv(""), "SCRY_FORKSRV_FD=3")
	cmd.ExtraFiles = []*os.File{child}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	fs := &forkServer{cmd, fds[0]}
	t.Cleanup(func() {
		syscall.Close(fs.sock)
		_ = fs.cmd.Wait()
	})
	hello := make([]byte, 12)
	if err := fs.read(hello); err != nil || string(hello[:8]) != "SCRYFSV1" {
		t.Fatalf("fork server hello %q: %v", hello, err)
	}
	return fs
}

func (fs *forkServer) read(b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Read(fs.sock, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("fork server closed its socket")
		}
		b = b[n:]
	}
	return nil
}

// stdioFiles writes input into dir/stdin and opens dir/stdin, dir/stdout and dir/stderr (created)
// as a run's standard input, output and error; they are closed when the test ends.
func stdioFiles(t *testing.T, dir, input string) [3]*os.File {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stdin"), []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdio [3]*os.File
	for k, name := range []string{"stdin", "stdout", "stderr"} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		stdio[k] = f
	}
	return stdio
}

// run asks for one run with args (argv[1:]), the tag NAME=VALUE and the three files, and returns
// its wait status.
func (fs *forkServer) run(t *testing.T, args []string, tag string, stdio [3]*os.File) syscall.WaitStatus {
	t.Helper()
	var b bytes.Buffer
	put := func(v uint32) { _ = binary.Write(&b, binary.LittleEndian, v) }
	put(uint32(len(args) + 1))
	for _, s := range append(slices.Clone(args), tag) {
		put(uint32(len(s)))
		b.WriteString(s)
	}
	rights := syscall.UnixRights(int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	if err := syscall.Sendmsg(fs.sock, []byte{0x51, 0x46, 0x52, 0x53}, rights, nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Write(fs.sock, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	var pid, status [4]byte
	if err := fs.read(pid[:]); err != nil || binary.LittleEndian.Uint32(pid[:]) == 0 {
		t.Fatalf("fork server: pid %v: %v", pid, err)
	}
	if err := fs.read(status[:]); err != nil {
		t.Fatal(err)
	}
	return syscall.WaitStatus(binary.LittleEndian.Uint32(status[:]))
}

// TestLazyForkServer: under the fork server, SCRY_LAZY arrives as a run's tag after the
// program's start: the runs that have it branch, one that has not runs plainly, on the same server.
func TestLazyForkServer(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "lazymap")
	lines := []lazyLine{{0, [][]byte{fill(0xa0), fill(0xa1)}}, {4096, [][]byte{fill(0xb0), fill(0xb1), fill(0xb2)}}}
	fs := startForkServer(t, exe, "pool", "shared")
	for i, lazy := range []bool{true, false, true} {
		d, pool := lazyDir(t, 2*4096, 0, lines)
		parent := filepath.Dir(d)
		stdio := stdioFiles(t, parent, "r 4096\nr 0\n")
		tag := "SCRY_LAZY=" + d
		if !lazy {
			tag = "SCRY_NOT_LAZY=1"
		}
		st := fs.run(t, []string{pool, "shared"}, tag, stdio)
		if !st.Exited() || st.ExitStatus() != 0 {
			t.Errorf("run %d: status %#x, want exit 0", i, int(st))
		}
		got := leaves(t, readResults(t, d))
		if !lazy {
			out, _ := os.ReadFile(filepath.Join(parent, "stdout"))
			if want := "start\npre\nr 4096 " + hex8(0xb0) + "\nr 0 " + hex8(0xa0) + "\nend\n"; len(got) != 0 || string(out) != want {
				t.Errorf("run %d without SCRY_LAZY: leaves %v, output %q, want none and %q", i, got, out, want)
			}
			continue
		}
		if len(got) != 6 {
			t.Errorf("run %d: %d leaves, want 6", i, len(got))
		}
		for j := range 3 {
			for k := range 2 {
				c := fmt.Sprintf("1:%d,0:%d", j, k)
				want := leafWant{out: fmt.Sprintf("start\npre\nr 4096 %s\nr 0 %s\nend\n", hex8(0xb0+byte(j)), hex8(0xa0+byte(k)))}
				if r, ok := got[c]; ok {
					want.check(t, d, r)
				} else {
					t.Errorf("run %d: no leaf %s", i, c)
				}
			}
		}
	}
}
