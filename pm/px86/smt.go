package px86

import (
	"fmt"

	"github.com/scry-pm/scry/internal/smt"
)

// This file states the model's rules a second time, as SMT-LIB constraints over a symbolic
// trace, for the constraint-based repair of package repair: the persistency formula of Huang's
// dissertation (Constraint-Based Analysis for PM Programs, USC 2023, §3.3.3 and Fig. 3.5:
// Φ_pti, Φ_pts, Φ_fi) over persist-time variables, extended with the rules of this package that
// the figure leaves out (clflush, non-temporal stores, library persists, fences per thread,
// stores to one line persisting in program order) and with the redundancy of flushes and
// fences that the performance oracles report. Instructions may be absent (Present) and their
// positions symbolic (Pos), so that a solver can choose which instructions a repair inserts,
// moves or deletes. TestSMTAgreesWithModel checks, on random traces, that these constraints
// and the model (Of) agree on every store's guaranteed durability and on every redundant
// flush and fence: the rules live here, in two forms kept equal by that test.

// SymKind is the kind of an instruction of a symbolic trace.
type SymKind uint8

// Kinds of symbolic instructions.
const (
	// SymStore writes Lines (one entry per line, as the model keeps it).
	SymStore SymKind = iota + 1
	// SymNTStore is a non-temporal store of Lines: its entries and the earlier entries of its
	// lines are written back at once and durable at its thread's next fence.
	SymNTStore
	// SymFlush writes back Lines[0]: Flush is 1 clflush (durable at once), 2 clflushopt or 3
	// clwb (durable at the flushing thread's next fence), as the trace's flush kinds.
	SymFlush
	// SymFence is an sfence, mfence or locked instruction of Thread.
	SymFence
	// SymPersist makes Lines durable at once: a library call that writes back and fences
	// (pmem_persist, pmemobj_persist, PMDK's commit of a transaction's ranges). LineGuards
	// may make some lines conditional.
	SymPersist
)

// SymInstr is one instruction of a symbolic trace. Pos is an SMT-LIB Int term, its position in
// program order: present instructions must have distinct positions, except that an
// instruction is never compared with itself. Present is a Bool term ("true" for an instruction
// that is always there).
type SymInstr struct {
	Kind   SymKind
	Flush  uint8 // SymFlush: 1 clflush, 2 clflushopt, 3 clwb
	Thread uint32
	// Lines are the cache lines (any consistent numbering: indexes or addresses) the
	// instruction writes, writes back or persists.
	Lines []uint64
	// LineGuards, when set (one per line), are Bool terms under which the instruction
	// touches each line (a commit persists a line only when its range was added).
	LineGuards []string
	Pos        string
	Present    string
}

func (in *SymInstr) guard(j int) string {
	if in.LineGuards == nil {
		return in.Present
	}
	return smt.And(in.Present, in.LineGuards[j])
}

// lineIndex returns the index of line l in in.Lines, -1 when absent.
func (in *SymInstr) lineIndex(l uint64) int {
	for j, x := range in.Lines {
		if x == l {
			return j
		}
	}
	return -1
}

// Entry is one persist-time variable of a Persistency: the part of store Instr on Line.
type Entry struct {
	Instr int
	Line  uint64
}

// Persistency is the persistency formula of a symbolic trace: one persist-time variable per
// store and line it writes (Entries), an integer from the store's position to Never ("not
// durable by the end of the trace").
type Persistency struct {
	Instrs  []SymInstr
	Entries []Entry
	prefix  string
	never   string
}

// NewPersistency returns the formula of instrs; its variables are named prefix + "pt" + the
// entry's number. never must be larger than every position.
func NewPersistency(instrs []SymInstr, prefix string, never int64) *Persistency {
	p := &Persistency{Instrs: instrs, prefix: prefix, never: smt.Int(never)}
	for i := range instrs {
		if k := instrs[i].Kind; k == SymStore || k == SymNTStore {
			for _, l := range instrs[i].Lines {
				p.Entries = append(p.Entries, Entry{Instr: i, Line: l})
			}
		}
	}
	return p
}

// PTName is the persist-time variable of entry e.
func (p *Persistency) PTName(e int) string { return fmt.Sprintf("%spt%d", p.prefix, e) }

// Decls declares the persist-time variables.
func (p *Persistency) Decls() []string {
	out := make([]string, len(p.Entries))
	for e := range p.Entries {
		out[e] = "(declare-const " + p.PTName(e) + " Int)"
	}
	return out
}

// EntryOf returns the entry of store instruction i on line l, -1 when none.
func (p *Persistency) EntryOf(i int, l uint64) int {
	for e, en := range p.Entries {
		if en.Instr == i && en.Line == l {
			return e
		}
	}
	return -1
}

// bound is one rule that bounds an entry's persist time: when Cond holds, the entry is durable
// by position At.
type bound struct{ cond, at string }

