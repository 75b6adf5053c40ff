package scryrt_test

// Integration tests of the C runtime: build it with `make runtime`, compile the programs of
// testdata/ (which call the scry callbacks and hooks by hand, as the LLVM pass would), run them,
// and check the traces they write with the trace package's reader.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// runtimeLib builds the runtime into a private build directory once per test binary.
func runtimeLib(t *testing.T) string {
	t.Helper()
	testenv.Tool(t, "gcc")
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "scryrt-build-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("make", "-s", "-C", testenv.Root(), "runtime", "BUILD="+buildDir).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("make runtime: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "lib", "scry", "libscry_rt.a")
}

func havePMDK(t *testing.T) {
	t.Helper()
	for _, h := range []string{"/usr/include/libpmem.h", "/usr/include/libpmemobj.h"} {
		if _, err := os.Stat(h); err != nil {
			testenv.Missing(t, "PMDK's headers are not installed (Debian packages libpmem-dev, libpmemobj-dev): %v", err)
		}
	}
}

// compile builds testdata/<name>.c (plus extra sources) against the runtime.
func compile(t *testing.T, name string, extra []string, libs ...string) string {
	t.Helper()
	lib := runtimeLib(t)
	exe := filepath.Join(t.TempDir(), name)
	args := []string{"-O1", "-g", "-Wall", "-I", filepath.Join("..", "include"), "-o", exe, filepath.Join("testdata", name+".c")}
	for _, e := range extra {
		args = append(args, filepath.Join("testdata", e))
	}
	args = append(args, "-Wl,--whole-archive", lib, "-Wl,--no-whole-archive", "-lpthread", "-ldl")
	args = append(args, libs...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, out)
	}
	return exe
}

// rec is a decoded record with its data copied.
type rec struct {
	trace.Event
}

type result struct {
	path      string
	recs      []rec
	sites     map[uint32]trace.Site
	truncated bool
}

func readTrace(t *testing.T, path string) result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	res := result{path: path, sites: map[uint32]trace.Site{}}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, trace.ErrTruncated) {
			res.truncated = true
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		e := *ev
		e.Data = append([]byte(nil), ev.Data...)
		e.Deps = slices.Clone(ev.Deps)
		e.Frames = slices.Clone(ev.Frames)
		for _, s := range ev.Sites {
			res.sites[s.ID] = s
		}
		e.Sites = nil
		res.recs = append(res.recs, rec{e})
	}
	return res
}

// storesOnDisk counts the STORE records of the trace at path as far as it is written (a trace
// being written ends in the middle of a record, or between two).
func storesOnDisk(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return 0
	}
	n := 0
	for {
		ev, err := r.Next()
		if err != nil {
			return n
		}
		if ev.Kind == trace.KindStore {
			n++
		}
	}
}

