package scryrt_test

// Tests of convergence's runtime side (converge.c, which gives the contract): programs built with
// the build's `scry cc`, run inert with SCRY_CONVERGE, their OUT files and outputs checked; the
// hash's text is checked against an independent computation of the same definition in Go.

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/scry-pm/scry/internal/testenv"
)

// cvVar is the value of SCRY_CONVERGE.
type cvVar struct {
	version, out, pool, excl, needOpen string
	hashes                             []string
}

func (v cvVar) String() string {
	return strings.Join([]string{v.version, v.out, v.pool, v.excl, v.needOpen, strings.Join(v.hashes, " ")}, "\n")
}

// cvRange is a byte range of EXCL.
type cvRange struct{ off, n uint64 }

func exclText(rs []cvRange) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%d+%d", r.off, r.n))
	}
	return strings.Join(s, ",")
}

// goHash computes the contract's hash of the file at path in Go, independently of converge.c:
// the whole stream is built in memory, holes read as zeros, and hashed at once.
func goHash(t *testing.T, path string, excl []cvRange) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range excl {
		for i := r.off; i < r.off+r.n && i < uint64(len(b)); i++ {
			b[i] = 0
		}
	}
	stream := binary.LittleEndian.AppendUint64(nil, uint64(len(b)))
	zero := make([]byte, 4096)
	for o := 0; o < len(b); o += 4096 {
		page := make([]byte, 4096)
		copy(page, b[o:])
		if string(page) == string(zero) {
			continue
		}
		stream = binary.LittleEndian.AppendUint64(stream, uint64(o))
		stream = append(stream, page...)
	}
	sum := xxh3.Hash128(stream).Bytes()
	return hex.EncodeToString(sum[:])
}

// cvRun runs exe with args, standard input input (a file), inert, with SCRY_CONVERGE=v when v is
// not empty and the extra environment env; returns its wait status, standard output and OUT's
// content ("-" when OUT was not created).
func cvRun(t *testing.T, exe, v, outPath, input string, env []string, args ...string) (syscall.WaitStatus, string, string) {
	t.Helper()
	var stdout strings.Builder
	cmd := exec.Command(exe, args...)
	cmd.Env = append(lazyEnv(""), env...)
	if v != "" {
		cmd.Env = append(cmd.Env, "SCRY_CONVERGE="+v)
	}
	cmd.Stdin, cmd.Stdout = inputFile(t, t.TempDir(), input), &stdout
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), stdout.String(), readOut(t, outPath)
}

func readOut(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "-"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cvPool writes a pool file of size bytes (sparse: only the pieces are written) and returns its path.
type cvPiece struct {
	off  int64
	data []byte
}

func cvPool(t *testing.T, size int64, pieces ...cvPiece) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pool")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		if _, err := f.WriteAt(p.data, p.off); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func bytesOf(b byte, n int) []byte { return []byte(strings.Repeat(string([]byte{b}), n)) }

// cvHash runs converge on pool with EXCL excl and no legal hashes, checks that it ran to its end
// and that OUT holds one H line whose hash is goHash's, and returns the hash.
func cvHash(t *testing.T, exe, pool string, excl []cvRange) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	v := cvVar{"1", out, pool, exclText(excl), "0", nil}
	st, stdout, o := cvRun(t, exe, v.String(), out, "a\nb\n", nil, "fgets")
	if !st.Exited() || st.ExitStatus() != 0 || stdout != "start\nerrno 0\ngot a\ngot b\nend\n" {
		t.Fatalf("status %#x, output %q: want exit 0 and the whole output", int(st), stdout)
	}
	want := goHash(t, pool, excl)
	if o != "H "+want+"\n" {
		t.Fatalf("OUT %q, want %q (computed in Go)", o, "H "+want+"\n")
	}
	return want
}

