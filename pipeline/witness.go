package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/smt"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Schedule witnesses: the consistency dimension of Huang's dissertation (Constraint-Based
// Analysis for PM Programs, USC 2023, ch. 6). A must-persist-before relation between two
// threads' stores (§6.3: thread B's store depends, data or control, on a load that read thread
// A's store; infer.CrossRead) may hold in the recorded schedule, where A's store was durable
// before B loaded it, and break in another schedule that keeps the recorded synchronization: B
// may load A's value between the release that published it and the flush and fence that make it
// durable. §6.2 adds to the symbolic analysis of a trace (§3.3, Fig. 3.5) a formula
// Φ_consistency over the threads' execution times; a model of
//
//	Φ_program ∧ Φ_consistency ∧ Φ_persistency ∧ ¬Φ_assertion
//
// is a schedule, with a crash, that breaks the relation. Here, over the trace's window from A's
// store to the point where B's store is durable (or the end of its thread's records in the
// window), with one execution-time variable per record the question needs (conflicts: A's store,
// B's load and store, what decides when A and B persist, and every access of a conflict):
//
//   - Φ_program: distinct times, each thread's records in their recorded order;
//   - Φ_consistency: happens-before of the recorded synchronization (replay.HB: locks, thread
//     create and join, barriers, semaphores, PM atomics), each record after the latest record
//     of every other thread that happens before it; every two conflicting accesses of
//     different threads to one 8-byte word in their recorded order (a load after the store it
//     read and before the next store to those bytes, two stores in their order), so that
//     every kept load, B's among them, reads what it read in the recorded run;
//   - Φ_persistency: px86's persistency formula (Persistency.Constraints, Fig. 3.5's Φ_pti,
//     Φ_pts, Φ_fi and the rules the figure leaves out) over the stores, non-temporal stores
//     and flushes of A's and B's cache lines and the fences of the threads that write them back;
//   - ¬Φ_assertion: a part of B's store persists before a part of A's (the MPB relation of
//     §6.3 broken).
//
// z3 decides it (internal/smt, as `scry fix` uses it). A model is a witness: the times place
// B's load between two of A's thread's records, and the witness schedule is the window schedule
// (SCRY_SCHED's @THREAD.STORE, windows.go) that drops A's thread right after its last store
// placed before B's load, on the base of the trace's own controlled schedule. `scry check` runs
// it as one of its schedules (runSchedules): the witness is confirmed when the program, run under
// it, shows the violation (the inter-thread-inconsistency analyzer finds B's store derived from
// A's value not yet durable, and a crash state that keeps B's store and loses A's fails). DRAM
// is not in the trace, and a witness is one preemption: a run may still differ from its model,
// which running the witness tells.

// witnessMax bounds the cross reads a trace's witnesses are looked for in (the solver's queries).
const witnessMax = 16

// spread returns at most n of the cross reads, taken in turns from each store site (the first
// read of each site in trace order, then the second of each, ...), so that the stores of one
// structure's initialisation, read again and again, leave room for the others; the result is in
// trace order.
func spread(reads []infer.CrossRead, n int) []infer.CrossRead {
	if len(reads) <= n {
		return reads
	}
	seen := map[uint32]int{}
	rank := make([]int, len(reads))
	for i, r := range reads {
		rank[i] = seen[r.StoreSite]
		seen[r.StoreSite]++
	}
	idx := make([]int, len(reads))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rank[a], rank[b]) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]infer.CrossRead, n)
	for i, j := range idx {
		out[i] = reads[j]
	}
	return out
}

// witnessEvents bounds the records of one window the encoding takes (PM stores, flushes, fences,
// the load): a window that reaches it before the dependent store is left out, with a warning;
// one that reaches it after ends there.
const witnessEvents = 400

// witnessLoads bounds the loads of one window the collection keeps (the formula keeps those in
// a conflict with another thread's store: conflicts).
const witnessLoads = 4000

// witnessTimeout bounds one satisfiability check.
const witnessTimeout = 10 * time.Second

// witness is a schedule that breaks a cross read's relation: the window schedule's thread and
// store (windowCandidate), with the cross read and the locations of its stores and load.
type witness struct {
	windowCandidate
	read                   infer.CrossRead
	store, load, dependent report.Location
}

