package px86

import (
	"fmt"
	"strings"
	"testing"
)

const (
	A = 0x1000 // line A
	B = 0x2000 // line B, another cache line
)

// step is one instruction of a test program.
type step struct {
	op   string // "st", "nt", "ld", "clflush", "clflushopt", "clwb", "sfence", "mfence", "rmw"
	name string // store name (st, nt)
	addr uint64
	size uint64
}

func st(name string, addr uint64) step { return step{"st", name, addr, 8} }
func nt(name string, addr uint64) step { return step{"nt", name, addr, 8} }
func ld(addr uint64) step              { return step{op: "ld", addr: addr} }
func fl(kind string, addr uint64) step { return step{op: kind, addr: addr} }
func fe(kind string) step              { return step{op: kind} }

var flushKinds = map[string]uint8{"clflush": 1, "clflushopt": 2, "clwb": 3}

// run executes the steps and returns, for each store, the set of stores guaranteed to persist
// before it (persisted when it was issued, or earlier on the same cache line), and the final
// state of each store.
func run(t *testing.T, steps []step) (before map[string]map[string]bool, final map[string]State) {
	t.Helper()
	m, err := New(64)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]StoreID{}
	addrs := map[string]uint64{}
	var order []string
	before = map[string]map[string]bool{}
	for i, s := range steps {
		id := StoreID(i)
		switch s.op {
		case "st", "nt":
			set := map[string]bool{}
			for _, o := range order {
				if m.StateOf(ids[o], addrs[o]) == Persisted || m.LineOf(addrs[o]) == m.LineOf(s.addr) {
					set[o] = true
				}
			}
			before[s.name] = set
			var flags uint8
			if s.op == "nt" {
				flags = NT
			}
			m.Store(id, Origin{Site: uint32(i)}, s.addr, s.size, flags)
			ids[s.name], addrs[s.name] = id, s.addr
			order = append(order, s.name)
		case "ld":
			// Loads change no persistency state (Table 2.1 row "store", column "load": ✘).
		case "clflush", "clflushopt", "clwb":
			m.Flush(flushKinds[s.op], s.addr, Origin{Site: uint32(i)})
		case "sfence", "mfence", "rmw":
			m.Fence(0)
		default:
			t.Fatalf("bad op %q", s.op)
		}
	}
	final = map[string]State{}
	for _, o := range order {
		final[o] = m.StateOf(ids[o], addrs[o])
	}
	return before, final
}

