package framework

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/scry-pm/scry/pmdk"
	"github.com/scry-pm/scry/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Config configures Run.
type Config struct {
	// Suppressions removes matching findings from the report (nil: none).
	Suppressions *report.Suppressions
	// Trace names the trace in the report (report.Report.Trace).
	Trace string
}

// MaxOpText bounds the bytes of operation texts (OP_BEGIN) the driver keeps to name the
// operation of a finding; texts past the bound are reported as "".
const MaxOpText = 32 << 20

type aggKey struct {
	kind int
	site uint32
}

type agg struct {
	key   aggKey
	diag  Diagnostic
	count int
}

type hook[T any] struct {
	h T
	p *Pass
}

type driver struct {
	r        *trace.Reader
	st       *State
	kinds    []*Analyzer
	aggs     map[aggKey]*agg
	lastAgg  *agg
	warnings []string
	warned   map[string]bool

	stores  []hook[StoreHook]
	flushes []hook[FlushHook]
	fences  []hook[FenceHook]
	txAdds  []hook[TxAddHook]
	txs     []hook[TxHook]
	unmaps  []hook[UnmapHook]
	ends    []hook[EndHook]

	// Texts of the operations, by index: opText[opSpan[i].off:][:opSpan[i].n] is operation i's.
	opText []byte
	opSpan []span
}

type span struct{ off, n uint32 }

// order returns the analyzers and everything they require, requirements first, or an error on
// a dependency cycle.
func order(as []*Analyzer) ([]*Analyzer, error) {
	var out []*Analyzer
	state := map[*Analyzer]int{} // 1 visiting, 2 done
	var visit func(a *Analyzer, path []string) error
	visit = func(a *Analyzer, path []string) error {
		switch state[a] {
		case 1:
			return fmt.Errorf("analysis: dependency cycle: %s -> %s", strings.Join(path, " -> "), a.Name)
		case 2:
			return nil
		}
		state[a] = 1
		for _, req := range a.Requires {
			if err := visit(req, append(path, a.Name)); err != nil {
				return err
			}
		}
		state[a] = 2
		out = append(out, a)
		return nil
	}
	for _, a := range as {
		if err := visit(a, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Run analyses the trace read by r with analyzers (and the analyzers they require) in one pass
// and returns the report.
//
// End of the trace. After an END record of how "exit", the EndHooks run (this is where
// unpersisted stores are reported). A trace that ends otherwise means the program did not finish
// normally, so the stores it had not yet persisted are not bugs by themselves (a later crash
// analysis decides): after an END of how "signal" the report gets the warning "program killed
// by signal N: ...", and after a truncated trace (trace.ErrTruncated) the warning "trace
// truncated after N events: ..."; in both cases the EndHooks do not run, every finding made
// so far is kept, and Run returns a nil error. Any other read error (not a trace, corrupt
// data, I/O) returns the report so far together with the error.
func Run(r *trace.Reader, analyzers []*Analyzer, cfg Config) (*report.Report, error) {
	all, err := order(analyzers)
	if err != nil {
		return nil, err
	}
	m, err := px86.New(uint64(r.Header().LineSize))
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	d := &driver{
		r:      r,
		st:     &State{Model: m, Reader: r},
		aggs:   map[aggKey]*agg{},
		warned: map[string]bool{},
	}
	results := map[*Analyzer]any{}
	for _, a := range all {
		p := &Pass{Analyzer: a, State: d.st, ResultOf: results, d: d, kind: len(d.kinds)}
		d.kinds = append(d.kinds, a)
		if a.New == nil {
			continue
		}
		v, err := a.New(p)
		if err != nil {
			return nil, fmt.Errorf("analysis: %s: %w", a.Name, err)
		}
		results[a] = v
		if h, ok := v.(StoreHook); ok {
			d.stores = append(d.stores, hook[StoreHook]{h, p})
		}
		if h, ok := v.(FlushHook); ok {
			d.flushes = append(d.flushes, hook[FlushHook]{h, p})
		}
		if h, ok := v.(FenceHook); ok {
			d.fences = append(d.fences, hook[FenceHook]{h, p})
		}
		if h, ok := v.(TxAddHook); ok {
			d.txAdds = append(d.txAdds, hook[TxAddHook]{h, p})
		}
		if h, ok := v.(TxHook); ok {
			d.txs = append(d.txs, hook[TxHook]{h, p})
		}
		if h, ok := v.(UnmapHook); ok {
			d.unmaps = append(d.unmaps, hook[UnmapHook]{h, p})
		}
		if h, ok := v.(EndHook); ok {
			d.ends = append(d.ends, hook[EndHook]{h, p})
		}
	}

	events, err := d.loop()
	rep := d.finish(events, cfg)
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return rep, nil
	case errors.Is(err, trace.ErrTruncated) && !errors.Is(err, trace.ErrNotTrace):
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"trace truncated after %d events (the program did not finish; stores not yet persisted at the cut are not reported): %v", events, err))
		return rep, nil
	}
	return rep, err
}

