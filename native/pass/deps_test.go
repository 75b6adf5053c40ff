// Tests of the trace format's version-2 facts as the pass and the runtime produce them, on real
// programs: testdata/deps.c (also at -O1) and testdata/frames.c are compiled with each installed
// clang at -O0 and -O2 with the plugin, linked with the real runtime (built with `make
// runtime`), run on a PM file they register with scry.h, and their traces are read back with the
// trace package:
//
//   - DEPS (static dependence facts): control dependences on branch sites (including the implicit
//     flow out of a loop through the index it leaves with), value and address dependences on
//     loads and calls, found by the source lines marked "// @name";
//   - FRAME (activation serials): one serial per call, shared by the events of one activation,
//     per thread.
package llvm_test

import (
	"bufio"
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
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
)

var (
	rtOnce sync.Once
	rtErr  error
	rtOut  []byte
)

// runtimeArchive returns build/lib/scry/libscry_rt.a, brought up to date with `make runtime` once.
func runtimeArchive(t *testing.T) string {
	t.Helper()
	rtOnce.Do(func() {
		rtOut, rtErr = exec.Command("make", "-C", testenv.Root(), "runtime", "BUILD="+testenv.BuildDir()).CombinedOutput()
	})
	if rtErr != nil {
		t.Fatalf("make runtime: %v\n%s", rtErr, rtOut)
	}
	return filepath.Join(testenv.BuildDir(), "lib", "scry", "libscry_rt.a")
}

// markers returns the line of every "// @name" marker of a source file.
func markers(t *testing.T, path string) map[string]uint32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]uint32{}
	sc := bufio.NewScanner(f)
	for line := uint32(1); sc.Scan(); line++ {
		if _, name, ok := strings.Cut(sc.Text(), "// @"); ok {
			m[strings.TrimSpace(name)] = line
		}
	}
	return m
}

// event is a decoded record with what the tests look at copied.
type event struct {
	kind   trace.Kind
	index  uint64
	site   uint32
	thread uint32
	frames []uint64
	data   []byte
}

type recorded struct {
	sites  map[uint32]trace.Site
	deps   []trace.Dep
	events []event
}

// record builds testdata/<name>.c with clang-v at opt, instrumented and linked with the runtime,
// runs it with a fresh PM file and args, and reads its whole trace.
func record(t *testing.T, v, opt, name string, args ...string) recorded {
	t.Helper()
	plug := plugin(t, v)
	rt := runtimeArchive(t)
	dir := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("testdata", name+".c"))
	exe := filepath.Join(dir, name)
	inc := filepath.Join(testenv.Root(), "native", "include")
	cc := []string{"-g", opt, "-fpass-plugin=" + plug, "-I" + inc, "-o", exe, src,
		"-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-lpthread", "-ldl"}
	if b, err := exec.Command("clang-"+v, cc...).CombinedOutput(); err != nil {
		t.Fatalf("clang-%s %s: %v\n%s", v, strings.Join(cc, " "), err, b)
	}
	tr := filepath.Join(dir, "run.trace")
	cmd := exec.Command(exe, append([]string{filepath.Join(dir, "x.pool")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SCRY_TRACE="+tr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatalf("open trace: %v", err)
	}
	defer r.Close()
	rec := recorded{sites: map[uint32]trace.Site{}}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read trace: %v", err)
		}
		rec.events = append(rec.events, event{kind: ev.Kind, index: ev.Index, site: ev.Site, thread: ev.Thread,
			frames: slices.Clone(ev.Frames), data: slices.Clone(ev.Data)})
	}
	for _, s := range r.Sites() {
		rec.sites[s.ID] = s
	}
	rec.deps = slices.Clone(r.Deps())
	return rec
}

// at returns the sites of a kind at a line of file.
func (rec recorded) at(file string, line uint32, kind trace.SiteKind) []uint32 {
	var ids []uint32
	for id, s := range rec.sites {
		if s.Line == line && s.Kind == kind && strings.HasSuffix(s.File, "/"+file) {
			ids = append(ids, id)
		}
	}
	return ids
}

// has: some fact of this kind goes from one of `from` to one of `to` (nil: any site).
func (rec recorded) has(from []uint32, kind trace.DepKind, to []uint32) []trace.Dep {
	var out []trace.Dep
	for _, d := range rec.deps {
		if d.Kind == kind && slices.Contains(from, d.From) && (to == nil || slices.Contains(to, d.To)) {
			out = append(out, d)
		}
	}
	return out
}