func (res result) of(k trace.Kind) []rec {
	var out []rec
	for _, r := range res.recs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// siteLine returns the line of a site (the test programs number their sites by line).
func (res result) siteLine(id uint32) uint32 { return res.sites[id].Line }

// summary lists the trace's PM records, one short string each, at offsets from base: STORE,
// FLUSH, FENCE, REGION_UNMAP and the records with a range and flags (TX_ADD and those of
// pmemcheck's requests), each followed by its site's line when lines is set.
func (res result) summary(base uint64, lines bool) []string {
	var out []string
	for _, e := range res.recs {
		var s string
		switch e.Kind {
		case trace.KindStore:
			s = fmt.Sprintf("STORE@%d:%d", e.Addr-base, e.Size)
		case trace.KindFlush:
			s = fmt.Sprintf("FLUSH-%v@%d", e.Flush, e.Addr-base)
		case trace.KindFence:
			s = "FENCE"
		case trace.KindRegionUnmap:
			s = "UNMAP"
		case trace.KindPMExclude, trace.KindSetClean, trace.KindTxIgnore, trace.KindTxAdd:
			s = fmt.Sprintf("%v@%d:%d-%d", e.Kind, e.Addr-base, e.Size, e.Flags)
		default:
			continue
		}
		if lines {
			s += fmt.Sprintf("/%d", res.siteLine(e.Site))
		}
		out = append(out, s)
	}
	return out
}

func (res result) end(t *testing.T) rec {
	t.Helper()
	ends := res.of(trace.KindEnd)
	if len(ends) != 1 {
		t.Fatalf("want one END record, got %d (truncated %v)", len(ends), res.truncated)
	}
	return ends[0]
}

// verify replays the trace with the replay package (the one replay every analysis uses) and
// compares the final bytes of each pool with its file on disk (docs/trace-format.md, "Semantics").
func verify(t *testing.T, res result) *image.VerifyResult {
	t.Helper()
	f, err := os.Open(res.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	vr, err := replay.Verify(r, image.VerifyOptions{})
	if err != nil && !errors.Is(err, trace.ErrTruncated) {
		t.Fatalf("%s: %v", res.path, err)
	}
	return vr
}

// replayed: the trace rebuilds every pool file byte for byte, and replaying it warns of nothing.
func replayed(t *testing.T, res result) {
	t.Helper()
	vr := verify(t, res)
	for _, w := range vr.Warnings {
		t.Errorf("replay: %s", w)
	}
	if len(vr.Regions) == 0 {
		t.Fatal("no region in the trace")
	}
	for _, rr := range vr.Regions {
		if rr.Err != nil {
			t.Errorf("%s: %v", rr.Path, rr.Err)
		} else if !rr.OK {
			t.Errorf("%s: replay differs from the file: %+v", rr.Path, rr)
		}
	}
}

// run runs exe with args and env, returning its exit error (nil or *exec.ExitError).
func run(t *testing.T, exe string, stdin string, env []string, args ...string) error {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", filepath.Base(exe), stderr.String())
	}
	return err
}

// traceOf runs exe on a pool file in a fresh directory (named pm_a.pool, for the tests that map
// it by a glob), with the environment variables env besides SCRY_TRACE, fails the test unless it
// exits 0, and returns the trace it wrote, which must end with an END record.
func traceOf(t *testing.T, exe string, env ...string) result {
	t.Helper()
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "pm_a.pool"), filepath.Join(dir, "t.trace")
	if err := run(t, exe, "", append([]string{"SCRY_TRACE=" + tr}, env...), pool); err != nil {
		t.Fatal(err)
	}
	res := readTrace(t, tr)
	res.end(t)
	return res
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestBasic(t *testing.T) {
	exe := compile(t, "basic", []string{"ext.c"})
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "pool"), filepath.Join(dir, "t.trace")
	err := run(t, exe, "op one\nop two\n", []string{"SCRY_TRACE=" + tr}, pool)
	if exitCode(err) != 3 {
		t.Fatalf("exit: %v, want status 3", err)
	}
	res := readTrace(t, tr)

	if e := res.end(t); e.How != trace.EndExit || e.Status != 3 {
		t.Errorf("END how=%v status=%d, want exit 3", e.How, e.Status)
	}
	if len(res.sites) != 9 {
		t.Errorf("got %d sites, want 9", len(res.sites))
	}
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 || maps[0].Size != 1<<20 || maps[0].Path != pool || maps[0].Flags != 0 {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	base := maps[0].Addr

	// Site lines (basic.c): 10 store, 11 flush, 12 fence, 13 pmem_persist, 14 memcpy, 15 rmw,
	// 16 ext_write, 17 call, 18 fgets.
	var kinds []string
	var ext []rec
	for _, e := range res.recs {
		off := e.Addr - base
		switch e.Kind {
		case trace.KindStore, trace.KindLoad:
			kinds = append(kinds, fmt.Sprintf("%v@%d:%d/%d", e.Kind, off, e.Size, res.siteLine(e.Site)))
		case trace.KindFlush:
			kinds = append(kinds, fmt.Sprintf("FLUSH@%d/%d", off, res.siteLine(e.Site)))
		case trace.KindFence:
			kinds = append(kinds, fmt.Sprintf("FENCE-%v/%d", e.Fence, res.siteLine(e.Site)))
		case trace.KindExternalWrite:
			ext = append(ext, e)
		case trace.KindOpBegin:
			kinds = append(kinds, "OP_BEGIN:"+e.Text)
		case trace.KindOpEnd:
			kinds = append(kinds, fmt.Sprintf("OP_END:%d", e.Op))
		}
	}
	want := []string{
		"STORE@64:8/10",
		"FLUSH@64/11", "FENCE-sfence/12",
		"FLUSH@64/13", "FLUSH@128/13", "FLUSH@192/13", "FENCE-sfence/13",
		"STORE@300:3/14",
		"LOAD@512:8/15", "FENCE-locked/15", "STORE@512:8/15",
		"OP_BEGIN:op one", "OP_END:0", "OP_BEGIN:op two", "OP_END:1",
	}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("records:\n got %v\nwant %v", kinds, want)
	}
	for _, e := range res.of(trace.KindStore) {
		if e.Addr-base == 64 && !bytes.Equal(e.Data, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}) {
			t.Errorf("store bytes %x", e.Data)
		}
		if e.Addr-base == 64 && e.Context == 0 {
			t.Errorf("store in setter has the empty call stack")
		}
	}

	// External writes: the initial "hello", ext_write's 300 bytes, the unreported byte at exit.
	if len(ext) != 3 {
		t.Fatalf("want 3 EXTERNAL_WRITEs, got %d: %+v", len(ext), ext)
	}
	if ext[0].Addr-base != 8192 || string(ext[0].Data) != "hello" || ext[0].Flags != trace.ExternalInitial {
		t.Errorf("initial content: %+v", ext[0].Event)
	}
	if ext[1].Addr-base != 4096 || ext[1].Size != 300 || res.siteLine(ext[1].Site) != 16 || ext[1].Flags != 0 ||
		string(ext[1].Data[:3]) != "ABC" {
		t.Errorf("ext_write: off %d size %d site line %d flags %d", ext[1].Addr-base, ext[1].Size,
			res.siteLine(ext[1].Site), ext[1].Flags)
	}
	if ext[2].Addr-base != 20000 || ext[2].Site != 0 || !bytes.Equal(ext[2].Data, []byte{7}) {
		t.Errorf("exit-time difference: %+v", ext[2].Event)
	}
	replayed(t, res)
}

