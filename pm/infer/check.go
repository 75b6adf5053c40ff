package infer

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Properties is the analyzer that infers the persistence properties the checks need (DURA,
// MPB and MPA; the dissertation's rules) from the whole trace, before the checks' pass. Its
// result is the *Result of Infer. A pipeline that already inferred the properties (for the
// invariants strategy, with every rule) gives its result instead (analysis.Config.Results).
var Properties = &analysis.Analyzer{
	Name:       "infer-properties",
	Doc:        "infers must-persist-before and must-persist-atomically properties from how the program reads its own data (the whole trace, before the checks)",
	ResultType: reflect.TypeOf((*Result)(nil)),
	Prepass: func(open func() (*trace.Reader, error)) (any, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return Infer(r, Options{Rules: MPBSet})
	},
}

// stores is the fact provider of the checks: per thread, the latest instance of each site an
// MPB or MPA property names, with its transaction.
var stores = &analysis.Analyzer{
	Name:       "infer-stores",
	Doc:        "tracks the latest store instance of every site named by an inferred MPB or MPA property, and its transaction",
	Requires:   []*analysis.Analyzer{Properties},
	ResultType: reflect.TypeOf((*tracker)(nil)),
	New: func(p *analysis.Pass) (any, error) {
		return newTracker(analysis.ResultOf[*Result](p, Properties)), nil
	},
}

// MPBViolation and MPAViolation check a trace against the MPB and MPA properties inferred from it
// (the dissertation's Algorithms 9 and 10, Huang, Constraint-Based Analysis for PM Programs, USC
// 2023, §5.5.3), in the oracles' streaming pass: findings mpb-violation and mpa-violation, of
// class correctness. WITCHER's rules (RO1-RO3, RA1) are never checked: they are hypotheses to
// test on crash images (WITCHER, SOSP'21, §4.4), too loose to report without re-execution (the
// dissertation's §5.6.4 counts their bogus bugs). DURA is not checked here either: the
// unpersisted-store oracle reports it.
//
// Persistent interval of a store instance (Algorithm 7): it may start persisting when it
// executes, except that a store into memory its thread's open transaction protects
// (pmdk.Tx.Protects) takes effect only at the outermost commit (a crash before rolls it back);
// it is durable once the px86 model holds it persisted (its line was flushed and fenced,
// clflushed, persisted by the library, or by PMDK at commit), never if that does not happen.
//
// Pairing (documented in docs/inference.md): an instance of the After site of an MPB property
// is checked against the latest earlier instance of its Before site by the same thread within
// the same workload operation (anywhere when the trace has no operations); an instance of an
// MPA member against the latest earlier instance of every other member, alike. Stores into
// memory reserved with pmemobj_reserve and not yet published are left out (free after a
// crash).
//
//   - mpb-violation: the After instance may persist (now, or at its transaction's commit) while
//     the Before instance is not yet durable. Not a violation: the Before instance lies on the
//     After instance's cache lines (a line persists in program order), or both persist at one
//     commit, or, under the eADR profile (px86.EADR), the Before instance is a cached store
//     (cached stores persist in store order).
//   - mpa-violation: the two instances' persistent intervals overlap: the later one may start
//     persisting (when it executes, or at its transaction's commit) while the earlier one is
//     not yet durable, so a crash can persist either without the other. Not a violation: both
//     take effect at the same commit (only a transaction makes separate stores persist all or
//     nothing; the dissertation's §5.2.5.2), or the earlier one was made durable before the
//     later one may persist (two atomic steps in a row, each leaving PM in a state the program
//     wrote on purpose: two transactions of one operation, or a persist between the stores).
//
// Properties between two instances of one site (Before == After) are not checked: the pairing
// cannot tell which instances the property relates.
var (
	MPBViolation = &analysis.Analyzer{
		Name:       string(report.MPBViolation),
		Doc:        "a store may persist while an earlier store it must persist after (an inferred must-persist-before property) is not yet durable; unconfirmed until a crash image breaking the property makes the program fail",
		Class:      report.Unconfirmed,
		Requires:   []*analysis.Analyzer{Properties, stores},
		ResultType: reflect.TypeOf((*mpbCheck)(nil)),
		New: func(p *analysis.Pass) (any, error) {
			res := analysis.ResultOf[*Result](p, Properties)
			c := &mpbCheck{tr: analysis.ResultOf[*tracker](p, stores), res: res, byAfter: map[uint32][]int{}, pending: map[uint32][]pending{}}
			for i, pr := range res.Properties {
				if pr.Rule == MPB && pr.Before != pr.After {
					c.byAfter[pr.After] = append(c.byAfter[pr.After], i)
				}
			}
			return c, nil
		},
	}
	MPAViolation = &analysis.Analyzer{
		Name:       string(report.MPAViolation),
		Doc:        "stores that must persist atomically (an inferred must-persist-atomically property) are in flight together outside one transaction: a crash can persist one without the other; unconfirmed until a crash image breaking the property makes the program fail",
		Class:      report.Unconfirmed,
		Requires:   []*analysis.Analyzer{Properties, stores},
		ResultType: reflect.TypeOf((*mpaCheck)(nil)),
		New: func(p *analysis.Pass) (any, error) {
			res := analysis.ResultOf[*Result](p, Properties)
			c := &mpaCheck{tr: analysis.ResultOf[*tracker](p, stores), res: res, byMember: map[uint32][]int{}, pending: map[uint32][]pending{}}
			for i, pr := range res.Properties {
				if pr.Rule == MPA {
					for _, s := range pr.Sites {
						c.byMember[s] = append(c.byMember[s], i)
					}
				}
			}
			return c, nil
		},
	}
)

// Checks returns the analyzers of this package that report findings, in catalogue order: the
// checks against inferred properties, then the check of concurrent programs that uses the same
// dependence engine (InterThread).
func Checks() []*analysis.Analyzer {
	return []*analysis.Analyzer{MPBViolation, MPAViolation, InterThread}
}

// storeRec is one store instance as the checks need it.
type storeRec struct {
	ev         uint64
	addr, size uint64
	op         uint32 // operation index plus one, 0 none
	tx         uint64 // its thread's transaction open when it ran (pmdk.Tx.ID), 0 none
	prot       bool   // that transaction protects it (it takes effect at the commit)
	ctx        uint32
}

// sameCommit reports whether a and b both take effect at the commit of one transaction.
func sameCommit(a, b storeRec) bool { return a.prot && b.prot && a.tx == b.tx }

type trThread struct {
	latest map[uint32]storeRec // by site id
}

// tracker is the fact provider of the checks: per thread, the latest instance of each tracked
// site, with whether its transaction protects it.
type tracker struct {
	sites   map[uint32]bool
	threads map[uint32]*trThread
	cur     storeRec // the store being processed (set before the checks' hooks run)
	curOK   bool
}

func newTracker(res *Result) *tracker {
	t := &tracker{sites: map[uint32]bool{}, threads: map[uint32]*trThread{}}
	for _, p := range res.Properties {
		switch p.Rule {
		case MPB:
			if p.Before != p.After {
				t.sites[p.Before], t.sites[p.After] = true, true
			}
		case MPA:
			for _, s := range p.Sites {
				t.sites[s] = true
			}
		}
	}
	return t
}

func (t *tracker) thread(tid uint32) *trThread {
	th := t.threads[tid]
	if th == nil {
		th = &trThread{latest: map[uint32]storeRec{}}
		t.threads[tid] = th
	}
	return th
}

func (t *tracker) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	t.curOK = false
	if s.Kind != replay.Store && s.Kind != replay.NTStore || !t.sites[ev.Site] {
		return
	}
	if p.State.Reserved.Contains(ev.Addr, ev.Size) {
		// Memory reserved with pmemobj_reserve and not yet published: free after a crash,
		// so no recovery reads what is stored there (docs/oracles.md).
		return
	}
	rec := storeRec{ev: ev.Index, addr: ev.Addr, size: ev.Size, op: s.Origin.Op, ctx: ev.Context, tx: s.Tx.ID()}
	rec.prot = rec.tx != 0 && s.Tx.Protects(ev.Addr, ev.Size)
	t.thread(ev.Thread).latest[ev.Site] = rec
	t.cur, t.curOK = rec, true
}

