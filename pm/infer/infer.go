package infer

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Rule is the rule that produced a property.
type Rule string

// Rules. The comments give the condition observed in the trace and the property inferred.
const (
	RO1  Rule = "RO1"  // WITCHER Table 1: W(Y) data-dependent on R(X)  => P(X) hb W(Y)
	RO2  Rule = "RO2"  // W(Y) control-dependent on R(X)                 => P(X) hb W(Y)
	RO3  Rule = "RO3"  // R(Y) control-dependent on R(X) (guarded read)  => P(Y) hb W(X)
	RA1  Rule = "RA1"  // guardians X, Y of RO3                           => AP(X, Y)
	DURA Rule = "DURA" // dissertation §5.2.1: every PM store must eventually persist
	MPB  Rule = "MPB"  // §5.2.2/Alg. 5: control-dependent LOAD pairs only
	MPA  Rule = "MPA"  // §5.2.5/Alg. 6: SCCs (>= 2 sites) of the MPB graph
)

// AllRules lists the rules in their output order.
var AllRules = []Rule{RO1, RO2, RO3, RA1, DURA, MPB, MPA}

// RuleSet selects rules: "witcher" (RO1, RO2, RO3, RA1), "mpb" (DURA, MPB, MPA) or "both"
// (every rule; also the meaning of "").
type RuleSet string

// Rule sets.
const (
	Witcher RuleSet = "witcher"
	MPBSet  RuleSet = "mpb"
	Both    RuleSet = "both"
)

// Rules returns the rules of the set, in output order, or an error for an unknown set.
func (s RuleSet) Rules() ([]Rule, error) {
	switch s {
	case Witcher:
		return []Rule{RO1, RO2, RO3, RA1}, nil
	case MPBSet:
		return []Rule{DURA, MPB, MPA}, nil
	case Both, "":
		return AllRules, nil
	}
	return nil, fmt.Errorf("unknown rule set %q: want witcher, mpb or both", string(s))
}

// Kind is the kind of a property.
type Kind string

// Property kinds.
const (
	Ordering   Kind = "ordering"   // Before must persist before After
	Atomicity  Kind = "atomicity"  // Sites must persist atomically
	Durability Kind = "durability" // Sites[0] must eventually persist
)

// Property is one inferred property over store sites (trace site ids).
type Property struct {
	ID   int // 1-based, stable for one trace and options (sorted order)
	Kind Kind
	Rule Rule
	// Before, After: ordering properties: the store at site Before must persist before the
	// store at site After. Before == After is a property between two instances of one site
	// (a linked structure written by one statement).
	Before, After uint32
	// Sites: atomicity: the store sites that must persist atomically (sorted by id; a single
	// site for RA1 means two instances of it); durability: the one site.
	Sites    []uint32
	Evidence []Evidence // up to Options.MaxEvidence examples
	Count    int        // dynamic instances that produced it
}

// Evidence is one dynamic instance of the condition that produced a property.
type Evidence struct {
	// Guard is the load site whose value decided: RO2, RO3, MPB, MPA: the guarding load; RO1:
	// the load feeding the store; RA1: the guard load that read the first guardian.
	Guard uint32
	// Dependent is the guarded load (RO3, MPB, MPA), the dependent store (RO1, RO2), or the
	// guard load that read the second guardian (RA1).
	Dependent uint32
	// Branch is the branch site through which the dependent is control dependent on the guard
	// (0 for data dependence, RO1). For a dependence inherited through calls it is the branch,
	// in a caller, that the call site depends on.
	Branch uint32
	// GuardEvent and DependentEvent are the trace event indexes of one instance.
	GuardEvent, DependentEvent uint64
}

// DefaultMaxEvidence is the number of evidence examples kept per property when
// Options.MaxEvidence is 0.
const DefaultMaxEvidence = 3

// Options configures Infer.
type Options struct {
	Rules RuleSet // "" is Both
	// MaxEvidence bounds the examples kept per property: 0 means DefaultMaxEvidence, a negative
	// value none.
	MaxEvidence int
}

// Result is what Infer found.
type Result struct {
	Properties []Property
	Counts     map[Rule]int          // properties per selected rule (0 included)
	Sites      map[uint32]trace.Site // every site named by a property or its evidence
	// Events, Loads and Stores count what was read: every record, and the LOAD and STORE /
	// NT_STORE events inside mapped PM regions.
	Events, Loads, Stores uint64
}

// Of returns the properties of rule r, in order.
func (res *Result) Of(r Rule) []Property {
	var out []Property
	for _, p := range res.Properties {
		if p.Rule == r {
			out = append(out, p)
		}
	}
	return out
}

