package analysis

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Analyzer is one declared analysis. Its findings have kind Name and class Class. Analyzers are
// static values: declare them as package-level variables and list them in a registry.
type Analyzer struct {
	// Name is the stable kebab-case name; for an analyzer that reports findings, their kind.
	Name string
	// Doc is the one doc text: for a kind of finding, what it means, as --help, the SARIF rule
	// and docs/oracles.md show it.
	Doc string
	// Class is the class of its findings; "" for an analyzer that only computes a result.
	Class report.Class
	// Requires lists the analyzers whose results it needs (run before it).
	Requires []*Analyzer
	// ResultType is the type of the result New or Prepass returns (checked by the driver).
	ResultType reflect.Type
	// New creates the analyzer's state for one streaming pass. The value it returns is the
	// analyzer's result (available to analyzers that require it, ResultOf) and receives the
	// events: the driver calls every hook interface it implements (StoreHook, FlushHook,
	// FenceHook, TxAddHook, TxHook, MapHook, UnmapHook, EndHook, OpBeginHook, OpEndHook).
	New func(*Pass) (any, error)
	// Prepass, instead of New, computes the result from the whole trace before the streaming
	// pass: open reads the trace from its start. A result that comes with an error wrapping
	// trace.ErrTruncated is kept (the trace was cut short); with any other error the analyzers
	// that require it do not run, with a warning.
	Prepass func(open func() (*trace.Reader, error)) (any, error)
}

func (a *Analyzer) String() string { return a.Name }

// Kind returns the kind of the analyzer's findings: its name.
func (a *Analyzer) Kind() report.Kind { return report.Kind(a.Name) }

// Rule returns the analyzer's kind of finding as the report lists it.
func (a *Analyzer) Rule() report.Rule { return report.Rule{Kind: a.Kind(), Class: a.Class, Doc: a.Doc} }

var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Validate reports the first problem of a: a name that is not kebab-case, no doc, an unknown
// class, no result type, neither or both of New and Prepass, a Prepass analyzer that requires a
// streaming one, a nil requirement.
func (a *Analyzer) Validate() error {
	switch {
	case a == nil:
		return errors.New("analysis: nil analyzer")
	case !kebab.MatchString(a.Name):
		return fmt.Errorf("analysis: analyzer name %q is not kebab-case", a.Name)
	case strings.TrimSpace(a.Doc) == "":
		return fmt.Errorf("analysis: analyzer %s has no doc", a.Name)
	case a.Class != "" && a.Class != report.Correctness && a.Class != report.Performance && a.Class != report.Unconfirmed:
		return fmt.Errorf("analysis: analyzer %s has unknown class %q", a.Name, a.Class)
	case a.ResultType == nil:
		return fmt.Errorf("analysis: analyzer %s has no ResultType", a.Name)
	case (a.New == nil) == (a.Prepass == nil):
		return fmt.Errorf("analysis: analyzer %s must have exactly one of New and Prepass", a.Name)
	case a.Prepass != nil && a.Class != "":
		return fmt.Errorf("analysis: analyzer %s: a prepass reports no findings", a.Name)
	}
	for _, r := range a.Requires {
		if r == nil {
			return fmt.Errorf("analysis: analyzer %s requires a nil analyzer", a.Name)
		}
		if a.Prepass != nil && r.Prepass == nil {
			return fmt.Errorf("analysis: prepass %s cannot require the streaming analyzer %s", a.Name, r.Name)
		}
	}
	return nil
}

// Validate checks a set of analyzers and everything they require: each is valid, names are
// unique, and requirements have no cycle. A registry calls it in a test.
func Validate(as []*Analyzer) error {
	_, err := order(as)
	return err
}