// latest returns the latest instance of site by thread tid in operation op.
func (t *tracker) latest(tid, site uint32, op uint32) (storeRec, bool) {
	th := t.threads[tid]
	if th == nil {
		return storeRec{}, false
	}
	r, ok := th.latest[site]
	if !ok || r.op != op {
		return storeRec{}, false
	}
	return r, true
}

// durable reports whether every part of store b is persisted in the model now.
func durable(m *px86.Model, b storeRec) bool {
	ls := m.LineSize()
	for a := b.addr &^ (ls - 1); a < b.addr+b.size; a += ls {
		if m.StateOf(b.ev, a) != px86.Persisted {
			return false
		}
	}
	return true
}

// storeOrdered reports whether store b persists before every later store of its thread
// whatever the cache does: under the eADR profile (px86.EADR) a cached store is durable in store
// order, so every part of b still unpersisted is Ordered (a non-temporal part is not).
func storeOrdered(m *px86.Model, b storeRec) bool {
	if m.Profile() != px86.EADR {
		return false
	}
	ordered := true
	m.ForEachOverlapping(b.addr, b.size, func(s px86.StoreState) bool {
		if s.ID == b.ev && s.Flags&px86.Ordered == 0 {
			ordered = false
		}
		return ordered
	})
	return ordered
}