func (d *driver) warnOnce(key, format string, args ...any) {
	if d.warned[key] {
		return
	}
	d.warned[key] = true
	d.warnings = append(d.warnings, fmt.Sprintf(format, args...))
}

// loop reads and dispatches every event; it returns the number of events read.
func (d *driver) loop() (uint64, error) {
	st := d.st
	m := st.Model
	var n uint64
	info := new(StoreInfo)
	for {
		ev, err := d.r.Next()
		if err != nil {
			return n, err
		}
		n = ev.Index + 1
		st.LastEvent = ev.Index
		switch ev.Kind {
		case trace.KindLoad:
			// Loads change no persistency state.
		case trace.KindStore, trace.KindNTStore:
			if !st.Regions.Contains(ev.Addr) {
				continue
			}
			var flags uint8
			if ev.Kind == trace.KindNTStore {
				flags = px86.NT
			}
			// Fill info in place (it is large, and escapes to the hooks).
			info.Event, info.Flags, info.Recorded = ev, flags, true
			info.Origin = px86.Origin{Site: ev.Site, Stack: ev.Context, Op: st.Op}
			info.Tx = st.Threads.Get(ev.Thread)
			m.StoreInto(&info.Effect, ev.Index, info.Origin, ev.Addr, ev.Size, flags)
			for _, h := range d.stores {
				h.h.OnStore(h.p, info)
			}
		case trace.KindFlush:
			if !st.Regions.Contains(ev.Addr) {
				continue
			}
			eff := m.Flush(uint8(ev.Flush), ev.Addr, px86.Origin{Site: ev.Site, Stack: ev.Context, Op: st.Op})
			for _, h := range d.flushes {
				h.h.OnFlush(h.p, ev, eff)
			}
		case trace.KindFence:
			eff := m.Fence()
			if st.Regions.Len() == 0 {
				continue
			}
			for _, h := range d.fences {
				h.h.OnFence(h.p, ev, eff)
			}
		case trace.KindExternalWrite:
			if !st.Regions.Contains(ev.Addr) {
				continue
			}
			info.Event, info.Flags, info.Recorded = ev, px86.External, false
			info.Origin = st.Origin(ev)
			info.Tx = st.Threads.Get(ev.Thread)
			info.Effect = px86.StoreEffect{}
			switch {
			case ev.Flags&trace.ExternalInitial != 0:
				// The region's content at map time: already durable.
			case ev.Flags&trace.ExternalPersisted != 0:
				m.PersistRange(ev.Addr, ev.Size)
			default:
				info.Recorded = true
				m.StoreInto(&info.Effect, ev.Index, info.Origin, ev.Addr, ev.Size, px86.External)
			}
			for _, h := range d.stores {
				h.h.OnStore(h.p, info)
			}
		case trace.KindRegionMap:
			if old, ok := st.Regions.Get(ev.Region); ok { // remapped without an unmap
				m.RemoveRange(old.Base, old.Len)
			}
			m.DropRange(ev.Addr, ev.Size) // stale state of an earlier mapping
			m.AddRange(ev.Addr, ev.Size)  // index the region's lines densely
			st.Regions.Map(pmdk.Region{ID: ev.Region, Base: ev.Addr, Len: ev.Size, Path: ev.Path, FileOffset: ev.FileOffset})
		case trace.KindRegionUnmap:
			r, ok := st.Regions.Get(ev.Region)
			if !ok {
				d.warnOnce(fmt.Sprint("unmap", ev.Region), "event %d: REGION_UNMAP of region %d, which is not mapped", ev.Index, ev.Region)
				continue
			}
			for _, h := range d.unmaps {
				h.h.OnUnmap(h.p, ev, r)
			}
			m.DropRange(r.Base, r.Len)
			m.RemoveRange(r.Base, r.Len)
			st.Regions.Unmap(ev.Region)
		case trace.KindTxBegin:
			tx := st.Threads.Get(ev.Thread)
			tx.Begin(ev.Site, ev.Context)
			d.onTx(ev, tx)
		case trace.KindTxAdd:
			tx := st.Threads.Get(ev.Thread)
			redundant, ok := tx.Add(ev.Addr, ev.Size, ev.Flags, ev.Site, ev.Context)
			if !ok {
				d.warnOnce("txadd", "event %d: TX_ADD outside a transaction (ignored)", ev.Index)
				continue
			}
			for _, h := range d.txAdds {
				h.h.OnTxAdd(h.p, ev, tx, redundant)
			}
		case trace.KindTxCommit:
			tx := st.Threads.Get(ev.Thread)
			tx.Commit(m)
			d.onTx(ev, tx)
		case trace.KindTxAbort:
			tx := st.Threads.Get(ev.Thread)
			tx.Abort(m)
			d.onTx(ev, tx)
		case trace.KindTxEnd:
			tx := st.Threads.Get(ev.Thread)
			if !tx.End() {
				d.warnOnce("txend", "event %d: TX_END outside a transaction (ignored)", ev.Index)
				continue
			}
			d.onTx(ev, tx)
		case trace.KindAlloc:
			if ev.Flags&trace.AllocReserve != 0 {
				st.Reserved.Reserve(ev.Addr, ev.Size)
				continue
			}
			st.Reserved.End(ev.Addr) // a publish, when the object was reserved
			st.Threads.Get(ev.Thread).Alloc(ev.Addr, ev.Size, ev.Flags&trace.AllocInTx != 0, ev.Site, ev.Context)
		case trace.KindFree:
			if ev.Flags&trace.AllocReserve != 0 {
				st.Reserved.End(ev.Addr)
			}
		case trace.KindOpBegin:
			st.Op = uint32(ev.Op) + 1
			if ev.Op < 1<<31 && ev.Op == uint64(len(d.opSpan)) && len(d.opText)+len(ev.Text) <= MaxOpText {
				d.opSpan = append(d.opSpan, span{uint32(len(d.opText)), uint32(len(ev.Text))})
				d.opText = append(d.opText, ev.Text...)
			}
		case trace.KindOpEnd:
			st.Op = 0
		case trace.KindEnd:
			switch ev.How {
			case trace.EndExit:
				for _, h := range d.ends {
					h.h.OnEnd(h.p, ev)
				}
			case trace.EndSignal:
				d.warnings = append(d.warnings, fmt.Sprintf(
					"program killed by signal %d (stores not yet persisted when it died are not reported)", ev.Status))
			default:
				d.warnings = append(d.warnings, fmt.Sprintf("END record with unknown how %d: end-of-program checks skipped", ev.How))
			}
		}
	}
}

