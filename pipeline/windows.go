package pipeline

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// Window schedules. The controlled schedules of ScheduleSpec switch threads at random points, so
// that the interleaving that exposes most bugs of concurrent PM structures is rarely among them:
// thread B's operation reads a value that thread A has stored and not yet made durable, returns
// or persists what it read, and a crash then loses A's store (Durinn, Fu et al., OSDI'22, §4:
// the adversarial thread interleaving it builds from a store and a load of the same data in two
// concurrent operations; PMRace, Chen et al., ASPLOS'22, §4.2, steers threads toward the same
// window with delays). A window schedule builds it on purpose from a trace of a controlled
// schedule: it reruns that schedule (same spec, so the same run up to the store) and has the
// runtime drop thread A below every other right after the store (SCRY_SCHED's @THREAD.STORE,
// native/runtime/sched.c), so that B runs, and loads what A stored, before A's flush.

// maxWindowWords bounds the 8-byte words of one store or load that window candidates look at: a
// larger range (a pool's initialisation, a bulk copy) is not a store another thread's operation
// reads in the window.
const maxWindowWords = 64

// maxWindowLoaders bounds the threads whose last load of a word windows remember.
const maxWindowLoaders = 4

// lastLoads returns ls with l as its thread's last load, the most recent first, at most
// maxWindowLoaders threads.
func lastLoads(ls []windowLoad, l windowLoad) []windowLoad {
	ls = slices.DeleteFunc(ls, func(o windowLoad) bool { return o.thread == l.thread })
	ls = slices.Insert(ls, 0, l)
	return ls[:min(len(ls), maxWindowLoaders)]
}

// storeCount numbers each thread's STORE and NT_STORE records as the runtime's window counts them
// (SCRY_SCHED's @THREAD.STORE): from 1, one record once even when it is several writes (clipped
// to regions).
type storeCount struct {
	stores map[uint32]uint64 // thread: its records so far
	last   map[uint32]uint64 // thread: the index of its last record counted
}

func newStoreCount() storeCount {
	return storeCount{stores: map[uint32]uint64{}, last: map[uint32]uint64{}}
}

// add counts the record of store event ev, once, and returns its number in its thread.
func (c storeCount) add(ev *trace.Event) uint64 {
	if n, ok := c.last[ev.Thread]; !ok || n != ev.Index {
		c.last[ev.Thread] = ev.Index
		c.stores[ev.Thread]++
	}
	return c.stores[ev.Thread]
}

// windowCandidate is a store of a controlled schedule's trace that another thread's concurrent
// operation later read: thread Thread's Store-th STORE or NT_STORE record (from 1; the runtime
// counts them alike), at Site, record Index, and Readers, the sites of the loads of other threads
// that read the bytes it wrote during an operation in flight when it stored them.
type windowCandidate struct {
	Thread  uint32
	Store   uint64
	Site    uint32
	Index   uint64
	Readers map[uint32]bool
	// Op is the record index of the OP_BEGIN of the operation that stored (0: none).
	Op uint64
	// Transient: the storing thread's operation stored to the word again later, or gave it back
	// the bytes it had before the operation first stored to it (a lock taken and released, a
	// flag set and cleared, a slot reserved then filled): a reader in the window sees a state
	// the operation does not leave, seldom what it returns.
	Transient bool
}

// Spec is the SCRY_SCHED value of the window schedule of c on the schedule base (its spec
// without a window).
func (c windowCandidate) Spec(base string) string {
	return fmt.Sprintf("%s@%d.%d", base, c.Thread, c.Store)
}

// windowStore is the last store to one 8-byte word of PM: its candidate's key, its site and
// record index; windowLoad the last plain load of it during an operation of its thread: its
// thread, record index and site.
type windowStore struct {
	thread uint32
	store  uint64
	site   uint32
	index  uint64
	op     uint64
}

type windowLoad struct {
	thread uint32
	index  uint64
	site   uint32
}