// order returns the analyzers and everything they require, requirements first, or an error
// when one is invalid, two share a name, or requirements form a cycle.
func order(as []*Analyzer) ([]*Analyzer, error) {
	var out []*Analyzer
	state := map[*Analyzer]int{} // 1 visiting, 2 done
	names := map[string]*Analyzer{}
	var visit func(a *Analyzer, path []string) error
	visit = func(a *Analyzer, path []string) error {
		if err := a.Validate(); err != nil {
			return err
		}
		switch state[a] {
		case 1:
			return fmt.Errorf("analysis: dependency cycle: %s -> %s", strings.Join(path, " -> "), a.Name)
		case 2:
			return nil
		}
		if o := names[a.Name]; o != nil && o != a {
			return fmt.Errorf("analysis: two analyzers named %s", a.Name)
		}
		names[a.Name] = a
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

// State is the replayed state every analyzer reads: regions, operations, transactions,
// reservations and the px86 model (package replay).
type State = replay.Machine[px86.NoPayload]

// StoreInfo is a write inside a mapped region, after the model recorded it (replay.Write).
type StoreInfo = replay.Write

// Hook interfaces. The driver calls them after the state was updated for the event, except
// UnmapHook, which runs before the state forgets the region's stores.
type (
	// StoreHook sees every STORE, NT_STORE and EXTERNAL_WRITE inside a mapped region.
	StoreHook interface{ OnStore(p *Pass, s *StoreInfo) }
	// LoadHook sees every LOAD inside a mapped region (none in a trace recorded with
	// SCRY_NO_LOADS); ev.Data is the value read.
	LoadHook interface {
		OnLoad(p *Pass, ev *trace.Event)
	}
	// FlushHook sees every FLUSH of a line inside a mapped region.
	FlushHook interface {
		OnFlush(p *Pass, ev *trace.Event, eff px86.FlushEffect)
	}
	// FenceHook sees every FENCE while at least one region is mapped.
	FenceHook interface {
		OnFence(p *Pass, ev *trace.Event, eff px86.FenceEffect)
	}
	// TxAddHook sees every TX_ADD inside a transaction; redundant tells whether the range was
	// already covered by the transaction (pmdk.Tx.Add).
	TxAddHook interface {
		OnTxAdd(p *Pass, ev *trace.Event, tx *pmdk.Tx, redundant bool)
	}
	// TxHook sees every TX_BEGIN, TX_COMMIT, TX_ABORT and TX_END, after the thread's
	// transaction state (tx) was updated: after an outermost commit the model already holds the
	// transaction's ranges as persisted; after an abort their unpersisted stores are dropped.
	TxHook interface {
		OnTx(p *Pass, ev *trace.Event, tx *pmdk.Tx)
	}
	// MapHook sees every region mapped (REGION_MAP), after State.Regions holds it: ev.Flags
	// says whether the program created its file (trace.RegionCreated).
	MapHook interface {
		OnMap(p *Pass, ev *trace.Event, r pmdk.Region)
	}
	// UnmapHook sees a region about to be unmapped, before its unpersisted stores are forgotten.
	UnmapHook interface {
		OnUnmap(p *Pass, ev *trace.Event, r pmdk.Region)
	}
	// EndHook sees the END record of a program that exited normally (how = exit).
	EndHook interface {
		OnEnd(p *Pass, ev *trace.Event)
	}
	// OpBeginHook sees every workload operation begin (OP_BEGIN), after State.Ops lists it in
	// flight: op is its index (from 0), text (the workload line) and thread.
	OpBeginHook interface {
		OnOpBegin(p *Pass, ev *trace.Event, op replay.Op)
	}
	// OpEndHook sees every workload operation end, after State.Ops no longer lists it: at its
	// OP_END, or at the OP_BEGIN of the next operation of its thread (ev is then that OP_BEGIN,
	// and OnOpEnd runs before OnOpBegin). An operation still in flight at the end of the trace
	// gets no OnOpEnd.
	OpEndHook interface {
		OnOpEnd(p *Pass, ev *trace.Event, op replay.Op)
	}
)

// RelatedSite is another site a diagnostic names, with its role (see report.Related): one of
// report.Role's constants for scry's own analyzers, any name a custom analyzer chooses.
type RelatedSite struct {
	Role  report.Role
	Site  uint32
	Stack uint32
}

// Diagnostic is one dynamic occurrence of a finding, as an analyzer reports it.
type Diagnostic struct {
	Site    uint32 // static location (trace site id); 0 unknown
	Stack   uint32 // call-stack node of the occurrence
	Event   uint64 // trace event index of the occurrence
	Op      uint32 // operation index plus one, 0 none
	Message string
	Related []RelatedSite
	// Properties are the IDs of the inferred properties the occurrence breaks (the checks of
	// package infer); the finding lists the union over its occurrences.
	Properties []int
}

// Pass is one analyzer's view of a run.
type Pass struct {
	Analyzer *Analyzer
	State    *State
	d        *driver
	kind     int
}

// ResultOf returns the result of analyzer a, which p's analyzer requires (directly or not), as
// type T: the driver checked it against a.ResultType. It panics when a was not required or T is
// not a's result type, both programming errors that Validate and the driver's type check rule
// out for declared requirements.
func ResultOf[T any](p *Pass, a *Analyzer) T {
	v, ok := p.d.results[a]
	if !ok {
		panic(fmt.Sprintf("analysis: %s reads the result of %s, which it does not require", p.Analyzer.Name, a.Name))
	}
	return v.(T)
}

// Site returns the static site id of the trace, and whether the trace defines it.
func (p *Pass) Site(id uint32) (trace.Site, bool) { return p.d.r.Site(id) }

// Schedule returns the thread schedule the trace was recorded under (trace.Reader.Schedule): in
// an EndHook, the one with the run's counts; ok false for the operating system's schedule.
func (p *Pass) Schedule() (trace.Schedule, bool) { return p.d.r.Schedule() }

// Locate returns the source location of a site (report.At): the zero Location for site 0 or a
// site the trace does not define.
func (p *Pass) Locate(site uint32) report.Location { return report.At(p.d.r, site) }

// Frames returns the call stack of an event at site under call-stack node stack (its
// trace.Event.Context), innermost frame first: the site's own location, the calls inlined into
// it, then each call of the stack (report.FramesAt).
func (p *Pass) Frames(site, stack uint32) []report.Frame { return report.FramesAt(p.d.r, site, stack) }

// Dup reports whether an occurrence of this analyzer's kind at site in call-stack node stack, at
// event, is a duplicate of one already reported; if so it counts it. Analyzers call it before
// building a Diagnostic (whose Site and Stack must be the same) so that repeated occurrences cost
// no allocation.
func (p *Pass) Dup(site, stack uint32, event uint64) bool {
	return p.d.dup(p.kind, site, stack, event, -1)
}

// DupProperty is Dup for an occurrence that breaks inferred property prop (its ID): a duplicate
// adds prop to the finding's Properties.
func (p *Pass) DupProperty(site, stack uint32, event uint64, prop int) bool {
	return p.d.dup(p.kind, site, stack, event, prop)
}

// Report records an occurrence. Occurrences with the same (kind, site) are merged: counted,
// and the earliest (smallest Event) is kept as the finding's first occurrence.
func (p *Pass) Report(d Diagnostic) {
	p.d.report(p.kind, d)
}

// Warn adds a warning to the report.
func (p *Pass) Warn(format string, args ...any) {
	p.d.warnings = append(p.d.warnings, fmt.Sprintf(format, args...))
}