// describe says what the witness schedule (on base) shows, for the report's notes.
func (w witness) describe(base string) string {
	return fmt.Sprintf("schedule witness %s (another schedule consistent with the recorded synchronization, Huang ch. 6): thread %d stops right after its store %d; the store at %s may then persist before the store at %s it depends on (its load at %s reads that value before it is durable)",
		w.Spec(base), w.Thread, w.Store, w.dependent, w.store, w.load)
}

// wEvent is one record of a window: its index, thread, kind (px86.SymStore, SymNTStore,
// SymFlush, SymFence; 0 for B's load), flush kind, the cache lines it touches, the 8-byte words
// a store writes, the thread's STORE and NT_STORE records so far (a store's number, as the
// runtime counts them) and its happens-before epoch.
type wEvent struct {
	index   uint64
	thread  uint32
	kind    px86.SymKind
	flush   uint8
	lines   []uint64
	words   []uint64
	storeNo uint64
	epoch   replay.Epoch
	// after are the events (indexes into the window) of other threads that happen before this
	// one: the latest of each thread, when it changed.
	after []int
}

// wWindow collects the records of one cross read's window.
type wWindow struct {
	read   infer.CrossRead
	events []wEvent
	closed bool
	long   bool
	loads  int // the loads among events
	// known: for each thread, the index into its events (byThread) of the latest that happens
	// before the current record of each other thread: known[t][u].
	byThread map[uint32][]int
	known    map[[2]uint32]int
}

// witnessCollector is the analyzer of the pass that collects the windows.
type witnessCollector struct {
	wins  []*wWindow
	count storeCount // the threads' STORE and NT_STORE records so far
}

// collectorOf is the analyzer of the pass that collects c's windows.
func collectorOf(c *witnessCollector) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:       "schedule-witness-windows",
		Doc:        "the records of the windows the schedule witnesses encode (an internal pass of scry check)",
		ResultType: reflect.TypeOf((*witnessCollector)(nil)),
		New:        func(*analysis.Pass) (any, error) { return c, nil },
	}
}

func (c *witnessCollector) add(p *analysis.Pass, ev *trace.Event, kind px86.SymKind, flush uint8, addr, size uint64) {
	m := p.State.Model
	if m == nil {
		return
	}
	var lines, words []uint64
	if size > 0 {
		for l := m.LineOf(addr); l < addr+size; l += m.LineSize() {
			lines = append(lines, l)
		}
		if kind == px86.SymStore || kind == px86.SymNTStore || (kind == 0 && size <= 8*maxWindowWords) {
			for a := addr &^ 7; a < addr+size; a += 8 {
				words = append(words, a)
			}
		}
	}
	for _, w := range c.wins {
		if w.closed || ev.Index < w.read.Store {
			continue
		}
		if kind == 0 && ev.Index != w.read.Load && len(words) == 0 {
			continue
		}
		if kind == 0 {
			w.loads++
		}
		if len(w.events)-w.loads >= witnessEvents || w.loads >= witnessLoads {
			// Past the dependent store the window just ends: what its thread has not made
			// durable by then may persist at any time (up to the formula's Never).
			w.closed, w.long = true, ev.Index <= w.read.Dependent
			continue
		}
		e := wEvent{index: ev.Index, thread: ev.Thread, kind: kind, flush: flush, lines: lines, words: words,
			storeNo: c.count.stores[ev.Thread], epoch: p.State.HB.Epoch(ev.Thread)}
		for u, evs := range w.byThread {
			if u == ev.Thread {
				continue
			}
			k := [2]uint32{ev.Thread, u}
			j, ok := w.known[k]
			if !ok {
				j = -1
			}
			nj := j
			for nj+1 < len(evs) && p.State.HB.Before(w.events[evs[nj+1]].epoch, ev.Thread) {
				nj++
			}
			if nj != j {
				w.known[k] = nj
				e.after = append(e.after, evs[nj])
			}
		}
		w.byThread[ev.Thread] = append(w.byThread[ev.Thread], len(w.events))
		w.events = append(w.events, e)
		// The window ends once the dependent store is durable, at a fence of its thread.
		if kind == px86.SymFence && ev.Thread == w.read.Thread && ev.Index > w.read.Dependent &&
			m.StateOf(w.read.Dependent, w.read.DependentAddr) == px86.Persisted {
			w.closed = true
		}
	}
}