// TestConvergeHash: pools that must hash alike and pools that must not; every hash the runtime
// writes is also the one computed in Go.
func TestConvergeHash(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "converge")
	data := bytesOf(0x5a, 3000)
	for _, tc := range []struct {
		name  string
		a, b  func(t *testing.T) string
		exclA []cvRange
		exclB []cvRange
		equal bool
	}{
		{name: "same content", equal: true,
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{5 * 4096, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{5 * 4096, data}) }},
		{name: "a byte differs", equal: false,
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{200, []byte{1}}) }},
		{name: "differs inside EXCL", equal: true, exclA: []cvRange{{190, 20}}, exclB: []cvRange{{190, 20}},
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{200, []byte{1}}) }},
		{name: "differs outside EXCL", equal: false, exclA: []cvRange{{0, 10}, {300, 20}}, exclB: []cvRange{{0, 10}, {300, 20}},
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{200, []byte{1}}) }},
		// EXCL ranges across a page boundary, overlapping each other, unsorted.
		{name: "EXCL across pages", equal: true, exclA: []cvRange{{4000, 200}}, exclB: []cvRange{{4100, 100}, {4000, 120}},
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{3000, data}) },
			b: func(t *testing.T) string {
				return cvPool(t, 8*4096, cvPiece{3000, data}, cvPiece{4005, []byte{1, 2}}, cvPiece{4197, []byte{3}})
			}},
		// A page whose only non-zero bytes are in EXCL is a zero page: like a hole.
		{name: "page all in EXCL", equal: true, exclB: []cvRange{{6 * 4096, 4096}},
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}, cvPiece{6*4096 + 10, data}) }},
		{name: "hole and written zeros", equal: true,
			a: func(t *testing.T) string { return cvPool(t, 64*4096, cvPiece{3 * 4096, data}) },
			b: func(t *testing.T) string {
				return cvPool(t, 64*4096, cvPiece{0, make([]byte, 64*4096)}, cvPiece{3 * 4096, data})
			}},
		{name: "size differs", equal: false,
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 9*4096, cvPiece{100, data}) }},
		{name: "data moved to another page", equal: false,
			a: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{100, data}) },
			b: func(t *testing.T) string { return cvPool(t, 8*4096, cvPiece{4096 + 100, data}) }},
		// A last page cut short is zero-padded; data past a 1 MiB read chunk.
		{name: "partial last page", equal: false,
			a: func(t *testing.T) string { return cvPool(t, 5000, cvPiece{4500, data[:400]}) },
			b: func(t *testing.T) string {
				return cvPool(t, 3<<20+5000, cvPiece{3<<20 + 4500, data[:400]}, cvPiece{1<<20 - 100, data})
			}},
		{name: "empty pool", equal: true,
			a: func(t *testing.T) string { return cvPool(t, 0) },
			b: func(t *testing.T) string { return cvPool(t, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ha := cvHash(t, exe, tc.a(t), tc.exclA)
			hb := cvHash(t, exe, tc.b(t), tc.exclB)
			if (ha == hb) != tc.equal {
				t.Errorf("hashes %s and %s: equal %v, want %v", ha, hb, ha == hb, tc.equal)
			}
		})
	}
}

