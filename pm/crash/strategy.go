package crash

import (
	"encoding/binary"
	"iter"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Strategy chooses which crash states of a crash point to test. Strategies are declared values
// (like the analyzers of package analysis): a name, a one-line doc, the seed the algorithm
// comes from, a count and a generator.
type Strategy struct {
	Name   string
	Doc    string
	Source string // seed document and section
	// NeedsInvariants: the strategy chooses states from Options.Invariants (inferred from the
	// trace beforehand) and yields nothing without them.
	NeedsInvariants bool
	// Lazy: the strategy's states are every state (exhaustive's), but package explore does not
	// run them one by one: one run per crash point branches at the first access to each line
	// whose content the crash leaves undetermined, one branch per distinct content
	// (LineContents), and the leaves of that tree stand for every state.
	Lazy bool

	count func(sp *Space, o Options) *big.Int
	gen   func(sp *Space, o Options, yield func(State) bool)
}

// Count returns the number of states the strategy chooses at a crash point: full before the
// per-point cap (Options.MaxStates), tested after it (what States yields; a lazy strategy's
// states are all covered, whatever the cap).
func (s *Strategy) Count(sp *Space, o Options) (full, tested *big.Int) {
	full = s.count(sp, o)
	tested = full
	if m := o.maxStates(); m >= 0 && full.Cmp(big.NewInt(m)) > 0 && !s.Lazy {
		tested = big.NewInt(m)
	}
	return full, tested
}

// States yields the strategy's states of sp, at most Options.MaxStates of them, each with its
// Prefix flag set. Every yielded State owns its K.
func (s *Strategy) States(sp *Space, o Options) iter.Seq[State] {
	return func(yield func(State) bool) {
		limit, n := o.maxStates(), int64(0)
		s.gen(sp, o, func(st State) bool {
			if limit >= 0 && n >= limit {
				return false
			}
			n++
			st.Prefix = sp.IsPrefix(st.K)
			return yield(st)
		})
	}
}

var strategies = []*Strategy{
	{
		Name:   "exhaustive",
		Doc:    "every crash state: each line's units persisted up to any prefix (Yat's exhaustive search)",
		Source: "Fernandes's thesis (Automatic Testing of PM Applications, 2022) §3.1.1 (Yat), §4.7 (all combinations); WITCHER (SOSP'21) §4.4.1, §6.5",
		count:  func(sp *Space, o Options) *big.Int { return sp.Size() },
		gen:    genExhaustive,
	},
	{
		Name:   "lazy",
		Doc:    "every crash state, explored lazily: one run per crash point that forks at the first access to each undetermined cache line, one branch per distinct content it can have (needs a program built with scry cc; falls back to prefix,random)",
		Source: "Jaaru (ASPLOS'21) §3–4 (lazy exploration, constraint refinement)",
		Lazy:   true,
		count:  func(sp *Space, o Options) *big.Int { return sp.Size() },
		gen:    genExhaustive,
	},
	{
		Name:   "prefix",
		Doc:    "program-order prefixes only: the first j unpersisted units persisted, j = 0..n (pmreorder's accumulative engine; no reordering)",
		Source: "WITCHER (SOSP'21) §6.5 (PMReorder); Fernandes's thesis (Automatic Testing of PM Applications, 2022) §4.4 (snapshots in program order)",
		count:  func(sp *Space, o Options) *big.Int { return big.NewInt(int64(sp.Units()) + 1) },
		gen:    genPrefix,
	},
	{
		Name:   "heuristic",
		Doc:    "the thesis's heuristics: H1 at most N stores reordered per segment, H2 stores older than M segments persisted, H3 ordering timestamps",
		Source: "Fernandes's thesis (Automatic Testing of PM Applications, 2022) §4.7.1-4.7.3, §6.5.1-6.5.2",
		count:  countHeuristic,
		gen:    genHeuristic,
	},
	{
		Name:   "random",
		Doc:    "K distinct states per crash point, each line's prefix length uniform, deterministic for a seed (Yat's random threshold)",
		Source: "Fernandes's thesis (Automatic Testing of PM Applications, 2022) §3.1.1 (Yat tests t reorderings chosen at random)",
		count:  countRandom,
		gen:    genRandom,
	},
	{
		Name:            "invariants",
		Doc:             "before each fence (and library persist), the feasible states violating an inferred likely invariant: one store persisted, a store it must follow not (an earlier one, or the one after it when the program stores it first) (ordering), or one of a group persisted without another (atomicity) (WITCHER)",
		Source:          "WITCHER (SOSP'21) §4.3 (likely invariants), §4.4.1-4.4.2 (feasible violating states before each fence; an image is a fence and a persisted store)",
		NeedsInvariants: true,
		count:           countInvariants,
		gen:             genInvariants,
	},
	{
		Name:   "torn",
		Doc:    "plain (non-atomic) stores of 2 to 8 bytes issued since the last fence persisted in part: the program-order prefix before the store, then that prefix with either half of the store's bytes (and the prefixes with none and all of it, to compare) (Yashme's persistency races; needs a trace from scry cc, whose sites say how the source wrote each store)",
		Source: "Yashme (ASPLOS'22) §2–3 (a compiler may tear a non-atomic store; a post-crash read of one not persisted before the crash is a persistency race)",
		count:  func(sp *Space, o Options) *big.Int { return big.NewInt(int64(4 * len(tearable(sp, o)))) },
		gen:    genTorn,
	},
	{
		Name:   "eadr",
		Doc:    "every crash state eADR (and CXL GPF) allows: the cached stores persisted form a prefix of the trace's store order holding each store its thread fenced after, with any of the non-temporal ones (--persistency eadr adds it)",
		Source: "Intel, eADR: New Opportunities for Persistent Memory Applications (2021): the caches are in the persistence domain; x86-TSO drains a store buffer in order (px86.Profile)",
		count:  countEADR,
		gen:    genEADR,
	},
}

// Strategies returns every strategy, in a fixed order.
func Strategies() []*Strategy { return slices.Clone(strategies) }

// StrategyByName returns the strategy called name, or nil.
func StrategyByName(name string) *Strategy {
	for _, s := range strategies {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// genExhaustive yields every state in mixed-radix order, the first line varying fastest.
func genExhaustive(sp *Space, o Options, yield func(State) bool) {
	lo := make([]int, len(sp.Lines))
	hi := make([]int, len(sp.Lines))
	for i, l := range sp.Lines {
		hi[i] = len(l.Units)
	}
	mixedRadix(lo, hi, true, yield)
}

// mixedRadix yields every k with lo[i] <= k[i] <= hi[i], the first index varying fastest;
// withLow says whether k == lo itself is yielded.
func mixedRadix(lo, hi []int, withLow bool, yield func(State) bool) bool {
	k := slices.Clone(lo)
	if withLow && !yield(State{K: slices.Clone(k)}) {
		return false
	}
	for {
		i := 0
		for ; i < len(k); i++ {
			if k[i] < hi[i] {
				k[i]++
				break
			}
			k[i] = lo[i]
		}
		if i == len(k) {
			return true
		}
		if !yield(State{K: slices.Clone(k)}) {
			return false
		}
	}
}

// genPrefix yields the n+1 program-order prefixes.
func genPrefix(sp *Space, o Options, yield func(State) bool) {
	k := make([]int, len(sp.Lines))
	if !yield(State{K: slices.Clone(k)}) {
		return
	}
	for _, r := range sp.programOrder() {
		k[r.l]++
		if !yield(State{K: slices.Clone(k)}) {
			return
		}
	}
}

// The heuristic strategy (Fernandes's thesis, Automatic Testing of PM Applications, 2022, §4.7). A segment is the stretch of
// the trace between two fences; Unit.Segment numbers it.
//
//   - H2, age to persist (§4.7.2): a unit issued more than M segments before the crash point
//     (M = Options.H2, default 5 after §6.5.2) is "not considered anymore for reorderings":
//     its value is taken as persisted. Aged units are the oldest of their line, so this
//     persists a prefix of each line (the per-line minimum of every state).
//   - H3, ordering timestamps (§4.7.3): every unit gets a timestamp, the segment in which its
//     ordering was fixed: the current segment for a flush-pending unit (its clflushopt/clwb
//     ran in this segment: the segment's "default value" of §4.7.3), its issue segment for a
//     dirty one; units of one line take the running maximum along the line (the thesis gives
//     same-line stores the same timestamp; a later store of a line cannot persist before an
//     earlier one). A unit may be reordered only with units of equal timestamp: a persisted
//     unit implies every unit of a lower timestamp persisted. (clflush, the thesis's
//     non-reorderable flush, already makes its line durable in our model, so its increasing
//     timestamps need no representation.) The states are thus grouped by a frontier
//     timestamp s: all units below s persisted, none above, and any per-line prefix of the
//     units stamped s.
//   - H1, stores per segment (§4.7.1): a group whose units come from more than N distinct
//     stores (N = Options.H1, default 8 after §6.5.1) gets no reorderings, only its
//     program-order prefixes ("this heuristic does not affect the snapshots created by the
//     execution in the program order").
//
// With NoH3 all units form one group (H1 then limits the stores of the whole crash point).
// The states: the one with only the H2 minimum persisted, then for each group g in timestamp
// order, every combination of the group's per-line prefixes other than "none of g" (which
// equals "all of the previous group"), or its program-order prefixes of 1..n_g units when H1
// forbids reordering it. So the count is 1 + Σ_g (Π_lines(c_g,l + 1) − 1 or n_g). Every
// program-order prefix of the units above the H2 minimum is among the states.
type hgroup struct {
	lo, hi  []int // per-line range of k
	units   []ref // program order
	reorder bool  // H1 allows reordering
}

func planHeuristic(sp *Space, o Options) (base []int, groups []hgroup) {
	cur := sp.Segment
	n := len(sp.Lines)
	base = make([]int, n)
	stamps := make([][]uint64, n)
	var all []uint64
	for i, l := range sp.Lines {
		if o.H2 >= 0 {
			m := uint64(o.H2)
			if o.H2 == 0 {
				m = DefaultH2
			}
			for j, u := range l.Units {
				if cur-u.Segment > m {
					base[i] = j + 1
				}
			}
		}
		st := make([]uint64, len(l.Units))
		var run uint64
		for j := base[i]; j < len(l.Units); j++ {
			s := l.Units[j].Segment
			if j < l.Pending {
				s = cur
			}
			if o.NoH3 {
				s = 0
			}
			run = max(run, s)
			st[j] = run
			all = append(all, run)
		}
		stamps[i] = st
	}
	slices.Sort(all)
	all = slices.Compact(all)
	limit := o.H1
	if limit == 0 {
		limit = DefaultH1
	}
	order := sp.programOrder()
	for _, s := range all {
		g := hgroup{lo: make([]int, n), hi: make([]int, n)}
		for i, l := range sp.Lines {
			g.lo[i], g.hi[i] = base[i], base[i]
			for j := base[i]; j < len(l.Units) && stamps[i][j] <= s; j++ {
				if stamps[i][j] < s {
					g.lo[i] = j + 1
				}
				g.hi[i] = j + 1
			}
		}
		stores := map[uint64]bool{}
		for _, r := range order {
			if int(r.u) >= g.lo[r.l] && int(r.u) < g.hi[r.l] {
				g.units = append(g.units, r)
				stores[sp.Lines[r.l].Units[r.u].Store] = true
			}
		}
		g.reorder = limit < 0 || len(stores) <= limit
		groups = append(groups, g)
	}
	return base, groups
}

func countHeuristic(sp *Space, o Options) *big.Int {
	_, groups := planHeuristic(sp, o)
	total := big.NewInt(1)
	var f big.Int
	for _, g := range groups {
		if !g.reorder {
			total.Add(total, f.SetInt64(int64(len(g.units))))
			continue
		}
		p := big.NewInt(1)
		for i := range g.lo {
			p.Mul(p, f.SetInt64(int64(g.hi[i]-g.lo[i]+1)))
		}
		total.Add(total, p.Sub(p, big.NewInt(1)))
	}
	return total
}

func genHeuristic(sp *Space, o Options, yield func(State) bool) {
	base, groups := planHeuristic(sp, o)
	if !yield(State{K: slices.Clone(base)}) {
		return
	}
	for _, g := range groups {
		if g.reorder {
			if !mixedRadix(g.lo, g.hi, false, yield) {
				return
			}
			continue
		}
		k := slices.Clone(g.lo)
		for _, r := range g.units {
			k[r.l]++
			if !yield(State{K: slices.Clone(k)}) {
				return
			}
		}
	}
}

func countRandom(sp *Space, o Options) *big.Int {
	full := sp.Size()
	if k := big.NewInt(int64(o.samples())); full.Cmp(k) > 0 {
		return k
	}
	return full
}

// rng returns the random source of a crash point: a PCG seeded with Options.Seed and the
// space's shape, so that a seed gives the same states for the same crash point on every run and
// every recording of the same run: a line is named by its region and its offset in it, not by its
// address, which changes with where the pool was mapped (a random mapping address gave each
// recording of one workload other states).
func (sp *Space) rng(seed uint64) *rand.Rand {
	var b [8]byte
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		for _, c := range b {
			h = (h ^ uint64(c)) * 1099511628211
		}
	}
	mix(sp.Segment)
	for _, l := range sp.Lines {
		if g := l.Region; g != nil {
			mix(uint64(g.ID))
			mix(l.Addr - g.Base)
		} else {
			mix(l.Addr)
		}
		mix(uint64(len(l.Units)))
		if len(l.Units) > 0 {
			mix(l.Units[0].Seq)
		}
	}
	return rand.New(rand.NewPCG(seed, h))
}

// genRandom samples min(K, size) distinct states: when the space has at most 2K states it
// shuffles all of them and takes K; otherwise it draws each line's prefix length uniformly
// and rejects repeats (each draw is new with probability above 1/2).
func genRandom(sp *Space, o Options, yield func(State) bool) {
	k := o.samples()
	full := sp.Size()
	r := sp.rng(o.Seed)
	if full.Cmp(big.NewInt(int64(2*k))) <= 0 {
		n := int(full.Int64())
		idx := r.Perm(n)[:min(k, n)]
		for _, x := range idx {
			st := State{K: make([]int, len(sp.Lines))}
			for i, l := range sp.Lines { // decode x in mixed radix, the first line fastest
				st.K[i] = x % (len(l.Units) + 1)
				x /= len(l.Units) + 1
			}
			if !yield(st) {
				return
			}
		}
		return
	}
	seen := make(map[string]bool, k)
	key := make([]byte, 0, 4*len(sp.Lines))
	for len(seen) < k {
		st := State{K: make([]int, len(sp.Lines))}
		key = key[:0]
		for i, l := range sp.Lines {
			st.K[i] = r.IntN(len(l.Units) + 1)
			key = binary.AppendUvarint(key, uint64(st.K[i]))
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		if !yield(st) {
			return
		}
	}
}

// MaxTearsPerPoint bounds the stores the torn strategy tears at one crash point: the latest
// issued since the last fence.
const MaxTearsPerPoint = 4

// tearable returns the positions in program order (indexes of sp.programOrder) of the units the
// torn strategy tears at sp: units of stores the source wrote as plain accesses (UnitPlain), 2
// to 8 bytes that change at least two bytes (Unit.Changed: a tear of fewer gives the old or the
// new value), neither merged, non-temporal nor written by a library, issued
// in the space's segment (since the last fence: a store pending across several fences was torn
// at the crash points of its own segment), at most MaxTearsPerPoint, the latest.
func tearable(sp *Space, o Options) []int {
	var out []int
	order := sp.programOrder()
	for j := len(order) - 1; j >= 0 && len(out) < MaxTearsPerPoint; j-- {
		u := sp.Lines[order[j].l].Units[order[j].u]
		if u.Size < 2 || u.Size > 8 || u.Flags&(UnitMerged|UnitNT|UnitExternal) != 0 || u.Flags&UnitPlain == 0 || u.Segment != sp.Segment || bits.OnesCount8(u.Changed) < 2 {
			continue
		}
		out = append(out, j)
	}
	slices.Reverse(out)
	return out
}

// genTorn yields, for each tearable unit u (tearable), the program-order prefix without u, the
// prefix with u, and the prefix without u with the low half, then the high half, of the bytes u
// changes persisted (State.Tear): a compiler that splits the store makes either part reach PM
// first, and a split of the changed bytes gives a value that is neither the old nor the new one
// (the two halves of an 8-byte constant over zero; the two bytes of a small key). The two whole
// states are what a torn state's failure is compared with.
func genTorn(sp *Space, o Options, yield func(State) bool) {
	order := sp.programOrder()
	for _, j := range tearable(sp, o) {
		k := make([]int, len(sp.Lines))
		for _, r := range order[:j] {
			k[r.l]++
		}
		r := order[j]
		with := slices.Clone(k)
		with[r.l]++
		low, high := splitChanged(sp.Lines[r.l].Units[r.u].Changed)
		for _, st := range []State{
			{K: k}, {K: with},
			{K: slices.Clone(k), Tear: &Tear{Line: int(r.l), Keep: low}},
			{K: slices.Clone(k), Tear: &Tear{Line: int(r.l), Keep: high}},
		} {
			if !yield(st) {
				return
			}
		}
	}
}

// splitChanged splits the bytes of a Changed mask (at least two) into its lower half (by
// address; the smaller half when odd) and the rest.
func splitChanged(c uint8) (low, high uint8) {
	n := bits.OnesCount8(c) / 2
	for b := 0; b < 8 && n > 0; b++ {
		if c&(1<<b) != 0 {
			low |= 1 << b
			n--
		}
	}
	return low, c &^ low
}