func (c *witnessCollector) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	if ev == nil || (ev.Kind != trace.KindStore && ev.Kind != trace.KindNTStore) {
		return
	}
	c.count.add(ev)
	kind := px86.SymStore
	if ev.Kind == trace.KindNTStore {
		kind = px86.SymNTStore
	}
	c.add(p, ev, kind, 0, s.Addr, s.Size)
}

func (c *witnessCollector) OnLoad(p *analysis.Pass, ev *trace.Event) {
	c.add(p, ev, 0, 0, ev.Addr, ev.Size)
}

func (c *witnessCollector) OnFlush(p *analysis.Pass, ev *trace.Event, _ px86.FlushEffect) {
	if ev.Flush < trace.FlushCLFLUSH || ev.Flush > trace.FlushCLWB {
		return // an Arm cache maintenance instruction: witnesses are x86's
	}
	c.add(p, ev, px86.SymFlush, uint8(ev.Flush), ev.Addr, 1)
}

func (c *witnessCollector) OnFence(p *analysis.Pass, ev *trace.Event, _ px86.FenceEffect) {
	c.add(p, ev, px86.SymFence, 0, 0, 0)
}

// findWitnesses returns the schedule witnesses of the trace tf, at most n, with the warnings of
// the cross reads it could not decide: two passes over the trace (its cross reads,
// infer.CrossReadsAnalyzer; the records of their windows), then one query per cross read.
// Errors: the trace cannot be read again, or z3 cannot start (smt.ErrNotInstalled).
func findWitnesses(ctx context.Context, tf *trace.File, n int) ([]witness, []string, error) {
	if n <= 0 || tf.Header().AArch64() {
		return nil, nil, nil
	}
	keepX := map[*analysis.Analyzer]any{}
	if _, err := analysis.Run(tf.Reader, []*analysis.Analyzer{infer.CrossReadsAnalyzer}, analysis.Config{Keep: keepX}); err != nil {
		return nil, nil, fmt.Errorf("schedule witnesses: %w", err)
	}
	reads := infer.CrossReads(keepX[infer.CrossReadsAnalyzer])
	if len(reads) == 0 {
		return nil, nil, nil
	}
	reads = spread(reads, witnessMax)
	c := &witnessCollector{count: newStoreCount()}
	for _, r := range reads {
		c.wins = append(c.wins, &wWindow{read: r, byThread: map[uint32][]int{}, known: map[[2]uint32]int{}})
	}
	if _, err := analysis.Run(tf.Reader, []*analysis.Analyzer{collectorOf(c)}, analysis.Config{}); err != nil {
		return nil, nil, fmt.Errorf("schedule witnesses: %w", err)
	}
	s, err := smt.Start(ctx, smt.Options{Timeout: witnessTimeout})
	if err != nil {
		return nil, nil, fmt.Errorf("schedule witnesses: %w", err)
	}
	defer s.Close()
	var out []witness
	var warns []string
	seen := map[[2]uint64]bool{}
	for _, w := range c.wins {
		if len(out) >= n || ctx.Err() != nil {
			break
		}
		if w.long {
			warns = append(warns, fmt.Sprintf("schedule witnesses: the window from the store at %s to the store at %s has more than %d records before the latter; no other schedule was looked for", w.read.StoreAt, w.read.DependentAt, witnessEvents))
			continue
		}
		thread, store, res, err := solveWitness(s, w)
		if err != nil {
			return out, warns, fmt.Errorf("schedule witnesses: %w", err)
		}
		switch res {
		case smt.Unknown:
			warns = append(warns, fmt.Sprintf("schedule witnesses: z3 could not decide, within %s, whether another schedule lets the store at %s persist before the store at %s", witnessTimeout, w.read.DependentAt, w.read.StoreAt))
			continue
		case smt.Unsat:
			continue
		}
		k := [2]uint64{uint64(thread), store}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, witness{windowCandidate: windowCandidate{Thread: thread, Store: store, Site: w.read.StoreSite, Index: w.read.Store},
			read: w.read, store: w.read.StoreAt, load: w.read.LoadAt, dependent: w.read.DependentAt})
	}
	return out, warns, nil
}