// sameLines reports whether every cache line b touches is one a touches: a line persists in
// program order, so a (later) cannot persist there without b.
func sameLines(m *px86.Model, a, b storeRec) bool {
	if a.size == 0 || b.size == 0 {
		return false
	}
	return m.LineOf(b.addr) >= m.LineOf(a.addr) && m.LineOf(b.addr+b.size-1) <= m.LineOf(a.addr+a.size-1)
}

func siteLoc(p *analysis.Pass, id uint32) string {
	if l := p.Locate(id); l.Known() {
		return l.String()
	}
	return fmt.Sprintf("site %d", id)
}

// evidenceRelated names the first evidence example of a property as related locations.
func evidenceRelated(pr *Property, rel []analysis.RelatedSite) []analysis.RelatedSite {
	if len(pr.Evidence) == 0 {
		return rel
	}
	e := pr.Evidence[0]
	rel = append(rel, analysis.RelatedSite{Role: report.RoleGuardLoad, Site: e.Guard})
	if e.Branch != 0 {
		rel = append(rel, analysis.RelatedSite{Role: report.RoleBranch, Site: e.Branch})
	}
	return append(rel, analysis.RelatedSite{Role: report.RoleDependentLoad, Site: e.Dependent})
}

// settle handles transaction record ev (tx, its transaction) for the instances the record's
// thread keeps pending until the commit (pending, by thread): the outermost commit settles them,
// calling breached with each whose earlier store b is not durable; an abort or the end of the
// outermost transaction drops them; any other record leaves them pending.
func settle(p *analysis.Pass, ev *trace.Event, tx *pmdk.Tx, pending map[uint32][]pending, breached func(pending)) {
	list := pending[ev.Thread]
	if len(list) == 0 {
		return
	}
	switch tx.Last() {
	case pmdk.CommittedOutermost:
		for _, pd := range list {
			if !durable(p.State.Model, pd.b) {
				breached(pd)
			}
		}
	case pmdk.Aborted, pmdk.EndedOutermost:
	default:
		return
	}
	pending[ev.Thread] = list[:0]
}

type pending struct {
	prop        int
	a, b        storeRec
	site, other uint32
}

type mpbCheck struct {
	tr      *tracker
	res     *Result
	byAfter map[uint32][]int
	pending map[uint32][]pending // by thread: After instances waiting for their commit
}

func (c *mpbCheck) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if !c.tr.curOK {
		return
	}
	ev := s.Event
	props := c.byAfter[ev.Site]
	if len(props) == 0 {
		return
	}
	a := c.tr.cur
	m := p.State.Model
	for _, i := range props {
		pr := &c.res.Properties[i]
		b, ok := c.tr.latest(ev.Thread, pr.Before, a.op)
		if !ok || sameLines(m, a, b) {
			continue
		}
		if a.prot {
			if sameCommit(a, b) {
				continue
			}
			c.pending[ev.Thread] = append(c.pending[ev.Thread], pending{prop: i, a: a, b: b, site: ev.Site})
			continue
		}
		if !durable(m, b) && !storeOrdered(m, b) {
			c.report(p, pr, ev.Site, a, b, "")
		}
	}
}

