package analysis

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Config configures Run.
type Config struct {
	// Suppressions removes matching findings from the report (nil: none).
	Suppressions *report.Suppressions
	// Trace names the trace in the report (report.Report.Trace).
	Trace string
	// Results gives results already computed for Prepass analyzers (by a pipeline that needed
	// them too); those analyzers do not run.
	Results map[*Analyzer]any
	// Keep, if non-nil, receives every analyzer's result when Run returns a report, for a
	// pipeline that uses them after the analysis (the stores the durability oracle found never
	// durable, for crash exploration).
	Keep map[*Analyzer]any
	// Profile is the persistence contract the replay's px86 model applies (zero: ADR).
	Profile px86.Profile
}

// MaxOpText bounds the bytes of operation texts (OP_BEGIN) the driver keeps to name the
// operation of a finding; texts past the bound are reported as "".
const MaxOpText = 32 << 20

// Source opens the trace from its start; the driver calls it once per pass and closes what it
// returns.
type Source func() (*trace.Reader, error)

type aggKey struct {
	kind  int
	site  uint32
	stack uint32
}

type agg struct {
	key   aggKey
	diag  Diagnostic
	count int
	props []int // the union of the occurrences' Properties, sorted
}

// addProps adds ids to the sorted set props.
func addProps(props []int, ids ...int) []int {
	for _, id := range ids {
		if i, ok := slices.BinarySearch(props, id); !ok {
			props = slices.Insert(props, i, id)
		}
	}
	return props
}

type hook[T any] struct {
	h T
	p *Pass
}

type driver struct {
	replay.Nop
	r       *trace.Reader
	st      *State
	results map[*Analyzer]any
	kinds   []*Analyzer
	// roots are the analyzers Run was given: only their findings are reported.
	roots   map[*Analyzer]bool
	aggs    map[aggKey]*agg
	lastAgg *agg
	// ran records the calling contexts of stores, flushes, fences, transaction records and
	// unmaps, where findings are reported: report.Place needs the contexts without a finding.
	ran      report.Contexts
	warnings []string

	stores   []hook[StoreHook]
	loads    []hook[LoadHook]
	flushes  []hook[FlushHook]
	fences   []hook[FenceHook]
	txAdds   []hook[TxAddHook]
	txs      []hook[TxHook]
	maps     []hook[MapHook]
	unmaps   []hook[UnmapHook]
	ends     []hook[EndHook]
	opBegins []hook[OpBeginHook]
	opEnds   []hook[OpEndHook]

	// Texts of the operations, by index: opText[opSpan[i].off:][:opSpan[i].n] is operation i's.
	opText []byte
	opSpan []span
}

type span struct{ off, n uint32 }

// NoPMWarning is the report's warning for a trace in which no PM region was mapped: nothing was
// checked.
const NoPMWarning = "no persistent memory was mapped: the program opened no PMDK pool and mapped no file matching --pm (MAP_SHARED), so nothing was checked; name the PM files with --pm GLOB"

