package pmdk

import (
	"slices"
	"testing"

	"github.com/scry-pm/scry/trace"
)

func TestIntervalSet(t *testing.T) {
	var s IntervalSet
	s.Add(10, 5)  // [10,15)
	s.Add(20, 5)  // [20,25)
	s.Add(15, 5)  // joins: [10,25)
	s.Add(40, 10) // [40,50)
	s.Add(0, 0)
	if s.Len() != 2 {
		t.Fatalf("ranges %v", s.Ranges())
	}
	for _, tc := range []struct {
		a, n uint64
		want bool
	}{{10, 15, true}, {12, 3, true}, {9, 2, false}, {24, 2, false}, {40, 10, true}, {30, 1, false}, {5, 0, true}} {
		if got := s.Covers(tc.a, tc.n); got != tc.want {
			t.Errorf("Covers(%d,%d) = %v", tc.a, tc.n, got)
		}
	}
	for i := uint64(0); i < 10; i++ {
		s.Add(100+i*10, 5)
	}
	if !s.Covers(150, 5) || s.Covers(150, 6) {
		t.Error("binary-search path")
	}
	s.Add(0, 1000)
	if s.Len() != 1 || !s.Covers(0, 1000) {
		t.Errorf("merge all: %v", s.Ranges())
	}
}

func TestIntervalSetRemove(t *testing.T) {
	for _, tc := range []struct {
		name       string
		add        []Range
		addr, size uint64
		want       []Range
	}{
		{"inside splits", []Range{{10, 20}}, 15, 5, []Range{{10, 5}, {20, 10}}},
		{"the whole range", []Range{{10, 20}}, 10, 20, nil},
		{"more than the range", []Range{{10, 20}}, 0, 100, nil},
		{"the low end", []Range{{10, 20}}, 5, 10, []Range{{15, 15}}},
		{"the high end", []Range{{10, 20}}, 25, 10, []Range{{10, 15}}},
		{"across two", []Range{{10, 10}, {30, 10}}, 15, 20, []Range{{10, 5}, {35, 5}}},
		{"between", []Range{{10, 10}, {30, 10}}, 20, 10, []Range{{10, 10}, {30, 10}}},
		{"nothing", []Range{{10, 10}}, 12, 0, []Range{{10, 10}}},
		{"to the end of the address space", []Range{{10, 10}}, 15, ^uint64(0), []Range{{10, 5}}},
	} {
		var s IntervalSet
		for _, r := range tc.add {
			s.Add(r.Addr, r.Size)
		}
		s.Remove(tc.addr, tc.size)
		if got := s.Ranges(); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: Remove(%d, %d) leaves %v, want %v", tc.name, tc.addr, tc.size, got, tc.want)
		}
	}
}

type rec struct{ persisted, dropped []Range }

func (r *rec) PersistRange(a, n uint64) int { r.persisted = append(r.persisted, Range{a, n}); return 0 }
func (r *rec) DropRange(a, n uint64) int    { r.dropped = append(r.dropped, Range{a, n}); return 0 }

func TestTxCommitAbort(t *testing.T) {
	var tx Tx
	if _, ok := tx.Add(0, 8, 0, 0, 0); ok {
		t.Error("Add outside a transaction")
	}
	tx.Begin(1, 0)
	tx.Begin(2, 0)
	if tx.Depth() != 2 || !tx.InWork() || tx.BeginSite != 1 {
		t.Errorf("nesting: %+v", tx)
	}
	tx.Add(0, 8, 0, 0, 0)
	tx.Add(64, 8, trace.TxAddNoFlush, 0, 0)
	tx.Add(128, 8, trace.TxAddNoSnapshot, 0, 0)
	if red, _ := tx.Add(0, 4, 0, 0, 0); !red {
		t.Error("covered add not redundant")
	}
	tx.Alloc(256, 64, true, 0, 0)
	tx.Alloc(512, 64, false, 0, 0)
	if !tx.Covers(512, 8) || !tx.Covers(256, 64) || tx.Covers(8, 1) {
		t.Error("Covers")
	}
	var r rec
	if tx.Commit(&r) || len(r.persisted) != 0 {
		t.Error("inner commit persisted")
	}
	tx.End()
	if !tx.InWork() {
		t.Error("outer level not in work after inner end")
	}
	if !tx.Commit(&r) {
		t.Error("outer commit")
	}
	// added [0,8) and [128,8) (not the no_flush one) and the tx allocation [256,64), plus the
	// covered [0,4)
	if len(r.persisted) != 4 {
		t.Errorf("persisted %v", r.persisted)
	}
	if tx.InWork() {
		t.Error("in work after commit")
	}
	tx.End()
	if tx.Depth() != 0 || tx.Logged.Len() != 0 || tx.End() {
		t.Error("state after end")
	}

	var r2 rec
	tx.Begin(1, 0)
	tx.Add(0, 8, 0, 0, 0)
	tx.Add(128, 8, trace.TxAddNoSnapshot, 0, 0)
	tx.Alloc(256, 64, true, 0, 0)
	tx.Begin(2, 0)
	if !tx.Abort(&r2) || tx.Abort(&r2) {
		t.Error("abort must act once")
	}
	if len(r2.dropped) != 2 || tx.InWork() {
		t.Errorf("dropped %v", r2.dropped)
	}
	if tx.Commit(&r2) {
		t.Error("commit after abort persisted")
	}
}

