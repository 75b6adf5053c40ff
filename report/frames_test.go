package report

import (
	"slices"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// TestPersistenceHelpers: functions that only flush, fence or call persist functions (directly,
// through inlined helpers or calls to helpers) are helpers; a store, a writing library call, an
// indirect call or a call to a non-helper makes a function no helper; mutual recursion among
// helpers keeps them helpers.
func TestPersistenceHelpers(t *testing.T) {
	site := func(fn string, k trace.SiteKind, callee string) trace.Site {
		return trace.Site{Function: fn, Kind: k, Callee: callee}
	}
	sites := []trace.Site{
		site("pflush", trace.SiteFlush, ""),
		site("pflush", trace.SiteLoad, ""),
		site("pflush", trace.SiteBranch, ""),
		site("clflush_range", trace.SiteInlined, "mfence"), // an inlined helper
		site("clflush_range", trace.SiteFlush, ""),
		site("mfence", trace.SiteFence, ""),
		site("persist", trace.SiteLibCall, "pmem_persist"),
		site("wrap", trace.SiteCall, "pflush"), // calls a helper: a helper
		site("write_slot", trace.SiteStore, ""),
		site("write_slot", trace.SiteCall, "pflush"),
		site("copy_persist", trace.SiteLibCall, "pmem_memcpy_persist"), // writes
		site("via_ptr", trace.SiteFence, ""),
		site("via_ptr", trace.SiteCall, ""), // an indirect call
		site("calls_writer", trace.SiteFence, ""),
		site("calls_writer", trace.SiteCall, "write_slot"),
		site("ping", trace.SiteFence, ""),
		site("ping", trace.SiteCall, "pong"),
		site("pong", trace.SiteCall, "ping"),
		site("reader", trace.SiteLoad, ""), // persists nothing
		site("calls_unknown", trace.SiteFence, ""),
		site("calls_unknown", trace.SiteCall, "uninstrumented"),
	}
	h := PersistenceHelpers(sites)
	var got []string
	for fn := range h {
		got = append(got, fn)
	}
	slices.Sort(got)
	want := []string{"clflush_range", "mfence", "persist", "pflush", "ping", "pong", "wrap"}
	if !slices.Equal(got, want) {
		t.Errorf("helpers %q, want %q", got, want)
	}
}

// TestUserFrame: the innermost frame outside helpers and system headers; frame 0 when every
// frame is a helper's or a system one.
func TestUserFrame(t *testing.T) {
	h := Helpers{"pflush": true, "clflush": true}
	f := func(fn, file string) Frame { return Frame{Function: fn, File: file, Line: 1} }
	for _, tc := range []struct {
		name   string
		frames []Frame
		want   int
	}{
		{"the instruction's own function", []Frame{f("insert", "lh.c"), f("main", "main.c")}, 0},
		{"a helper called", []Frame{f("pflush", "pflush.c"), f("insert", "lh.c"), f("main", "main.c")}, 1},
		{"helpers inlined in helpers", []Frame{f("clflush", "b.h"), f("pflush", "b.h"), f("split", "b.h")}, 2},
		{"a system header", []Frame{f("atomic_store", "/usr/include/c++/12/bits/atomic_base.h"), f("push", "q.cpp")}, 1},
		{"libstdc++ as clang names it", []Frame{
			Loc(trace.Site{Function: "operator++", File: "/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/atomic_base.h", Line: 385}).Frame(),
			f("insert", "skiplist.hpp")}, 1},
		{"a library installed from source", []Frame{f("pmem::obj::p<int>::operator=(int const&)", "/usr/local/include/libpmemobj++/p.hpp"), f("push", "q.cpp")}, 1},
		{"clang's own headers", []Frame{f("_mm_clwb", "/usr/lib/llvm-14/lib/clang/14.0.6/include/clwbintrin.h"), f("persist", "p.c")}, 1},
		{"only helpers", []Frame{f("pflush", "pflush.c"), f("clflush", "b.h")}, 0},
		{"no frame", nil, 0},
	} {
		if got := UserFrame(tc.frames, h); got != tc.want {
			t.Errorf("%s: frame %d, want %d", tc.name, got, tc.want)
		}
	}
}

// fakeTable is a SiteTable of hand-written sites, call stacks and project roots.
type fakeTable struct {
	sites  map[uint32]trace.Site
	stacks map[uint32][]uint32
	roots  []string
}

func (t fakeTable) Site(id uint32) (trace.Site, bool) { s, ok := t.sites[id]; return s, ok }
func (t fakeTable) StackOf(n uint32) []uint32         { return t.stacks[n] }
func (t fakeTable) ProjectRoots() []string            { return t.roots }

// TestProjectCode: with project roots, a frame whose file is outside every root is External and
// never where a finding is reported while a frame of the project is further out (a library's
// headers installed under a prefix of the user's); without roots, the path rule alone. A root
// is a directory: /src/proj does not hold /src/project.
func TestProjectCode(t *testing.T) {
	sites := map[uint32]trace.Site{
		1: {ID: 1, Kind: trace.SiteStore, Function: "pmem::obj::p<int>::operator=(int const&)", File: "/opt/pmdk/include/libpmemobj++/p.hpp", Line: 70},
		2: {ID: 2, Kind: trace.SiteCall, Function: "insert", File: "/src/proj/engine.cpp", Line: 12},
		3: {ID: 3, Kind: trace.SiteCall, Function: "main", File: "/src/project/main.cpp", Line: 5},
		4: {ID: 4, Kind: trace.SiteStore, Function: "helper", File: "rel.c", Line: 3},
		5: {ID: 5, Kind: trace.SiteStore, Function: "atomic_store", File: "/usr/include/c++/12/bits/atomic_base.h", Line: 9},
	}
	stacks := map[uint32][]uint32{1: {3, 2}, 2: {3}}
	for _, tc := range []struct {
		name         string
		roots        []string
		site, stack  uint32
		wantExternal []bool
		want         string // UserAt's file
	}{
		{"a library under a prefix", []string{"/src/proj"}, 1, 1, []bool{true, false, true}, "/src/proj/engine.cpp"},
		{"no roots: the path rule", nil, 1, 1, []bool{false, false, false}, "/opt/pmdk/include/libpmemobj++/p.hpp"},
		{"two roots", []string{"/src/proj", "/src/project"}, 1, 1, []bool{true, false, false}, "/src/proj/engine.cpp"},
		{"root slash", []string{"/"}, 1, 1, []bool{false, false, false}, "/opt/pmdk/include/libpmemobj++/p.hpp"},
		{"a relative file is not judged", []string{"/src/proj"}, 4, 2, []bool{false, true}, "rel.c"},
		{"a system header inside no root", []string{"/src/proj"}, 5, 1, []bool{true, false, true}, "/src/proj/engine.cpp"},
		{"every frame outside: the site itself", []string{"/src/proj"}, 5, 2, []bool{true, true}, "/usr/include/c++/12/bits/atomic_base.h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := fakeTable{sites: sites, stacks: stacks, roots: tc.roots}
			fr := FramesAt(tbl, tc.site, tc.stack)
			var ext []bool
			for _, f := range fr {
				ext = append(ext, f.External)
			}
			if !slices.Equal(ext, tc.wantExternal) {
				t.Errorf("External %v, want %v (frames %+v)", ext, tc.wantExternal, fr)
			}
			if got := UserAt(tbl, tc.site, tc.stack); got.File != tc.want {
				t.Errorf("UserAt %s, want %s", got, tc.want)
			}
		})
	}
}

