package crash

import (
	"encoding/binary"
	"math/big"
	"slices"
)

// Invariant is a likely invariant over store sites, inferred from the trace (WITCHER,
// WITCHER (SOSP'21) §4.3; package infer produces them, the caller converts). It is
// one of:
//
//   - an ordering invariant (Before and After set): the store at site Before must persist
//     before the store at site After it is paired with. The pair is the After store and the
//     latest Before store before it in program order; or, when the program stores After first
//     (a token stored before the key it guards, which the readers still read as "token, then
//     key"), the After store and the first Before store after it, before the next After store;
//   - an atomicity invariant (Sites set): stores of these sites persist atomically, all or
//     none; with a single site, any two different stores of that site.
//
// The crash package does not infer anything: Options.Invariants carries them to the invariants
// strategy, which yields the crash states violating them.
type Invariant struct {
	ID            int    // stable identifier (infer.Property.ID), reported with the states
	Rule          string // the rule that produced it (RO1, MPB, RA1, ...)
	Before, After uint32 // ordering: the store at Before must persist before the store at After
	Sites         []uint32
	Text          string // human-readable statement, for reports
}

// Ordering reports whether iv is an ordering invariant (else an atomicity invariant).
func (iv Invariant) Ordering() bool { return iv.Before != 0 || iv.After != 0 }

// The invariants strategy (WITCHER §4.4.2): "before each fence", check whether a crash state
// violating a likely invariant is feasible under the cache/NVM simulation rules, and test only
// those states; WITCHER's crash image is a pair (fence, persisted store): crash before this
// fence with this store persisted.
//
// Crash points. The strategy yields states at crash points of kind BeforeFence, BeforeFlush
// and BeforeLibrary only. A fence is where the persistency state changes (§4.4.2), and so is a
// clflush, which is durable at once without one (code that persists with clflush alone has no
// other point where a reordering can show); a library
// point precedes a PMDK call that makes bytes durable (a run of persisted EXTERNAL_WRITEs, an
// outermost TX_COMMIT), which flushes and fences inside the uninstrumented library: the walk
// opens a new segment there exactly as for a FENCE record, and the units still unpersisted
// before it are the reorderings that call's fence ends. Other points yield nothing: an unmap or
// the end of the program is no fence (a store never flushed is the trace oracles'
// unpersisted-store finding, not an ordering question), and a point after a store
// (Options.AfterStores) is not where WITCHER checks; the state space of the next fence point
// contains every reordering that store can take part in.
//
// States. A candidate is one store X (one dynamic store, all its units) whose site is the After
// site of an ordering invariant or a member of an atomicity invariant. Its state persists X,
// with every unit earlier on X's lines (a line persists in program order, so this is the
// least that persisting X takes: Space's prefix vectors), and nothing else. The state is kept
// when X itself violates an invariant in it:
//
//   - ordering (Before b, After a): X is of site a and a store of site b earlier in program
//     order is not fully persisted (some unit of it outside its line's persisted prefix), or
//     the first store of b after X (before the next store of a) is not: the program stored X
//     first, and persisting X alone breaks the pair. A store of b earlier on the same line as X
//     is persisted with it: that violation is infeasible and is not yielded;
//   - atomicity (Sites): X is of a member site and a store of another member site is not fully
//     persisted (for a single site: another store of that site).
//
// A kept state is reported with every invariant it violates, including those violated through
// the stores persisted along with X (State.Invariants); a state that violates invariants only
// through them is not kept, since a smaller state (that store's own) shows the same violation.
// Only invariants whose sites have unpersisted stores at the crash point are considered.
//
// Only unpersisted stores are in the space: a store already durable at the crash point cannot
// be left unpersisted, so invariants whose Before store is durable yield nothing there. Equal
// prefix vectors from different candidates are yielded once, with the IDs of every invariant
// the state violates (State.Invariants), in the program order of the candidates. The count is
// the number of distinct violating states: it enumerates the candidates (one per unpersisted
// store of a named site), no closed form.
type invPlan struct {
	stores []istore // the unpersisted stores of the sites the invariants name, by Store id
	cands  []int    // indices into stores of the candidates, in program order
	invs   []Invariant
	sites  map[uint32]int // site -> index into per-site aggregates
	pers   []bool         // per store: fully persisted in the state violated saw last
}

