package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scry-pm/scry/internal/smt"
	"github.com/scry-pm/scry/pm/px86"
)

// The search is PMBugAssist's (Huang's dissertation, ch. 4, Algorithms 1-3), with the trace's
// instructions fixed and the repair's choices as the unknowns: a synthesis solver proposes the
// cheapest set of choices (fewest inserted instructions, then fewest moved or deleted
// statements, then closest to the bug: z3's lexicographic optimisation in place of the
// dissertation's iterative addition of instructions, §3.2); a verification solver looks for an
// execution of the repaired trace that still breaks an obligation (Φ_program ∧ Φ_persistency ∧
// ¬Φ_assertion, §3.3.1: BugIsFound). When it finds one, the persist times of that execution
// become a blocking constraint (§4.1.1: ComputeRepair's ¬ψ_sat), which rules out every
// candidate under which that execution is still possible. When it finds none, the candidate
// is checked not to be vacuous (§4.1.2: RepairIsValid, Ψ ∧ R satisfiable) and, independently,
// against the persistency model of package px86; then it is returned, and blocked so that the
// next call enumerates the next repair (for a candidate the rebuild rejects).

// maxIterations bounds the candidates one search examines.
const maxIterations = 400

// solution is one candidate repair.
type solution struct {
	chosen []*choice
	assign map[string]bool
	// inserted, moved: inserted instructions; moved or deleted statements.
	inserted, moved int
}

// search is the state of one problem's counterexample-guided search.
type search struct {
	p          *problem
	syn, ver   *smt.Solver
	per        *px86.Persistency
	names      []string
	iterations int
	// disagreements counts candidates the solver accepted and the model rejected (0 unless
	// the two forms of the rules differ).
	disagreements int
}

// newSearch starts the solvers of p.
func (p *problem) newSearch(ctx context.Context, o smt.Options) (*search, error) {
	s := &search{p: p, per: px86.NewPersistency(p.syms(), "", p.never)}
	var err error
	if s.syn, err = smt.Start(ctx, o); err != nil {
		return nil, err
	}
	if s.ver, err = smt.Start(ctx, o); err != nil {
		s.syn.Close()
		return nil, err
	}
	var ins, mv, dist []string
	for _, c := range p.choices {
		s.names = append(s.names, c.name)
		decl := "(declare-const " + c.name + " Bool)"
		s.syn.Send(decl)
		s.ver.Send(decl)
		one := smt.Ite(c.name, "1", "0")
		if c.inserted() {
			ins = append(ins, one)
		} else {
			mv = append(mv, one)
		}
		if c.dist > 0 {
			dist = append(dist, smt.Ite(c.name, fmt.Sprint(c.dist), "0"))
		}
	}
	for _, c := range p.structure(s.per) {
		s.syn.Send("(assert " + c + ")")
	}
	s.syn.Send("(minimize "+smt.Sum(ins...)+")", "(minimize "+smt.Sum(mv...)+")", "(minimize "+smt.Sum(dist...)+")")
	s.ver.Send(s.per.Decls()...)
	for _, c := range s.per.Constraints(s.per.PTName) {
		s.ver.Send("(assert " + c + ")")
	}
	s.ver.Send("(declare-const bug Bool)", "(assert (=> bug "+smt.Not(p.assertion(s.per, s.per.PTName))+"))")
	return s, nil
}

// close stops the solvers.
func (s *search) close() {
	s.syn.Close()
	s.ver.Close()
}

// errGaveUp is returned when the search examined maxIterations candidates.
var errGaveUp = errors.New("the search examined its maximum number of candidates")

// next returns the next cheapest repair, nil when there is none.
func (s *search) next() (*solution, error) {
	for ; s.iterations < maxIterations; s.iterations++ {
		r, err := s.syn.Check()
		if err != nil {
			return nil, err
		}
		switch r {
		case smt.Unsat:
			return nil, nil
		case smt.Unknown:
			return nil, errors.New("the solver gave up (time limit)")
		}
		vals, err := s.syn.Bools(s.names...)
		if err != nil {
			return nil, err
		}
		assign := map[string]bool{}
		lits := make([]string, len(s.names))
		for i, n := range s.names {
			assign[n] = vals[i]
			lits[i] = n
			if !vals[i] {
				lits[i] = "(not " + n + ")"
			}
		}
		// BugIsFound: an execution of the candidate that breaks an obligation.
		rv, err := s.ver.CheckAssuming(append(lits, "bug")...)
		if err != nil {
			return nil, err
		}
		if rv == smt.Unknown {
			return nil, errors.New("the solver gave up (time limit)")
		}
		if rv == smt.Sat {
			pts := make([]string, len(s.per.Entries))
			for e := range pts {
				pts[e] = s.per.PTName(e)
			}
			ints, err := s.ver.Ints(pts...)
			if err != nil {
				return nil, err
			}
			val := func(e int) string { return smt.Int(ints[e]) }
			cex := append(s.per.Constraints(val), smt.Not(s.p.assertion(s.per, val)))
			s.syn.Send("(assert " + smt.Not(smt.And(cex...)) + ")")
			continue
		}
		// RepairIsValid: some execution of the repaired trace exists at all.
		if rv, err := s.ver.CheckAssuming(lits...); err != nil || rv != smt.Sat {
			s.syn.Send("(assert " + smt.Not(smt.And(lits...)) + ")")
			continue
		}
		// The next call enumerates another repair: none that makes all these choices again.
		var chosen []string
		for _, n := range s.names {
			if assign[n] {
				chosen = append(chosen, n)
			}
		}
		s.syn.Send("(assert " + smt.Not(smt.And(chosen...)) + ")")
		if ok, _ := s.p.check(assign); !ok {
			s.disagreements++
			continue
		}
		sol := &solution{assign: assign}
		for _, c := range s.p.choices {
			if assign[c.name] {
				sol.chosen = append(sol.chosen, c)
				if c.inserted() {
					sol.inserted++
				} else {
					sol.moved++
				}
			}
		}
		s.iterations++
		return sol, nil
	}
	return nil, errGaveUp
}

// describe lists the chosen choices, for messages.
func (sol *solution) describe() string {
	var parts []string
	for _, c := range sol.chosen {
		what := c.kind.String()
		if c.st != nil {
			what += fmt.Sprintf(" line %d", c.st.file.firstLine(c.st.s))
		}
		if c.gap != nil {
			where := "after"
			if !c.gap.after {
				where = "before"
			}
			what += fmt.Sprintf(" %s line %d", where, c.gap.line)
		}
		parts = append(parts, what)
	}
	return strings.Join(parts, ", ")
}
