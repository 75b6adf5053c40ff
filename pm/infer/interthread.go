package infer

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// InterThread checks a trace for inter-thread inconsistency (PMRace, Chen et al., ASPLOS'22, §3.1
// "PM inter-thread inconsistency"; HawkSet, EuroSys'25, the same pattern found by lockset
// analysis): thread B loads bytes that thread A stored and has not made durable yet, and B then
// stores data that depends on that load, data or control, while A's store is still not durable.
// B's store may then persist (a write-back can happen at any time) while A's never does: after a
// crash, PM holds a value derived from one that no longer exists. Finding
// inter-thread-inconsistency, of class unconfirmed, at B's dependent store, naming A's store
// (related report.RoleOtherThreadStore) and B's load (report.RoleReaderLoad); `scry check`
// confirms it with the crash states that persist B's store and not A's, as it confirms an
// mpb-violation (the pair is A's store before B's).
//
// How. B's load is tainted when the px86 model holds, on the bytes it read, an unpersisted store
// of another thread that later stores have not entirely rewritten (a library's bytes, EXTERNAL
// writes, are left out: no site to name). Dependence is the inference engine's (package doc,
// "How"): the loads a store's value or address depends on at register level, and the loads its
// transitive control dependences decided on, in its activation and inherited through calls, so
// a copy (`arch[k] = entry[k]`) and a store made only because of a value read (`if (slot->key
// == k) done = 1`) both count, and so do, one level deep, the loads the address of such a load
// came from: a store into the structure a pointer leads to (`t = root->table; t->bucket[i] = v`)
// depends on the load of the pointer (PMRace's P-CLHT bug: a new table's root read before it is
// durable). B's store is not reported when A's store lies entirely on B's
// store's cache lines (the checks' sameLines): a line persists in program order, so B's store
// cannot persist without A's. Under the eADR profile (px86.EADR) a cached store that another
// thread loaded was globally visible, hence durable: only a non-temporal A store can taint. A
// finding is
// reported when its pool is closed or the program exits, and only when A's store was made
// durable by then: a store never made durable is the unpersisted-store oracle's finding (and a
// crash that loses it alone, a durability-violation); once it is fixed, the race shows. A trace
// that ends without either (the program was killed) reports none.
//
// Cost: nothing until the trace shows a second thread's PM access; from then on, the
// dependence engine's shadow of PM (seeded with the stores the model still holds unpersisted,
// the only ones that can taint a load) and a table of tainted loads, bounded by maxTainted.
var InterThread = &analysis.Analyzer{
	Name:       string(report.InterThreadInconsistency),
	Doc:        "a thread stores data derived from a value another thread stored and had not made durable, while that store is still not durable: a crash can persist the derived data and lose its source; unconfirmed until a crash image persisting the one and not the other makes the program fail",
	Class:      report.Unconfirmed,
	ResultType: reflect.TypeOf((*interThread)(nil)),
	New: func(p *analysis.Pass) (any, error) {
		return &interThread{}, nil
	},
}

// maxTainted bounds the tainted load instances remembered at once; past it the oldest half is
// forgotten (a load that old rarely still feeds a store), with a warning.
const maxTainted = 1 << 20

// taint is what a tainted load read: the other thread's unpersisted store.
type taint struct {
	store      px86.StoreID // the writer's event index
	site       uint32
	stack      uint32
	thread     uint32
	addr, size uint64 // the bytes of the writer's entry the load read (model's view)
	load       uint32 // the load's site
	loadStack  uint32
}

type interThread struct {
	pairs   []StorePair // reported, each once
	pending []candidate // found, not reported yet (flush)
	dropped int         // candidates whose source was never made durable
	e       *engine
	first   uint32 // the first thread seen
	active  bool
	tainted map[uint64]taint // by the load's event index
	order   []uint64         // tainted load events, oldest first (for the bound)
	warned  bool
	// words are the last store of each 8-byte PM word since activation; durableRead the loads
	// that read another thread's store already durable (by the load's event index), for the
	// cross reads (CrossReads) the schedule witnesses of `scry check` start from.
	words       map[uint64]wordStore
	durableRead map[uint64]taint
	cross       []CrossRead
	// early: the analyzer is CrossReadsAnalyzer: it starts at the trace's first record and
	// reports nothing.
	early bool
	// fences are, by thread, the record index and happens-before epoch of its last fence
	// (CrossReadsAnalyzer only).
	fences map[uint32]fenceAt
}

