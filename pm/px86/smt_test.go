package px86_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/scry-pm/scry/internal/smt"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/px86"
)

// symOp is one instruction of a random trace, applied to both forms of the rules.
type symOp struct {
	in   px86.SymInstr
	addr uint64 // the line's address (64-byte lines at 0 and 64)
}

func randomSymTrace(rng *rand.Rand, n int) []symOp {
	var ops []symOp
	for i := 0; i < n; i++ {
		t := uint32(1 + rng.IntN(2))
		l := uint64(rng.IntN(2))
		var in px86.SymInstr
		switch r := rng.IntN(10); {
		case r < 4:
			in = px86.SymInstr{Kind: px86.SymStore, Lines: []uint64{l}}
		case r < 5:
			in = px86.SymInstr{Kind: px86.SymNTStore, Lines: []uint64{l}}
		case r < 7:
			in = px86.SymInstr{Kind: px86.SymFlush, Flush: uint8(1 + rng.IntN(3)), Lines: []uint64{l}}
		case r < 8:
			in = px86.SymInstr{Kind: px86.SymPersist, Lines: []uint64{l}}
		default:
			in = px86.SymInstr{Kind: px86.SymFence}
		}
		in.Thread, in.Pos, in.Present = t, fmt.Sprint(i+1), "true"
		ops = append(ops, symOp{in: in, addr: l * 64})
	}
	return ops
}

// TestSMTAgreesWithModel checks the constraint form of the rules against the model on random
// traces of two threads and two cache lines: after every instruction, a store is durable in
// every solution of the constraints exactly when the model holds it persisted, and Guaranteed
// says the same; a flush or fence is redundant for the constraints exactly when the model's
// effect says so.
func TestSMTAgreesWithModel(t *testing.T) {
	s, err := smt.Start(context.Background(), smt.Options{})
	if errors.Is(err, smt.ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 3))
	for trial := 0; trial < 40; trial++ {
		ops := randomSymTrace(rng, 3+rng.IntN(7))
		instrs := make([]px86.SymInstr, len(ops))
		for i, o := range ops {
			instrs[i] = o.in
		}
		p := px86.NewPersistency(instrs, "x", int64(len(ops)+10))
		m, _ := px86.New(64)
		s.Push()
		s.Send(p.Decls()...)
		for _, c := range p.Constraints(p.PTName) {
			s.Send("(assert " + c + ")")
		}
		for i, o := range ops {
			o := o
			var redundant bool
			switch o.in.Kind {
			case px86.SymStore:
				m.Store(uint64(i), px86.Origin{Thread: o.in.Thread}, o.addr, 8, 0)
			case px86.SymNTStore:
				m.Store(uint64(i), px86.Origin{Thread: o.in.Thread}, o.addr, 8, px86.NT)
			case px86.SymFlush:
				eff := m.Flush(o.in.Flush, o.addr, px86.Origin{Thread: o.in.Thread})
				redundant = eff.Dirty == 0
			case px86.SymFence:
				redundant = m.Fence(o.in.Thread).Persisted == 0
			case px86.SymPersist:
				m.PersistRange(o.addr, 64)
			}
			desc := fmt.Sprintf("trial %d, after instruction %d of %+v", trial, i, ops)
			if k := o.in.Kind; k == px86.SymFlush || k == px86.SymFence {
				var term string
				if k == px86.SymFence {
					term = p.NonRedundantFence(i)
				} else {
					term = p.NonRedundantFlush(i)
				}
				if got := holds(t, s, term); got == redundant {
					t.Fatalf("%s: constraints say non-redundant=%v, model redundant=%v", desc, got, redundant)
				}
			}
			for e, en := range p.Entries {
				if en.Instr > i {
					continue
				}
				persisted := m.StateOf(uint64(en.Instr), ops[en.Instr].addr) == px86.Persisted
				s.Push()
				s.Send(fmt.Sprintf("(assert (> %s %d))", p.PTName(e), i+1))
				r, err := s.Check()
				s.Pop()
				if err != nil {
					t.Fatal(err)
				}
				if (r == smt.Unsat) != persisted {
					t.Fatalf("%s: store %d: some solution leaves it unpersisted = %v, model persisted = %v", desc, en.Instr, r == smt.Sat, persisted)
				}
				if g := holds(t, s, p.Guaranteed(e, fmt.Sprint(i+1), true)); g != persisted {
					t.Fatalf("%s: store %d: Guaranteed = %v, model persisted = %v", desc, en.Instr, g, persisted)
				}
			}
		}
		s.Pop()
	}
	t.Logf("%d solver checks", s.Checks)
}

// holds reports whether the closed Bool term is true.
func holds(t *testing.T, s *smt.Solver, term string) bool {
	t.Helper()
	s.Push()
	s.Send("(assert " + term + ")")
	r, err := s.Check()
	s.Pop()
	if err != nil {
		t.Fatal(err)
	}
	return r == smt.Sat
}
