package explore

import (
	"slices"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/infer"
)

// Invariants converts the ordering and atomicity properties of an inference result into crash
// invariants (same IDs), in the result's order; durability properties are left out.
func Invariants(res *infer.Result) []crash.Invariant {
	invs := make([]crash.Invariant, 0, len(res.Properties))
	for _, p := range res.Properties {
		iv := crash.Invariant{ID: p.ID, Rule: string(p.Rule), Text: p.Describe(res.Sites)}
		switch p.Kind {
		case infer.Ordering:
			iv.Before, iv.After = p.Before, p.After
		case infer.Atomicity:
			if len(p.Sites) == 0 {
				continue
			}
			iv.Sites = slices.Clone(p.Sites)
		default:
			continue
		}
		invs = append(invs, iv)
	}
	return invs
}

// NeedInvariants reports whether one of the strategies chooses states from inferred invariants.
func NeedInvariants(strats []*crash.Strategy) bool {
	return slices.ContainsFunc(strats, func(s *crash.Strategy) bool { return s.NeedsInvariants })
}

// invariants checks that a strategy that needs invariants has them (Options.Invariants, which
// the caller infers: package pipeline) and indexes their texts for the findings.
func (e *explorer) invariants() error {
	o := &e.cfg.Crash
	if NeedInvariants(e.strats) {
		e.res.Stats.Invariants = len(o.Invariants)
		if len(o.Invariants) == 0 {
			e.warn("no ordering or atomicity invariant was inferred from the trace: the invariants strategy tests no crash state (record with loads, i.e. without --no-loads, and a program built with this scry cc)")
		}
	}
	for _, iv := range o.Invariants {
		e.found.invText[iv.ID] = iv.Text
	}
	return nil
}
