package oracle_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Sites of the lock-word traces: 7 the compare-and-swap (an rmw site), 8 the release, 9 another
// read-modify-write.
const (
	casSite = 7
	relSite = 8
	rmw2    = 9
)

// rmw is a read-modify-write at site of the 8-byte word at addr that leaves it new, as the
// runtime records it: a LOAD and a STORE of what it left (read after the instruction), around a
// locked fence.
func rmw(b *analysistest.Builder, site uint32, addr uint64, new byte) *analysistest.Builder {
	return b.LoadBytes(site, addr, word(new)).Fence(site, locked).StoreBytes(site, addr, word(new))
}

func word(v byte) []byte { return []byte{v, 0, 0, 0, 0, 0, 0, 0} }

func lockPool() *analysistest.Builder {
	return pool().Access(casSite, trace.SiteRMW, trace.AccessSeqCst).Access(rmw2, trace.SiteRMW, trace.AccessSeqCst)
}

func TestPMLockWord(t *testing.T) {
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"taken by a CAS, given back by a store of 0",
			rmw(lockPool(), casSite, A, 1).Store(3, B, 8).StoreBytes(relSite, A, word(0)).Exit(0),
			[]string{"pm-lock-word@7"}},
		{"taken and given back twice: one finding",
			rmw(rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(0)), casSite, A, 1).StoreBytes(relSite, A, word(0)).Exit(0),
			[]string{"pm-lock-word@7"}},
		{"given back by an exchange",
			rmw(rmw(lockPool(), casSite, A, 1), rmw2, A, 0).Exit(0),
			[]string{"pm-lock-word@7"}},
		{"a CAS that failed on a held word, then the holder's release",
			rmw(rmw(lockPool().Thread(1), casSite, A, 1).Thread(2), casSite, A, 1).Thread(1).StoreBytes(relSite, A, word(0)).Exit(0),
			[]string{"pm-lock-word@7"}},
		{"a counter is never set to 0",
			rmw(rmw(lockPool(), casSite, A, 1), casSite, A, 2).StoreBytes(relSite, A, word(5)).Exit(0),
			nil},
		{"given back as another non-zero value",
			rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(2)).Exit(0),
			nil},
		{"another thread sets it to 0: a hand-off, not this thread's lock",
			rmw(lockPool().Thread(1), casSite, A, 1).Thread(2).StoreBytes(relSite, A, word(0)).Exit(0),
			nil},
		{"rewritten to another value before the store of 0",
			rmw(lockPool(), casSite, A, 1).StoreBytes(3, A, word(2)).StoreBytes(relSite, A, word(0)).Exit(0),
			nil},
		{"a plain store of 0 with no read-modify-write before",
			lockPool().StoreBytes(3, A, word(1)).StoreBytes(relSite, A, word(0)).Exit(0),
			nil},
		{"a read-modify-write that left 0",
			rmw(lockPool(), casSite, A, 0).StoreBytes(relSite, A, word(0)).Exit(0),
			nil},
		{"the program killed before it ends: nothing reported",
			rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(0)).Signal(9),
			nil},
		{"reported when its pool is closed",
			rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(0)).Unmap(1, 50).Signal(9),
			[]string{"pm-lock-word@7"}},
		{"taken and given back in one operation",
			rmw(lockPool().OpBegin(0, "i 1"), casSite, A, 1).StoreBytes(relSite, A, word(0)).OpEnd(0).Exit(0),
			[]string{"pm-lock-word@7"}},
		{"filled by a CAS in one operation, emptied by the next: a lock-free slot, not a lock",
			rmw(lockPool().OpBegin(0, "i 1"), casSite, A, 1).OpEnd(0).OpBegin(1, "e 1").StoreBytes(relSite, A, word(0)).OpEnd(1).Exit(0),
			nil},
		{"a lock word outside PM",
			rmw(lockPool(), casSite, base+size+64, 1).StoreBytes(relSite, base+size+64, word(0)).Exit(0),
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := analysis.Run(tt.b.Source(t), []*analysis.Analyzer{oracle.PMLockWord}, analysis.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if got := analysistest.Summary(rep); !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPMLockWordReport checks what the finding says: the release as a related location, the
// values, unconfirmed.
func TestPMLockWordReport(t *testing.T) {
	b := rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(0)).Exit(0)
	rep, err := analysis.Run(b.Source(t), []*analysis.Analyzer{oracle.PMLockWord}, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Class != report.Unconfirmed || len(f.Related) != 1 || f.Related[0].Role != report.RoleRelease || f.Related[0].Line != relSite {
		t.Errorf("finding %+v", f)
	}
	for _, w := range []string{"8 bytes", "held: 0x1", "test.c:8", "unless recovery resets it"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("message %q lacks %q", f.Message, w)
		}
	}
}

// TestPMLockWordReleases: one acquire site given back at two release sites is one finding that
// names both, and counts every pair.
func TestPMLockWordReleases(t *testing.T) {
	b := rmw(rmw(lockPool(), casSite, A, 1).StoreBytes(relSite, A, word(0)), casSite, A, 1).StoreBytes(rmw2+1, A, word(0))
	b = rmw(b, casSite, A, 1).StoreBytes(relSite, A, word(0)).Exit(0)
	rep, err := analysis.Run(b.Source(t), []*analysis.Analyzer{oracle.PMLockWord}, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	var lines []int
	for _, r := range f.Related {
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{relSite, rmw2 + 1}) || f.Count != 3 || !strings.Contains(f.Message, "test.c:8 (fn8), test.c:10") {
		t.Errorf("related %v, count %d, message %q", lines, f.Count, f.Message)
	}
}