// schedWindows finds the window candidates of a trace in the analysis pass (OnStore, OnLoad): a
// store of thread A and a plain load of the same word by thread B, in either order, while an
// operation of each is in flight and the other's began before (two concurrent operations). A
// load of a compare-and-swap or another read-modify-write (a lock's acquire, a spin) is not a
// reader: it synchronizes, it does not return the data.
type schedWindows struct {
	count  storeCount
	words  map[uint64]windowStore  // 8-byte word address: its last store
	loads  map[uint64][]windowLoad // 8-byte word address: the last plain load of each of up to maxWindowLoaders threads
	cands  map[[2]uint64]*windowCandidate
	values map[uint64][8]byte           // 8-byte word address: its bytes as last stored
	opened map[uint32]map[uint64]opWord // thread: the words its operation in flight stored
	// transient are the stores (candidate keys) to the words their operations gave back
	// their bytes (windowCandidate.Transient).
	transient map[[2]uint64]bool
}

// opWord is a word an operation stored: its bytes before the operation's first store to it
// (known: the trace stored all of them before) and its stores to it (candidate keys).
type opWord struct {
	before [8]byte
	known  bool
	stores [][2]uint64
}

// schedWindowsAnalyzer runs schedWindows in the analysis pass of the first controlled schedule
// of a check (runSchedules).
var schedWindowsAnalyzer = &analysis.Analyzer{
	Name:       "schedule-windows",
	Doc:        "stores that a concurrent operation of another thread read, for the window schedules of a check (a thread dropped right after such a store, before it is durable)",
	ResultType: reflect.TypeOf((*schedWindows)(nil)),
	New: func(*analysis.Pass) (any, error) {
		return &schedWindows{count: newStoreCount(),
			words: map[uint64]windowStore{}, loads: map[uint64][]windowLoad{}, cands: map[[2]uint64]*windowCandidate{},
			values: map[uint64][8]byte{}, opened: map[uint32]map[uint64]opWord{}, transient: map[[2]uint64]bool{}}, nil
	},
}

// opBegin returns the record index of the OP_BEGIN of thread's operation in flight.
func opBegin(p *analysis.Pass, thread uint32) (uint64, bool) {
	for _, op := range p.State.Ops.InFlight() {
		if op.Thread == thread {
			return op.Begin, true
		}
	}
	return 0, false
}

// add notes that the load site read (or will read, in the window) what store wrote.
func (w *schedWindows) add(store windowStore, reader uint32) {
	k := [2]uint64{uint64(store.thread), store.store}
	c := w.cands[k]
	if c == nil {
		c = &windowCandidate{Thread: store.thread, Store: store.store, Site: store.site, Index: store.index, Op: store.op, Readers: map[uint32]bool{}}
		w.cands[k] = c
	}
	c.Readers[reader] = true
}

// written notes the bytes a store wrote into the word at a (values) and, inside an operation,
// the word's bytes before the operation's first store to it.
func (w *schedWindows) written(store windowStore, inOp bool, a uint64, s *analysis.StoreInfo) {
	old, known := w.values[a]
	if inOp {
		ws := w.opened[store.thread]
		if ws == nil {
			ws = map[uint64]opWord{}
			w.opened[store.thread] = ws
		}
		ow, ok := ws[a]
		if !ok {
			ow = opWord{before: old, known: known}
		}
		ow.stores = append(ow.stores, [2]uint64{uint64(store.thread), store.store})
		ws[a] = ow
	}
	v := old
	for i := range uint64(8) {
		if b := a + i; b >= s.Addr && b < s.Addr+s.Size && b-s.Addr < uint64(len(s.Data)) {
			v[i] = s.Data[b-s.Addr]
		}
	}
	// A word is known once a store covered all of it.
	if known || (a >= s.Addr && a+8 <= s.Addr+s.Size) {
		w.values[a] = v
	}
}