// fenceAt is a thread's last fence: its record index and epoch.
type fenceAt struct {
	index uint64
	epoch replay.Epoch
}

// OnFence notes the thread's last fence (CrossReadsAnalyzer only: readDurable).
func (c *interThread) OnFence(p *analysis.Pass, ev *trace.Event, _ px86.FenceEffect) {
	if !c.early {
		return
	}
	if c.fences == nil {
		c.fences = map[uint32]fenceAt{}
	}
	c.fences[ev.Thread] = fenceAt{index: ev.Index, epoch: p.State.HB.Epoch(ev.Thread)}
}

// CrossReadsAnalyzer finds the cross reads of a trace (CrossReads on its result), and reports
// nothing: InterThread's analysis from the trace's first record on (InterThread starts when a
// second thread touches PM, so that a program with one thread pays nothing, and so misses the
// stores before that). `scry check` runs it on the trace of its first controlled schedule of a
// program with several threads that store to PM, for its schedule witnesses.
var CrossReadsAnalyzer = &analysis.Analyzer{
	Name:       "cross-reads",
	Doc:        "loads of a thread that read another thread's store already durable, and the stores that depend on them (the inter-thread must-persist-before relations a schedule witness may break)",
	ResultType: reflect.TypeOf((*interThread)(nil)),
	New: func(p *analysis.Pass) (any, error) {
		return &interThread{early: true}, nil
	},
}

// wordStore is the last store to one 8-byte PM word: its event, thread, site, stack and range.
type wordStore struct {
	ev          uint64
	thread      uint32
	site, stack uint32
	addr, size  uint64
}

func (c *interThread) activate(p *analysis.Pass, ev *trace.Event) bool {
	if c.active {
		return true
	}
	if c.first == 0 && c.early {
		c.first = ev.Thread
		c.start(p)
		return true
	}
	if c.first == 0 {
		c.first = ev.Thread
		return false
	}
	if ev.Thread == c.first {
		return false
	}
	c.start(p)
	return true
}

// start starts the dependence engine, seeded with the stores the model still holds unpersisted.
func (c *interThread) start(p *analysis.Pass) {
	c.active = true
	c.e = newEngine(p.State.Reader, nil, Options{})
	c.e.m = p.State
	c.tainted = map[uint64]taint{}
	c.words = map[uint64]wordStore{}
	c.durableRead = map[uint64]taint{}
	// Seed the shadow with the stores still unpersisted: only those can taint a load.
	if m := p.State.Model; m != nil {
		c.e.st.sync()
		m.ForEachUnpersisted(func(s px86.StoreState) bool {
			if !s.External() {
				c.e.sh.write(s.Addr, s.Size, mkWriter(uint64(s.ID), c.e.st.index(s.Origin.Site)))
			}
			return true
		})
	}
}

func (c *interThread) OnLoad(p *analysis.Pass, ev *trace.Event) {
	if !c.activate(p, ev) {
		return
	}
	c.e.st.sync()
	c.e.load(ev)
	m := p.State.Model
	if li := c.e.st.index(ev.Site); m == nil || li == 0 || c.e.st.kinds[li] == trace.SiteRMW {
		return // an RMW's load is a lock's acquire or a counter's update: synchronization, not data
	}
	var best px86.StoreState
	found := false
	m.ForEachOverlapping(ev.Addr, ev.Size, func(s px86.StoreState) bool {
		if s.Origin.Thread != ev.Thread && s.Origin.Site != 0 && !s.External() && s.Flags&px86.Rewritten == 0 &&
			(!found || s.ID > best.ID) {
			best, found = s, true
		}
		return true
	})
	if !found {
		c.readDurable(p, ev)
		return
	}
	if best.Flags&px86.Ordered != 0 {
		// Under eADR a cached store another thread could load was globally visible, so durable.
		return
	}
	if len(c.tainted) >= maxTainted {
		half := len(c.order) / 2
		for _, k := range c.order[:half] {
			delete(c.tainted, k)
		}
		c.order = append(c.order[:0], c.order[half:]...)
		if !c.warned {
			c.warned = true
			p.Warn("inter-thread-inconsistency: more than %d loads read other threads' unpersisted stores; the oldest were forgotten", maxTainted)
		}
	}
	c.tainted[ev.Index] = taint{store: best.ID, site: best.Origin.Site, stack: best.Origin.Stack, thread: best.Origin.Thread,
		addr: best.Addr, size: best.Size, load: ev.Site, loadStack: ev.Context}
	c.order = append(c.order, ev.Index)
}