// conflicts returns the orders of the window's conflicting accesses of different threads to
// one 8-byte word, as pairs of event indexes (earlier, later), and which events the formula
// keeps: A's store a, B's load and B's store b, the accesses in such a pair, and what decides
// when a part of A's or B's store persists (pers: the stores, non-temporal stores and flushes
// of their cache lines, and the fences of the threads that flush or write them non-temporally;
// only these enter the persistency formula). A load stays after the store it read (reads-from)
// and before the next store to what it read (a load placed after it would read another value),
// and two stores keep their order (the values the program computed stay its own): the schedules
// the formula allows then give every kept load the value it read in the recorded run. The other
// records add nothing to the question but program order, which the kept ones carry.
func conflicts(evs []wEvent, load, a, b int) (pairs [][2]int, keep, pers []bool) {
	keep = make([]bool, len(evs))
	pers = make([]bool, len(evs))
	lines := map[uint64]bool{}
	for _, l := range append(slices.Clone(evs[a].lines), evs[b].lines...) {
		lines[l] = true
	}
	flushers := map[uint32]bool{}
	touches := func(e wEvent) bool {
		return slices.ContainsFunc(e.lines, func(l uint64) bool { return lines[l] })
	}
	for i, e := range evs {
		if e.kind != 0 && e.kind != px86.SymFence && touches(e) {
			pers[i] = true
			if e.kind == px86.SymFlush || e.kind == px86.SymNTStore {
				flushers[e.thread] = true
			}
		}
	}
	lastStore := map[uint64]int{} // word: the latest store to it
	readers := map[uint64][]int{} // word: the loads since its latest store
	for i, e := range evs {
		if e.kind == px86.SymFence && flushers[e.thread] {
			pers[i] = true
		}
		for _, wd := range e.words {
			j, stored := lastStore[wd]
			if e.kind == 0 {
				if stored && evs[j].thread != e.thread {
					pairs = append(pairs, [2]int{j, i})
					keep[i], keep[j] = true, true
				}
				readers[wd] = append(readers[wd], i)
				continue
			}
			if stored && evs[j].thread != e.thread {
				pairs = append(pairs, [2]int{j, i})
				keep[i], keep[j] = true, true
			}
			for _, r := range readers[wd] {
				if evs[r].thread != e.thread {
					pairs = append(pairs, [2]int{r, i})
					keep[r], keep[i] = true, true
				}
			}
			lastStore[wd] = i
			readers[wd] = readers[wd][:0]
		}
	}
	for i := range keep {
		keep[i] = keep[i] || pers[i]
	}
	keep[load], keep[a], keep[b] = true, true, true
	pers[a], pers[b] = true, true
	return pairs, keep, pers
}

// compact returns the events keep keeps, with their happens-before edges (wEvent.after) moved
// to the new indexes: an edge from a dropped event comes from the latest kept event of its thread
// before it, and the edges into a dropped event go to the next kept event of its thread. It also
// returns each old index's new one (-1: dropped).
func compact(evs []wEvent, keep []bool) ([]wEvent, []int) {
	idx := make([]int, len(evs))
	prevKept := make([]int, len(evs)) // the latest kept event of its thread at or before it
	lastKept := map[uint32]int{}
	pending := map[uint32][]int{} // thread: edges into its dropped events (old indexes)
	var out []wEvent
	for i, e := range evs {
		idx[i] = -1
		if keep[i] {
			idx[i] = len(out)
			lastKept[e.thread] = i
		}
		if j, ok := lastKept[e.thread]; ok {
			prevKept[i] = j
		} else {
			prevKept[i] = -1
		}
		if !keep[i] {
			pending[e.thread] = append(pending[e.thread], e.after...)
			continue
		}
		ne := e
		ne.after = nil
		for _, x := range append(pending[e.thread], e.after...) {
			if j := prevKept[x]; j >= 0 {
				ne.after = append(ne.after, idx[j])
			}
		}
		delete(pending, e.thread)
		out = append(out, ne)
	}
	return out, idx
}