func TestLibpmem(t *testing.T) {
	havePMDK(t)
	exe := compile(t, "libpmem", nil, "-lpmem")
	res := traceOf(t, exe, "PMEM_IS_PMEM_FORCE=1")
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 || maps[0].Flags != trace.RegionCreated || res.siteLine(maps[0].Site) != 1 {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	got := res.summary(maps[0].Addr, true)
	want := []string{
		"STORE@1000:10/2", "FLUSH-clwb@960/2", "FENCE/2", // pmem_memcpy_persist(pm+1000, 10)
		"STORE@5000:200/3", "FLUSH-clwb@4992/3", "FLUSH-clwb@5056/3", "FLUSH-clwb@5120/3", "FLUSH-clwb@5184/3",
		"FENCE/4",         // pmem_drain
		"FLUSH-clwb@64/5", // pmem_flush(pm+70, 1)
		"UNMAP/6",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records:\n got %v\nwant %v", got, want)
	}
	replayed(t, res)
}

// TestLibpmemNoFlush: with PMEM_NO_FLUSH=1 libpmem writes nothing back, so the trace header
// says so (trace.HeaderNoFlush) and libpmem's calls record their stores and fences, no FLUSH;
// with PMEM_NO_FLUSH=0 it flushes and the header has no flag.
func TestLibpmemNoFlush(t *testing.T) {
	havePMDK(t)
	exe := compile(t, "libpmem", nil, "-lpmem")
	for _, tt := range []struct {
		env     string
		noFlush bool
		want    []string
	}{
		{"PMEM_NO_FLUSH=1", true, []string{"STORE@1000:10/2", "FENCE/2", "STORE@5000:200/3", "FENCE/4", "UNMAP/6"}},
		{"PMEM_NO_FLUSH=0", false, []string{"STORE@1000:10/2", "FLUSH-clwb@960/2", "FENCE/2", "STORE@5000:200/3",
			"FLUSH-clwb@4992/3", "FLUSH-clwb@5056/3", "FLUSH-clwb@5120/3", "FLUSH-clwb@5184/3", "FENCE/4", "FLUSH-clwb@64/5", "UNMAP/6"}},
	} {
		res := traceOf(t, exe, "PMEM_IS_PMEM_FORCE=1", tt.env)
		r, err := trace.Open(res.path)
		if err != nil {
			t.Fatal(err)
		}
		noFlush := r.Header().NoFlush()
		r.Close()
		if noFlush != tt.noFlush {
			t.Errorf("%s: header no_flush %v, want %v", tt.env, noFlush, tt.noFlush)
		}
		maps := res.of(trace.KindRegionMap)
		if len(maps) != 1 {
			t.Fatalf("%s: REGION_MAP: %+v", tt.env, maps)
		}
		if got := res.summary(maps[0].Addr, true); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: records:\n got %v\nwant %v", tt.env, got, tt.want)
		}
	}
}

