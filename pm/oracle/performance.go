package oracle

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// RedundantFlush reports a flush of a cache line that holds no dirty store: nothing unpersisted
// at all, or only stores already flushed and waiting for a fence. AGAMOTTO's extra-flush oracle
// (AGAMOTTO, OSDI'20, §4.2.1, Listing 5 check_extra_flush). Flushes a library makes
// for its own metadata (FLUSH internal) are not reported. Under the eADR profile (px86.EADR)
// every flush of the program is unnecessary, and says so.
var RedundantFlush = &analysis.Analyzer{
	Name:       string(report.RedundantFlush),
	Doc:        "a flush of a cache line with no store its thread has not already written back (nothing to write back)",
	Class:      report.Performance,
	ResultType: reflect.TypeOf(redundantFlush{}),
	New:        func(*analysis.Pass) (any, error) { return redundantFlush{}, nil },
}

type redundantFlush struct{}

func (redundantFlush) OnFlush(p *analysis.Pass, ev *trace.Event, eff px86.FlushEffect) {
	eadr := p.State.Model.Profile() == px86.EADR
	if ev.Internal || eff.Dirty > 0 && !eadr || p.Dup(ev.Site, ev.Context, ev.Index) {
		return
	}
	d := analysis.Diagnostic{Site: ev.Site, Stack: ev.Context, Event: ev.Index, Op: p.State.OpOf(ev.Thread)}
	line := p.State.Where(p.State.Model.LineOf(ev.Addr))
	switch {
	case eadr:
		d.Message = fmt.Sprintf("%s of the cache line at %s is unnecessary under eADR: the caches are in the persistence domain, so a store is durable once globally visible without a flush (a program can skip its flushes where pmem_has_auto_flush says so)", ev.Flush, line)
	case eff.Pending > 0:
		d.Message = fmt.Sprintf("%s of the cache line at %s is redundant: its stores are already flushed and only wait for a fence", ev.Flush, line)
		if eff.PrevFlush {
			d.Related = []analysis.RelatedSite{{Role: report.RoleFlush, Site: eff.Prev.Site, Stack: eff.Prev.Stack}}
		}
	default:
		d.Message = fmt.Sprintf("%s of the cache line at %s is redundant: the line holds no unpersisted store", ev.Flush, line)
	}
	p.Report(d)
}

// RedundantFence reports an sfence or mfence (a DSB or DMB on Arm) that has nothing to order: no
// flush-pending store and no non-temporal store is waiting. AGAMOTTO's extra-fence oracle
// (AGAMOTTO, OSDI'20, §4.2.1, Listing 5 check_extra_fence). Not reported: fences a
// library makes for itself (internal), locked read-modify-write instructions (atomics order
// memory for threads, not for persistence), and fences while no PM region is mapped.
var RedundantFence = &analysis.Analyzer{
	Name:       string(report.RedundantFence),
	Doc:        "an sfence or mfence with no pending flush or non-temporal store of its own thread to order",
	Class:      report.Performance,
	ResultType: reflect.TypeOf(redundantFence{}),
	New:        func(*analysis.Pass) (any, error) { return redundantFence{}, nil },
}

type redundantFence struct{}

func (redundantFence) OnFence(p *analysis.Pass, ev *trace.Event, eff px86.FenceEffect) {
	if ev.Internal || ev.Fence == trace.FenceLocked || eff.Persisted > 0 || eff.Ordered > 0 || p.Dup(ev.Site, ev.Context, ev.Index) {
		return
	}
	p.Report(analysis.Diagnostic{
		Site: ev.Site, Stack: ev.Context, Event: ev.Index, Op: p.State.OpOf(ev.Thread),
		Message: fmt.Sprintf("%s is redundant: no flushed or non-temporal store is waiting to be made durable", ev.Fence),
	})
}

// RedundantTxAdd reports a TX_ADD whose whole range is already covered by ranges added to the
// same (outermost) transaction or by objects allocated in it: PMDK snapshots nothing new, the
// call only costs time. AGAMOTTO's custom PmemObjTxAddChecker (AGAMOTTO, OSDI'20,
// §4.2.2, redundant undo-log add). Coverage is by the union of the earlier ranges, whatever
// their flags, as PMDK's own range tree checks it.
var RedundantTxAdd = &analysis.Analyzer{
	Name:       string(report.RedundantTxAdd),
	Doc:        "a TX_ADD of a range already added to the same transaction or allocated in it",
	Class:      report.Performance,
	ResultType: reflect.TypeOf(redundantTxAdd{}),
	New:        func(*analysis.Pass) (any, error) { return redundantTxAdd{}, nil },
}

type redundantTxAdd struct{}

func (redundantTxAdd) OnTxAdd(p *analysis.Pass, ev *trace.Event, tx *pmdk.Tx, redundant bool) {
	if !redundant || p.Dup(ev.Site, ev.Context, ev.Index) {
		return
	}
	why := "already added to this transaction or allocated in it"
	var related []analysis.RelatedSite
	if c := tx.Coverer; c.Size > 0 {
		role, verb := report.RoleEarlierAdd, "added"
		if c.Alloc {
			role, verb = report.RoleAllocation, "allocated"
		}
		why = "already " + verb + " in this transaction"
		if c.Site != 0 {
			related = append(related, analysis.RelatedSite{Role: role, Site: c.Site, Stack: c.Stack})
		}
	}
	related = append(related, analysis.RelatedSite{Role: report.RoleTransaction, Site: tx.BeginSite, Stack: tx.BeginStack})
	p.Report(analysis.Diagnostic{
		Site: ev.Site, Stack: ev.Context, Event: ev.Index, Op: p.State.OpOf(ev.Thread),
		Message: fmt.Sprintf("TX_ADD of %s at %s is redundant: the range is %s",
			plural(ev.Size, "byte"), p.State.Where(ev.Addr), why),
		Related: related,
	})
}