// Infer reads r to the end and returns the properties it infers.
//
// Errors: an unknown rule set (nil result). A trace that is cut short (an error wrapping
// trace.ErrTruncated) still gives the properties inferred from its complete records: the
// result and the error are both returned, and callers treat the error as a warning. Any other
// read error (corrupt trace, I/O) returns the result so far and the error.
func Infer(r *trace.Reader, o Options) (*Result, error) {
	rules, err := o.Rules.Rules()
	if err != nil {
		return nil, err
	}
	e := newEngine(r, rules, o)
	rerr := e.run()
	res := e.result()
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		return res, rerr
	}
	return res, nil
}

// loc formats a site as "file:line (function)".
func loc(sites map[uint32]trace.Site, id uint32) string {
	if l := report.Loc(sites[id]); id != 0 && l.Known() {
		return l.String()
	}
	return fmt.Sprintf("site %d", id)
}

// Describe returns the property in one line, naming sites as file:line (function), e.g.
// "MPB: store at kv.c:31 (insert) must persist before store at kv.c:35 (insert)".
func (p Property) Describe(sites map[uint32]trace.Site) string {
	switch p.Kind {
	case Ordering:
		if p.Before == p.After {
			return fmt.Sprintf("%s: an instance of the store at %s must persist before a later-read instance of it", p.Rule, loc(sites, p.Before))
		}
		return fmt.Sprintf("%s: store at %s must persist before store at %s", p.Rule, loc(sites, p.Before), loc(sites, p.After))
	case Atomicity:
		if len(p.Sites) == 1 {
			return fmt.Sprintf("%s: instances of the store at %s must persist atomically", p.Rule, loc(sites, p.Sites[0]))
		}
		var l []string
		for _, s := range p.Sites {
			l = append(l, loc(sites, s))
		}
		return fmt.Sprintf("%s: stores at %s must persist atomically", p.Rule, strings.Join(l, ", "))
	case Durability:
		if len(p.Sites) == 1 {
			return fmt.Sprintf("%s: store at %s must eventually persist", p.Rule, loc(sites, p.Sites[0]))
		}
	}
	return fmt.Sprintf("%s: %v", p.Rule, p.Sites)
}

// DescribeEvidence returns one evidence example of a property of rule r in words.
func DescribeEvidence(r Rule, e Evidence, sites map[uint32]trace.Site) string {
	switch {
	case r == RA1:
		return fmt.Sprintf("the load at %s reads one guardian and the load at %s the other, each deciding whether a guarded read runs (events %d, %d)",
			loc(sites, e.Guard), loc(sites, e.Dependent), e.GuardEvent, e.DependentEvent)
	case e.Branch == 0:
		return fmt.Sprintf("the store at %s uses the value loaded at %s (events %d, %d)",
			loc(sites, e.Dependent), loc(sites, e.Guard), e.GuardEvent, e.DependentEvent)
	case r == RO2:
		return fmt.Sprintf("the load at %s decides the branch at %s, which controls the store at %s (events %d, %d)",
			loc(sites, e.Guard), loc(sites, e.Branch), loc(sites, e.Dependent), e.GuardEvent, e.DependentEvent)
	}
	return fmt.Sprintf("the load at %s decides the branch at %s, which controls the load at %s (events %d, %d)",
		loc(sites, e.Guard), loc(sites, e.Branch), loc(sites, e.Dependent), e.GuardEvent, e.DependentEvent)
}

func ruleRank(r Rule) int {
	if i := slices.Index(AllRules, r); i >= 0 {
		return i
	}
	return len(AllRules)
}

func kindOf(r Rule) Kind {
	switch r {
	case RA1, MPA:
		return Atomicity
	case DURA:
		return Durability
	}
	return Ordering
}

// sortProperties puts the properties in output order: by rule, then by the source locations of
// their sides (file, line, column, site id), and numbers them from 1.
func sortProperties(ps []Property, sites map[uint32]trace.Site) {
	cmpSite := func(a, b uint32) int {
		sa, sb := sites[a], sites[b]
		return cmp.Or(cmp.Compare(sa.File, sb.File), cmp.Compare(sa.Line, sb.Line),
			cmp.Compare(sa.Column, sb.Column), cmp.Compare(a, b))
	}
	sides := func(p *Property) []uint32 {
		if p.Kind == Ordering {
			return []uint32{p.Before, p.After}
		}
		return p.Sites
	}
	slices.SortFunc(ps, func(a, b Property) int {
		if c := cmp.Compare(ruleRank(a.Rule), ruleRank(b.Rule)); c != 0 {
			return c
		}
		return slices.CompareFunc(sides(&a), sides(&b), cmpSite)
	})
	for i := range ps {
		ps[i].ID = i + 1
	}
}