func TestLibpmemobj(t *testing.T) {
	havePMDK(t)
	exe := compile(t, "obj", nil, "-lpmemobj", "-lpmem")
	res := traceOf(t, exe, "PMEM_IS_PMEM_FORCE=1")
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 || maps[0].Flags != trace.RegionCreated || maps[0].Size != 8<<20 {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	// The transaction records, in order, by site line (obj.c): 3 begin, 4 add, 6 alloc,
	// 7 process (commit), 8 end, 9 abort, 10 zalloc, 11 close.
	var got []string
	persisted := map[uint32]bool{}
	for _, e := range res.recs {
		switch e.Kind {
		case trace.KindTxBegin, trace.KindTxCommit, trace.KindTxEnd, trace.KindRegionUnmap:
			got = append(got, fmt.Sprintf("%v/%d", e.Kind, res.siteLine(e.Site)))
		case trace.KindTxAbort:
			got = append(got, fmt.Sprintf("%v(%d)/%d", e.Kind, e.Errnum, res.siteLine(e.Site)))
		case trace.KindTxAdd:
			got = append(got, fmt.Sprintf("%v:%d/%d", e.Kind, e.Size, res.siteLine(e.Site)))
		case trace.KindAlloc:
			got = append(got, fmt.Sprintf("%v:%d/%d", e.Kind, e.Flags, res.siteLine(e.Site)))
		case trace.KindExternalWrite:
			if e.Flags&trace.ExternalPersisted != 0 {
				persisted[res.siteLine(e.Site)] = true
			}
		}
	}
	want := []string{
		"TX_BEGIN/3", "TX_ADD:32/4", "ALLOC:1/6", "TX_COMMIT/7", "TX_END/8",
		"TX_BEGIN/3", "TX_ADD:32/4", "ALLOC:1/6", "TX_ABORT(42)/9", "TX_END/8",
		"ALLOC:2/10", "REGION_UNMAP/11",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records:\n got %v\nwant %v", got, want)
	}
	// The undo log (add), the commit, the rollback and the allocator write PM themselves.
	for _, line := range []uint32{4, 7, 9, 10} {
		if !persisted[line] {
			t.Errorf("no persisted EXTERNAL_WRITE from the call at line %d", line)
		}
	}
	replayed(t, res)
}

func TestMmapGlobs(t *testing.T) {
	exe := compile(t, "mmapglob", nil)
	dir := t.TempDir()
	pm, other, tr := filepath.Join(dir, "pm_a.pool"), filepath.Join(dir, "other.pool"), filepath.Join(dir, "t.trace")
	env := []string{"SCRY_TRACE=" + tr, "SCRY_PM_GLOBS=/nonexistent/*:*/pm_*.pool"}
	if err := run(t, exe, "", env, pm, other); err != nil {
		t.Fatal(err)
	}
	res := readTrace(t, tr)
	res.end(t)
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 || maps[0].Path != pm {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	stores := res.of(trace.KindStore)
	if len(stores) != 2 {
		t.Errorf("%d STOREs, want 2 (the other file is not PM)", len(stores))
	} else if string(stores[1].Data) != "kernel" || stores[1].Addr-maps[0].Addr != 2*4096+5 {
		t.Errorf("STORE of the read(2) into PM: %+v", stores[1])
	}
	if n := len(res.of(trace.KindRegionUnmap)); n != 1 {
		t.Errorf("%d REGION_UNMAPs, want 1", n)
	}
	ext := res.of(trace.KindExternalWrite)
	if len(ext) != 2 || string(ext[0].Data) != "init" || ext[1].Addr-maps[0].Addr != 11 || ext[1].Site != 0 {
		t.Errorf("external writes: %+v", ext)
	}
	replayed(t, res)
}

func TestThreads(t *testing.T) {
	exe := compile(t, "threads", nil)
	res := traceOf(t, exe)
	threads := map[uint32]int{}
	for _, e := range res.of(trace.KindStore) {
		threads[e.Thread]++
	}
	if len(threads) != 4 {
		t.Errorf("stores from %d threads, want 4", len(threads))
	}
	for tid, n := range threads {
		if n != 10000 {
			t.Errorf("thread %d: %d stores, want 10000", tid, n)
		}
	}
	replayed(t, res)
}

func TestAbortSignal(t *testing.T) {
	exe := compile(t, "crash", nil)
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "pool"), filepath.Join(dir, "t.trace")
	err := run(t, exe, "", []string{"SCRY_TRACE=" + tr}, pool, "abort")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGABRT {
		t.Fatalf("want death by SIGABRT, got %v", err)
	}
	res := readTrace(t, tr)
	if e := res.end(t); e.How != trace.EndSignal || e.Status != int64(syscall.SIGABRT) {
		t.Errorf("END how=%v status=%d", e.How, e.Status)
	}
	if n := len(res.of(trace.KindStore)); n != 100001 {
		t.Errorf("%d stores, want 100001", n)
	}
	replayed(t, res)
}

// killed runs crash.c in loop mode and sends sig once the trace on disk holds its first 100000
// stores (the runtime writes its buffer out as it fills).
func killed(t *testing.T, sig syscall.Signal) (result, error) {
	exe := compile(t, "crash", nil)
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "pool"), filepath.Join(dir, "t.trace")
	cmd := exec.Command(exe, pool, "loop")
	cmd.Env = append(os.Environ(), "SCRY_TRACE="+tr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // no-op once it has exited
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("no ready line: %q %v", buf, err)
	}
	testenv.WaitFor(t, func() bool { return storesOnDisk(tr) >= 100000 }, time.Minute, "the trace to hold 100000 stores")
	cmd.Process.Signal(sig)
	err = cmd.Wait()
	return readTrace(t, tr), err
}

