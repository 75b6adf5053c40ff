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
