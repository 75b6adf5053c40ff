package explore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/scry-pm/scry/crash"
	"github.com/scry-pm/scry/infer"
	"github.com/scry-pm/scry/trace"
)

// InferInvariants infers the likely invariants of the trace at path (package infer, every
// rule: WITCHER's RO1-RO3, RA1 and the dissertation's MPB, MPA) and converts the ordering and
// atomicity properties into crash invariants for the invariants strategy; durability
// properties (DURA) name no crash state and are left out. Each invariant's Text is the
// property's description. The trace is read once, to its end. warning is non-empty when the
// trace was truncated (the properties come from its complete records).
func InferInvariants(path string) (invs []crash.Invariant, warning string, err error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	res, ierr := infer.Infer(r, infer.Options{Rules: infer.Both, MaxEvidence: -1})
	if ierr != nil {
		if res == nil || !errors.Is(ierr, trace.ErrTruncated) {
			return nil, "", fmt.Errorf("inferring invariants: %w", ierr)
		}
		warning = "invariant inference: the trace is truncated; invariants come from its complete records"
	}
	return Invariants(res), warning, nil
}

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

// invariants infers the invariants when a strategy needs them and none were given
// (Options.Invariants nil), and indexes their texts for the findings.
func (e *explorer) invariants() error {
	o := &e.cfg.Options
	if NeedInvariants(e.cfg.Strategies) {
		if o.Invariants == nil {
			invs, w, err := InferInvariants(e.cfg.Trace)
			if err != nil {
				return err
			}
			if w != "" {
				e.warn(w)
			}
			o.Invariants = invs
		}
		e.res.Stats.Invariants = len(o.Invariants)
		if len(o.Invariants) == 0 {
			e.warn("no ordering or atomicity invariant was inferred from the trace: the invariants strategy tests no crash state (record with loads, i.e. without --no-loads, and a program built with this scry cc)")
		}
	}
	for _, iv := range o.Invariants {
		e.invText[iv.ID] = iv.Text
	}
	return nil
}