func TestSIGKILLTruncates(t *testing.T) {
	res, _ := killed(t, syscall.SIGKILL)
	if !res.truncated {
		t.Error("trace of a killed program is not reported truncated")
	}
	if len(res.of(trace.KindEnd)) != 0 {
		t.Error("END record after SIGKILL")
	}
	if n := len(res.of(trace.KindStore)); n < 100000 {
		t.Errorf("only %d stores made it to the trace", n)
	}
}

func TestSIGTERM(t *testing.T) {
	res, _ := killed(t, syscall.SIGTERM)
	if e := res.end(t); e.How != trace.EndSignal || e.Status != int64(syscall.SIGTERM) {
		t.Errorf("END how=%v status=%d", e.How, e.Status)
	}
	replayed(t, res)
}

// TestDepsAndFrames: DEPS records follow their module's SITES record with module-local indices
// turned into global ids (invalid facts left out, no record without facts), and FRAME records
// name the current activations exactly when they changed (deps.c says which ones each store
// sees).
func TestDepsAndFrames(t *testing.T) {
	exe := compile(t, "deps", nil)
	res := traceOf(t, exe)
	var sitesIdx []uint64
	var deps [][]trace.Dep
	for i, e := range res.recs {
		switch e.Kind {
		case trace.KindSites:
			sitesIdx = append(sitesIdx, e.Index)
		case trace.KindDeps:
			if i == 0 || res.recs[i-1].Kind != trace.KindSites {
				t.Errorf("DEPS record %d does not follow a SITES record", e.Index)
			}
			deps = append(deps, e.Deps)
		}
	}
	// Modules: sites 1-3, 4-5, 6-7.
	want := [][]trace.Dep{
		{{From: 2, To: 3, Kind: trace.DepControl}, {From: 3, To: 2, Kind: trace.DepValue}, {From: 1, To: 2, Kind: trace.DepAddress}},
		{{From: 5, To: 4, Kind: trace.DepValue}},
	}
	if len(sitesIdx) != 3 || fmt.Sprint(deps) != fmt.Sprint(want) {
		t.Errorf("%d SITES records, DEPS %v; want 3 and %v", len(sitesIdx), deps, want)
	}
	if len(res.sites) != 7 || res.sites[3].Kind != trace.SiteBranch {
		t.Errorf("sites: %v", res.sites)
	}

	deep := make([]uint64, 256)
	for i := range deep {
		deep[i] = uint64(i + 4)
	}
	wantFrames := [][]uint64{nil, {1}, {1, 2}, {1}, {1}, nil, deep, nil}
	stores := res.of(trace.KindStore)
	if len(stores) != len(wantFrames) {
		t.Fatalf("%d stores, want %d", len(stores), len(wantFrames))
	}
	for i, e := range stores {
		if v := binary.LittleEndian.Uint64(e.Data); v != uint64(i+1) || !slices.Equal(e.Frames, wantFrames[i]) {
			t.Errorf("store %d: frames %v, want %v", v, e.Frames, wantFrames[i])
		}
	}
	// One per change of the activations, and the thread's first (empty) one: the thread id may be
	// an exited thread's, whose last FRAME the reader would otherwise still apply.
	if n := len(res.of(trace.KindFrame)); n != 7 {
		t.Errorf("%d FRAME records, want 7 (the first, then one per change of the activations)", n)
	}
}