// decidedBy returns the branch sites whose condition value-depends on one of loads.
func (rec recorded) decidedBy(loads []uint32) []uint32 {
	var out []uint32
	for _, d := range rec.deps {
		if d.Kind == trace.DepValue && rec.sites[d.From].Kind == trace.SiteBranch && slices.Contains(loads, d.To) &&
			!slices.Contains(out, d.From) {
			out = append(out, d.From)
		}
	}
	return out
}

func (rec recorded) describe() string {
	var b strings.Builder
	for _, d := range rec.deps {
		f, t := rec.sites[d.From], rec.sites[d.To]
		fmt.Fprintf(&b, "  %d %v@%s:%d -%d-> %d %v@%s:%d\n", d.From, f.Kind, f.Function, f.Line, d.Kind, d.To, t.Kind, t.Function, t.Line)
	}
	return b.String()
}

func TestDeps(t *testing.T) {
	src, _ := filepath.Abs("testdata/deps.c")
	lines := markers(t, src)
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O1", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				rec := record(t, v, opt, "deps")
				if len(rec.deps) == 0 {
					t.Fatal("no DEPS facts in the trace")
				}
				defer func() {
					if t.Failed() {
						t.Logf("facts:\n%s", rec.describe())
					}
				}()
				// Every fact names sites of the right kinds.
				for _, d := range rec.deps {
					to := rec.sites[d.To].Kind
					switch d.Kind {
					case trace.DepControl:
						if to != trace.SiteBranch {
							t.Errorf("control fact %+v names a %v site", d, to)
						}
					case trace.DepValue, trace.DepAddress:
						if to != trace.SiteLoad && to != trace.SiteRMW && to != trace.SiteCall && to != trace.SiteLibCall {
							t.Errorf("data fact %+v names a %v site", d, to)
						}
					}
				}
				// The DEPS record comes right after the SITES record; no event names a branch site.
				for i, e := range rec.events {
					if e.kind == trace.KindDeps && (i == 0 || rec.events[i-1].kind != trace.KindSites) {
						t.Errorf("DEPS record %d does not follow a SITES record", e.index)
					}
					if s, ok := rec.sites[e.site]; ok && e.site != 0 && s.Kind == trace.SiteBranch {
						t.Errorf("record %d (%v) names branch site %d", e.index, e.kind, e.site)
					}
				}

				// (a) if (p->token) { x = p->key; }
				key := rec.at("deps.c", lines["key"], trace.SiteLoad)
				token := rec.at("deps.c", lines["if"], trace.SiteLoad)
				if len(key) == 0 || len(token) == 0 {
					t.Fatalf("no load sites at lines %d (token) and %d (key)", lines["if"], lines["key"])
				}
				ok := false
				for _, c := range rec.has(key, trace.DepControl, nil) {
					if len(rec.has([]uint32{c.To}, trace.DepValue, token)) > 0 {
						ok = true
					}
				}
				if !ok {
					t.Error("(a) the load of key is not control dependent on a branch whose condition depends on the load of token")
				}

				// (b) q->y = p->x + 3: value; p->next->key = 7: address.
				for _, c := range []struct {
					marker string
					kind   trace.DepKind
				}{{"add3", trace.DepValue}, {"through", trace.DepAddress}, {"local-store", trace.DepValue}} {
					store := rec.at("deps.c", lines[c.marker], trace.SiteStore)
					load := rec.at("deps.c", lines[c.marker], trace.SiteLoad)
					if c.marker == "local-store" {
						load = rec.at("deps.c", lines["local-load"], trace.SiteLoad)
					}
					if len(store) == 0 || len(load) == 0 {
						t.Errorf("%s: no store or load site (stores %v, loads %v)", c.marker, store, load)
						continue
					}
					if len(rec.has(store, c.kind, load)) == 0 {
						t.Errorf("%s: the store has no %v fact on the load", c.marker, c.kind)
					}
				}
				// The value a call returns: n[3].x = guarded(&n[0]).
				store := rec.at("deps.c", lines["ret"], trace.SiteStore)
				call := rec.at("deps.c", lines["ret"], trace.SiteCall)
				if len(rec.has(store, trace.DepValue, call)) == 0 {
					t.Errorf("ret: the store (%v) has no value fact on the call (%v)", store, call)
				}
				// No fact is invented: the store of a constant depends on nothing.
				if store := rec.at("deps.c", lines["through"], trace.SiteStore); len(rec.has(store, trace.DepValue, nil)) > 0 {
					t.Errorf("through: the store of a constant has a value fact")
				}

				// (c) Implicit flow out of a loop: the read of value[i], i the index the lookup
				// loop left with, is control dependent on the branches on token[j] and key[j]
				// (whatever the optimisation level makes of i: two locals, a phi of the exits);
				// the reads that do not use that i are not.
				token = rec.at("deps.c", lines["exit-token"], trace.SiteLoad)
				key = rec.at("deps.c", lines["exit-key"], trace.SiteLoad)
				onToken, onKey := rec.decidedBy(token), rec.decidedBy(key)
				if len(onToken) == 0 || len(onKey) == 0 {
					t.Fatalf("exit-index: no branch decided by the load of token (%v) or of key (%v)", token, key)
				}
				read := rec.at("deps.c", lines["exit-read"], trace.SiteLoad)
				for _, c := range []struct {
					name     string
					branches []uint32
				}{{"token", onToken}, {"key", onKey}} {
					if len(read) == 0 || len(rec.has(read, trace.DepControl, c.branches)) == 0 {
						t.Errorf("exit-read: the load of value[i] (%v) is not control dependent on a branch on %s (%v)", read, c.name, c.branches)
					}
				}
				for _, m := range []string{"exit-other", "exit-killed"} {
					ld := rec.at("deps.c", lines[m], trace.SiteLoad)
					if len(ld) == 0 {
						t.Errorf("%s: no load site", m)
					} else if d := rec.has(ld, trace.DepControl, append(onToken, onKey...)); len(d) > 0 {
						t.Errorf("%s: invented control facts on the lookup's branches: %v", m, d)
					}
				}
			})
		}
	}
}

