package oracle

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// UnpersistedStore reports stores that are not guaranteed durable when their region is unmapped
// (pool closed) or when the program exits normally: AGAMOTTO's unflushed oracle
// (AGAMOTTO, OSDI'20, §4.2.1, Listing 5 check_unflushed), per store rather than per
// cache line. A dirty store misses a flush; a flush-pending one (flushed, or non-temporal) misses
// a fence. Bytes written by uninstrumented code (EXTERNAL_WRITE) are not reported: the runtime
// cannot see the flushes such code makes, so the trace proves nothing about them. A program
// that dies (END by signal, truncated trace) is not checked at its end (see analysis.Run).
// Under the eADR profile (px86.EADR) only non-temporal stores can be reported: a cached store is
// durable once globally visible.
var UnpersistedStore = &analysis.Analyzer{
	Name:       string(report.UnpersistedStore),
	Doc:        "a store to PM is not guaranteed durable when its pool is closed or the program exits (missing flush or fence)",
	Class:      report.Correctness,
	ResultType: reflect.TypeOf((*NeverDurable)(nil)),
	New:        func(*analysis.Pass) (any, error) { return &NeverDurable{}, nil },
}

// NeverDurable is UnpersistedStore's result: the stores it reported, each once (a store that
// spans cache lines with its lowest address and its whole size), in the order reported. Crash
// exploration explores later operations as if they had been made durable (crash.Options).
type NeverDurable struct {
	Stores []px86.StoreState
	spans  []px86.StoreState // entries of stores that touch several cache lines
	seen   map[px86.StoreID]bool
}

type unpersisted = NeverDurable

func (u *unpersisted) OnUnmap(p *analysis.Pass, ev *trace.Event, r pmdk.Region) {
	u.spans = u.spans[:0]
	p.State.Model.ForEachOverlapping(r.Base, r.Len, func(s px86.StoreState) bool {
		u.entry(p, s, "its pool is closed (region unmapped)")
		return true
	})
	u.reportSpans(p, "its pool is closed (region unmapped)")
}

func (u *unpersisted) OnEnd(p *analysis.Pass, ev *trace.Event) {
	u.spans = u.spans[:0]
	p.State.Model.ForEachUnpersisted(func(s px86.StoreState) bool {
		u.entry(p, s, "the program exits")
		return true
	})
	u.reportSpans(p, "the program exits")
}

// entry handles one unpersisted entry. The finding is per store: a store on one cache line has
// exactly one entry and is reported at once; the entries of a store that spans lines are kept
// for reportSpans, which groups them.
func (u *unpersisted) entry(p *analysis.Pass, s px86.StoreState, when string) {
	if s.Flags&px86.Ordered != 0 {
		// eADR: a cached store is durable once globally visible, which it becomes by itself
		// (the store buffer drains); only a non-temporal one needs the fence it misses.
		return
	}
	if s.Flags&px86.Rewritten != 0 {
		// Later unpersisted stores rewrote all its bytes: they are reported, and persisting
		// them fixes this one too.
		return
	}
	if s.Flags&px86.Spans != 0 {
		u.spans = append(u.spans, s)
		return
	}
	u.report(p, s, s.State, s.Size, when)
}

// reportSpans reports the stores in u.spans, one diagnostic per store: its entries on all
// lines grouped (dirty anywhere means the flush is missing), located at its lowest address.
func (u *unpersisted) reportSpans(p *analysis.Pass, when string) {
	slices.SortFunc(u.spans, func(a, b px86.StoreState) int {
		if a.ID != b.ID {
			if a.ID < b.ID {
				return -1
			}
			return 1
		}
		if a.Addr < b.Addr {
			return -1
		}
		if a.Addr > b.Addr {
			return 1
		}
		return 0
	})
	for i := 0; i < len(u.spans); {
		j := i
		first := u.spans[i]
		state := px86.Pending
		var size uint64
		for ; j < len(u.spans) && u.spans[j].ID == first.ID; j++ {
			size += u.spans[j].Size
			if u.spans[j].State == px86.Dirty {
				state = px86.Dirty
			}
		}
		i = j
		u.report(p, first, state, size, when)
	}
}