// Run runs analyzers (and the analyzers they require) over the trace src opens and returns the
// report: first every Prepass analyzer, each over its own read of the trace, then one streaming
// pass for the others (see the package doc). The report holds the findings and rules of the
// analyzers given only: one that runs only because another requires it contributes its result,
// not its findings (as in golang.org/x/tools/go/analysis).
//
// End of the trace. After an END record of how "exit", the EndHooks run (this is where
// unpersisted stores are reported). A trace that ends otherwise means the program did not finish
// normally, so the stores it had not yet persisted are not bugs by themselves (a later crash
// analysis decides): after an END of how "signal" the report gets the warning "program killed
// by signal N: ...", and after a truncated trace (trace.ErrTruncated) the warning "trace
// truncated after N events: ..."; in both cases the EndHooks do not run, every finding made
// so far is kept, and Run returns a nil error. The replay's warnings (an inconsistent trace,
// runtime degradation) are the report's too. Any other read error (not a trace, corrupt data,
// I/O) returns the report so far together with the error; an invalid analyzer, or a trace that
// cannot be opened, returns a nil report and the error.
func Run(src Source, analyzers []*Analyzer, cfg Config) (*report.Report, error) {
	all, err := order(analyzers)
	if err != nil {
		return nil, err
	}
	d := &driver{results: map[*Analyzer]any{}, aggs: map[aggKey]*agg{}, roots: map[*Analyzer]bool{}}
	for _, a := range analyzers {
		d.roots[a] = true
	}
	skipped := map[*Analyzer]bool{}
	for _, a := range all {
		if a.Prepass == nil {
			continue
		}
		if skip(a, skipped) {
			continue
		}
		if v, ok := cfg.Results[a]; ok {
			if err := d.setResult(a, v); err != nil {
				return nil, err
			}
			continue
		}
		v, err := a.Prepass(src)
		if err != nil && !errors.Is(err, trace.ErrTruncated) {
			if errors.Is(err, trace.ErrNotTrace) {
				return nil, err
			}
			// The streaming pass reports a bad trace; what needs this result is left out.
			d.warnings = append(d.warnings, fmt.Sprintf("%s could not run (%v): the analyses that need it are left out", a.Name, err))
			skipped[a] = true
			continue
		}
		if err := d.setResult(a, v); err != nil {
			return nil, err
		}
	}
	r, err := src()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := replay.New[px86.NoPayload](r, replay.Options[px86.NoPayload]{Model: true, ModelConfig: px86.Config[px86.NoPayload]{Profile: cfg.Profile}})
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	d.r, d.st = r, m
	for _, a := range all {
		if a.New == nil || skip(a, skipped) {
			continue
		}
		p := &Pass{Analyzer: a, State: m, d: d, kind: len(d.kinds)}
		d.kinds = append(d.kinds, a)
		v, err := a.New(p)
		if err != nil {
			return nil, fmt.Errorf("analysis: %s: %w", a.Name, err)
		}
		if err := d.setResult(a, v); err != nil {
			return nil, err
		}
		d.subscribe(v, p)
	}
	err = m.Run(d)
	events := m.Events
	rep := d.finish(events, cfg)
	if cfg.Keep != nil {
		for a, v := range d.results {
			cfg.Keep[a] = v
		}
	}
	switch {
	case err == nil:
		return rep, nil
	case errors.Is(err, trace.ErrTruncated) && !errors.Is(err, trace.ErrNotTrace):
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"trace truncated after %d events (the program did not finish; stores not yet persisted at the cut are not reported): %v", events, err))
		return rep, nil
	}
	return rep, err
}

// skip reports whether a requires (directly or not) an analyzer that could not run, marking it.
func skip(a *Analyzer, skipped map[*Analyzer]bool) bool {
	for _, r := range a.Requires {
		if skipped[r] || skip(r, skipped) {
			skipped[a] = true
			return true
		}
	}
	return skipped[a]
}

// setResult checks v against a's declared result type and keeps it.
func (d *driver) setResult(a *Analyzer, v any) error {
	if v == nil || !reflect.TypeOf(v).AssignableTo(a.ResultType) {
		return fmt.Errorf("analysis: %s returned a result of type %T, declared %v", a.Name, v, a.ResultType)
	}
	d.results[a] = v
	return nil
}

// subscribe registers the hooks v implements.
func (d *driver) subscribe(v any, p *Pass) {
	subscribeTo(&d.stores, v, p)
	subscribeTo(&d.loads, v, p)
	subscribeTo(&d.flushes, v, p)
	subscribeTo(&d.fences, v, p)
	subscribeTo(&d.txAdds, v, p)
	subscribeTo(&d.txs, v, p)
	subscribeTo(&d.maps, v, p)
	subscribeTo(&d.unmaps, v, p)
	subscribeTo(&d.ends, v, p)
	subscribeTo(&d.opBegins, v, p)
	subscribeTo(&d.opEnds, v, p)
}

// subscribeTo appends v's hook of type T, with its pass p, to hooks when v implements T.
func subscribeTo[T any](hooks *[]hook[T], v any, p *Pass) {
	if h, ok := v.(T); ok {
		*hooks = append(*hooks, hook[T]{h, p})
	}
}

// The replay handler: it fans the typed changes out to the analyzers' hooks.

