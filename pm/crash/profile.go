package crash

import (
	"math/big"

	"github.com/scry-pm/scry/pm/px86"
)

// UnitVisible marks a unit that the px86 model (kept under ADR) leaves unpersisted but that the
// eADR profile makes durable: a cached store its thread fenced after (px86.Of.Visible).
const UnitVisible uint8 = 1 << 6

// Allows reports whether persistency profile p allows crash state st of s. Every state of a
// Space is one ADR allows (the space is built under ADR's rules). Under EADR (px86.Profile) the
// cached units persisted form a prefix of the trace's store order that holds every unit a fence
// of its thread made durable (UnitVisible); non-temporal units are free. The trace's order is
// taken as the order stores became globally visible, across threads too: a store before a
// release that another thread acquired is visible before that thread's later stores, so no state
// breaks happens-before (per-thread prefixes alone would; docs/persistency-profiles.md, "Limits").
// A torn unit (State.Tear) ends the prefix: the first part of a split store.
func (s *Space) Allows(p px86.Profile, st State) bool {
	if p != px86.EADR {
		return true
	}
	if len(st.K) != len(s.Lines) {
		return false
	}
	gap := false // an ordered unit before this one is not persisted
	for _, r := range s.programOrder() {
		u := &s.Lines[r.l].Units[r.u]
		if !eadrOrdered(u) {
			continue
		}
		k := st.K[r.l]
		persisted := int(r.u) < k
		torn := st.Tear != nil && st.Tear.Line == int(r.l) && int(r.u) == k
		switch {
		case persisted && gap:
			return false
		case u.Flags&UnitVisible != 0 && !persisted:
			return false
		case torn:
			gap = true
		case !persisted:
			gap = true
		}
	}
	return true
}

// eadrOrdered reports whether a unit is one eADR persists in store order: a cached store (a
// library's write counts as one), not a non-temporal store.
func eadrOrdered(u *Unit) bool { return u.Flags&UnitNT == 0 }

// eadrPlan is the shape of a space's eADR states: its ordered units in program order, and how
// many of them every state persists (through the last visible one).
type eadrPlan struct {
	units []ref
	min   int
}

func planEADR(sp *Space) eadrPlan {
	var p eadrPlan
	for _, r := range sp.programOrder() {
		u := &sp.Lines[r.l].Units[r.u]
		if !eadrOrdered(u) {
			continue
		}
		p.units = append(p.units, r)
		if u.Flags&UnitVisible != 0 {
			p.min = len(p.units)
		}
	}
	return p
}

// walk calls fn with each prefix length j of the ordered units from p.min on that some state
// has, and each line's range of persisted units [lo[i], hi[i]] for it (at least through its last
// unit in the prefix, at most up to its first ordered unit past it); wide lists the lines whose
// range holds more than one choice. fn must not keep lo, hi or wide; it returns false to stop.
// Moving one unit into the prefix changes one line's range, so the walk costs
// O(units + lines + calls × len(wide)).
func (p eadrPlan) walk(sp *Space, fn func(j int, lo, hi []int, wide map[int]bool) bool) {
	lo := make([]int, len(sp.Lines))
	hi := make([]int, len(sp.Lines))
	next := make([]int, len(sp.Lines)) // per line, its ordered units' position in p.units
	byLine := make([][]int, len(sp.Lines))
	for i, l := range sp.Lines {
		hi[i] = len(l.Units)
	}
	for n, r := range p.units {
		byLine[r.l] = append(byLine[r.l], n)
		if len(byLine[r.l]) == 1 {
			hi[r.l] = int(r.u)
		}
	}
	wide := map[int]bool{}
	invalid := 0
	set := func(i int, nlo, nhi int) {
		if lo[i] > hi[i] {
			invalid--
		}
		lo[i], hi[i] = nlo, nhi
		delete(wide, i)
		switch {
		case lo[i] > hi[i]:
			invalid++
		case hi[i] > lo[i]:
			wide[i] = true
		}
	}
	for i := range sp.Lines {
		set(i, lo[i], hi[i])
	}
	for j := 0; ; j++ {
		if j >= p.min && invalid == 0 && !fn(j, lo, hi, wide) {
			return
		}
		if j == len(p.units) {
			return
		}
		r := p.units[j]
		next[r.l]++
		nhi := len(sp.Lines[r.l].Units)
		if k := next[r.l]; k < len(byLine[r.l]) {
			nhi = int(p.units[byLine[r.l][k]].u)
		}
		set(int(r.l), max(lo[r.l], int(r.u)+1), nhi)
	}
}

// genEADR yields every crash state eADR allows (Space.Allows): for each prefix of the ordered
// units that holds the visible ones, every per-line choice of the non-temporal units around it.
func genEADR(sp *Space, o Options, yield func(State) bool) {
	planEADR(sp).walk(sp, func(_ int, lo, hi []int, _ map[int]bool) bool {
		return mixedRadix(lo, hi, true, yield)
	})
}

// countEADR counts genEADR's states: one per prefix, times the choices of the lines that have
// several.
func countEADR(sp *Space, o Options) *big.Int {
	n := new(big.Int)
	var f big.Int
	planEADR(sp).walk(sp, func(_ int, lo, hi []int, wide map[int]bool) bool {
		prod := big.NewInt(1)
		for i := range wide {
			prod.Mul(prod, f.SetInt64(int64(hi[i]-lo[i]+1)))
		}
		n.Add(n, prod)
		return true
	})
	return n
}