// TestTxChanges checks what each transaction record did (Tx.Last), the transaction's number
// (Tx.ID, Tx.Serial) and what the commit persists, on nested, aborted and consecutive
// transactions.
func TestTxChanges(t *testing.T) {
	const (
		begin = iota
		add
		addNoFlush
		commit
		abort
		end
	)
	type step struct {
		op        int
		last      Change
		depth     int
		id        uint64
		persisted []Range // what the step persisted (commit)
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"flat", []step{
			{begin, Began, 1, 1, nil}, {add, Began, 1, 1, nil},
			{commit, CommittedOutermost, 1, 1, []Range{{0, 8}}}, {end, EndedOutermost, 0, 0, nil},
		}},
		{"nested: only the outermost commit persists, the ranges of every level", []step{
			{begin, Began, 1, 1, nil}, {begin, Began, 2, 1, nil}, {add, Began, 2, 1, nil}, {addNoFlush, Began, 2, 1, nil},
			{commit, Committed, 2, 1, nil}, {end, Ended, 1, 1, nil},
			{commit, CommittedOutermost, 1, 1, []Range{{0, 8}}}, {end, EndedOutermost, 0, 0, nil},
		}},
		{"aborted: a later commit persists nothing", []step{
			{begin, Began, 1, 1, nil}, {add, Began, 1, 1, nil}, {begin, Began, 2, 1, nil},
			{abort, Aborted, 2, 1, nil}, {end, Ended, 1, 1, nil}, {commit, Committed, 1, 1, nil},
			{end, EndedOutermost, 0, 0, nil},
		}},
		{"consecutive transactions are numbered", []step{
			{begin, Began, 1, 1, nil}, {end, EndedOutermost, 0, 0, nil},
			{begin, Began, 1, 2, nil}, {begin, Began, 2, 2, nil}, {end, Ended, 1, 2, nil}, {end, EndedOutermost, 0, 0, nil},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tx Tx
			var serial uint64
			for i, s := range tc.steps {
				var r rec
				switch s.op {
				case begin:
					tx.Begin(1, 0)
				case add:
					tx.Add(0, 8, 0, 0, 0)
				case addNoFlush:
					tx.Add(64, 8, trace.TxAddNoFlush, 0, 0)
				case commit:
					tx.Commit(&r)
				case abort:
					tx.Abort(&r)
				case end:
					tx.End()
				}
				if s.id != 0 {
					serial = s.id
				}
				if tx.Last() != s.last || tx.Depth() != s.depth || tx.ID() != s.id || tx.Serial() != serial || !slices.Equal(r.persisted, s.persisted) {
					t.Errorf("step %d: last %v depth %d id %d serial %d persisted %v, want %v %d %d %d %v",
						i, tx.Last(), tx.Depth(), tx.ID(), tx.Serial(), r.persisted, s.last, s.depth, s.id, serial, s.persisted)
				}
			}
		})
	}
}

func TestRegions(t *testing.T) {
	var rs Regions
	rs.Map(Region{ID: 1, Base: 0x1000, Len: 0x1000, Path: "a"})
	rs.Map(Region{ID: 2, Base: 0x4000, Len: 0x1000, Path: "b"})
	if r, ok := rs.Find(0x4fff); !ok || r.ID != 2 {
		t.Error("Find")
	}
	if rs.Contains(0x2000) || rs.Contains(0xfff) || !rs.Contains(0x1000) {
		t.Error("Contains")
	}
	if _, ok := rs.Unmap(1); !ok || rs.Contains(0x1000) || rs.Len() != 1 {
		t.Error("Unmap")
	}
	if _, ok := rs.Get(7); ok {
		t.Error("Get unknown")
	}
}

func TestThreads(t *testing.T) {
	var ts Threads
	ts.Get(1).Begin(0, 0)
	if ts.Get(2).Depth() != 0 || ts.Get(1).Depth() != 1 || ts.Open() != 1 {
		t.Error("per-thread state")
	}
}