func (d *driver) onTx(ev *trace.Event, tx *pmdk.Tx) {
	for _, h := range d.txs {
		h.h.OnTx(h.p, ev, tx)
	}
}

// opTextOf returns the text of operation i, "" when it was not kept (operations are kept when
// their indexes come in order 0, 1, 2, ... and their texts fit in MaxOpText bytes).
func (d *driver) opTextOf(i uint32) string {
	if int(i) >= len(d.opSpan) {
		return ""
	}
	sp := d.opSpan[i]
	return string(d.opText[sp.off : sp.off+sp.n])
}

func (d *driver) dup(kind int, site uint32, event uint64) bool {
	a := d.lastAgg
	if a == nil || a.key.kind != kind || a.key.site != site {
		a = d.aggs[aggKey{kind, site}]
		if a == nil {
			return false
		}
		d.lastAgg = a
	}
	if event < a.diag.Event {
		return false
	}
	a.count++
	return true
}

func (d *driver) report(kind int, diag Diagnostic) {
	k := aggKey{kind, diag.Site}
	a := d.aggs[k]
	if a == nil {
		a = &agg{key: k}
		d.aggs[k] = a
		a.diag = diag
	} else if diag.Event < a.diag.Event {
		a.diag = diag
	}
	a.count++
	d.lastAgg = a
}