// OnOpEnd marks transient the stores of the operation that are not its last to their word, and
// its last ones to words it gave back their bytes.
func (w *schedWindows) OnOpEnd(_ *analysis.Pass, _ *trace.Event, op replay.Op) {
	for a, ow := range w.opened[op.Thread] {
		last := len(ow.stores) - 1
		for _, k := range ow.stores[:last] {
			w.transient[k] = true
		}
		if v, ok := w.values[a]; ok && ow.known && v == ow.before {
			w.transient[ow.stores[last]] = true
		}
	}
	delete(w.opened, op.Thread)
}

func (w *schedWindows) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	if ev == nil || (ev.Kind != trace.KindStore && ev.Kind != trace.KindNTStore) {
		return
	}
	n := w.count.add(ev)
	if s.Size > maxWindowWords*8 {
		return
	}
	begin, inOp := opBegin(p, ev.Thread)
	ws := windowStore{thread: ev.Thread, store: n, site: ev.Site, index: ev.Index, op: begin}
	for a := s.Addr &^ 7; a < s.Addr+s.Size; a += 8 {
		w.words[a] = ws
		w.written(ws, inOp, a, s)
		// Another thread loaded it before, during this thread's operation, in its own.
		for _, l := range w.loads[a] {
			if inOp && l.thread != ev.Thread && l.index > begin {
				w.add(ws, l.site)
			}
		}
	}
}

func (w *schedWindows) OnLoad(p *analysis.Pass, ev *trace.Event) {
	if ev.Size > maxWindowWords*8 {
		return
	}
	if s, ok := p.Site(ev.Site); ok && s.Kind == trace.SiteRMW {
		return
	}
	begin, inOp := opBegin(p, ev.Thread)
	if !inOp {
		return
	}
	for a := ev.Addr &^ 7; a < ev.Addr+ev.Size; a += 8 {
		w.loads[a] = lastLoads(w.loads[a], windowLoad{thread: ev.Thread, index: ev.Index, site: ev.Site})
		// Another thread stored it while this thread's operation was in flight.
		if ws, ok := w.words[a]; ok && ws.thread != ev.Thread && ws.index > begin {
			w.add(ws, ev.Site)
		}
	}
}

// best returns up to n candidates, one per store site, ranked: first the stores that are not
// transient; then those that are the last their operation stored of what other threads read
// (under their window the reader sees every store of the operation it reads: a value and then
// the key that publishes it); then the sites whose stores the most load sites read (a spin on a
// lock word is one load site however often it spins); then the earliest. Each site is
// represented by its best store in that order (the earliest of equals, whose window leaves the
// other threads the most of their operations to run in it).
func (w *schedWindows) best(n int) []windowCandidate {
	lastOf := map[[2]uint64]uint64{} // (thread, operation): the index of its last candidate
	for k, c := range w.cands {
		c.Transient = w.transient[k]
		if c.Op != 0 {
			k := [2]uint64{uint64(c.Thread), c.Op}
			lastOf[k] = max(lastOf[k], c.Index)
		}
	}
	last := func(c *windowCandidate) bool {
		return c.Op == 0 || lastOf[[2]uint64{uint64(c.Thread), c.Op}] == c.Index
	}
	better := func(a, b *windowCandidate) int {
		return cmp.Or(boolCompare(a.Transient, b.Transient), boolCompare(!last(a), !last(b)), cmp.Compare(a.Index, b.Index))
	}
	bySite := map[uint32]*windowCandidate{}
	readers := map[uint32]map[uint32]bool{}
	for _, c := range w.cands {
		if b := bySite[c.Site]; b == nil || better(c, b) < 0 {
			bySite[c.Site] = c
		}
		if readers[c.Site] == nil {
			readers[c.Site] = map[uint32]bool{}
		}
		for l := range c.Readers {
			readers[c.Site][l] = true
		}
	}
	var out []*windowCandidate
	for _, c := range bySite {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *windowCandidate) int {
		return cmp.Or(boolCompare(a.Transient, b.Transient), boolCompare(!last(a), !last(b)),
			cmp.Compare(len(readers[b.Site]), len(readers[a.Site])), cmp.Compare(a.Index, b.Index))
	})
	var best []windowCandidate
	for _, c := range out[:min(n, len(out))] {
		best = append(best, *c)
	}
	return best
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