// TestDegradationRecord: when the runtime degrades it writes a WARNING record, and replaying the
// trace reports the results as incomplete.
func TestDegradationRecord(t *testing.T) {
	exe := compile(t, "degrade", nil)
	res := traceOf(t, exe, "SCRY_PM_GLOBS=*/pm_*.pool")
	const msg = "partial unmap of a PM region: the whole region is treated as unmapped"
	ws := res.of(trace.KindWarning)
	if len(ws) != 1 || ws[0].Text != msg {
		t.Fatalf("WARNING records %+v, want one saying %q", ws, msg)
	}
	vr := verify(t, res)
	if want := "results incomplete: " + msg; !slices.Contains(vr.Warnings, want) {
		t.Errorf("replay warnings %q, want %q", vr.Warnings, want)
	}
	if vr.OK {
		t.Error("verify of a degraded trace is OK, want not OK")
	}
}

// TestLibcReads: the hooks of libc functions that read PM record a LOAD of exactly the bytes each
// read: strcmp and memcmp up to the first difference, strncmp up to n, strlen the string and its
// terminator, and a printf format's %s conversions (with a precision, at most that many),
// whatever arguments come before them; a positional format records nothing.
func TestLibcReads(t *testing.T) {
	exe := compile(t, "libcreads", nil)
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "p.pool"), filepath.Join(dir, "t.trace")
	if err := run(t, exe, "", []string{"SCRY_TRACE=" + tr, "SCRY_PM_GLOBS=" + filepath.Join(dir, "*.pool")}, pool); err != nil {
		t.Fatal(err)
	}
	res := readTrace(t, tr)
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	base := maps[0].Addr
	var got []string
	for _, e := range res.of(trace.KindLoad) {
		got = append(got, fmt.Sprintf("%d@%d:%d", res.siteLine(e.Site), e.Addr-base, e.Size))
	}
	want := []string{"2@0:5", "3@0:3", "4@64:7", "5@0:6", "6@0:3", "6@128:5"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("loads (case@offset:size):\n got %v\nwant %v", got, want)
	}
}