// report reports store first (its entry at its lowest address) of size bytes in all, dirty on
// some line (state Dirty) or only flush-pending.
func (u *unpersisted) report(p *analysis.Pass, first px86.StoreState, state px86.State, size uint64, when string) {
	if first.External() || p.State.Reserved.Contains(first.Addr, first.Size) || p.Dup(first.Origin.Site, first.Origin.Stack, first.ID) {
		return
	}
	what := "store"
	if first.NT() {
		what = "non-temporal store"
	}
	var msg string
	arm := p.State.Model.Profile() == px86.ARM
	if state == px86.Dirty && arm {
		msg = fmt.Sprintf("%s of %s to %s is not durable when %s: its cache line is never cleaned to the point of persistence (missing DC CVAP and DSB)",
			what, plural(size, "byte"), p.State.Where(first.Addr), when)
	} else if state == px86.Dirty {
		msg = fmt.Sprintf("%s of %s to %s is not durable when %s: its cache line is never flushed (missing flush and fence)",
			what, plural(size, "byte"), p.State.Where(first.Addr), when)
	} else if arm {
		msg = fmt.Sprintf("%s of %s to %s is not durable when %s: its line is cleaned (DC) but no DSB of the cleaning thread waits for the clean to complete (missing DSB; a DMB only orders it)",
			what, plural(size, "byte"), p.State.Where(first.Addr), when)
	} else if first.NT() {
		msg = fmt.Sprintf("%s of %s to %s is not durable when %s: it bypasses the cache, but no fence follows to make it durable (missing fence)",
			what, plural(size, "byte"), p.State.Where(first.Addr), when)
	} else {
		msg = fmt.Sprintf("%s of %s to %s is not durable when %s: it is flushed but no fence follows (missing fence)",
			what, plural(size, "byte"), p.State.Where(first.Addr), when)
	}
	if !u.seen[first.ID] {
		if u.seen == nil {
			u.seen = map[px86.StoreID]bool{}
		}
		u.seen[first.ID] = true
		s := first
		s.Size = size
		u.Stores = append(u.Stores, s)
	}
	d := analysis.Diagnostic{Site: first.Origin.Site, Stack: first.Origin.Stack, Event: first.ID, Op: first.Origin.Op, Message: msg}
	if fl, ok := p.State.Model.LastFlush(first.Addr); ok {
		d.Related = []analysis.RelatedSite{{Role: report.RoleFlush, Site: fl.Site, Stack: fl.Stack}}
	}
	p.Report(d)
}

// OverwrittenUnpersisted reports a store that rewrites bytes of an earlier store which is not
// yet persisted: the earlier value may never reach PM, and a crash can expose either value
// (Fernandes's thesis, Automatic Testing of PM Applications, 2022, §5.1.3: the values an address can show are all those written
// since it last persisted). Not reported (documented false-positive guards): stores that lie
// wholly in ranges added to the thread's open transaction or objects allocated in it (PMDK makes
// them durable at commit and rolls them back at abort), and library writes (EXTERNAL_WRITE),
// either as the new or as the earlier store. Under the eADR profile (px86.EADR) only a
// non-temporal earlier store counts: cached stores persist in store order.
var OverwrittenUnpersisted = &analysis.Analyzer{
	Name:       string(report.OverwrittenUnpersisted),
	Doc:        "a store rewrites PM bytes whose earlier store was not yet persisted",
	Class:      report.Correctness,
	ResultType: reflect.TypeOf((*Overwritten)(nil)),
	New:        func(*analysis.Pass) (any, error) { return &Overwritten{}, nil },
}