// TestConvergeStop: a hash among the legal ones stops the program at its first read of standard
// input, whichever function reads it; one that is not lets it run to its end; a malformed
// variable or an unreadable pool gives an E line and changes nothing else.
func TestConvergeStop(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "converge")
	pool := cvPool(t, 16*4096, cvPiece{4096, bytesOf(7, 5000)})
	h := goHash(t, pool, nil)
	other, other2 := strings.Repeat("0", 32), strings.Repeat("f", 32)
	const whole = "start\nerrno 0\ngot a\ngot b\nend\n"
	wholeRead := "start\nerrno 0\ngot a\nb\nend\n" // read(2) gets both lines at once
	for _, mode := range []string{"fgets", "getline", "getdelim", "read"} {
		full := whole
		if mode == "read" {
			full = wholeRead
		}
		for _, tc := range []struct {
			name    string
			v       func(out string) cvVar // nil: no variable
			env     []string
			wantOut string // OUT's content, "-": absent; %s stands for the pool's hash
			stopped bool
		}{
			{name: "match", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", []string{other, h, other2}} },
				wantOut: "H %s\nC 1\n", stopped: true},
			{name: "first of one", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", []string{h}} },
				wantOut: "H %s\nC 0\n", stopped: true},
			{name: "no match", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", []string{other, other2}} },
				wantOut: "H %s\n"},
			{name: "no hashes", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", nil} }, wantOut: "H %s\n"},
			// The data's page excluded: the hash is another one.
			{name: "EXCL changes the hash", v: func(o string) cvVar { return cvVar{"1", o, pool, "4096+8192", "0", []string{h}} },
				wantOut: "H " + goHash(t, pool, []cvRange{{4096, 8192}}) + "\n"},
			{name: "absent", wantOut: "-"},
			{name: "needs an open", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "1", []string{h}} }, wantOut: "-"},
			{name: "lazy run", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", []string{h}} },
				env: []string{"SCRY_LAZY=" + lazyDirEmpty(t)}, wantOut: "-"},
			{name: "version", v: func(o string) cvVar { return cvVar{"2", o, pool, "", "0", []string{h}} }, wantOut: "E version\n"},
			{name: "five fields", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0\n" + h, nil} },
				wantOut: "E malformed SCRY_CONVERGE: not six fields\n"},
			{name: "bad EXCL", v: func(o string) cvVar { return cvVar{"1", o, pool, "12", "0", []string{h}} }, wantOut: "E malformed EXCL\n"},
			{name: "EXCL trailing comma", v: func(o string) cvVar { return cvVar{"1", o, pool, "1+2,", "0", []string{h}} }, wantOut: "E malformed EXCL\n"},
			{name: "bad NEEDOPEN", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "yes", []string{h}} }, wantOut: "E malformed NEEDOPEN\n"},
			{name: "bad hash", v: func(o string) cvVar { return cvVar{"1", o, pool, "", "0", []string{strings.ToUpper(h)}} }, wantOut: "E malformed HASHES\n"},
			{name: "relative POOL", v: func(o string) cvVar { return cvVar{"1", o, "pool", "", "0", []string{h}} }, wantOut: "E POOL is not an absolute path\n"},
			{name: "POOL missing", v: func(o string) cvVar { return cvVar{"1", o, pool + ".none", "", "0", []string{h}} }, wantOut: "E cannot open POOL\n"},
			{name: "POOL a directory", v: func(o string) cvVar { return cvVar{"1", o, filepath.Dir(pool), "", "0", []string{h}} }, wantOut: "E POOL is not a regular file\n"},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				v := ""
				if tc.v != nil {
					v = tc.v(out).String()
				}
				st, stdout, o := cvRun(t, exe, v, out, "a\nb\n", tc.env, mode)
				if !st.Exited() || st.ExitStatus() != 0 {
					t.Errorf("status %#x, want exit 0", int(st))
				}
				want := full
				if tc.stopped {
					want = "start\n" // flushed at the stop; nothing after the first read
				}
				if stdout != want {
					t.Errorf("output %q, want %q", stdout, want)
				}
				if w := strings.ReplaceAll(tc.wantOut, "%s", h); o != w {
					t.Errorf("OUT %q, want %q", o, w)
				}
			})
		}
	}
}

// lazyDirEmpty is a lazy run's directory whose table lists no line: the run never branches.
func lazyDirEmpty(t *testing.T) string {
	d, _ := lazyDir(t, 4096, 0, nil)
	return d
}