func (c *interThread) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	if !c.activate(p, ev) {
		return
	}
	c.e.st.sync()
	if (s.Kind == replay.Store || s.Kind == replay.NTStore) && (len(c.tainted) > 0 || len(c.durableRead) > 0) && p.State.Model != nil {
		c.check(p, s)
	}
	c.e.Wrote(s)
	if s.Kind == replay.Store || s.Kind == replay.NTStore {
		ws := wordStore{ev: ev.Index, thread: ev.Thread, site: ev.Site, stack: ev.Context, addr: s.Addr, size: s.Size}
		for a := s.Addr &^ 7; a < s.Addr+s.Size && a-s.Addr < 8*maxCrossWords; a += 8 {
			c.words[a] = ws
		}
	} else {
		for a := s.Addr &^ 7; a < s.Addr+s.Size && a-s.Addr < 8*maxCrossWords; a += 8 {
			delete(c.words, a)
		}
	}
}

// maxCrossWords bounds the 8-byte words of one store or load the cross reads look at (a pool's
// initialisation or a bulk copy is no cross read the schedule witnesses start from).
const maxCrossWords = 64

// maxCross bounds the cross reads kept (CrossReads).
const maxCross = 256

// readDurable notes load ev when the last store to the bytes it read is another thread's and
// was already durable (no unpersisted store of another thread holds them): the recorded
// schedule ordered that store's persist before the load, another schedule may not.
func (c *interThread) readDurable(p *analysis.Pass, ev *trace.Event) {
	if ev.Size == 0 || ev.Size > 8*maxCrossWords || len(c.cross) >= maxCross {
		return
	}
	ws, ok := c.words[ev.Addr&^7]
	if !ok || ws.thread == ev.Thread || ws.site == 0 || c.e.sh.read(ev.Addr, ev.Size).event() != ws.ev {
		return
	}
	// The writer's last fence came after its store and happens before this load: the fence
	// that made the store durable does too, and no schedule consistent with the recorded
	// synchronization lets the load come first (the table a thread fills before it creates
	// the others).
	if f, ok := c.fences[ws.thread]; ok && f.index > ws.ev && p.State.HB.Before(f.epoch, ev.Thread) {
		return
	}
	if len(c.durableRead) >= maxTainted {
		clear(c.durableRead)
	}
	c.durableRead[ev.Index] = taint{store: ws.ev, site: ws.site, stack: ws.stack, thread: ws.thread,
		addr: ws.addr, size: ws.size, load: ev.Site, loadStack: ev.Context}
}

// check reports store s when it depends on a tainted load whose writer is still not durable.
func (c *interThread) check(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	i := c.e.st.index(ev.Site)
	if i == 0 {
		return
	}
	t := c.e.thread(ev.Thread)
	c.e.syncStack(t, ev)
	m := p.State.Model
	var hit *taint
	var via guardInst
	viaControl := false
	// tainted reports whether load g read another thread's store that is still not durable, and
	// notes it as the hit; a load of a durable store of another thread is a cross read.
	tainted := func(g guardInst, control bool) bool {
		tn, ok := c.tainted[g.ev]
		if !ok {
			c.crossRead(p, g, s)
			return false
		}
		if tn.thread == ev.Thread || durable(m, tn.source()) || sameLines(m, storeRec{addr: s.Addr, size: s.Size}, tn.source()) {
			return false
		}
		hit, via, viaControl = &tn, g, control
		return true
	}
	c.e.dependences(t, i, true, true, func(g guardInst, control bool) {
		if hit != nil || tainted(g, control) || control {
			return
		}
		// A load whose address came from a load of another thread's store (a root pointer
		// read, then the structure it points to): the store depends on that first load too.
		c.e.dependences(t, g.l, true, false, func(g2 guardInst, _ bool) {
			if hit == nil {
				tainted(g2, false)
			}
		})
	})
	if hit == nil {
		return
	}
	c.pending = append(c.pending, candidate{tn: *hit, via: via, control: viaControl, site: ev.Site, stack: ev.Context, event: ev.Index, op: s.Origin.Op})
}