func (d *driver) location(site uint32) report.Location {
	s, ok := d.r.Site(site)
	if !ok || site == 0 {
		return report.Location{}
	}
	return report.Location{File: s.File, Line: int(s.Line), Column: int(s.Column), Function: s.Function}
}

func (d *driver) stack(node uint32) []report.Frame {
	if node == 0 {
		return nil
	}
	ids := d.r.StackOf(node) // outermost first
	frames := make([]report.Frame, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		l := d.location(ids[i])
		frames = append(frames, report.Frame{Function: l.Function, File: l.File, Line: l.Line, Column: l.Column})
	}
	return frames
}

// finish turns the aggregated diagnostics into the report: resolves sites and stacks, merges
// findings of one kind whose different sites resolve to the same source location, sorts and
// applies the suppressions.
func (d *driver) finish(events uint64, cfg Config) *report.Report {
	rep := &report.Report{Events: events, Trace: cfg.Trace, Warnings: d.warnings}
	for _, a := range d.kinds {
		if a.Class != "" {
			rep.Rules = append(rep.Rules, report.Rule{Kind: a.Name, Class: a.Class, Doc: a.Doc})
		}
	}
	type locKey struct {
		kind int
		loc  report.Location
	}
	byLoc := map[locKey]int{}
	for _, a := range d.aggs {
		an := d.kinds[a.key.kind]
		loc := d.location(a.diag.Site)
		f := report.Finding{
			Kind: an.Name, Class: an.Class, Message: a.diag.Message, Location: loc,
			Stack: d.stack(a.diag.Stack), Count: a.count, FirstEvent: a.diag.Event,
		}
		for _, rel := range a.diag.Related {
			l := d.location(rel.Site)
			f.Related = append(f.Related, report.Related{Role: rel.Role, File: l.File, Line: l.Line, Column: l.Column, Function: l.Function})
		}
		if a.diag.Op > 0 {
			f.Operation = &report.Operation{Index: uint64(a.diag.Op - 1), Text: d.opTextOf(a.diag.Op - 1)}
		}
		if loc.File != "" {
			k := locKey{a.key.kind, loc}
			if i, ok := byLoc[k]; ok {
				g := &rep.Findings[i]
				g.Count += f.Count
				if f.FirstEvent < g.FirstEvent {
					f.Count = g.Count
					*g = f
				}
				continue
			}
			byLoc[k] = len(rep.Findings)
		}
		rep.Findings = append(rep.Findings, f)
	}
	rep.Sort()
	cfg.Suppressions.Filter(rep)
	return rep
}