// solveWitness encodes window w (the package comment above) and asks s whether a schedule breaks
// its relation: on sat, the witness's thread and store number.
func solveWitness(s *smt.Solver, w *wWindow) (uint32, uint64, smt.Result, error) {
	load, a, b := -1, -1, -1
	for i, e := range w.events {
		switch {
		case e.index == w.read.Load && e.kind == 0:
			load = i
		case e.index == w.read.Store && e.kind != 0 && a < 0:
			a = i
		case e.index == w.read.Dependent && e.kind != 0 && b < 0:
			b = i
		}
	}
	if load < 0 || a < 0 || b < 0 {
		return 0, 0, smt.Unsat, nil
	}
	pairs, keep, pers := conflicts(w.events, load, a, b)
	evs, idx := compact(w.events, keep)
	inPers := make([]bool, len(evs))
	for i, k := range idx {
		if k >= 0 {
			inPers[k] = pers[i]
		}
	}
	load, a, b = idx[load], idx[a], idx[b]
	pos := func(i int) string { return fmt.Sprintf("wp%d", i) }
	var instrs []px86.SymInstr
	instrOf := make([]int, len(evs)) // event -> instruction (-1: no part in the persistency formula)
	for i, e := range evs {
		instrOf[i] = -1
		if !inPers[i] {
			continue
		}
		instrOf[i] = len(instrs)
		instrs = append(instrs, px86.SymInstr{Kind: e.kind, Flush: e.flush, Thread: e.thread, Lines: e.lines, Pos: pos(i), Present: "true"})
	}
	never := int64(len(evs) + 1)
	per := px86.NewPersistency(instrs, "w", never)
	s.Push()
	defer s.Pop()
	var decls, names []string
	for i := range evs {
		decls = append(decls, "(declare-const "+pos(i)+" Int)")
		names = append(names, pos(i))
	}
	decls = append(decls, per.Decls()...)
	s.Send(decls...)
	var cs []string
	if len(names) > 1 {
		cs = append(cs, "(distinct "+strings.Join(names, " ")+")")
	}
	lastOf := map[uint32]int{}
	for i, e := range evs {
		cs = append(cs, smt.Le("0", pos(i)), smt.Lt(pos(i), smt.Int(int64(len(evs)))))
		// Φ_program: the thread's order.
		if j, ok := lastOf[e.thread]; ok {
			cs = append(cs, smt.Lt(pos(j), pos(i)))
		}
		lastOf[e.thread] = i
		// Φ_consistency: what happens before it.
		for _, j := range e.after {
			cs = append(cs, smt.Lt(pos(j), pos(i)))
		}
	}
	// Φ_consistency: the conflicting accesses' orders.
	for _, pr := range pairs {
		cs = append(cs, smt.Lt(pos(idx[pr[0]]), pos(idx[pr[1]])))
	}
	cs = append(cs, smt.Lt(pos(a), pos(load)))
	cs = append(cs, per.Constraints(per.PTName)...)
	// ¬Φ_assertion: a part of B's store persists before a part of A's.
	var broken []string
	for eb, enb := range per.Entries {
		if enb.Instr != instrOf[b] {
			continue
		}
		for ea, ena := range per.Entries {
			if ena.Instr == instrOf[a] {
				broken = append(broken, smt.Lt(per.PTName(eb), per.PTName(ea)))
			}
		}
	}
	cs = append(cs, smt.Or(broken...))
	for _, c := range cs {
		s.Send("(assert " + c + ")")
	}
	res, err := s.Check()
	if err != nil || res != smt.Sat {
		return 0, 0, res, err
	}
	vals, err := s.Ints(names...)
	if err != nil {
		return 0, 0, smt.Unknown, err
	}
	// The witness drops A's thread right after its last store placed before B's load.
	t := evs[a].thread
	store := evs[a].storeNo
	for i, e := range evs {
		if e.thread == t && (e.kind == px86.SymStore || e.kind == px86.SymNTStore) && vals[i] < vals[load] {
			store = max(store, e.storeNo)
		}
	}
	return t, store, smt.Sat, nil
}
