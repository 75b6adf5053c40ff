package replay_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

const (
	base = 0x10000
	A    = base + 0x100
)

// recorder logs the changes a machine reports, one short line each.
type recorder struct {
	replay.Nop
	m   *replay.Machine[px86.NoPayload]
	log []string
}

func (r *recorder) add(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) Mapped(_ *trace.Event, g pmdk.Region)    { r.add("map %d", g.ID) }
func (r *recorder) Unmapping(_ *trace.Event, g pmdk.Region) { r.add("unmap %d", g.ID) }
func (r *recorder) BeforeDurable(ev *trace.Event, newCall bool) {
	r.add("durable site %d new %v", ev.Site, newCall)
}
func (r *recorder) Wrote(w *replay.Write) {
	r.add("write %d %#x+%d op %d", w.Kind, w.Addr, w.Size, w.Origin.Op)
}
func (r *recorder) Load(ev *trace.Event) { r.add("load %#x", ev.Addr) }
func (r *recorder) Flushed(ev *trace.Event, _ px86.FlushEffect) {
	r.add("flush %#x", ev.Addr)
}
func (r *recorder) OpBegan(ev *trace.Event, op replay.Op) { r.add("begin %d t%d", op.Index, op.Thread) }
func (r *recorder) OpEnded(ev *trace.Event, op replay.Op) { r.add("end %d t%d", op.Index, op.Thread) }
func (r *recorder) Tx(_ *trace.Event, tx *pmdk.Tx) {
	r.add("tx %v depth %d id %d", tx.Last(), tx.Depth(), tx.ID())
}
func (r *recorder) TxAdded(_ *trace.Event, _ *pmdk.Tx, redundant bool) {
	r.add("txadd redundant %v", redundant)
}