// crossRead notes a cross read when the load g read another thread's durable store and store s
// depends on it (crossPerPair per pair of store sites), and reports whether g is such a load.
func (c *interThread) crossRead(p *analysis.Pass, g guardInst, s *analysis.StoreInfo) bool {
	tn, ok := c.durableRead[g.ev]
	ev := s.Event
	if !ok || tn.thread == ev.Thread || len(c.cross) >= maxCross || s.Size > 8*maxCrossWords {
		return false
	}
	var same []int
	for i, x := range c.cross {
		if x.StoreSite == tn.site && x.DependentSite == ev.Site {
			same = append(same, i)
		}
	}
	x := CrossRead{
		Store: uint64(tn.store), StoreThread: tn.thread, StoreSite: tn.site, StoreAddr: tn.addr, StoreSize: tn.size,
		Load: g.ev, LoadSite: tn.load, Thread: ev.Thread,
		Dependent: ev.Index, DependentSite: ev.Site, DependentAddr: s.Addr, DependentSize: s.Size,
		StoreAt: p.Locate(tn.site), LoadAt: p.Locate(tn.load), DependentAt: p.Locate(ev.Site),
	}
	switch {
	case len(same) < crossPerPair:
		c.cross = append(c.cross, x)
	default:
		// The first half of a pair's instances stay, the second half are the latest.
		last := same[crossPerPair/2:]
		copy(c.cross[last[0]:], c.cross[last[0]+1:])
		c.cross[len(c.cross)-1] = x
	}
	return true
}

// crossPerPair bounds the cross reads kept per pair of store sites: the first half of them, and
// the latest (the recorded synchronization may order one instance and not another: a thread's
// persist before its next release, but not after its last).
const crossPerPair = 4

// CrossRead is a dependence across threads that the recorded schedule kept safe: thread
// StoreThread's store (event Store, at StoreSite, over [StoreAddr, StoreAddr+StoreSize)) was
// durable when thread Thread's load (event Load, at LoadSite) read it, and Thread's later store
// (event Dependent, at DependentSite, over its range) depends on that load, data or control. It
// is the inter-thread must-persist-before relation of Huang's dissertation (Constraint-Based
// Analysis for PM Programs, USC 2023, §6.3: an inter-thread dependence between two stores'
// loads makes them an MPB pair): the store must persist before the dependent store. Another
// schedule consistent with the recorded synchronization may break it (pipeline's schedule
// witnesses decide which).
type CrossRead struct {
	Store                        uint64
	StoreThread, StoreSite       uint32
	StoreAddr, StoreSize         uint64
	Load                         uint64
	LoadSite, Thread             uint32
	Dependent                    uint64
	DependentSite                uint32
	DependentAddr, DependentSize uint64
	// StoreAt, LoadAt and DependentAt are the three sites' source positions (report.At).
	StoreAt, LoadAt, DependentAt report.Location
}

// CrossReads returns the cross reads an analysis pass found (at most maxCross, at most
// crossPerPair per pair of store sites, in trace order of their dependent stores) from the analyzer's result
// (analysis.Config.Keep); none when it did not run.
func CrossReads(result any) []CrossRead {
	if c, ok := result.(*interThread); ok && c != nil {
		return slices.Clone(c.cross)
	}
	return nil
}

// candidate is a dependent store found, reported once its source store is known to become
// durable (flush).
type candidate struct {
	tn              taint
	via             guardInst
	control         bool
	site, stack, op uint32
	event           uint64
}

