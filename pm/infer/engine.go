package infer

import (
	"slices"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// Bounds of the dynamic analysis (documented in docs/inference.md, "Limits").
const (
	// maxInherited bounds the guard instances an activation inherits from the call sites of
	// its callers (nearest callers first).
	maxInherited = 64
	// maxGuardians bounds the distinct guardian sites RA1 pairs within one workload operation.
	maxGuardians = 128
)

// inst is one dynamic instance of a load site in one activation: its event and the writer of
// the bytes it read.
type inst struct {
	serial uint64
	depth  uint32
	ev     uint64
	w      writer
}

// slot holds the latest instance of one load site per live activation of its function. Only
// one activation per call depth is live at a time, so one entry per depth is enough; stale
// entries (their activation ended) are overwritten. Recursion is what needs more than one.
type slot struct {
	a    inst
	more []inst
}

// guardInst is a guard evaluated in some activation: the load instance that decided a branch.
type guardInst struct {
	l      int32  // compact index of the load site
	lid    uint32 // its site id
	branch uint32 // the branch site
	ev     uint64 // the load's event
	w      writer // what it read
}

// act is one live activation of a thread.
type act struct {
	serial uint64
	call   uint32 // call site that created it (0: unknown, or depth 0)
	inh    []guardInst
	inhOK  bool
	// rets holds, per call site of this activation (compact index), the guard instances that
	// decided the value the latest call from it returned (engine.captureReturn).
	rets map[int32][]guardInst
}

type thread struct {
	frames []uint64 // the Frames slice the stack was last synchronised with
	stack  []act    // stack[d] is the live activation at depth d; stack[0] the outermost
	slots  []slot   // by compact site index
}

func (t *thread) live(depth uint32, serial uint64) bool {
	return int(depth) < len(t.stack) && t.stack[depth].serial == serial
}

func (t *thread) lookup(i int32, depth uint32, serial uint64) *inst {
	if int(i) >= len(t.slots) {
		return nil
	}
	s := &t.slots[i]
	if s.a.ev != 0 && s.a.depth == depth && s.a.serial == serial {
		return &s.a
	}
	for j := range s.more {
		if m := &s.more[j]; m.depth == depth && m.serial == serial {
			return m
		}
	}
	return nil
}

func (t *thread) record(i int32, x inst) {
	if int(i) >= len(t.slots) {
		t.slots = slices.Grow(t.slots, int(i)+1-len(t.slots))[:int(i)+1]
	}
	s := &t.slots[i]
	if s.a.ev == 0 || s.a.depth == x.depth {
		s.a = x
		return
	}
	for j := range s.more {
		if s.more[j].depth == x.depth {
			s.more[j] = x
			return
		}
	}
	if !t.live(s.a.depth, s.a.serial) {
		s.a = x
		return
	}
	for j := range s.more {
		if !t.live(s.more[j].depth, s.more[j].serial) {
			s.more[j] = x
			return
		}
	}
	s.more = append(s.more, x)
}

// acc accumulates one property.
type acc struct {
	key   uint64
	rule  Rule
	a, b  int32 // ordering: before, after; atomicity (RA1): the two sites (a == b: one site)
	count int
	ev    []Evidence
}

type guardian struct {
	site int32
	ev   uint64 // writer event first seen guarding
	load uint32 // the guard load site that read it
	lev  uint64 // that load's event
	self bool   // an RA1 property for two instances of the site was already counted
}

type engine struct {
	replay.Nop
	r       *trace.Reader
	m       *replay.Machine[px86.NoPayload]
	st      *static
	sh      *shadow
	threads map[uint32]*thread
	lastTid uint32
	lastT   *thread
	chains  map[uint32][]uint32 // CONTEXT node -> call sites, outermost first

	want   [numRules]bool // by rule index (AllRules)
	maxEv  int
	mpb    bool // load pairs are needed (MPB, MPA, RO3 or RA1)
	accs   map[uint64]*acc
	cache  [256]*acc // direct-mapped cache of accs
	dura   []int     // DURA instances by compact site index
	guards []guardInst

	// RA1: the guardians seen in the running operation; gpos[site]-1 is a guardian's index in
	// gians when ggen[site] is the operation's generation.
	gians []guardian
	gpos  []int32
	ggen  []uint32
	gen   uint32

	events, loads, stores uint64
}

func newEngine(r *trace.Reader, rules []Rule, o Options) *engine {
	e := &engine{r: r, st: newStatic(r), sh: newShadow(), threads: map[uint32]*thread{},
		chains: map[uint32][]uint32{}, accs: map[uint64]*acc{}, gen: 1}
	for _, rl := range rules {
		e.want[ruleRank(rl)] = true
	}
	e.mpb = e.want[iMPB] || e.want[iMPA] || e.want[iRO3] || e.want[iRA1]
	e.maxEv = o.MaxEvidence
	if e.maxEv == 0 {
		e.maxEv = DefaultMaxEvidence
	} else if e.maxEv < 0 {
		e.maxEv = 0
	}
	return e
}

func (e *engine) thread(tid uint32) *thread {
	if e.lastT != nil && e.lastTid == tid {
		return e.lastT
	}
	t := e.threads[tid]
	if t == nil {
		t = &thread{stack: []act{{}}}
		e.threads[tid] = t
	}
	e.lastT, e.lastTid = t, tid
	return t
}

func (e *engine) chain(ctx uint32) []uint32 {
	c, ok := e.chains[ctx]
	if !ok {
		c = e.r.StackOf(ctx)
		e.chains[ctx] = c
	}
	return c
}

// syncStack makes t's stack match the event's activations: activations no longer named end,
// new ones start; the call site of a new activation at depth d is the d-th call of the event's
// CONTEXT chain, when that chain is exactly as deep as the frames (else unknown: it then
// inherits nothing).
func (e *engine) syncStack(t *thread, ev *trace.Event) {
	f := ev.Frames
	if len(f) == len(t.frames) && (len(f) == 0 || &f[0] == &t.frames[0]) {
		return
	}
	t.frames = f
	k := 1
	for k <= len(f) && k < len(t.stack) && t.stack[k].serial == f[k-1] {
		k++
	}
	if k == len(f)+1 && len(t.stack) == k {
		return
	}
	if k < len(t.stack) {
		// The activations that ended hand what decided their returned values to their callers,
		// innermost first (a caller's own return may depend on its callee's).
		for d := len(t.stack) - 1; d >= k; d-- {
			e.captureReturn(t, d)
		}
		t.stack = t.stack[:k]
	}
	if k > len(f) {
		return
	}
	ch := e.chain(ev.Context)
	for d := k; d <= len(f); d++ {
		var call uint32
		if len(ch) == len(f) {
			call = ch[d-1]
		}
		if d < cap(t.stack) {
			t.stack = t.stack[:d+1]
			a := &t.stack[d]
			a.serial, a.call, a.inh, a.inhOK = f[d-1], call, a.inh[:0], false
			clear(a.rets)
		} else {
			t.stack = append(t.stack, act{serial: f[d-1], call: call})
		}
	}
}

// captureReturn records, in the caller of the activation at depth d (which has ended), the guard
// instances that decided the value it returned: for every return site of its function, the
// latest instances in the activation of the loads that guard the return or that the returned
// value depends on, and what its own calls returned (returnRefs). A branch of the caller on the
// call's result is then guarded by them (guardsFor): `if ((h = find(k)) >= 0) use(T[h].val)`
// makes val's store must-persist-before the stores find's loads read.
func (e *engine) captureReturn(t *thread, d int) {
	a := &t.stack[d]
	if d == 0 || a.call == 0 {
		return
	}
	ci := e.st.index(a.call)
	if ci == 0 {
		return
	}
	var out []guardInst
	add := func(g guardInst) {
		if len(out) >= maxGuards {
			return
		}
		for _, h := range out {
			if h.l == g.l && h.ev == g.ev {
				return
			}
		}
		out = append(out, g)
	}
	for _, r := range e.st.returnsOf(ci) {
		for _, g := range e.st.returnRefs(r) {
			if g.call {
				for _, in := range a.rets[g.l] {
					add(in)
				}
			} else if in := t.lookup(g.l, uint32(d), a.serial); in != nil && in.w.site() != 0 {
				add(guardInst{l: g.l, lid: g.lid, branch: g.branch, ev: in.ev, w: in.w})
			}
		}
	}
	p := &t.stack[d-1]
	if len(out) == 0 {
		delete(p.rets, ci)
		return
	}
	if p.rets == nil {
		p.rets = map[int32][]guardInst{}
	}
	p.rets[ci] = out
}

// callGuards appends to gs the guard instances a call guard g stands for in activation a: those
// captured when the latest call from g's site returned, decided on by g's branch.
func callGuards(gs []guardInst, a *act, g guardRef) []guardInst {
	for _, in := range a.rets[g.l] {
		in.branch = g.branch
		gs = append(gs, in)
	}
	return gs
}

// inherited returns the guard instances activation d inherits: those of its call site's
// control closure, evaluated in the caller's activation (the caller's latest instances, which
// precede the call since the caller has not run since), then those the caller inherits.
func (e *engine) inherited(t *thread, d int) []guardInst {
	if d <= 0 {
		return nil
	}
	a := &t.stack[d]
	if a.inhOK {
		return a.inh
	}
	parent := e.inherited(t, d-1)
	a = &t.stack[d] // (no reallocation happens above, but keep it obvious)
	inh := a.inh[:0]
	if a.call != 0 {
		if ci := e.st.index(a.call); ci != 0 {
			ps := t.stack[d-1].serial
			for _, g := range e.st.guardsOf(ci) {
				if g.call {
					inh = callGuards(inh, &t.stack[d-1], g)
					continue
				}
				if in := t.lookup(g.l, uint32(d-1), ps); in != nil && in.w.site() != 0 {
					inh = append(inh, guardInst{l: g.l, lid: g.lid, branch: g.branch, ev: in.ev, w: in.w})
				}
			}
		}
	}
	for _, g := range parent {
		if len(inh) >= maxInherited {
			break
		}
		dup := false
		for _, h := range inh {
			if h.l == g.l {
				dup = true
				break
			}
		}
		if !dup {
			inh = append(inh, g)
		}
	}
	a.inh, a.inhOK = inh, true
	return inh
}

// guardsFor collects into e.guards the guard instances of an event at compact site i in the
// activation at the top of t's stack: its own function's guards, then the inherited ones. Only
// guards that read data a store of the trace wrote are kept.
func (e *engine) guardsFor(t *thread, i int32) []guardInst {
	d := len(t.stack) - 1
	serial := t.stack[d].serial
	gs := e.guards[:0]
	for _, g := range e.st.guardsOf(i) {
		if g.call {
			gs = callGuards(gs, &t.stack[d], g)
			continue
		}
		if in := t.lookup(g.l, uint32(d), serial); in != nil && in.w.site() != 0 {
			gs = append(gs, guardInst{l: g.l, lid: g.lid, branch: g.branch, ev: in.ev, w: in.w})
		}
	}
	gs = append(gs, e.inherited(t, d)...)
	e.guards = gs
	return gs
}

// dependences calls fn with every load instance an event at compact site i of thread t, in t's
// top activation (syncStack first), depends on: with control, the guards of guardsFor (the
// loads its transitive control dependences decided on; WITCHER's RO2), branch set; with data,
// the latest instances in the activation of the loads its value or address depends on at
// register level (producersOf; RO1), branch 0. Only loads that read bytes a store of the trace
// wrote (guardInst.w has a site) are passed; control says which of the two fn got.
func (e *engine) dependences(t *thread, i int32, data, control bool, fn func(g guardInst, control bool)) {
	if control {
		for _, g := range e.guardsFor(t, i) {
			fn(g, true)
		}
	}
	if data {
		d := uint32(len(t.stack) - 1)
		serial := t.stack[d].serial
		for _, g := range e.st.producersOf(i) {
			if in := t.lookup(g.l, d, serial); in != nil && in.w.site() != 0 {
				fn(guardInst{l: g.l, lid: g.lid, ev: in.ev, w: in.w}, false)
			}
		}
	}
}

// Rule indexes (positions in AllRules).
const (
	iRO1 = iota
	iRO2
	iRO3
	iRA1
	iDURA
	iMPB
	iMPA
	numRules
)

func key(ri int, a, b int32) uint64 {
	return uint64(ri)<<48 | uint64(a)<<24 | uint64(b)
}

func (e *engine) add(ri int, a, b int32, ev Evidence) {
	k := key(ri, a, b)
	h := (k ^ k>>24 ^ k>>48) & uint64(len(e.cache)-1)
	x := e.cache[h]
	if x == nil || x.key != k {
		x = e.accs[k]
		if x == nil {
			x = &acc{key: k, rule: AllRules[ri], a: a, b: b}
			e.accs[k] = x
		}
		e.cache[h] = x
	}
	x.count++
	if len(x.ev) < e.maxEv {
		for _, old := range x.ev {
			if old.Guard == ev.Guard && old.Dependent == ev.Dependent && old.Branch == ev.Branch {
				return
			}
		}
		x.ev = append(x.ev, ev)
	}
}

// run replays the trace (package replay: regions, operations) and feeds the engine.
func (e *engine) run() error {
	m, err := replay.New[px86.NoPayload](e.r, replay.Options[px86.NoPayload]{})
	if err != nil {
		return err
	}
	e.m = m
	err = m.Run(e)
	e.events = m.Events
	return err
}

// The replay handler.

func (e *engine) Static(*trace.Event) { e.st.sync() }

func (e *engine) Mapped(_ *trace.Event, r pmdk.Region) { e.sh.drop(r.Base, r.Len) }

func (e *engine) Unmapping(_ *trace.Event, r pmdk.Region) { e.sh.drop(r.Base, r.Len) }

func (e *engine) OpBegan(*trace.Event, replay.Op) { e.newOperation() }

func (e *engine) OpEnded(*trace.Event, replay.Op) { e.newOperation() }

// newOperation starts RA1's pairing anew: guardians pair within one operation.
func (e *engine) newOperation() {
	e.gians = e.gians[:0]
	e.gen++
}

func (e *engine) Load(ev *trace.Event) { e.load(ev) }

func (e *engine) Wrote(w *replay.Write) {
	switch w.Kind {
	case replay.Store, replay.NTStore:
		e.store(w.Event)
	case replay.InitialContent:
		e.sh.write(w.Addr, w.Size, 0)
	default:
		e.sh.write(w.Addr, w.Size, mkWriter(w.Event.Index, 0))
	}
}

func (e *engine) load(ev *trace.Event) {
	i := e.st.index(ev.Site)
	if i == 0 {
		return
	}
	t := e.thread(ev.Thread)
	e.syncStack(t, ev)
	d := uint32(len(t.stack) - 1)
	serial := t.stack[d].serial
	if !e.m.Regions.Contains(ev.Addr) {
		// Not PM: the site's latest instance read nothing a store of the trace wrote.
		if e.st.isLoad(i) {
			t.record(i, inst{serial: serial, depth: d, ev: ev.Index})
		}
		return
	}
	e.loads++
	w := e.sh.read(ev.Addr, ev.Size)
	if e.mpb && w.site() != 0 {
		for _, g := range e.guardsFor(t, i) {
			if g.w.event() == w.event() {
				continue // both loads read the same store
			}
			evd := Evidence{Guard: g.lid, Dependent: ev.Site, Branch: g.branch, GuardEvent: g.ev, DependentEvent: ev.Index}
			if e.want[iMPB] || e.want[iMPA] {
				e.add(iMPB, w.site(), g.w.site(), evd)
			}
			if e.want[iRO3] {
				e.add(iRO3, w.site(), g.w.site(), evd)
			}
			if e.want[iRA1] {
				e.guardian(g)
			}
		}
	}
	if e.st.isLoad(i) {
		t.record(i, inst{serial: serial, depth: d, ev: ev.Index, w: w})
	}
}

// guardian notes that guard g read a guardian (a store a guarded read depends on) in the
// running operation, and counts the RA1 pairs it forms with the guardians seen before.
func (e *engine) guardian(g guardInst) {
	s := g.w.site()
	if int(s) >= len(e.gpos) {
		n := int(s) + 1 - len(e.gpos)
		e.gpos = slices.Grow(e.gpos, n)[:int(s)+1]
		e.ggen = slices.Grow(e.ggen, n)[:int(s)+1]
	}
	if e.ggen[s] == e.gen {
		gn := &e.gians[e.gpos[s]]
		if gn.ev != g.w.event() && !gn.self {
			gn.self = true
			e.add(iRA1, s, s, Evidence{Guard: gn.load, Dependent: g.lid, GuardEvent: gn.lev, DependentEvent: g.ev})
		}
		return
	}
	if len(e.gians) >= maxGuardians {
		return
	}
	for _, o := range e.gians {
		a, b := o.site, s
		ev := Evidence{Guard: o.load, Dependent: g.lid, GuardEvent: o.lev, DependentEvent: g.ev}
		if a > b {
			a, b = b, a
		}
		e.add(iRA1, a, b, ev)
	}
	e.ggen[s], e.gpos[s] = e.gen, int32(len(e.gians))
	e.gians = append(e.gians, guardian{site: s, ev: g.w.event(), load: g.lid, lev: g.ev})
}

// store handles a STORE or NT_STORE inside a mapped region.
func (e *engine) store(ev *trace.Event) {
	e.stores++
	i := e.st.index(ev.Site)
	if i == 0 {
		e.sh.write(ev.Addr, ev.Size, mkWriter(ev.Index, 0))
		return
	}
	if e.want[iDURA] {
		if int(i) >= len(e.dura) {
			e.dura = slices.Grow(e.dura, int(i)+1-len(e.dura))[:int(i)+1]
		}
		e.dura[i]++
	}
	if e.want[iRO1] || e.want[iRO2] {
		t := e.thread(ev.Thread)
		e.syncStack(t, ev)
		e.dependences(t, i, e.want[iRO1], e.want[iRO2], func(g guardInst, control bool) {
			ri := iRO1 // data or address (branch 0)
			if control {
				ri = iRO2
			}
			e.add(ri, g.w.site(), i, Evidence{Guard: g.lid, Dependent: ev.Site, Branch: g.branch, GuardEvent: g.ev, DependentEvent: ev.Index})
		})
	}
	e.sh.write(ev.Addr, ev.Size, mkWriter(ev.Index, i))
}

// result turns the accumulated instances into sorted properties.
func (e *engine) result() *Result {
	res := &Result{Counts: map[Rule]int{}, Sites: map[uint32]trace.Site{},
		Events: e.events, Loads: e.loads, Stores: e.stores}
	for ri, ok := range e.want {
		if ok {
			res.Counts[AllRules[ri]] = 0
		}
	}
	id := func(i int32) uint32 { return e.st.ids[i] }
	var mpbs []*acc
	keys := make([]uint64, 0, len(e.accs))
	for k := range e.accs {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic evidence merging for MPA
	for _, k := range keys {
		x := e.accs[k]
		if x.rule == MPB {
			mpbs = append(mpbs, x)
			if !e.want[iMPB] {
				continue
			}
		}
		p := Property{Kind: kindOf(x.rule), Rule: x.rule, Evidence: x.ev, Count: x.count}
		if p.Kind == Ordering {
			p.Before, p.After = id(x.a), id(x.b)
		} else if x.a == x.b {
			p.Sites = []uint32{id(x.a)}
		} else {
			p.Sites = []uint32{id(x.a), id(x.b)}
			slices.Sort(p.Sites)
		}
		res.Properties = append(res.Properties, p)
	}
	for i, n := range e.dura {
		if n > 0 {
			res.Properties = append(res.Properties, Property{Kind: Durability, Rule: DURA, Sites: []uint32{id(int32(i))}, Count: n})
		}
	}
	if e.want[iMPA] {
		res.Properties = append(res.Properties, e.mpa(mpbs)...)
	}
	for _, p := range res.Properties {
		res.Counts[p.Rule]++
		for _, s := range append([]uint32{p.Before, p.After}, p.Sites...) {
			e.addSite(res, s)
		}
		for _, ev := range p.Evidence {
			e.addSite(res, ev.Guard)
			e.addSite(res, ev.Dependent)
			e.addSite(res, ev.Branch)
		}
	}
	sortProperties(res.Properties, res.Sites)
	return res
}

func (e *engine) addSite(res *Result, id uint32) {
	if id == 0 {
		return
	}
	if _, ok := res.Sites[id]; ok {
		return
	}
	if s, ok := e.r.Site(id); ok {
		res.Sites[id] = s
	}
}

// mpa computes the MPA properties: the strongly connected components of at least two sites of
// the graph whose edges are the MPB properties (Before -> After), Algorithm 6 of the
// dissertation (§5.5.2.3). Count sums the instances of the MPB edges inside a component;
// Evidence takes theirs.
func (e *engine) mpa(mpbs []*acc) []Property {
	g := simple.NewDirectedGraph()
	for _, x := range mpbs {
		if x.a == x.b {
			continue
		}
		for _, n := range [2]int64{int64(x.a), int64(x.b)} {
			if g.Node(n) == nil {
				g.AddNode(simple.Node(n))
			}
		}
		g.SetEdge(g.NewEdge(simple.Node(x.a), simple.Node(x.b)))
	}
	var out []Property
	for _, comp := range topo.TarjanSCC(g) {
		if len(comp) < 2 {
			continue
		}
		member := map[int32]bool{}
		p := Property{Kind: Atomicity, Rule: MPA}
		for _, n := range comp {
			member[int32(n.ID())] = true
			p.Sites = append(p.Sites, e.st.ids[n.ID()])
		}
		slices.Sort(p.Sites)
		for _, x := range mpbs {
			if x.a != x.b && member[x.a] && member[x.b] {
				p.Count += x.count
				for _, ev := range x.ev {
					if len(p.Evidence) < e.maxEv {
						p.Evidence = append(p.Evidence, ev)
					}
				}
			}
		}
		out = append(out, p)
	}
	return out
}