// bounds returns the rules that bound entry e's persist time (Fig. 3.5's Φ_fi and the rules the
// figure leaves out; see the package doc): a clflushopt or clwb of its line after it and a
// later fence of the flushing thread; a clflush or library persist of its line after it; a
// non-temporal store to its line (itself included) and a later fence of that store's thread.
func (p *Persistency) bounds(e int) []bound {
	en := p.Entries[e]
	s := &p.Instrs[en.Instr]
	var out []bound
	fenceAfter := func(t uint32, from string) {
		for k := range p.Instrs {
			f := &p.Instrs[k]
			if f.Kind != SymFence || f.Thread != t {
				continue
			}
			out = append(out, bound{cond: smt.And(f.Present, smt.Lt(from, f.Pos)), at: f.Pos})
		}
	}
	for g := range p.Instrs {
		w := &p.Instrs[g]
		j := w.lineIndex(en.Line)
		if j < 0 {
			continue
		}
		switch {
		case w.Kind == SymFlush && w.Flush == 1, w.Kind == SymPersist:
			out = append(out, bound{cond: smt.And(s.Present, w.guard(j), smt.Lt(s.Pos, w.Pos)), at: w.Pos})
		case w.Kind == SymFlush:
			for k := range p.Instrs {
				f := &p.Instrs[k]
				if f.Kind != SymFence || f.Thread != w.Thread {
					continue
				}
				out = append(out, bound{cond: smt.And(s.Present, w.guard(j), f.Present, smt.Lt(s.Pos, w.Pos), smt.Lt(w.Pos, f.Pos)), at: f.Pos})
			}
		case w.Kind == SymNTStore && g == en.Instr:
			fenceAfter(w.Thread, w.Pos)
		case w.Kind == SymNTStore:
			for k := range p.Instrs {
				f := &p.Instrs[k]
				if f.Kind != SymFence || f.Thread != w.Thread {
					continue
				}
				out = append(out, bound{cond: smt.And(s.Present, w.Present, f.Present, smt.Lt(s.Pos, w.Pos), smt.Lt(w.Pos, f.Pos)), at: f.Pos})
			}
		}
	}
	return out
}

// Constraints returns the persistency constraints with pt(e) as entry e's persist time: the
// persist-time names (PTName) for a query, or values of a counterexample for a blocking
// constraint over the other variables (Huang §4.1.1). They are Φ_pti and Φ_pts (a store
// persists between its own position and Never), Φ_fi and the other rules of bounds, and the
// program order of one line (an earlier store of a line persists no later than a later one).
func (p *Persistency) Constraints(pt func(e int) string) []string {
	var out []string
	for e, en := range p.Entries {
		s := &p.Instrs[en.Instr]
		out = append(out, smt.Le(s.Pos, pt(e)), smt.Le(pt(e), p.never))
		for _, b := range p.bounds(e) {
			out = append(out, smt.Implies(b.cond, smt.Le(pt(e), b.at)))
		}
		for e2, en2 := range p.Entries {
			if e2 == e || en2.Line != en.Line {
				continue
			}
			s2 := &p.Instrs[en2.Instr]
			out = append(out, smt.Implies(smt.And(s.Present, s2.Present, smt.Lt(s.Pos, s2.Pos)), smt.Le(pt(e), pt(e2))))
		}
	}
	return dropTrue(out)
}

func dropTrue(in []string) []string {
	out := in[:0]
	for _, c := range in {
		if c != "true" {
			out = append(out, c)
		}
	}
	return out
}

// Guaranteed returns a Bool term: the rules make entry e durable by an instruction placed
// before position at (at or before it with orEqual). It is the model's "persisted" state just
// before (after) the instruction at that position.
func (p *Persistency) Guaranteed(e int, at string, orEqual bool) string {
	var terms []string
	for _, b := range p.bounds(e) {
		cmp := smt.Lt(b.at, at)
		if orEqual {
			cmp = smt.Le(b.at, at)
		}
		terms = append(terms, smt.And(b.cond, cmp))
	}
	return smt.Or(terms...)
}

// writtenBack returns a Bool term: entry e was written back by a write-back of thread t (a
// clflushopt, clwb or non-temporal store, itself included) before position at.
func (p *Persistency) writtenBack(e int, t uint32, at string) string {
	en := p.Entries[e]
	s := &p.Instrs[en.Instr]
	var terms []string
	for g := range p.Instrs {
		w := &p.Instrs[g]
		if w.Thread != t {
			continue
		}
		j := w.lineIndex(en.Line)
		if j < 0 {
			continue
		}
		switch {
		case w.Kind == SymFlush && w.Flush != 1:
			terms = append(terms, smt.And(w.guard(j), smt.Lt(s.Pos, w.Pos), smt.Lt(w.Pos, at)))
		case w.Kind == SymNTStore && g == en.Instr:
			terms = append(terms, smt.Lt(w.Pos, at))
		case w.Kind == SymNTStore:
			terms = append(terms, smt.And(w.Present, smt.Lt(s.Pos, w.Pos), smt.Lt(w.Pos, at)))
		}
	}
	return smt.Or(terms...)
}

// NonRedundantFlush returns a Bool term: flush instruction i (SymFlush) writes back a store
// its thread has not already written back and that is not durable yet: the negation of the
// redundant-flush oracle (the model's FlushEffect.Dirty > 0).
func (p *Persistency) NonRedundantFlush(i int) string {
	f := &p.Instrs[i]
	l := f.Lines[0]
	var terms []string
	for e, en := range p.Entries {
		if en.Line != l {
			continue
		}
		s := &p.Instrs[en.Instr]
		terms = append(terms, smt.And(s.Present, smt.Lt(s.Pos, f.Pos),
			smt.Not(p.Guaranteed(e, f.Pos, false)), smt.Not(p.writtenBack(e, f.Thread, f.Pos))))
	}
	return smt.Or(terms...)
}

// NonRedundantFence returns a Bool term: fence instruction i (SymFence) makes some store
// durable, one its thread wrote back that no earlier rule made durable: the negation of the
// redundant-fence oracle (the model's FenceEffect.Persisted > 0).
func (p *Persistency) NonRedundantFence(i int) string {
	k := &p.Instrs[i]
	var terms []string
	for e := range p.Entries {
		s := &p.Instrs[p.Entries[e].Instr]
		terms = append(terms, smt.And(s.Present, smt.Lt(s.Pos, k.Pos),
			p.writtenBack(e, k.Thread, k.Pos), smt.Not(p.Guaranteed(e, k.Pos, false))))
	}
	return smt.And(k.Present, smt.Or(terms...))
}
