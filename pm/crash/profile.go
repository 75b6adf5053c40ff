package crash

import (
	"math/big"
	"slices"

	"github.com/scry-pm/scry/pm/px86"
)

// UnitVisible marks a unit that the px86 model (kept under ADR) leaves unpersisted but that the
// eADR profile makes durable: a cached store its thread fenced after (px86.Of.Visible).
const UnitVisible uint8 = 1 << 6

// maxProfileCombos bounds the per-thread prefix combinations countEADR enumerates exactly; past
// it the count is an upper bound (the product of the choices).
const maxProfileCombos = 1 << 12

// Allows reports whether persistency profile p allows crash state st of s. Every state of a
// Space is one ADR allows (the space is built under ADR's rules). Under EADR (px86.Profile) a
// state must persist every unit its thread fenced after (UnitVisible) and, for each thread, a
// prefix in store order of its other cached units (TSO drains a store buffer in order); its
// non-temporal units are free. A torn unit (State.Tear) counts as the last unit of its thread's
// prefix: the first half of a split store, with nothing of the thread after it.
func (s *Space) Allows(p px86.Profile, st State) bool {
	if p != px86.EADR {
		return true
	}
	if len(st.K) != len(s.Lines) {
		return false
	}
	gap := map[uint32]bool{} // threads with an unpersisted ordered unit so far
	for _, r := range s.programOrder() {
		l := s.Lines[r.l]
		u := &l.Units[r.u]
		k := st.K[r.l]
		persisted := int(r.u) < k
		torn := st.Tear != nil && st.Tear.Line == int(r.l) && int(r.u) == k
		if u.Flags&UnitVisible != 0 {
			if !persisted {
				return false
			}
			continue
		}
		if !eadrOrdered(u) {
			continue
		}
		switch {
		case persisted && gap[u.Thread]:
			return false
		case torn:
			if gap[u.Thread] {
				return false
			}
			gap[u.Thread] = true
		case !persisted:
			gap[u.Thread] = true
		}
	}
	return true
}

// eadrOrdered reports whether a unit not yet visible is one eADR persists in its thread's store
// order: a cached store (a library's write counts as one), not a non-temporal store.
func eadrOrdered(u *Unit) bool { return u.Flags&UnitNT == 0 }

// eadrPlan is the shape of a space's eADR states: each thread's ordered units, in program
// order, by their line and position.
type eadrPlan struct {
	threads [][]ref
	// minK is, per line, the units that must persist whatever the prefixes (visible ones).
	minK []int
}

func planEADR(sp *Space) eadrPlan {
	var p eadrPlan
	p.minK = make([]int, len(sp.Lines))
	idx := map[uint32]int{}
	for _, r := range sp.programOrder() {
		u := &sp.Lines[r.l].Units[r.u]
		if u.Flags&UnitVisible != 0 {
			p.minK[r.l] = max(p.minK[r.l], int(r.u)+1)
			continue
		}
		if !eadrOrdered(u) {
			continue
		}
		i, ok := idx[u.Thread]
		if !ok {
			i = len(p.threads)
			idx[u.Thread] = i
			p.threads = append(p.threads, nil)
		}
		p.threads[i] = append(p.threads[i], r)
	}
	return p
}

// bounds returns, for the per-thread prefix lengths j, each line's range of persisted units
// [lo, hi]: at least through its last unit that must persist, at most up to its first ordered
// unit that must not; ok is false when some line has no such range.
func (p eadrPlan) bounds(sp *Space, j []int) (lo, hi []int, ok bool) {
	lo = slices.Clone(p.minK)
	hi = make([]int, len(sp.Lines))
	for i, l := range sp.Lines {
		hi[i] = len(l.Units)
	}
	for t, units := range p.threads {
		for n, r := range units {
			if n < j[t] {
				lo[r.l] = max(lo[r.l], int(r.u)+1)
			} else {
				hi[r.l] = min(hi[r.l], int(r.u))
			}
		}
	}
	for i := range lo {
		if lo[i] > hi[i] {
			return nil, nil, false
		}
	}
	return lo, hi, true
}

// combos yields every choice of per-thread prefix lengths, the first thread varying fastest.
func (p eadrPlan) combos(yield func(j []int) bool) {
	j := make([]int, len(p.threads))
	for {
		if !yield(j) {
			return
		}
		i := 0
		for ; i < len(j); i++ {
			if j[i] < len(p.threads[i]) {
				j[i]++
				break
			}
			j[i] = 0
		}
		if i == len(j) {
			return
		}
	}
}

// genEADR yields every crash state eADR allows (Space.Allows): for each choice of per-thread
// prefixes of the ordered units, every per-line choice of the free (non-temporal) units
// between them.
func genEADR(sp *Space, o Options, yield func(State) bool) {
	p := planEADR(sp)
	p.combos(func(j []int) bool {
		lo, hi, ok := p.bounds(sp, j)
		if !ok {
			return true
		}
		return mixedRadix(lo, hi, true, yield)
	})
}

// countEADR counts genEADR's states: exactly up to maxProfileCombos prefix combinations, an
// upper bound past them.
func countEADR(sp *Space, o Options) *big.Int {
	p := planEADR(sp)
	combos := big.NewInt(1)
	for _, t := range p.threads {
		combos.Mul(combos, big.NewInt(int64(len(t))+1))
	}
	n := new(big.Int)
	if combos.Cmp(big.NewInt(maxProfileCombos)) > 0 {
		// Upper bound: every combination with every choice of the free units.
		lo, hi := p.minK, make([]int, len(sp.Lines))
		for i, l := range sp.Lines {
			hi[i] = len(l.Units)
		}
		free := big.NewInt(1)
		for i, l := range sp.Lines {
			nt := 0
			for _, u := range l.Units[lo[i]:hi[i]] {
				if !eadrOrdered(&u) {
					nt++
				}
			}
			free.Mul(free, big.NewInt(int64(nt)+1))
		}
		return n.Mul(combos, free)
	}
	var f big.Int
	p.combos(func(j []int) bool {
		lo, hi, ok := p.bounds(sp, j)
		if !ok {
			return true
		}
		prod := big.NewInt(1)
		for i := range lo {
			prod.Mul(prod, f.SetInt64(int64(hi[i]-lo[i]+1)))
		}
		n.Add(n, prod)
		return true
	})
	return n
}