// istore is one unpersisted store of a relevant site: its units as (line, index) pairs.
type istore struct {
	id    uint64
	site  uint32
	units []ref
}

// invariantPoint reports whether the invariants strategy tests crash points of kind k.
func invariantPoint(k PointKind) bool {
	return k == BeforeFence || k == BeforeFlush || k == BeforeLibrary
}

func planInvariants(sp *Space, o Options) *invPlan {
	if len(o.Invariants) == 0 || !invariantPoint(sp.Kind) || sp.Units() == 0 {
		return nil
	}
	// The unpersisted stores per site: an invariant can be violated here only when the space
	// holds a store of each side (ordering; two instances when Before == After) or stores of
	// two member sites (atomicity; two instances of a single site).
	storeSite := map[uint64]uint32{}
	for _, l := range sp.Lines {
		for _, u := range l.Units {
			storeSite[u.Store] = u.Site
		}
	}
	present := map[uint32]int{}
	for _, site := range storeSite {
		present[site]++
	}
	p := &invPlan{sites: map[uint32]int{}}
	cand := map[uint32]bool{}
	add := func(s uint32) {
		if _, ok := p.sites[s]; !ok {
			p.sites[s] = len(p.sites)
		}
	}
	for _, iv := range o.Invariants {
		if iv.Ordering() {
			if present[iv.Before] == 0 || present[iv.After] == 0 || iv.Before == iv.After && present[iv.Before] < 2 {
				continue
			}
			p.invs = append(p.invs, iv)
			add(iv.Before)
			add(iv.After)
			cand[iv.After] = true
			continue
		}
		n, stores := 0, 0
		for _, s := range iv.Sites {
			if present[s] > 0 {
				n++
				stores += present[s]
			}
		}
		if len(iv.Sites) == 1 && stores < 2 || len(iv.Sites) > 1 && n < 2 {
			continue
		}
		p.invs = append(p.invs, iv)
		for _, s := range iv.Sites {
			add(s)
			cand[s] = true
		}
	}
	if len(p.invs) == 0 {
		return nil
	}
	idx := map[uint64]int{}
	for i, l := range sp.Lines {
		for j, u := range l.Units {
			if _, ok := p.sites[u.Site]; !ok {
				continue
			}
			k, ok := idx[u.Store]
			if !ok {
				k = len(p.stores)
				idx[u.Store] = k
				p.stores = append(p.stores, istore{id: u.Store, site: u.Site})
			}
			p.stores[k].units = append(p.stores[k].units, ref{int32(i), int32(j)})
		}
	}
	slices.SortFunc(p.stores, func(a, b istore) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	for i, s := range p.stores {
		if cand[s.site] {
			p.cands = append(p.cands, i)
		}
	}
	return p
}

// siteAgg is what a state does to the unpersisted stores of one site.
type siteAgg struct {
	maxPers, minUnp uint64 // latest fully persisted store id, earliest not fully persisted
	anyPers, anyUnp bool
}

// violated returns the IDs of the invariants k violates, in invariant order (nil for none).
func (p *invPlan) violated(k []int, agg []siteAgg) []int {
	clear(agg)
	if len(p.pers) != len(p.stores) {
		p.pers = make([]bool, len(p.stores))
	}
	for i, s := range p.stores {
		a := &agg[p.sites[s.site]]
		pers := true
		for _, r := range s.units {
			if int(r.u) >= k[r.l] {
				pers = false
				break
			}
		}
		p.pers[i] = pers
		if pers {
			a.maxPers, a.anyPers = max(a.maxPers, s.id), true
		} else if !a.anyUnp || s.id < a.minUnp {
			a.minUnp, a.anyUnp = s.id, true
		}
	}
	var ids []int
	for _, iv := range p.invs {
		if iv.Ordering() {
			b, a := agg[p.sites[iv.Before]], agg[p.sites[iv.After]]
			if a.anyPers && b.anyUnp && (b.minUnp < a.maxPers || p.storedFirst(iv, ^uint64(0))) {
				ids = append(ids, iv.ID)
			}
			continue
		}
		if atomicityViolated(iv.Sites, p.sites, agg) {
			ids = append(ids, iv.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// storedFirst reports whether, in the state violated saw last (p.pers), a persisted store of
// iv's After site (the one with id x; any, for x = ^0) is followed in program order by a store of
// its Before site that is not persisted, before the next store of the After site: the program
// stored After first, and the pair is broken (the second form of an ordering invariant). Not
// when the reverse ordering invariant is there too (a cycle: an atomicity question).
func (p *invPlan) storedFirst(iv Invariant, x uint64) bool {
	if iv.Before == iv.After {
		return false // instances of one site: the earlier one is the Before
	}
	for _, o := range p.invs {
		if o.Ordering() && o.Before == iv.After && o.After == iv.Before {
			return false // a cycle: the two sites must persist together (atomicity), not in order
		}
	}
	waiting := false // a persisted After store waits for its Before store
	for i, s := range p.stores {
		switch s.site {
		case iv.After:
			waiting = p.pers[i] && (x == ^uint64(0) || s.id == x)
		case iv.Before:
			if waiting && !p.pers[i] {
				return true
			}
			waiting = false
		}
	}
	return false
}

func atomicityViolated(sites []uint32, index map[uint32]int, agg []siteAgg) bool {
	if len(sites) == 1 {
		a := agg[index[sites[0]]]
		return a.anyPers && a.anyUnp
	}
	for i, s := range sites {
		if !agg[index[s]].anyPers {
			continue
		}
		for j, t := range sites {
			if j != i && t != s && agg[index[t]].anyUnp {
				return true
			}
		}
	}
	return false
}

// own reports whether the state (aggregated in agg) violates an invariant through the
// persisted candidate store x itself: x is the After store of an ordering invariant whose
// Before has an earlier store unpersisted, or a member of an atomicity invariant with another
// member store unpersisted. A state persisting x may also persist other stores (earlier on
// x's lines) and violate invariants through them; it is yielded only for x's own violations,
// the least state showing them ("nothing else persisted").
func (p *invPlan) own(x istore, agg []siteAgg) bool {
	for _, iv := range p.invs {
		if iv.Ordering() {
			if b := agg[p.sites[iv.Before]]; iv.After == x.site && b.anyUnp && (b.minUnp < x.id || p.storedFirst(iv, x.id)) {
				return true
			}
			continue
		}
		if !slices.Contains(iv.Sites, x.site) {
			continue
		}
		if len(iv.Sites) == 1 && agg[p.sites[x.site]].anyUnp {
			return true
		}
		for _, t := range iv.Sites {
			if t != x.site && agg[p.sites[t]].anyUnp {
				return true
			}
		}
	}
	return false
}

// each calls yield with every distinct violating state, in candidate order.
func (p *invPlan) each(sp *Space, yield func(State) bool) {
	if p == nil {
		return
	}
	agg := make([]siteAgg, len(p.sites))
	seen := map[string]bool{}
	key := make([]byte, 0, 4*len(sp.Lines))
	k := make([]int, len(sp.Lines))
	for _, c := range p.cands {
		x := p.stores[c]
		clear(k)
		for _, r := range x.units {
			k[r.l] = max(k[r.l], int(r.u)+1)
		}
		key = key[:0]
		for _, v := range k {
			key = binary.AppendUvarint(key, uint64(v))
		}
		if seen[string(key)] {
			continue
		}
		ids := p.violated(k, agg)
		if len(ids) == 0 || !p.own(x, agg) {
			continue
		}
		seen[string(key)] = true
		if !yield(State{K: slices.Clone(k), Invariants: ids}) {
			return
		}
	}
}

func genInvariants(sp *Space, o Options, yield func(State) bool) {
	planInvariants(sp, o).each(sp, yield)
}

func countInvariants(sp *Space, o Options) *big.Int {
	n := int64(0)
	planInvariants(sp, o).each(sp, func(State) bool { n++; return true })
	return big.NewInt(n)
}
