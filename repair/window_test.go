package repair

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Addresses of the synthetic traces: one region, three cache lines.
const (
	wBase = 0x10000
	lineA = wBase + 0x100
	lineB = wBase + 0x200
	lineC = wBase + 0x300
)

// builtTrace is a builder's trace written to a file, with the record index of each of the
// builder's events and the replay's view of every record (replayed here, record by record).
type builtTrace struct {
	path   string
	events []uint64         // builder event -> record index
	opOf   map[uint64]int64 // record -> its operation's index (replay.Machine.OpOfRecord), -1 none
	opAt   map[uint64]int64 // OP_BEGIN record -> the operation's index
	txs    map[uint64]uint64
	last   uint64 // the last record
}

// writeTrace encodes b (ended with Exit) into a file and replays it.
func writeTrace(t *testing.T, b *analysistest.Builder) *builtTrace {
	t.Helper()
	data, err := b.Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	bt := &builtTrace{path: filepath.Join(t.TempDir(), "run.trace"), opOf: map[uint64]int64{}, opAt: map[uint64]int64{}, txs: map[uint64]uint64{}}
	if err := os.WriteFile(bt.path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(bt.path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := replay.New[struct{}](r, replay.Options[struct{}]{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		m.Apply(ev, replay.Nop{})
		bt.last = ev.Index
		op, ok := m.OpOfRecord(ev)
		bt.opOf[ev.Index] = -1
		if ok {
			bt.opOf[ev.Index] = op.Index
		}
		bt.txs[ev.Index] = m.Txs.Get(ev.Thread).Serial()
		switch ev.Kind {
		case trace.KindOpBegin:
			bt.opAt[ev.Index] = int64(ev.Op)
		case trace.KindSites, trace.KindThread, trace.KindContext, trace.KindStack, trace.KindDeps, trace.KindEnd:
			continue // written by the writer, not events of the builder
		}
		bt.events = append(bt.events, ev.Index)
	}
	return bt
}

// collectAll collects one window of thread 1 from builder event start to the trace's end.
func collectAll(t *testing.T, bt *builtTrace, start int) *window {
	t.Helper()
	w := &window{thread: 1, start: bt.events[start], end: bt.last, deadline: bt.last, anchors: map[uint64]bool{}}
	if _, _, err := collect(bt.path, []*window{w}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestOperationsAgree: repair's index of the trace (readIndex) and the records of its windows
// (collect) give every record the operation the replay gives it (replay.Machine.OpOfRecord),
// which is ops, per event of the builder (-1: none). The traces have two threads running
// operations, a helper thread that never begins one (its records belong to the latest begun),
// nested transactions, an OP_END on another thread than its operation's and an OP_BEGIN that
// ends its thread's operation.
func TestOperationsAgree(t *testing.T) {
	tests := []struct {
		name string
		b    *analysistest.Builder
		ops  []int64
	}{
		{"two threads, a helper thread, nested transactions, OP_END on another thread",
			analysistest.New().Map(1, wBase, 4096).
				Thread(1).OpBegin(0, "a").TxBegin(30).Store(10, lineA, 8).
				Thread(3).Store(11, lineB, 8).
				Thread(2).OpBegin(1, "b").
				Thread(3).Store(11, lineB, 8).
				Thread(1).TxBegin(31).Store(10, lineA, 8).TxCommit(32).TxEnd(33).
				Thread(2).OpEnd(0).
				Thread(1).Store(10, lineA, 8).TxCommit(32).TxEnd(33).
				Thread(2).Store(12, lineC, 8).OpEnd(1).
				Thread(3).Fence(13, trace.FenceSFENCE).
				Thread(1).OpBegin(2, "c").Store(10, lineA, 8).OpBegin(3, "d").Store(10, lineA, 8).
				Thread(2).Store(12, lineC, 8),
			[]int64{-1,
				0, 0, 0,
				0,
				1,
				1,
				0, 0, 0, 0,
				0,
				1, 1, 1,
				1, 1,
				-1,
				2, 2, 3, 3,
				3}},
		{"no operations",
			analysistest.New().Map(1, wBase, 4096).Thread(1).Store(10, lineA, 8).Thread(2).Fence(13, trace.FenceSFENCE),
			[]int64{-1, -1, -1}},
		{"an operation never ended runs to the trace's end, a helper with it",
			analysistest.New().Map(1, wBase, 4096).Thread(2).OpBegin(5, "x").Store(10, lineA, 8).Thread(7).Store(11, lineB, 8),
			[]int64{-1, 5, 5, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := writeTrace(t, tc.b)
			if len(bt.events) != len(tc.ops) {
				t.Fatalf("%d events, %d operations listed", len(bt.events), len(tc.ops))
			}
			for i, idx := range bt.events {
				if bt.opOf[idx] != tc.ops[i] {
					t.Errorf("event %d (record %d): the replay gives operation %d, want %d", i, idx, bt.opOf[idx], tc.ops[i])
				}
			}
			// The index, asked about every record.
			all := map[uint64]bool{}
			for idx := range bt.opOf {
				all[idx] = true
			}
			ix, err := readIndex(bt.path, all)
			if err != nil {
				t.Fatal(err)
			}
			if ix.end != bt.last {
				t.Errorf("index ends at %d, the trace at %d", ix.end, bt.last)
			}
			for idx, want := range bt.opOf {
				a := ix.at[idx]
				got := int64(-1)
				if a.hasOp {
					got = bt.opAt[a.op.begin]
					if a.op.begin > idx || idx > a.op.end || a.op.end > ix.end {
						t.Errorf("record %d: its operation's span %d-%d does not hold it", idx, a.op.begin, a.op.end)
					}
				}
				if got != want {
					t.Errorf("record %d: the index gives operation %d, the replay %d", idx, got, want)
				}
			}
			// The records of a window over the whole trace.
			w := collectAll(t, bt, 0)
			if len(w.events) == 0 {
				t.Fatal("the window holds no record")
			}
			for _, e := range w.events {
				got := int64(-1)
				if e.op != 0 {
					got = bt.opAt[e.op-1]
				}
				if got != bt.opOf[e.idx] {
					t.Errorf("window record %d (%v): operation %d, the replay gives %d", e.idx, e.kind, got, bt.opOf[e.idx])
				}
			}
		})
	}
}

// txWant is what repair must see of one window record: the nesting level it is in, the window
// record of the TX_BEGIN of that level (-1 none in the window), whether a store is unlogged,
// and the cache lines an outermost commit persists.
type txWant struct {
	level    int
	begin    int
	unlogged bool
	persists []uint64
}

// TestTxNestingAgrees: the transaction nesting repair reads from a window (the level of each
// record, the TX_BEGIN holding it, what each store's transaction logs, what each commit
// persists) is the replay's (pmdk.Tx as the machine applied the records), on nested, aborted
// and interleaved transactions and on a window that starts inside a transaction.
func TestTxNestingAgrees(t *testing.T) {
	tests := []struct {
		name  string
		b     *analysistest.Builder
		start int      // the builder event the window starts at
		want  []txWant // per window record
		// anchor: a window record; unlogged: the stores unloggedInTx gives for it.
		anchor   int
		unlogged []int
	}{
		{"nested, and another thread's transaction in between",
			analysistest.New().Map(1, wBase, 4096).
				Thread(1).TxBegin(30).TxAdd(31, lineA, 8, 0).
				Thread(2).TxBegin(30).
				Thread(1).TxBegin(35).Store(10, lineA, 8).
				Thread(2).Store(11, lineB, 8).
				Thread(1).TxAdd(31, lineC, 8, trace.TxAddNoFlush).Store(12, lineC, 8).TxCommit(32).TxEnd(33).
				Store(11, lineB, 8).TxCommit(32).
				Thread(2).TxCommit(32).
				Thread(1).TxEnd(33).
				Thread(2).TxEnd(33).
				Thread(1).Store(10, lineA, 8),
			1,
			[]txWant{
				{level: 1, begin: 0}, {level: 1, begin: 0},
				{level: 1, begin: 2},
				{level: 2, begin: 3}, {level: 2, begin: 3},
				{level: 1, begin: 2, unlogged: true},
				{level: 2, begin: 3}, {level: 2, begin: 3}, {level: 2, begin: 3}, {level: 2, begin: 3},
				{level: 1, begin: 0, unlogged: true}, {level: 1, begin: 0, persists: []uint64{lineA}},
				{level: 1, begin: 2, persists: nil},
				{level: 1, begin: 0},
				{level: 1, begin: 2},
				{level: 0, begin: -1},
				{level: 0, begin: -1}, // END
			},
			11, []int{10}},
		{"an abort aborts the whole transaction; the next one is another",
			analysistest.New().Map(1, wBase, 4096).Thread(1).
				TxBegin(30).TxAdd(31, lineA, 8, 0).TxBegin(35).Store(11, lineB, 8).TxAbort(34).TxEnd(33).TxCommit(32).TxEnd(33).
				TxBegin(30).TxAdd(31, lineB, 8, 0).Store(11, lineB, 8).TxCommit(32).TxEnd(33),
			1,
			[]txWant{
				{level: 1, begin: 0}, {level: 1, begin: 0},
				{level: 2, begin: 2}, {level: 2, begin: 2, unlogged: true}, {level: 2, begin: 2}, {level: 2, begin: 2},
				{level: 1, begin: 0}, {level: 1, begin: 0},
				{level: 1, begin: 8}, {level: 1, begin: 8}, {level: 1, begin: 8}, {level: 1, begin: 8, persists: []uint64{lineB}},
				{level: 1, begin: 8},
				{level: 0, begin: -1}, // END
			},
			5, []int{3}},
		{"the window starts inside a transaction",
			analysistest.New().Map(1, wBase, 4096).Thread(1).
				TxBegin(30).TxAdd(31, lineA, 8, 0).
				TxBegin(35).Store(10, lineA, 8).TxEnd(33).Store(11, lineB, 8).TxCommit(32).TxEnd(33),
			3,
			[]txWant{
				{level: 2, begin: 0}, {level: 2, begin: 0}, {level: 2, begin: 0},
				{level: 1, begin: -1, unlogged: true}, {level: 1, begin: -1, persists: []uint64{lineA}}, {level: 1, begin: -1},
				{level: 0, begin: -1}, // END
			},
			4, []int{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := writeTrace(t, tc.b)
			w := collectAll(t, bt, tc.start)
			p := &problem{w: w, lineSize: 64}
			if len(w.events) != len(tc.want) {
				t.Fatalf("%d window records, %d listed", len(w.events), len(tc.want))
			}
			for k, want := range tc.want {
				e := p.ev(k)
				var lines []uint64
				for _, r := range e.persists {
					for l := r.Addr &^ 63; l < r.End(); l += 64 {
						lines = append(lines, l)
					}
				}
				unlogged := isStore(e.kind) && !e.logged && e.tx != 0
				if e.txLevel != want.level || p.txBegin(k) != want.begin || unlogged != want.unlogged || !slices.Equal(lines, want.persists) {
					t.Errorf("window record %d (%v, thread %d): level %d, TX_BEGIN %d, unlogged %v, persists %#x; want %d, %d, %v, %#x",
						k, e.kind, e.thread, e.txLevel, p.txBegin(k), unlogged, lines, want.level, want.begin, want.unlogged, want.persists)
				}
				// The transaction is the one the replay has open on the thread (or just ended).
				if (e.txLevel > 0) != (e.tx != 0) || e.tx != 0 && e.tx != bt.txs[e.idx] {
					t.Errorf("window record %d: transaction %d at level %d, the replay's is %d", k, e.tx, e.txLevel, bt.txs[e.idx])
				}
			}
			if got := p.unloggedInTx(tc.anchor); !slices.Equal(got, tc.unlogged) {
				t.Errorf("unloggedInTx(%d) = %v, want %v", tc.anchor, got, tc.unlogged)
			}
		})
	}
}

// TestDeadlineIsTheReplaysUnmap: an unpersisted store must be durable by the record that
// unmaps its region as the replay decides it (a REGION_UNMAP, or a REGION_MAP that replaces or
// overlaps the region), else by the END; by is the builder event of that record.
func TestDeadlineIsTheReplaysUnmap(t *testing.T) {
	tests := []struct {
		name string
		b    *analysistest.Builder
		by   int // -1: the END
	}{
		{"REGION_UNMAP", analysistest.New().Map(1, wBase, 4096).Thread(1).Store(10, lineA, 8).Fence(13, trace.FenceSFENCE).Unmap(1, 20), 3},
		{"the region mapped again elsewhere", analysistest.New().Map(1, wBase, 4096).Thread(1).Store(10, lineA, 8).Map(1, 4*wBase, 4096), 2},
		{"another region overlapping it", analysistest.New().Map(1, wBase, 4096).Thread(1).Store(10, lineA, 8).Map(2, wBase+4000, 4096), 2},
		{"another region unmapped", analysistest.New().Map(1, wBase, 4096).Map(2, 4*wBase, 4096).Thread(1).Store(10, lineA, 8).Unmap(2, 20), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bt := writeTrace(t, tc.b)
			want := bt.last
			if tc.by >= 0 {
				want = bt.events[tc.by]
			}
			w := collectAll(t, bt, 1)
			var store uint64
			for i, idx := range bt.events {
				if tc.b.Events[i].Kind == trace.KindStore {
					store = idx
				}
			}
			p := &problem{w: w, lineSize: 64, targets: []*target{{n: 1, f: &report.Finding{Kind: report.UnpersistedStore}, anchor: store}}}
			if why := p.obligations(); len(why) > 0 || len(p.obls) != 1 {
				t.Fatalf("obligations %+v, reasons %v", p.obls, why)
			}
			if got := p.ev(p.obls[0].by).idx; got != want {
				t.Errorf("durable by record %d, want %d", got, want)
			}
		})
	}
}