func (c *mpbCheck) OnTx(p *analysis.Pass, ev *trace.Event, tx *pmdk.Tx) {
	settle(p, ev, tx, c.pending, func(pd pending) {
		if storeOrdered(p.State.Model, pd.b) {
			return // persists before the After store, which its thread stored later
		}
		c.report(p, &c.res.Properties[pd.prop], pd.site, pd.a, pd.b, " when its transaction commits")
	})
}

func (c *mpbCheck) report(p *analysis.Pass, pr *Property, site uint32, a, b storeRec, when string) {
	if p.DupProperty(site, a.ctx, a.ev, pr.ID) {
		return
	}
	msg := fmt.Sprintf("this store may persist%s while the earlier store at %s, which must persist first (inferred %s), is not yet durable",
		when, siteLoc(p, pr.Before), pr.Rule)
	if len(pr.Evidence) > 0 {
		e := pr.Evidence[0]
		msg += fmt.Sprintf(": a reader loads the data of this store at %s and, only when it decides so, loads the earlier store's data at %s",
			siteLoc(p, e.Guard), siteLoc(p, e.Dependent))
	}
	rel := []analysis.RelatedSite{{Role: report.RoleEarlierStore, Site: pr.Before, Stack: b.ctx}}
	p.Report(analysis.Diagnostic{Site: site, Stack: a.ctx, Event: a.ev, Op: a.op, Message: msg, Related: evidenceRelated(pr, rel), Properties: []int{pr.ID}})
}

type mpaCheck struct {
	tr       *tracker
	res      *Result
	byMember map[uint32][]int
	pending  map[uint32][]pending // by thread: instances waiting for their commit
}

func (c *mpaCheck) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if !c.tr.curOK {
		return
	}
	ev := s.Event
	a := c.tr.cur
	for _, i := range c.byMember[ev.Site] {
		pr := &c.res.Properties[i]
		for _, m := range pr.Sites {
			if m == ev.Site {
				continue
			}
			b, ok := c.tr.latest(ev.Thread, m, a.op)
			if !ok || sameCommit(a, b) {
				continue
			}
			if a.prot {
				c.pending[ev.Thread] = append(c.pending[ev.Thread], pending{prop: i, a: a, b: b, site: ev.Site, other: m})
				continue
			}
			if !durable(p.State.Model, b) && c.report(p, pr, ev.Site, m, a, b, "") {
				return
			}
		}
	}
}

func (c *mpaCheck) OnTx(p *analysis.Pass, ev *trace.Event, tx *pmdk.Tx) {
	settle(p, ev, tx, c.pending, func(pd pending) {
		c.report(p, &c.res.Properties[pd.prop], pd.site, pd.other, pd.a, pd.b, " at its transaction's commit")
	})
}

// report reports one violation of MPA property pr at the store a (site) against b (site other);
// it returns true when the occurrence was new.
func (c *mpaCheck) report(p *analysis.Pass, pr *Property, site, other uint32, a, b storeRec, when string) bool {
	if p.DupProperty(site, a.ctx, a.ev, pr.ID) {
		return false
	}
	why := "neither is in a transaction"
	switch {
	case a.prot && b.prot:
		why = "they are protected by different transactions"
	case a.prot || b.prot:
		why = "only one of them is protected by a transaction"
	case a.tx != 0 || b.tx != 0:
		why = "the transaction they run in protects neither"
	}
	msg := fmt.Sprintf("this store may persist%s while the earlier store at %s is not yet durable, but they must persist atomically (inferred MPA over %d stores, a cycle of must-persist-before properties) and %s: a crash can persist one without the other",
		when, siteLoc(p, other), len(pr.Sites), why)
	rel := []analysis.RelatedSite{{Role: report.RoleOtherStore, Site: other, Stack: b.ctx}}
	p.Report(analysis.Diagnostic{Site: site, Stack: a.ctx, Event: a.ev, Op: a.op, Message: msg, Related: evidenceRelated(pr, rel), Properties: []int{pr.ID}})
	return true
}