func (d *driver) Wrote(w *replay.Write) {
	d.ran.Add(w.Origin.Site, w.Origin.Stack)
	for _, h := range d.stores {
		h.h.OnStore(h.p, w)
	}
}

func (d *driver) Load(ev *trace.Event) {
	if len(d.loads) == 0 || !d.st.Regions.Contains(ev.Addr) {
		return
	}
	for _, h := range d.loads {
		h.h.OnLoad(h.p, ev)
	}
}

func (d *driver) Flushed(ev *trace.Event, eff px86.FlushEffect) {
	d.ran.Add(ev.Site, ev.Context)
	for _, h := range d.flushes {
		h.h.OnFlush(h.p, ev, eff)
	}
}

func (d *driver) Fenced(ev *trace.Event, eff px86.FenceEffect) {
	d.ran.Add(ev.Site, ev.Context)
	if d.st.Regions.Len() == 0 {
		return
	}
	for _, h := range d.fences {
		h.h.OnFence(h.p, ev, eff)
	}
}

func (d *driver) Mapped(ev *trace.Event, r pmdk.Region) {
	for _, h := range d.maps {
		h.h.OnMap(h.p, ev, r)
	}
}

func (d *driver) Unmapping(ev *trace.Event, r pmdk.Region) {
	d.ran.Add(ev.Site, ev.Context)
	for _, h := range d.unmaps {
		h.h.OnUnmap(h.p, ev, r)
	}
}

func (d *driver) Tx(ev *trace.Event, tx *pmdk.Tx) {
	d.ran.Add(ev.Site, ev.Context)
	for _, h := range d.txs {
		h.h.OnTx(h.p, ev, tx)
	}
}

func (d *driver) TxAdded(ev *trace.Event, tx *pmdk.Tx, redundant bool) {
	d.ran.Add(ev.Site, ev.Context)
	for _, h := range d.txAdds {
		h.h.OnTxAdd(h.p, ev, tx, redundant)
	}
}

func (d *driver) OpBegan(ev *trace.Event, op replay.Op) {
	if op.Index >= 0 && op.Index < 1<<31 && op.Index == int64(len(d.opSpan)) && len(d.opText)+len(op.Text) <= MaxOpText {
		d.opSpan = append(d.opSpan, span{uint32(len(d.opText)), uint32(len(op.Text))})
		d.opText = append(d.opText, op.Text...)
	}
	for _, h := range d.opBegins {
		h.h.OnOpBegin(h.p, ev, op)
	}
}

func (d *driver) OpEnded(ev *trace.Event, op replay.Op) {
	for _, h := range d.opEnds {
		h.h.OnOpEnd(h.p, ev, op)
	}
}