// TestOwnKey: one key per instruction as the program sees it: its own position, plus the
// program's line when the instruction is in code that is not the program's, whatever library
// path led from that line to it; the frame that stands for it is that line.
func TestOwnKey(t *testing.T) {
	f := func(fn, file string, line int, ext bool) Frame {
		return Frame{Function: fn, File: file, Line: line, External: ext}
	}
	store := f("put_word", "kv.c", 24, false)
	lib := f("add", "/opt/lib/common.hpp", 188, true)
	for _, tc := range []struct {
		name   string
		a, b   []Frame
		same   bool
		wantAt int
	}{
		{"one helper, two callers", []Frame{store, f("touch", "kv.c", 35, false)}, []Frame{store, f("hit", "kv.c", 40, false)}, true, 0},
		{"inlined copy", []Frame{store, f("main", "kv.c", 50, false)}, []Frame{{Function: "put_word", File: "kv.c", Line: 24, Inlined: true}, f("main", "kv.c", 51, false)}, true, 0},
		{"library paths from one line", []Frame{lib, f("tx_add", "/opt/lib/tx.hpp", 9, true), f("put", "cmap.cc", 122, false)},
			[]Frame{lib, f("snapshot", "/opt/lib/p.hpp", 70, true), f("put", "cmap.cc", 122, false)}, true, 2},
		{"one library line from two lines", []Frame{lib, f("put", "cmap.cc", 122, false)}, []Frame{lib, f("remove", "cmap.cc", 140, false)}, false, 1},
		{"two instructions", []Frame{store}, []Frame{f("put_word", "kv.c", 25, false)}, false, 0},
		{"two instantiations of one template", []Frame{f("add<p<int>>", "/opt/lib/common.hpp", 188, true), f("put", "cmap.cc", 122, false)},
			[]Frame{f("add<p<long>>", "/opt/lib/common.hpp", 188, true), f("put", "cmap.cc", 122, false)}, true, 1},
	} {
		ka, at := Placed{Frames: tc.a}.OwnKey()
		kb, _ := Placed{Frames: tc.b}.OwnKey()
		if (ka == kb) != tc.same || at != tc.wantAt {
			t.Errorf("%s: keys %q and %q (same %v, want %v), frame %d (want %d)", tc.name, ka, kb, ka == kb, tc.same, at, tc.wantAt)
		}
	}
}