// TestOutput: what the program prints on its standard output through the hooked calls becomes
// OUTPUT records (fd 1) of its thread, inside its operation: puts (with its newline), fputs and
// fprintf to stdout, printf and dprintf to fd 1, formatted over the call's arguments (also past
// the runtime's stack buffer), fwrite, putchar, fputc and putc to stdout; standard error and a format into memory are not recorded, and an
// inert run records nothing.
func TestOutput(t *testing.T) {
	exe := compile(t, "output", nil)
	res := traceOf(t, exe)
	var got []string
	inOp := false
	for _, r := range res.recs {
		switch r.Kind {
		case trace.KindOpBegin:
			inOp = true
		case trace.KindOpEnd:
			inOp = false
		case trace.KindOutput:
			if !inOp || r.Handle != 1 {
				t.Errorf("OUTPUT %+v: want fd 1 inside the operation", r.Event)
			}
			got = append(got, fmt.Sprintf("%d:%q", res.siteLine(r.Site), r.Data))
		}
	}
	long := fmt.Sprintf("%2000d|\n", 7)
	want := []string{`1:"one"`, `1:"\n"`, `2:"two\n"`, `4:"3-three\n"`, `5:"four\n"`, `7:"five\n"`, fmt.Sprintf("9:%q", long),
		`10:"(null)\n"`, `12:"a"`, `13:"b"`, `14:"\n"`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("OUTPUT (case:data):\n got %v\nwant %v", got, want)
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.trace")
	if err := run(t, exe, "", []string{"SCRY_TRACE=" + tr, "SCRY_INERT=1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tr); !os.IsNotExist(err) {
		t.Errorf("inert: trace %s: %v, want none", tr, err)
	}
}

// TestInert: with SCRY_INERT=1 (how crash images are re-executed) the runtime writes no trace and
// registers no PM region, so the pass's inline test keeps loads and stores off the callbacks;
// the program runs as it would uninstrumented (the same exit status, the pool written).
func TestInert(t *testing.T) {
	exe := compile(t, "basic", []string{"ext.c"})
	dir := t.TempDir()
	pool, tr := filepath.Join(dir, "pool"), filepath.Join(dir, "t.trace")
	err := run(t, exe, "op one\nop two\n", []string{"SCRY_TRACE=" + tr, "SCRY_INERT=1"}, pool)
	if exitCode(err) != 3 {
		t.Fatalf("exit: %v, want status 3 as when traced", err)
	}
	if _, err := os.Stat(tr); !os.IsNotExist(err) {
		t.Errorf("trace %s: %v, want none", tr, err)
	}
	if fi, err := os.Stat(pool); err != nil || fi.Size() == 0 {
		t.Errorf("pool: %v %v", fi, err)
	}
}

// TestClientRequests: pmemcheck's client requests become records (docs/pmemcheck.md); every
// request, pmemcheck's or another tool's, answers its default result (the program exits 101
// otherwise); the replay applies the records without a warning.
func TestClientRequests(t *testing.T) {
	exe := compile(t, "valgrind", nil)
	res := traceOf(t, exe)
	maps := res.of(trace.KindRegionMap)
	if len(maps) != 1 || maps[0].Size != 1<<16 || res.siteLine(maps[0].Site) != 1 {
		t.Fatalf("REGION_MAP: %+v", maps)
	}
	got := res.summary(maps[0].Addr, false)
	want := []string{
		"PM_EXCLUDE@64:8-0", "STORE@64:1", "PM_EXCLUDE@64:8-1",
		"FLUSH-clwb@0", "FLUSH-clwb@64", "FENCE",
		"SET_CLEAN@128:16-0", "TX_IGNORE@256:64-0",
		"UNMAP",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records:\n got %v\nwant %v", got, want)
	}
	vr := verify(t, res)
	for _, w := range vr.Warnings {
		t.Errorf("replay: %s", w)
	}
}

// TestProgramSignalHandlers: a program's own SIGSEGV handler, installed with sigaction, signal or
// sysv_signal, does not replace the runtime's (whose faults make protected PM writable): the
// program's PM writes reach the trace, a genuine fault reaches the program's handler, and the
// program sees its own handler as the installed one (testdata/sighandlers.c's exit status names
// the check that failed).
func TestProgramSignalHandlers(t *testing.T) {
	exe := compile(t, "sighandlers", nil)
	for _, mode := range []string{"sigaction", "signal", "sysv"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			pool, tr := filepath.Join(dir, "p.pool"), filepath.Join(dir, "t.trace")
			err := run(t, exe, "", []string{"SCRY_TRACE=" + tr, "SCRY_PM_GLOBS=" + filepath.Join(dir, "*.pool")}, pool, mode)
			if code := exitCode(err); code != 0 {
				t.Fatalf("exit status %d (%v): check %d of sighandlers.c failed", code, err, code)
			}
			res := readTrace(t, tr)
			res.end(t)
			maps := res.of(trace.KindRegionMap)
			if len(maps) != 1 {
				t.Fatalf("REGION_MAP: %+v", maps)
			}
			var got []string
			for _, e := range res.of(trace.KindExternalWrite) {
				got = append(got, fmt.Sprintf("%d:%q", e.Addr-maps[0].Addr, e.Data))
			}
			want := []string{`0:"a"`, `4096:"b"`, `8192:"c"`}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("EXTERNAL_WRITE (offset:data): got %v, want %v", got, want)
			}
			replayed(t, res)
		})
	}
}