func (d *driver) Ended(ev *trace.Event) {
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

// opTextOf returns the text of operation i, "" when it was not kept (operations are kept when
// their indexes come in order 0, 1, 2, ... and their texts fit in MaxOpText bytes).
func (d *driver) opTextOf(i uint32) string {
	if int(i) >= len(d.opSpan) {
		return ""
	}
	sp := d.opSpan[i]
	return string(d.opText[sp.off : sp.off+sp.n])
}

func (d *driver) dup(kind int, site, stack uint32, event uint64, prop int) bool {
	a := d.lastAgg
	if a == nil || a.key != (aggKey{kind, site, stack}) {
		a = d.aggs[aggKey{kind, site, stack}]
		if a == nil {
			return false
		}
		d.lastAgg = a
	}
	if event < a.diag.Event {
		return false
	}
	a.count++
	if prop >= 0 {
		a.props = addProps(a.props, prop)
	}
	return true
}

func (d *driver) report(kind int, diag Diagnostic) {
	k := aggKey{kind, diag.Site, diag.Stack}
	a := d.aggs[k]
	if a == nil {
		a = &agg{key: k}
		d.aggs[k] = a
		a.diag = diag
	} else if diag.Event < a.diag.Event {
		a.diag = diag
	}
	a.count++
	a.props = addProps(a.props, diag.Properties...)
	d.lastAgg = a
}

// finish turns the aggregated diagnostics into the report: places each kind's contexts
// (report.Place: the frame every execution through it shows), merges the contexts of one
// instruction into one finding (report.Placed.OwnKey; counts added, the earliest occurrence
// kept, reported where they were all placed, else at the instruction with each caller's place
// related), sorts and applies the suppressions.
func (d *driver) finish(events uint64, cfg Config) *report.Report {
	rep := &report.Report{Events: events, Trace: cfg.Trace}
	rep.Warnings = append(append(rep.Warnings, d.warnings...), d.st.Warnings()...)
	if d.st.Mapped == 0 {
		rep.Warnings = append(rep.Warnings, NoPMWarning)
	}
	for _, a := range d.kinds {
		if a.Class != "" && d.roots[a] {
			rep.Rules = append(rep.Rules, a.Rule())
		}
	}
	byKind := make([][]*agg, len(d.kinds))
	for _, a := range d.aggs {
		byKind[a.key.kind] = append(byKind[a.key.kind], a)
	}
	for kind, aggs := range byKind {
		if len(aggs) == 0 || !d.roots[d.kinds[kind]] {
			continue
		}
		// Earliest first, so the merged finding keeps its first occurrence's details.
		slices.SortFunc(aggs, func(x, y *agg) int { return cmp.Compare(x.diag.Event, y.diag.Event) })
		ctxs := make([]report.Context, len(aggs))
		for i, a := range aggs {
			ctxs[i] = report.Context{Site: a.key.site, Stack: a.key.stack}
		}
		placed := report.Place(d.r, ctxs, &d.ran)
		an := d.kinds[kind]
		// One finding per instruction (report.Placed.OwnKey: its position, and the program's line
		// that led there when it is in a library), however many callers showed it: when all its
		// contexts were placed at one line (whatever library path led from it) the finding is
		// reported there, otherwise at the instruction, each place a related caller.
		byOwn := map[string]int{}
		type group struct {
			at     int      // the index in the finding's Stack of the frame that stands for it
			places []string // the distinct places of its contexts (Location.Key), in order
		}
		groups := map[int]*group{} // by finding index
		for i, a := range aggs {
			own, at := placed[i].OwnKey()
			pl := placed[i].Location()
			if j, ok := byOwn[own]; ok {
				f, g := &rep.Findings[j], groups[j]
				f.Count += a.count
				f.Properties = addProps(f.Properties, a.props...)
				if !slices.Contains(g.places, pl.Key()) {
					// A second place: the finding moves to the instruction, and its places
					// other than the instruction itself are its callers.
					if len(g.places) == 1 {
						first := f.Location
						f.Location = f.Stack[g.at].Location()
						if first.Key() != f.Location.Key() {
							f.Related = append(f.Related, first.Related(report.RoleCaller))
						}
					}
					g.places = append(g.places, pl.Key())
					if pl.Key() != f.Location.Key() {
						f.Related = append(f.Related, pl.Related(report.RoleCaller))
					}
				}
				continue
			}
			groups[len(rep.Findings)] = &group{at: at, places: []string{pl.Key()}}
			f := report.Finding{
				Kind: an.Kind(), Class: an.Class, Message: a.diag.Message, Location: placed[i].Location(),
				Stack: placed[i].Frames, Count: a.count, FirstEvent: a.diag.Event, Properties: slices.Clone(a.props),
			}
			for _, rel := range a.diag.Related {
				f.Related = append(f.Related, report.UserAt(d.r, rel.Site, rel.Stack).Related(rel.Role))
			}
			if a.diag.Op > 0 {
				f.Operation = &report.Operation{Index: uint64(a.diag.Op - 1), Text: d.opTextOf(a.diag.Op - 1)}
			}
			byOwn[own] = len(rep.Findings)
			rep.Findings = append(rep.Findings, f)
		}
	}
	rep.Sort()
	cfg.Suppressions.Filter(rep)
	return rep
}

// FileSource opens the trace at path.
func FileSource(path string) Source {
	return func() (*trace.Reader, error) { return trace.Open(path) }
}

// BytesSource reads a trace held in memory.
func BytesSource(data []byte) Source {
	return func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)) }
}