// TestPersistencyTable checks the persist-before facts of the Px86 table (dissertation
// Huang, USC 2023, §2.1 Table 2.1, as reconstructed in the package doc) pair by pair: for two stores
// x and y, "x<y" must hold (x is guaranteed to persist no later than y) or "!x<y" must not.
func TestPersistencyTable(t *testing.T) {
	tests := []struct {
		pair  string // the Table 2.1 cell exercised
		steps []step
		holds []string         // "x<y" relations that must hold, "!x<y" that must not
		final map[string]State // expected final states
	}{
		{"store/store same line (CL)", []step{st("x", A), st("y", A+8)},
			[]string{"x<y"}, map[string]State{"x": Dirty, "y": Dirty}},
		{"store/store different lines", []step{st("x", A), st("y", B)},
			[]string{"!x<y"}, nil},
		{"store/load: loads order nothing", []step{st("x", A), ld(A), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Dirty}},
		{"load/store: no persistency effect", []step{ld(A), st("x", A), st("y", B)},
			[]string{"!x<y"}, nil},
		{"store/clflush same line, clflush/store", []step{st("x", A), fl("clflush", A), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted, "y": Dirty}},
		{"store/clflush different line", []step{st("x", A), fl("clflush", B), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Dirty}},
		{"clflush/store same line", []step{st("x", A), fl("clflush", A), st("y", A)},
			[]string{"x<y"}, map[string]State{"x": Persisted, "y": Dirty}},
		{"clflush/clflush", []step{st("x", A), fl("clflush", A), st("y", B), fl("clflush", B), st("z", A+64)},
			[]string{"x<y", "x<z", "y<z"}, map[string]State{"x": Persisted, "y": Persisted, "z": Dirty}},
		{"store/clflushopt same line (CL), clflushopt/sfence", []step{st("x", A), fl("clflushopt", A), fe("sfence"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"store/clflushopt different line", []step{st("x", A), fl("clflushopt", B), fe("sfence"), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Dirty}},
		{"clflushopt/store: unordered", []step{st("x", A), fl("clflushopt", A), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Pending, "y": Dirty}},
		{"clflushopt/clflushopt: unordered", []step{st("x", A), fl("clflushopt", A), st("y", B), fl("clflushopt", B), st("z", A+128)},
			[]string{"!x<y", "!x<z", "!y<z"}, map[string]State{"x": Pending, "y": Pending}},
		{"clwb/sfence", []step{st("x", A), fl("clwb", A), fe("sfence"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"clflushopt/mfence", []step{st("x", A), fl("clflushopt", A), fe("mfence"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"clwb/RMW (locked)", []step{st("x", A), fl("clwb", A), fe("rmw"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"clflushopt/clflush same line (CL)", []step{st("x", A), fl("clflushopt", A), fl("clflush", A), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"clflushopt then later store same line stays dirty", []step{st("x", A), fl("clwb", A), st("y", A+8), fe("sfence")},
			[]string{"x<y"}, map[string]State{"x": Persisted, "y": Dirty}},
		{"store/sfence without flush", []step{st("x", A), fe("sfence"), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Dirty}},
		{"store/mfence without flush", []step{st("x", A), fe("mfence"), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Dirty}},
		{"ntstore/store without fence", []step{nt("x", A), st("y", B)},
			[]string{"!x<y"}, map[string]State{"x": Pending}},
		{"ntstore/sfence", []step{nt("x", A), fe("sfence"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"ntstore/RMW", []step{nt("x", A), fe("rmw"), st("y", B)},
			[]string{"x<y"}, map[string]State{"x": Persisted}},
		{"ntstore evicts earlier dirty store of its line", []step{st("x", A), nt("y", A+8), fe("sfence")},
			[]string{"x<y"}, map[string]State{"x": Persisted, "y": Persisted}},
		{"sfence/store: later store not covered", []step{st("x", A), fl("clwb", A), fe("sfence"), st("y", A)},
			[]string{"x<y"}, map[string]State{"x": Persisted, "y": Dirty}},
	}
	for _, tc := range tests {
		t.Run(tc.pair, func(t *testing.T) {
			before, final := run(t, tc.steps)
			for _, h := range tc.holds {
				want := !strings.HasPrefix(h, "!")
				x, y, _ := strings.Cut(strings.TrimPrefix(h, "!"), "<")
				if got := before[y][x]; got != want {
					t.Errorf("%s persists before %s = %v, want %v", x, y, got, want)
				}
			}
			for name, want := range tc.final {
				if got := final[name]; got != want {
					t.Errorf("final state of %s = %v, want %v", name, got, want)
				}
			}
		})
	}
}

func TestEffects(t *testing.T) {
	m, _ := New(64)
	if e := m.Flush(3, A, Origin{Site: 1}); e.Dirty != 0 || e.Pending != 0 {
		t.Errorf("flush of clean line: %+v", e)
	}
	if e := m.Fence(0); e.Persisted != 0 {
		t.Errorf("empty fence: %+v", e)
	}
	m.Store(1, Origin{Site: 5}, A, 8, 0)
	if e := m.Store(2, Origin{}, A+4, 8, 0); !e.Overwrote || e.Prev.ID != 1 || e.Prev.State != Dirty || e.Prev.Origin.Site != 5 {
		t.Errorf("overwrite: %+v", e)
	}
	if e := m.Store(3, Origin{}, A+16, 8, 0); e.Overwrote {
		t.Errorf("disjoint store reported overwrite: %+v", e)
	}
	if e := m.Flush(3, A, Origin{Site: 7}); e.Dirty != 3 {
		t.Errorf("flush: %+v", e)
	}
	if e := m.Flush(2, A, Origin{Site: 8}); e.Dirty != 0 || e.Pending != 3 || !e.PrevFlush || e.Prev.Site != 7 {
		t.Errorf("second flush: %+v", e)
	}
	if e := m.Store(4, Origin{}, A, 1, External); !e.Overwrote || e.Prev.State != Pending {
		t.Errorf("overwrite of pending: %+v", e)
	}
	if e := m.Store(5, Origin{}, A, 1, 0); !e.Overwrote || e.Prev.ID != 1 {
		t.Errorf("external earlier store must be skipped: %+v", e)
	}
	if e := m.Fence(0); e.Persisted != 3 || e.Lines != 1 {
		t.Errorf("fence: %+v", e)
	}
	if m.Len() != 2 || m.PendingLen() != 0 {
		t.Errorf("Len %d PendingLen %d", m.Len(), m.PendingLen())
	}
}

func TestSpanningStore(t *testing.T) {
	m, _ := New(64)
	e := m.Store(1, Origin{}, A+60, 72, 0) // 4 bytes on line A, 64 on A+64, 4 on A+128
	if e.Lines != 3 || m.Len() != 3 {
		t.Fatalf("lines %d entries %d", e.Lines, m.Len())
	}
	got := m.Overlapping(nil, A, 0x1000)
	var sb strings.Builder
	for _, s := range got {
		fmt.Fprintf(&sb, "%#x+%d ", s.Addr, s.Size)
	}
	if sb.String() != "0x103c+4 0x1040+64 0x1080+4 " {
		t.Errorf("entries %s", sb.String())
	}
	m.Flush(3, A+64, Origin{})
	m.Fence(0)
	if m.StateOf(1, A+64) != Persisted || m.StateOf(1, A+60) != Dirty {
		t.Errorf("per-line state wrong")
	}
}

func TestPersistAndDropRange(t *testing.T) {
	m, _ := New(64)
	m.Store(1, Origin{}, A, 8, 0)
	m.Store(2, Origin{}, A+32, 8, 0)
	m.Store(3, Origin{}, B, 64, 0)
	m.Flush(3, B, Origin{}) // B pending
	if n := m.PersistRange(A+4, 1); n != 2 {
		t.Errorf("PersistRange persisted %d, want the whole line (2)", n)
	}
	if n := m.DropRange(B+16, 16); n != 0 || m.Len() != 1 {
		t.Errorf("DropRange in the middle of an entry dropped %d (Len %d)", n, m.Len())
	}
	if n := m.DropRange(B, 16); n != 0 {
		t.Errorf("clip dropped %d", n)
	}
	if got := m.Overlapping(nil, B, 64); len(got) != 1 || got[0].Addr != B+16 || got[0].Size != 48 || got[0].State != Pending {
		t.Errorf("after clip: %+v", got)
	}
	if n := m.DropRange(0, 1<<40); n != 1 || m.Len() != 0 || m.Lines() != 0 || m.PendingLen() != 0 {
		t.Errorf("drop all: %d, Len %d, Lines %d, PendingLen %d", n, m.Len(), m.Lines(), m.PendingLen())
	}
	if e := m.Fence(0); e.Persisted != 0 {
		t.Errorf("fence after drop: %+v", e)
	}
	// The freed line structures are reused correctly.
	m.Store(4, Origin{}, B, 8, 0)
	m.Flush(2, B, Origin{})
	if e := m.Fence(0); e.Persisted != 1 || m.Len() != 0 {
		t.Errorf("reuse: %+v Len %d", e, m.Len())
	}
}

func TestBoundedLine(t *testing.T) {
	m, _ := New(64)
	for i := 0; i < 10*MaxEntriesPerLine; i++ {
		m.Store(StoreID(i), Origin{}, A+uint64(i%8), 1, 0)
	}
	if m.Len() > MaxEntriesPerLine {
		t.Errorf("line holds %d entries", m.Len())
	}
	got := m.Overlapping(nil, A, 64)
	if last := got[len(got)-1]; last.ID != StoreID(10*MaxEntriesPerLine-1) {
		t.Errorf("latest store lost: %+v", last)
	}
	// A merged store is still unpersisted: its entry stands for it.
	if st := m.StateOf(0, A); st != Dirty {
		t.Errorf("StateOf(first store) = %v, want dirty (merged, not persisted)", st)
	}
	// The latest store to each byte is still its own entry: the merges took rewritten entries.
	for b := uint64(0); b < 8; b++ {
		var last StoreState
		m.ForEachOverlapping(A+b, 1, func(s StoreState) bool { last = s; return true })
		if want := StoreID(10*MaxEntriesPerLine - 8 + int(b)); last.ID != want || last.Flags&Merged != 0 {
			t.Errorf("byte %d: latest entry %+v, want store %d unmerged", b, last, want)
		}
	}
	m.Flush(3, A, Origin{})
	m.Fence(0)
	if st := m.StateOf(0, A); st != Persisted || m.Len() != 0 {
		t.Errorf("after clwb+sfence: StateOf(first) = %v, Len %d", st, m.Len())
	}
	// Partly overlapping stores force merges.
	m2, _ := New(64)
	for i := 0; i < 4*MaxEntriesPerLine; i++ {
		m2.Store(StoreID(i), Origin{}, A+uint64(i%60), 3, 0)
	}
	if m2.Len() > MaxEntriesPerLine {
		t.Errorf("line holds %d entries", m2.Len())
	}
}

func TestTearUnits(t *testing.T) {
	tests := []struct {
		addr, size uint64
		want       int
	}{
		{0, 8, 1}, {8, 8, 1}, {4, 4, 1}, {4, 8, 2}, {0, 16, 2}, {1, 1, 1}, {7, 2, 2}, {0, 64, 8}, {3, 0, 0},
	}
	for _, tc := range tests {
		if got := TearUnits(tc.addr, tc.size); got != tc.want {
			t.Errorf("TearUnits(%d, %d) = %d, want %d", tc.addr, tc.size, got, tc.want)
		}
	}
	if !(StoreState{Addr: 8, Size: 8}).FailureAtomic() || (StoreState{Addr: 4, Size: 8}).FailureAtomic() {
		t.Error("FailureAtomic")
	}
}

func TestNewBadLineSize(t *testing.T) {
	for _, n := range []uint64{0, 3, 48, 8192} {
		if _, err := New(n); err == nil {
			t.Errorf("New(%d) succeeded", n)
		}
	}
}

func BenchmarkStoreFlushFence(b *testing.B) {
	m, _ := New(64)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a := uint64(0x100000 + (i%4096)*64)
		m.Store(StoreID(i), Origin{}, a, 8, 0)
		m.Store(StoreID(i), Origin{}, a+8, 8, 0)
		m.Flush(3, a, Origin{})
		if i%4 == 3 {
			m.Fence(0)
		}
	}
}

// bytesPayload is a test payload: the bytes an entry covers, as (address -> store id) marks,
// maintained through New, Merge and Clip the way package crash keeps overwritten bytes.
type bytesPayload struct{ cover map[uint64]StoreID }

type bytesPayloads struct{ news int }

func (b *bytesPayloads) New(id StoreID, addr, size uint64) bytesPayload {
	b.news++
	p := bytesPayload{cover: map[uint64]StoreID{}}
	for a := addr; a < addr+size; a++ {
		p.cover[a] = id
	}
	return p
}

func (*bytesPayloads) Merge(into *bytesPayload, intoAddr, intoSize uint64, from *bytesPayload, fromAddr, fromSize uint64) {
	for a, id := range from.cover {
		into.cover[a] = id // the earlier entry's bytes win where both wrote
	}
}

func (*bytesPayloads) Clip(p *bytesPayload, addr, size, newAddr, newSize uint64) {
	for a := range p.cover {
		if a < newAddr || a >= newAddr+newSize {
			delete(p.cover, a)
		}
	}
}

// TestUnitsAndPayloads checks Config.Units (one entry per aligned 8-byte unit, in address
// order within a store) and that payloads follow entries through merges and clips.
func TestUnitsAndPayloads(t *testing.T) {
	pl := &bytesPayloads{}
	m, err := NewOf[bytesPayload](64, Config[bytesPayload]{Units: true, Payloads: pl})
	if err != nil {
		t.Fatal(err)
	}
	eff := m.Store(1, Origin{Site: 1}, A+4, 20, 0) // units [4,8) [8,16) [16,24) on line A
	if m.Len() != 3 || eff.Lines != 1 || pl.news != 3 {
		t.Fatalf("Len %d, lines %d, payloads %d; want 3 units on 1 line", m.Len(), eff.Lines, pl.news)
	}
	m.Store(2, Origin{Site: 2}, A+60, 8, NT) // [60,64) on A, [0,4) on B: pending
	var got []string
	m.ForEachLine(func(v LineView[bytesPayload]) bool {
		for i := 0; i < v.Len(); i++ {
			s, p := v.At(i)
			got = append(got, fmt.Sprintf("%#x:%d+%d/%v/%d", v.Addr(), s.Addr-v.Addr(), s.Size, s.State, len(p.cover)))
		}
		return true
	})
	want := "0x1000:4+4/flush-pending/4 0x1000:8+8/flush-pending/8 0x1000:16+8/flush-pending/8 0x1000:60+4/flush-pending/4 0x1040:0+4/flush-pending/4"
	if strings.Join(got, " ") != want {
		t.Errorf("lines:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	// DropRange clips the unit [8,16) to [8,12) and its payload with it.
	m.DropRange(A+12, 12)
	m.ForEachLine(func(v LineView[bytesPayload]) bool {
		if v.Addr() != A {
			return true
		}
		s, p := v.At(1)
		if s.Addr != A+8 || s.Size != 4 || len(p.cover) != 4 {
			t.Errorf("clipped unit %+v with %d payload bytes, want [8,12) and 4", s, len(p.cover))
		}
		return false
	})
	// Filling a line merges entries; the merged payload covers both entries' bytes.
	m2, _ := NewOf[bytesPayload](64, Config[bytesPayload]{Units: true, Payloads: pl})
	for i := 0; i < 2*MaxEntriesPerLine; i++ {
		m2.Store(StoreID(i), Origin{}, B+uint64(i%8)*8, 8, 0) // eight units, rewritten in turn
	}
	if m2.Len() > MaxEntriesPerLine {
		t.Fatalf("line holds %d entries", m2.Len())
	}
	total := 0
	m2.ForEachLine(func(v LineView[bytesPayload]) bool {
		for i := 0; i < v.Len(); i++ {
			s, p := v.At(i)
			for a := range p.cover {
				if a < s.Addr || a >= s.Addr+s.Size {
					t.Errorf("entry %+v: payload byte %#x outside its range", s, a)
				}
			}
			total += int(s.Size)
		}
		return true
	})
	if st := m2.StateOf(0, B); st != Dirty {
		t.Errorf("StateOf(merged store 0) = %v", st)
	}
}

// TestFencePerThread checks that a fence orders only its own thread's write-backs: a thread's
// clwb or non-temporal store is durable at that thread's next fence, not at another thread's.
func TestFencePerThread(t *testing.T) {
	type ev struct {
		op     string // st, nt, clwb, clflush, fence
		thread uint32
		addr   uint64
	}
	tests := []struct {
		name string
		evs  []ev
		want map[uint64]State // final state of the store at each address
		// fenceEff is what the last fence persisted.
		fenceEff int
	}{
		{"own fence persists", []ev{{"st", 1, A}, {"clwb", 1, A}, {"fence", 1, 0}}, map[uint64]State{A: Persisted}, 1},
		{"other thread's fence does not", []ev{{"st", 1, A}, {"clwb", 1, A}, {"fence", 2, 0}}, map[uint64]State{A: Pending}, 0},
		{"write-back covers the line whoever stored", []ev{{"st", 1, A}, {"clwb", 2, A}, {"fence", 2, 0}}, map[uint64]State{A: Persisted}, 1},
		{"each thread its own line", []ev{{"st", 1, A}, {"st", 2, B}, {"clwb", 1, A}, {"clwb", 2, B}, {"fence", 2, 0}}, map[uint64]State{A: Pending, B: Persisted}, 1},
		{"non-temporal store waits for its thread", []ev{{"nt", 1, A}, {"fence", 2, 0}}, map[uint64]State{A: Pending}, 0},
		{"non-temporal store, own fence", []ev{{"nt", 1, A}, {"fence", 2, 0}, {"fence", 1, 0}}, map[uint64]State{A: Persisted}, 1},
		{"clflush needs no fence", []ev{{"st", 1, A}, {"clflush", 2, A}, {"fence", 3, 0}}, map[uint64]State{A: Persisted}, 0},
		{"longer cover of one thread", []ev{{"st", 1, A}, {"clwb", 1, A}, {"st", 2, A + 8}, {"clwb", 2, A}, {"fence", 1, 0}}, map[uint64]State{A: Persisted, A + 8: Pending}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(64)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[uint64]StoreID{}
			last := -1
			for i, e := range tc.evs {
				o := Origin{Site: uint32(i), Thread: e.thread}
				switch e.op {
				case "st", "nt":
					var f uint8
					if e.op == "nt" {
						f = NT
					}
					ids[e.addr] = StoreID(i)
					m.Store(StoreID(i), o, e.addr, 8, f)
				case "clwb":
					m.Flush(3, e.addr, o)
				case "clflush":
					m.Flush(1, e.addr, o)
				case "fence":
					last = m.Fence(e.thread).Persisted
				}
			}
			for a, want := range tc.want {
				if got := m.StateOf(ids[a], a); got != want {
					t.Errorf("store at %#x: %v, want %v", a, got, want)
				}
			}
			if last != tc.fenceEff {
				t.Errorf("last fence persisted %d entries, want %d", last, tc.fenceEff)
			}
			if n := 0; true {
				m.ForEachLine(func(v LineView[NoPayload]) bool { n += v.Pending(); return true })
				if n != m.PendingLen() {
					t.Errorf("PendingLen %d, lines say %d", m.PendingLen(), n)
				}
			}
		})
	}
}

// TestPersistStore: making a store durable "as if fixed" persists it and every earlier entry on
// its line (a write-back carries the line), on every line it touches, and nothing else.
func TestPersistStore(t *testing.T) {
	m, err := New(64)
	if err != nil {
		t.Fatal(err)
	}
	o := Origin{Thread: 1}
	m.Store(1, o, A, 8, 0)    // before 3 on line A
	m.Store(2, o, B, 8, 0)    // line B, untouched
	m.Store(3, o, A+8, 8, 0)  // the store made durable
	m.Store(4, o, A+16, 8, 0) // after 3 on line A: stays
	m.Store(5, o, A+60, 8, 0) // spans A and A+64
	m.Flush(3, A, o)          // entries 1, 3, 4, 5 of line A flush-pending for thread 1
	if n := m.PersistStore(3, A+8, 8); n != 2 {
		t.Errorf("PersistStore(3) persisted %d entries, want 2 (stores 1 and 3)", n)
	}
	want := map[StoreID]State{1: Persisted, 2: Dirty, 3: Persisted, 4: Pending}
	addr := map[StoreID]uint64{1: A, 2: B, 3: A + 8, 4: A + 16}
	for id, st := range want {
		if got := m.StateOf(id, addr[id]); got != st {
			t.Errorf("store %d: %v, want %v", id, got, st)
		}
	}
	if n := m.PersistStore(5, A+60, 8); n != 3 { // 4 and 5 on line A, 5 on the next line
		t.Errorf("PersistStore(5) persisted %d entries, want 3", n)
	}
	if m.PendingLen() != 0 || m.Len() != 1 {
		t.Errorf("left %d entries, %d pending; want store 2 only", m.Len(), m.PendingLen())
	}
	if n := m.PersistStore(3, A+8, 8); n != 0 {
		t.Errorf("PersistStore of a durable store persisted %d entries", n)
	}
	if eff := m.Fence(1); eff.Persisted != 0 {
		t.Errorf("a fence after PersistStore persisted %d entries", eff.Persisted)
	}
}

// TestDurable: a byte range is durable when no unpersisted entry writes any of its bytes,
// whatever the state of other bytes on the same cache line.
func TestDurable(t *testing.T) {
	m, err := New(64)
	if err != nil {
		t.Fatal(err)
	}
	o := Origin{Thread: 1}
	m.Store(1, o, A+8, 8, 0)  // dirty
	m.Store(2, o, B, 16, 0)   // flushed below: flush-pending
	m.Store(3, o, B+60, 8, 0) // spans B's line and the next
	m.Flush(3, B, o)
	tests := []struct {
		name       string
		addr, size uint64
		want       bool
	}{
		{"dirty store", A + 8, 8, false},
		{"one byte of it", A + 15, 1, false},
		{"bytes before it on its line", A, 8, true},
		{"bytes after it on its line", A + 16, 48, true},
		{"never stored", 0x9000, 64, true},
		{"empty range", A + 8, 0, true},
		{"flush-pending store", B, 16, false},
		{"the next line's part of a spanning store", B + 64, 4, false},
		{"a range covering two lines", A, 0x1000 + 64, false},
	}
	for _, tc := range tests {
		if got := m.Durable(tc.addr, tc.size); got != tc.want {
			t.Errorf("%s: Durable(%#x, %d) = %v, want %v", tc.name, tc.addr, tc.size, got, tc.want)
		}
	}
	m.Fence(1) // persists store 2 and store 3's entry on line B
	m.Flush(1, A, o)
	for _, tc := range []struct {
		addr, size uint64
		want       bool
	}{{A + 8, 8, true}, {B, 16, true}, {B + 60, 4, true}, {B + 64, 4, false}} {
		if got := m.Durable(tc.addr, tc.size); got != tc.want {
			t.Errorf("after fence and clflush: Durable(%#x, %d) = %v, want %v", tc.addr, tc.size, got, tc.want)
		}
	}
}