// TestStdinUnseen: a program that consumed its workload file (standard input with an offset, as
// `scry check --workload` gives it) without a hooked read and without an operation gets a WARNING
// saying so; one whose reads are hooked, or whose input is a pipe (no offset to tell), does not.
func TestStdinUnseen(t *testing.T) {
	exe := compile(t, "stdinread", nil)
	const input = "set 1 10\nget 1\n"
	for _, c := range []struct {
		mode     string
		file     bool
		wantWarn bool
	}{
		{"unseen", true, true},
		{"hooked", true, false},
		{"unseen", false, false},
	} {
		t.Run(fmt.Sprintf("%s-file=%v", c.mode, c.file), func(t *testing.T) {
			dir := t.TempDir()
			tr := filepath.Join(dir, "t.trace")
			cmd := exec.Command(exe, c.mode)
			cmd.Env = append(os.Environ(), "SCRY_TRACE="+tr)
			if c.file {
				w := filepath.Join(dir, "workload")
				if err := os.WriteFile(w, []byte(input), 0o644); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(w)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.Stdin = f
			} else {
				cmd.Stdin = strings.NewReader(input)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			res := readTrace(t, tr)
			res.end(t)
			ws := res.of(trace.KindWarning)
			got := len(ws) == 1 && strings.HasPrefix(ws[0].Text, fmt.Sprintf("the program read %d bytes of standard input, but through no call scry hooks", len(input)))
			if got != c.wantWarn || len(ws) > 1 {
				t.Errorf("WARNING records %+v, want the unseen-input warning: %v", ws, c.wantWarn)
			}
			if ops := len(res.of(trace.KindOpBegin)); (c.mode == "hooked") != (ops == 2) {
				t.Errorf("%d OP_BEGIN records", ops)
			}
		})
	}
}
