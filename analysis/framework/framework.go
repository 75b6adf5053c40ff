// Package framework is the core of scry's trace analyses, modeled on
// golang.org/x/tools/go/analysis: an Analyzer is a declared unit (name, one-line doc, class of
// its findings, the analyzers it requires); one driver, Run, makes a single pass over a trace,
// keeps the shared persistency state (package px86 for the x86 model, package pmdk for the
// library semantics) up to date and calls each analyzer's hooks with what the event did.
// Findings are deduplicated by (kind, static location) and counted.
//
// Package analysis re-exports this package's API together with the oracle catalogue; this
// package exists so that package oracle can declare analyzers without an import cycle.
package framework

import (
	"fmt"

	"github.com/scry-pm/scry/pmdk"
	"github.com/scry-pm/scry/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Analyzer is one declared analysis. Its findings have kind Name and class Class.
//
// New creates the analyzer's state for one run. The value it returns is the analyzer's result
// (available to analyzers that require it through Pass.ResultOf) and receives the events: the
// driver calls every hook interface it implements (StoreHook, FlushHook, FenceHook, TxAddHook,
// TxHook, UnmapHook, EndHook). A fact provider (Class "") reports nothing and only computes a result.
type Analyzer struct {
	Name     string       // stable kebab-case name; the kind of its findings
	Doc      string       // one line
	Class    report.Class // class of its findings; "" for a fact provider
	Requires []*Analyzer  // analyzers whose results it needs (created before it)
	New      func(*Pass) (any, error)
}

func (a *Analyzer) String() string { return a.Name }

// PMState is the built-in fact provider: the persistency model and library state every oracle
// reads. Its result is the driver's *State. The driver always maintains the state; requiring
// PMState documents the dependency and gives access to the state through Pass.ResultOf.
var PMState = &Analyzer{
	Name: "pmstate",
	Doc:  "tracks the persistency state of every PM store (Px86) and PMDK transactions",
	New:  func(p *Pass) (any, error) { return p.State, nil },
}

// State is the shared state the driver keeps while it reads the trace.
type State struct {
	Model   *px86.Model
	Regions pmdk.Regions
	Threads pmdk.Threads
	// Reserved holds the open pmemobj_reserve reservations (not yet published or cancelled).
	Reserved pmdk.Reservations
	Reader   *trace.Reader
	// Op is the running workload operation's index plus one (0: none), as in px86.Origin.
	Op uint32
	// LastEvent is the index of the event being processed.
	LastEvent uint64
}

// Origin returns the px86.Origin of event ev (site, call stack, current operation).
func (s *State) Origin(ev *trace.Event) px86.Origin {
	return px86.Origin{Site: ev.Site, Stack: ev.Context, Op: s.Op}
}

// Where describes a PM address for messages: "path+0xOFF" for an address in a mapped region,
// else the address in hex.
func (s *State) Where(addr uint64) string {
	if r, ok := s.Regions.Find(addr); ok {
		return fmt.Sprintf("%s+%#x", r.Path, addr-r.Base+r.FileOffset)
	}
	return fmt.Sprintf("%#x", addr)
}

// StoreInfo is what a STORE, NT_STORE or EXTERNAL_WRITE event inside a mapped region did.
type StoreInfo struct {
	Event    *trace.Event
	Origin   px86.Origin
	Flags    uint8 // px86.NT, px86.External
	Tx       *pmdk.Tx
	Effect   px86.StoreEffect
	Recorded bool // false for EXTERNAL_WRITE with flag persisted or initial (not a store in the model)
}

// Hook interfaces. The driver calls them after it has updated the shared state for the event,
// except UnmapHook and EndHook, which run before the state forgets the region's stores.
type (
	// StoreHook sees every STORE, NT_STORE and EXTERNAL_WRITE inside a mapped region.
	StoreHook interface{ OnStore(p *Pass, s *StoreInfo) }
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
	// UnmapHook sees REGION_UNMAP before the region's unpersisted stores are forgotten.
	UnmapHook interface {
		OnUnmap(p *Pass, ev *trace.Event, r pmdk.Region)
	}
	// EndHook sees the END record of a program that exited normally (how = exit).
	EndHook interface {
		OnEnd(p *Pass, ev *trace.Event)
	}
)

// RelatedSite is another site a diagnostic names, with its role (see report.Related).
type RelatedSite struct {
	Role  string
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
}

// Pass is one analyzer's view of a run.
type Pass struct {
	Analyzer *Analyzer
	State    *State
	ResultOf map[*Analyzer]any
	d        *driver
	kind     int
}

// Dup reports whether an occurrence of this analyzer's kind at site, at event, is a duplicate of
// one already reported; if so it counts it. Analyzers call it before building a Diagnostic so
// that repeated occurrences cost no allocation.
func (p *Pass) Dup(site uint32, event uint64) bool {
	return p.d.dup(p.kind, site, event)
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