// TestConvergeNeedOpen: with NEEDOPEN=1 the hash waits for a pmemobj_open or pmemobj_create that
// succeeded: a program that reads standard input before it opens its pool is hashed at its first
// read after the open (a match stops it there, after the line it read before).
func TestConvergeNeedOpen(t *testing.T) {
	havePMDK(t)
	exe := scryCC(t, "convergeobj", "-lpmemobj")
	orig := filepath.Join(t.TempDir(), "orig")
	if st, stdout, _ := cvRun(t, exe, "", "/nonexistent", "", nil, "create", orig); !st.Exited() || st.ExitStatus() != 0 {
		t.Fatalf("create: status %#x, output %q", int(st), stdout)
	}
	img, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	copyOf := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "pool")
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// libpmemobj keeps this process's addresses in the run-time part of its pool descriptor
	// (PMDK's struct pmemobjpool after the 4 KiB pool header and its 2 KiB persistent part), in
	// the pool: excluded, as scry excludes it, else no two runs hash alike.
	const excl = "6144+2048"
	run := func(t *testing.T, pool string, hashes []string, args ...string) (syscall.WaitStatus, string, string) {
		out := filepath.Join(t.TempDir(), "out")
		return cvRun(t, exe, cvVar{"1", out, pool, excl, "1", hashes}.String(), out, "x\ny\nz\n", nil, args...)
	}
	// The state after the open, as a legal outcome's run reports it.
	first := copyOf(t)
	_, _, o := run(t, first, nil, "late", first)
	var h string
	if _, err := fmt.Sscanf(o, "H %32s\n", &h); err != nil || len(h) != 32 {
		t.Fatalf("late run without hashes: OUT %q, want an H line", o)
	}

	t.Run("create", func(t *testing.T) {
		pool := filepath.Join(t.TempDir(), "new")
		st, stdout, o := run(t, pool, []string{h}, "create", pool)
		if !st.Exited() || st.ExitStatus() != 0 || stdout != "got x\ngot y\ngot z\nend\n" {
			t.Errorf("status %#x, output %q: want exit 0 and the whole output", int(st), stdout)
		}
		if !strings.HasPrefix(o, "H ") || strings.Count(o, "\n") != 1 || strings.Contains(o, h) {
			t.Errorf("OUT %q, want one H line (a new pool: another hash than %s)", o, h)
		}
	})
	for _, tc := range []struct {
		name    string
		hashes  []string
		wantOut string
		stdout  string
	}{
		{name: "late match", hashes: []string{h}, wantOut: "H " + h + "\nC 0\n", stdout: "got x\n"},
		{name: "late no match", hashes: []string{strings.Repeat("1", 32)}, wantOut: "H " + h + "\n", stdout: "got x\ngot y\ngot z\nend\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := copyOf(t)
			st, stdout, o := run(t, pool, tc.hashes, "late", pool)
			if !st.Exited() || st.ExitStatus() != 0 || stdout != tc.stdout {
				t.Errorf("status %#x, output %q: want exit 0 and %q", int(st), stdout, tc.stdout)
			}
			if o != tc.wantOut {
				t.Errorf("OUT %q, want %q", o, tc.wantOut)
			}
		})
	}
	t.Run("open fails", func(t *testing.T) {
		pool := filepath.Join(t.TempDir(), "none")
		st, stdout, o := run(t, pool, []string{h}, "late", pool)
		if !st.Exited() || st.ExitStatus() != 1 || !strings.HasPrefix(stdout, "got x\nopen failed") {
			t.Errorf("status %#x, output %q: want exit 1 after the open failed", int(st), stdout)
		}
		if o != "-" {
			t.Errorf("OUT %q, want none (no open succeeded, so no hash)", o)
		}
	})
}

// TestConvergeForkServer: under the fork server, SCRY_CONVERGE comes in a run's tag after
// SCRY_RUN_ID, separated by a NUL byte: both are set; a run whose tag has only SCRY_RUN_ID, on
// the same server, runs to its end and hashes nothing.
func TestConvergeForkServer(t *testing.T) {
	testenv.Tool(t, "gcc")
	exe := scryCC(t, "converge")
	pool := cvPool(t, 4*4096, cvPiece{0, bytesOf(9, 100)})
	h := goHash(t, pool, nil)
	fs := startForkServer(t, exe, "fgets")
	for i, tc := range []struct {
		hashes  []string // nil: no SCRY_CONVERGE in the tag
		stdout  string
		wantOut string
	}{
		{hashes: []string{h}, stdout: "start\nrun r0\n", wantOut: "H " + h + "\nC 0\n"},
		{stdout: "start\nrun r1\nerrno 0\ngot a\nend\n", wantOut: "-"},
		{hashes: []string{strings.Repeat("2", 32)}, stdout: "start\nrun r2\nerrno 0\ngot a\nend\n", wantOut: "H " + h + "\n"},
		{hashes: []string{strings.Repeat("2", 32), h}, stdout: "start\nrun r3\n", wantOut: "H " + h + "\nC 1\n"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		stdio := stdioFiles(t, dir, "a\n")
		tag := fmt.Sprintf("SCRY_RUN_ID=r%d", i)
		if tc.hashes != nil {
			tag += "\x00SCRY_CONVERGE=" + cvVar{"1", out, pool, "", "0", tc.hashes}.String()
		}
		st := fs.run(t, []string{"fgets"}, tag, stdio)
		if !st.Exited() || st.ExitStatus() != 0 {
			t.Errorf("run %d: status %#x, want exit 0", i, int(st))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "stdout")); string(b) != tc.stdout {
			t.Errorf("run %d: output %q, want %q", i, b, tc.stdout)
		}
		if o := readOut(t, out); o != tc.wantOut {
			t.Errorf("run %d: OUT %q, want %q", i, o, tc.wantOut)
		}
	}
}