// OnUnmap and OnEnd report the candidates whose source store is durable now, or was made
// durable (the model no longer holds it), and drop those whose source the model still holds
// unpersisted: a store never made durable is the unpersisted-store oracle's finding (a crash
// that loses it alone is a durability-violation), and until it is fixed nothing tells whether
// its thread would persist it before the derived store. Before an unmap, the candidates of other
// regions stay pending.
func (c *interThread) OnUnmap(p *analysis.Pass, ev *trace.Event, r pmdk.Region) {
	c.flush(p, func(tn taint) bool { return tn.addr >= r.Base && tn.addr < r.Base+r.Len })
}

func (c *interThread) OnEnd(p *analysis.Pass, ev *trace.Event) { c.flush(p, nil) }

func (c *interThread) flush(p *analysis.Pass, in func(taint) bool) {
	if len(c.pending) == 0 || p.State.Model == nil {
		return
	}
	kept := c.pending[:0]
	for _, cd := range c.pending {
		if in != nil && !in(cd.tn) {
			kept = append(kept, cd)
			continue
		}
		if !durable(p.State.Model, cd.tn.source()) {
			c.dropped++
			continue
		}
		c.report(p, cd)
	}
	c.pending = kept
}

func (c *interThread) report(p *analysis.Pass, cd candidate) {
	if c.early {
		return
	}
	hit, via, viaControl := &cd.tn, cd.via, cd.control
	c.note(p, hit.site, cd.site, cd.event)
	if p.Dup(cd.site, cd.stack, cd.event) {
		return
	}
	how := "its value depends on"
	if viaControl {
		how = "it is stored only because of"
	}
	msg := fmt.Sprintf("this store may persist while another thread's store at %s is not yet durable, and %s the load at %s, which read that store's value before it was durable: a crash can keep this store and lose the value it was derived from",
		siteLoc(p, hit.site), how, siteLoc(p, via.lid))
	rel := []analysis.RelatedSite{
		{Role: report.RoleOtherThreadStore, Site: hit.site, Stack: hit.stack},
		{Role: report.RoleReaderLoad, Site: hit.load, Stack: hit.loadStack},
	}
	if viaControl && via.branch != 0 {
		rel = append(rel, analysis.RelatedSite{Role: report.RoleBranch, Site: via.branch})
	}
	p.Report(analysis.Diagnostic{Site: cd.site, Stack: cd.stack, Event: cd.event, Op: cd.op, Message: msg, Related: rel})
}

// note adds an occurrence (the dependent store's event) to the pair of sites before, after.
func (c *interThread) note(p *analysis.Pass, before, after uint32, event uint64) {
	i := slices.IndexFunc(c.pairs, func(sp StorePair) bool { return sp.Before == before && sp.After == after })
	if i < 0 {
		c.pairs = append(c.pairs, StorePair{Before: before, After: after, BeforeAt: p.Locate(before), AfterAt: p.Locate(after)})
		i = len(c.pairs) - 1
	}
	if sp := &c.pairs[i]; len(sp.Events) < maxPairEvents {
		sp.Events = append(sp.Events, event)
	}
}

// maxPairEvents bounds the occurrences kept per pair of sites.
const maxPairEvents = 4096

// StorePair is a pair of store sites (trace site ids) an inter-thread-inconsistency finding is
// about: the other thread's store at Before must persist before the dependent store at After.
// BeforeAt and AfterAt are their source positions (report.At); Events the trace event indexes
// of the dependent stores found, ascending (at most maxPairEvents).
type StorePair struct {
	Before, After     uint32
	BeforeAt, AfterAt report.Location
	Events            []uint64
}

// InterThreadPairs returns the pairs of store sites the inter-thread-inconsistency findings of
// an analysis pass are about (the other thread's store, then the dependent store), in the order
// first reported, from the analyzer's result (analysis.Config.Keep); none when it did not run.
// Crash exploration builds the states that persist After and not Before to confirm them.
func InterThreadPairs(result any) []StorePair {
	if c, ok := result.(*interThread); ok && c != nil {
		return slices.Clone(c.pairs)
	}
	return nil
}

// source is the tainting store as the checks name a store instance (durable, sameLines).
func (tn taint) source() storeRec {
	return storeRec{ev: uint64(tn.store), addr: tn.addr, size: tn.size}
}