// Overwritten is OverwrittenUnpersisted's result: the earlier stores its findings name, each
// once, in the order reported. They were never made durable either (their bytes were rewritten
// first): crash exploration explores the operations after the one that issued them as if they
// had been made durable, like NeverDurable's stores (crash.Options.AssumeDurable).
type Overwritten struct {
	Stores []px86.StoreState
	seen   map[px86.StoreID]bool
}

type overwritten = Overwritten

func (o *overwritten) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if !s.Effect.Overwrote || s.Flags&px86.External != 0 {
		return
	}
	ev := s.Event
	if s.Tx.InWork() && s.Tx.Covers(ev.Addr, ev.Size) {
		return
	}
	if p.State.Reserved.Contains(ev.Addr, ev.Size) {
		return
	}
	prev := s.Effect.Prev
	if prev.Flags&px86.Ordered != 0 {
		// eADR: cached stores persist in store order, so the earlier value persists first.
		return
	}
	if prev.Flags&px86.External == 0 && !o.seen[prev.ID] {
		if o.seen == nil {
			o.seen = map[px86.StoreID]bool{}
		}
		o.seen[prev.ID] = true
		o.Stores = append(o.Stores, px86.StoreState{ID: prev.ID, Addr: prev.Addr, Size: prev.Size})
	}
	if p.Dup(ev.Site, ev.Context, ev.Index) {
		return
	}
	how := "never flushed"
	if prev.State == px86.Pending {
		how = "flushed but not fenced"
	}
	p.Report(analysis.Diagnostic{
		Site: ev.Site, Stack: ev.Context, Event: ev.Index, Op: s.Origin.Op,
		Message: fmt.Sprintf("store of %s to %s overwrites bytes of an earlier store (event %d) that is not yet persisted (%s)",
			plural(ev.Size, "byte"), p.State.Where(ev.Addr), prev.ID, how),
		Related: []analysis.RelatedSite{{Role: report.RoleUnpersistedStore, Site: prev.Origin.Site, Stack: prev.Origin.Stack}},
	})
}

// TxUnloggedStore reports an instrumented store made inside a PMDK transaction (work stage) to PM
// bytes that are neither in a range added to the transaction (at any nesting level) nor in an
// object allocated while it runs (nor exempt from the check by pmemcheck's
// VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE: pmdk.Tx.Ignored): PMDK cannot roll the store back if
// the transaction aborts or the program crashes before commit, and does not flush it at
// commit. This is the PMDK misuse
// the custom transaction checkers of AGAMOTTO target (AGAMOTTO, OSDI'20, §4.2.2) and
// the transactional persistent-interval rule of the dissertation
// (Huang's dissertation, USC 2023, ch. 5).
var TxUnloggedStore = &analysis.Analyzer{
	Name:       string(report.TxUnloggedStore),
	Doc:        "a store inside a PMDK transaction to PM not added to the transaction (TX_ADD) nor allocated in it",
	Class:      report.Correctness,
	ResultType: reflect.TypeOf(txUnlogged{}),
	New:        func(*analysis.Pass) (any, error) { return txUnlogged{}, nil },
}

type txUnlogged struct{}

func (txUnlogged) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if s.Flags&px86.External != 0 || !s.Tx.InWork() {
		return
	}
	ev := s.Event
	if s.Tx.Covers(ev.Addr, ev.Size) || s.Tx.Ignored(ev.Addr, ev.Size) || p.State.Reserved.Contains(ev.Addr, ev.Size) || p.Dup(ev.Site, ev.Context, ev.Index) {
		return
	}
	p.Report(analysis.Diagnostic{
		Site: ev.Site, Stack: ev.Context, Event: ev.Index, Op: s.Origin.Op,
		Message: fmt.Sprintf("store of %s to %s inside a transaction is not in a range added to it (TX_ADD) nor in an object allocated in it: an abort or a crash cannot roll it back",
			plural(ev.Size, "byte"), p.State.Where(ev.Addr)),
		Related: []analysis.RelatedSite{{Role: report.RoleTransaction, Site: s.Tx.BeginSite, Stack: s.Tx.BeginStack}},
	})
}