// storesOf returns the STORE events at sites of function fn, with the 8-byte value stored.
func (rec recorded) storesOf(fn string) (evs []event, vals []int64) {
	for _, e := range rec.events {
		if e.kind == trace.KindStore && rec.sites[e.site].Function == fn && len(e.data) == 8 {
			evs = append(evs, e)
			vals = append(vals, int64(binary.LittleEndian.Uint64(e.data)))
		}
	}
	return evs, vals
}

// framesRounds is ROUNDS of testdata/frames.c.
const framesRounds = 10000

func TestFrames(t *testing.T) {
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				rec := record(t, v, opt, "frames")
				driver, dv := rec.storesOf("driver")
				touch, tv := rec.storesOf("touch")
				if len(driver) != 2 || dv[0] != 100 || dv[1] != 200 || len(touch) != 4 {
					t.Fatalf("want driver's stores 100, 200 and 4 stores in touch; got %v and %v", dv, tv)
				}
				before, after := driver[0].frames, driver[1].frames
				if len(before) != 1 || before[0] == 0 || !slices.Equal(before, after) {
					t.Errorf("driver: frames %v before the calls, %v after; want the same one serial", before, after)
				}
				inner := map[int64][]uint64{} // touch's value -> innermost serials of its stores
				for i, e := range touch {
					if len(e.frames) != 2 || !slices.Equal(e.frames[:1], before) {
						t.Errorf("touch(%d): frames %v, want driver's %v then one more", tv[i], e.frames, before)
						continue
					}
					inner[tv[i]] = append(inner[tv[i]], e.frames[1])
				}
				a, b := inner[1], inner[2]
				if len(a) != 2 || len(b) != 2 || a[0] != a[1] || b[0] != b[1] || a[0] == b[0] || a[0] == 0 || b[0] == 0 {
					t.Errorf("innermost serials of touch(1) %v and touch(2) %v: want one per call, different", a, b)
				}
			})
			t.Run("threads/llvm"+v+opt, func(t *testing.T) {
				rec := record(t, v, opt, "frames", "threads")
				touch, tv := rec.storesOf("touch")
				threads := map[uint32]int{}
				switches := 0
				for i, e := range touch {
					threads[e.thread]++
					if i > 0 && touch[i-1].thread != e.thread {
						switches++
					}
					// worker is the thread's outermost function and calls only touch: the
					// i-th call is the thread's activation i+1, whatever the other thread did.
					if want := []uint64{uint64(tv[i]) + 1}; !slices.Equal(e.frames, want) {
						t.Fatalf("thread %d, touch(%d): frames %v, want %v", e.thread, tv[i], e.frames, want)
					}
				}
				if len(threads) != 2 {
					t.Errorf("stores in touch from %d threads, want 2", len(threads))
				}
				for tid, n := range threads {
					if n != 2*framesRounds {
						t.Errorf("thread %d: %d stores, want %d", tid, n, 2*framesRounds)
					}
				}
				t.Logf("%d switches between the threads", switches)
			})
		}
	}
}