func run(t *testing.T, b *analysistest.Builder) (*recorder, error) {
	t.Helper()
	m, err := replay.New(b.Reader(t), replay.Options[px86.NoPayload]{Model: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{m: m}
	return rec, m.Run(rec)
}

// TestDecisions checks every rule the package doc decides once for all consumers: what it
// reports to handlers and which warning it gives.
func TestDecisions(t *testing.T) {
	tests := []struct {
		name    string
		b       *analysistest.Builder
		log     []string // the changes reported, in order
		warning string   // a substring of the one warning ("" none)
	}{
		{"write outside every region",
			analysistest.New().Map(1, base, 4096).Store(10, base+4096, 8).Store(10, 2*base, 8),
			[]string{"map 1"}, "outside every mapped PM region"},
		{"write past the end is clipped",
			analysistest.New().Map(1, base, 4096).Store(10, base+4090, 8),
			[]string{"map 1", "write 1 0x10ffa+6 op 0"}, "runs 2 bytes past the end of region 1"},
		{"region mapped again while mapped",
			analysistest.New().Map(1, base, 4096).Map(1, 2*base, 4096),
			[]string{"map 1", "unmap 1", "map 1"}, "mapped again"},
		{"overlapping mapping",
			analysistest.New().Map(1, base, 4096).Map(2, base+4095, 4096),
			[]string{"map 1", "unmap 1", "map 2"}, "overlaps mapped region 1"},
		{"adjacent mappings are fine",
			analysistest.New().Map(1, base, 4096).Map(2, base+4096, 4096).Store(10, base+4096, 8),
			[]string{"map 1", "map 2", "write 1 0x11000+8 op 0"}, ""},
		{"mapping that wraps",
			analysistest.New().Map(1, ^uint64(0)-10, 4096),
			nil, "wraps the address space"},
		{"unknown unmap",
			analysistest.New().Unmap(3, 20),
			nil, "REGION_UNMAP of region 3, which is not mapped"},
		{"TX_ADD outside a transaction",
			analysistest.New().Map(1, base, 4096).TxAdd(31, A, 8, 0),
			[]string{"map 1"}, "TX_ADD outside a transaction"},
		{"TX_END outside a transaction",
			analysistest.New().TxEnd(33),
			nil, "TX_END outside a transaction"},
		{"OP_END not in flight",
			analysistest.New().OpEnd(4),
			nil, "OP_END of operation 4, which is not in flight"},
		{"operations per thread; a helper thread belongs to the latest",
			analysistest.New().Map(1, base, 4096).
				Thread(1).OpBegin(0, "a").Thread(2).OpBegin(1, "b").
				Thread(1).Store(10, A, 8).Thread(2).Store(10, A, 8).Thread(3).Store(10, A, 8).
				Thread(2).OpEnd(1).Thread(1).Store(10, A, 8).Thread(3).Store(10, A, 8),
			[]string{"map 1", "begin 0 t1", "begin 1 t2", "write 1 0x10100+8 op 1", "write 1 0x10100+8 op 2",
				"write 1 0x10100+8 op 2", "end 1 t2", "write 1 0x10100+8 op 1", "write 1 0x10100+8 op 1"}, ""},
		{"OP_BEGIN ends the thread's operation in flight",
			analysistest.New().OpBegin(0, "a").OpBegin(1, "b").OpEnd(1),
			[]string{"begin 0 t0", "end 0 t0", "begin 1 t0", "end 1 t0"}, ""},
		{"one library call's durable writes are one run",
			analysistest.New().Map(1, base, 4096).
				External(20, A, 8, trace.ExternalPersisted).External(20, A+8, 8, trace.ExternalPersisted).
				External(21, A, 8, trace.ExternalPersisted).
				Store(10, A, 8).External(21, A, 8, trace.ExternalPersisted),
			[]string{"map 1", "durable site 20 new true", "write 4 0x10100+8 op 0", "durable site 20 new false", "write 4 0x10108+8 op 0",
				"durable site 21 new true", "write 4 0x10100+8 op 0", "write 1 0x10100+8 op 0", "durable site 21 new true", "write 4 0x10100+8 op 0"}, ""},
		{"runtime degradation, once per message",
			analysistest.New().Map(1, base, 4096).Warning("more than 64 PM regions; the rest are not traced").
				Store(10, A, 8).Warning("more than 64 PM regions; the rest are not traced"),
			[]string{"map 1", "write 1 0x10100+8 op 0"}, "results incomplete: more than 64 PM regions; the rest are not traced"},
		{"an excluded range is not PM until included again",
			analysistest.New().Map(1, base, 4096).PMExclude(40, A, 8, 0).
				Store(10, A, 8).NTStore(10, A, 8).External(20, A, 8, 0).Load(11, A, 8).Flush(12, trace.FlushCLWB, A).
				Store(10, A+8, 8).Load(11, A+8, 8).
				PMExclude(40, A, 8, trace.PMInclude).Store(10, A, 8).Load(11, A, 8).Flush(12, trace.FlushCLWB, A),
			[]string{"map 1", "write 1 0x10108+8 op 0", "load 0x10108", "write 1 0x10100+8 op 0", "load 0x10100", "flush 0x10100"}, ""},
		{"an excluded range is forgotten when its region is unmapped",
			analysistest.New().Map(1, base, 4096).PMExclude(40, A, 8, 0).Unmap(1, 20).Map(1, base, 4096).Store(10, A, 8),
			[]string{"map 1", "unmap 1", "map 1", "write 1 0x10100+8 op 0"}, ""},
		{"PM_EXCLUDE outside every region",
			analysistest.New().Map(1, base, 4096).PMExclude(40, 2*base, 8, 0),
			[]string{"map 1"}, "PM_EXCLUDE of 8 bytes at 0x20000 outside every mapped PM region"},
		{"SET_CLEAN is a durable effect",
			analysistest.New().Map(1, base, 4096).Store(10, A, 16).SetClean(41, A, 8).SetClean(41, A+8, 8),
			[]string{"map 1", "write 1 0x10100+16 op 0", "durable site 41 new true", "durable site 41 new true"}, ""},
		{"outermost commit is durable, nested is not",
			analysistest.New().Map(1, base, 4096).TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(31, A, 8, 0).TxBegin(30).TxCommit(32).TxEnd(33).TxCommit(32).TxEnd(33),
			[]string{"map 1", "tx began depth 1 id 1", "txadd redundant false", "txadd redundant true",
				"tx began depth 2 id 1", "tx committed depth 2 id 1", "tx ended depth 1 id 1",
				"durable site 32 new true", "tx committed-outermost depth 1 id 1", "tx ended-outermost depth 0 id 0"}, ""},
		{"an abort aborts every level; transactions are numbered per thread",
			analysistest.New().Map(1, base, 4096).Thread(1).TxBegin(30).TxEnd(33).TxBegin(30).TxBegin(30).
				Thread(2).TxBegin(30).Thread(1).TxAbort(34).TxEnd(33).TxEnd(33),
			[]string{"map 1", "tx began depth 1 id 1", "tx ended-outermost depth 0 id 0", "tx began depth 1 id 2",
				"tx began depth 2 id 2", "tx began depth 1 id 1", "tx aborted depth 2 id 2", "tx ended depth 1 id 2",
				"tx ended-outermost depth 0 id 0"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := run(t, tc.b.Exit(0))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rec.log, tc.log) {
				t.Errorf("changes:\n got %q\nwant %q", rec.log, tc.log)
			}
			w := rec.m.Warnings()
			switch {
			case tc.warning == "" && len(w) > 0:
				t.Errorf("warnings %q, want none", w)
			case tc.warning != "" && (len(w) != 1 || !strings.Contains(w[0], tc.warning)):
				t.Errorf("warnings %q, want one with %q", w, tc.warning)
			}
		})
	}
}

// TestDeclared checks what the records of pmemcheck's client requests do to the state: the
// model after SET_CLEAN (exactly its bytes), the image under an excluded range (the bytes still
// land there), and TX_IGNORE's exemption (every thread, until the region is unmapped).
func TestDeclared(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Store(10, A, 16).SetClean(41, A, 8).
		PMExclude(40, A+64, 8, 0).StoreBytes(10, A+64, []byte{1, 2, 3, 4, 5, 6, 7, 8}).
		Thread(1).TxIgnore(42, A+128, 64).
		Exit(0)
	r := b.Reader(t)
	m, err := replay.New(r, replay.Options[px86.NoPayload]{Model: true, Image: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(replay.Nop{}); err != nil {
		t.Fatal(err)
	}
	var store px86.StoreID
	m.Model.ForEachOverlapping(A, 16, func(s px86.StoreState) bool { store = s.ID; return false })
	if got := m.Model.Durable(A, 8); !got {
		t.Errorf("SET_CLEAN's 8 bytes: durable %v, want true", got)
	}
	if got := m.Model.Durable(A+8, 8); got || store == 0 {
		t.Errorf("the store's other 8 bytes: durable %v (store %d), want an unpersisted store", got, store)
	}
	if m.Model.Durable(A+64, 8) != true {
		t.Errorf("the excluded store is in the model")
	}
	got := make([]byte, 8)
	if _, err := m.Image.RegionAt(A).ReadAt(got, A+64-base); err != nil || string(got) != "\x01\x02\x03\x04\x05\x06\x07\x08" {
		t.Errorf("image under the excluded range: %x, %v; want 0102030405060708", got, err)
	}
	for _, tid := range []uint32{0, 1, 2} {
		if tx := m.Txs.Get(tid); !tx.Ignored(A+128, 64) || tx.Ignored(A+120, 16) || tx.Covers(A+128, 8) {
			t.Errorf("thread %d: Ignored %v %v, Covers %v; want true false false", tid, tx.Ignored(A+128, 64), tx.Ignored(A+120, 16), tx.Covers(A+128, 8))
		}
	}

	b = analysistest.New().Map(1, base, 4096).TxIgnore(42, A, 8).PMExclude(40, A+8, 8, 0).Unmap(1, 20).Exit(0)
	m, _ = replay.New(b.Reader(t), replay.Options[px86.NoPayload]{})
	if err := m.Run(replay.Nop{}); err != nil {
		t.Fatal(err)
	}
	if m.Txs.Get(0).Ignored(A, 8) || m.Excluded.Len() != 0 {
		t.Errorf("after unmap: Ignored %v, excluded ranges %v; want none", m.Txs.Get(0).Ignored(A, 8), m.Excluded.Ranges())
	}
}

// opRecorder checks, in OpBegan and OpEnded, that the machine already knows the operation of
// the record it reports.
type opRecorder struct {
	replay.Nop
	m   *replay.Machine[px86.NoPayload]
	bad []string
}

func (o *opRecorder) OpBegan(ev *trace.Event, op replay.Op) {
	if got, ok := o.m.OpOfRecord(ev); !ok || got != op {
		o.bad = append(o.bad, fmt.Sprintf("OpBegan record %d: OpOfRecord %v %v, want %v", ev.Index, got, ok, op))
	}
}

func (o *opRecorder) OpEnded(ev *trace.Event, op replay.Op) {
	if ev.Kind != trace.KindOpEnd {
		return // ended by the thread's next OP_BEGIN, which belongs to the operation it begins
	}
	if got, ok := o.m.OpOfRecord(ev); !ok || got != op {
		o.bad = append(o.bad, fmt.Sprintf("OpEnded record %d: OpOfRecord %v %v, want %v", ev.Index, got, ok, op))
	}
}

// TestOpOfRecord checks the operation of every record (the package doc's rule) on two threads
// and a helper thread that begins none: ops lists, per event of the builder, the index of its
// operation, -1 for none.
func TestOpOfRecord(t *testing.T) {
	tests := []struct {
		name string
		b    *analysistest.Builder
		ops  []int64
	}{
		{"per thread, helper to the latest begun",
			analysistest.New().Map(1, base, 4096).Thread(3).Store(10, A, 8).
				Thread(1).OpBegin(0, "a").Store(10, A, 8).Thread(3).Store(10, A, 8).
				Thread(2).OpBegin(1, "b").Thread(1).Fence(11, trace.FenceSFENCE).Thread(3).Store(10, A, 8).
				Thread(2).OpEnd(1).Thread(3).Store(10, A, 8).Thread(1).OpEnd(0).Thread(3).Store(10, A, 8),
			[]int64{-1, -1, 0, 0, 0, 1, 0, 1, 1, 0, 0, -1}},
		{"OP_END on another thread ends the operation it names",
			analysistest.New().Map(1, base, 4096).Thread(1).OpBegin(0, "a").Thread(2).OpBegin(1, "b").
				Thread(2).OpEnd(0).Thread(1).Store(10, A, 8).Thread(2).Store(10, A, 8).OpEnd(1).Store(10, A, 8),
			[]int64{-1, 0, 1, 0, 1, 1, 1, -1}},
		{"OP_BEGIN ends the thread's operation in flight and belongs to the new one",
			analysistest.New().Thread(1).OpBegin(0, "a").Store(10, A, 8).OpBegin(1, "b").OpEnd(7).Fence(11, trace.FenceSFENCE),
			[]int64{0, 0, 1, 1, -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.b.Exit(0).Reader(t)
			m, err := replay.New(r, replay.Options[px86.NoPayload]{})
			if err != nil {
				t.Fatal(err)
			}
			h := &opRecorder{m: m}
			var got []int64
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				m.Apply(ev, h)
				switch ev.Kind {
				case trace.KindSites, trace.KindThread, trace.KindContext, trace.KindEnd:
					continue // not events of the builder
				}
				op, ok := m.OpOfRecord(ev)
				if !ok {
					op.Index = -1
				}
				got = append(got, op.Index)
			}
			if !slices.Equal(got, tc.ops) {
				t.Errorf("operations %v, want %v", got, tc.ops)
			}
			if len(h.bad) > 0 {
				t.Error(strings.Join(h.bad, "\n"))
			}
		})
	}
}

// TestReservations: a reservation is open until published (a plain ALLOC of its address) or
// cancelled (FREE with flag reserve).
func TestReservations(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Alloc(50, A, 64, trace.AllocReserve).Alloc(50, A+64, 64, trace.AllocReserve).
		Alloc(51, A, 64, 0).Free(52, A+64, trace.AllocReserve).Exit(0)
	r := b.Reader(t)
	m, err := replay.New(r, replay.Options[px86.NoPayload]{})
	if err != nil {
		t.Fatal(err)
	}
	var open []int
	for { // record by record, with Apply
		ev, err := r.Next()
		if err != nil {
			break
		}
		m.Apply(ev, replay.Nop{})
		if ev.Kind == trace.KindAlloc || ev.Kind == trace.KindFree {
			open = append(open, m.Reserved.Len())
		}
	}
	if !slices.Equal(open, []int{1, 2, 1, 0}) {
		t.Errorf("open reservations after each ALLOC/FREE: %v, want [1 2 1 0]", open)
	}
}

// TestStop: a handler ends the replay early; its error is returned, ErrStopped is not.
func TestStop(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).Fence(12, trace.FenceSFENCE).Fence(12, trace.FenceSFENCE).Exit(0)
	for _, tc := range []struct {
		err  error
		want error
	}{{replay.ErrStopped, nil}, {fmt.Errorf("boom"), fmt.Errorf("boom")}} {
		m, _ := replay.New(b.Reader(t), replay.Options[px86.NoPayload]{})
		fences := 0
		err := m.Run(&fenceStopper{m: m, n: &fences, err: tc.err})
		if fmt.Sprint(err) != fmt.Sprint(tc.want) || fences != 1 {
			t.Errorf("Stop(%v): Run = %v after %d fences", tc.err, err, fences)
		}
	}
}

type fenceStopper struct {
	replay.Nop
	m   *replay.Machine[px86.NoPayload]
	n   *int
	err error
}

func (f *fenceStopper) BeforeFence(*trace.Event) {
	*f.n++
	f.m.Stop(f.err)
}
