package explore

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/big"
	"math/bits"
	"slices"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// Order of exploration: every operation path first. A workload repeats a few kinds of
// operation, and a bug hides in the kind that runs rarely (a hash table's one shrink among two
// thousand inserts, a B-tree's merges, a directory split): a walk in trace order under a time
// budget spends it on the common kinds before it reaches the rare ones. So the operations are
// grouped by their persistent path and the exploration walks the trace in rounds, each round
// taking at most one tranche of every path, the rarest paths done first:
//
//   - An operation's path is what it executes on PM, read from the trace, not from the
//     workload's text: the set of (site, call stack) pairs of its stores (the library calls'
//     writes included), flushes and fences. Two inserts into a leaf share a path; an insert that
//     splits the leaf, a removal that merges two pages, an expansion of a table do not. (This is
//     AGAMOTTO's (OSDI'20, §4.3) observation that bugs hide where PM-modifying instructions are
//     first reached, applied to whole paths rather than single store sites.)
//   - A busy period (operations that overlap, judged together against their legal outcomes) is
//     scheduled as one unit: its path is the sequence of its operations' paths.
//   - The periods of one path are taken in spread order (the first, then the middle one, then
//     the quartiles, ...: the bit-reversal permutation of their indexes), and round r takes
//     those of spread rank j with round(j) = r: the first of every path in round 0, the next in
//     round 1, then 2, 4, 8, ... per path (round 1 + ⌊log2 j⌋), the rest in the last of
//     MaxWalks rounds. A path of c periods is done after about 1 + log2 c rounds: rare paths
//     first.
//
// Each round is one walk of the trace in trace order (a walk replays the whole trace; a round
// only builds crash images in its own operations), and the time budget paces each round on its
// own (explorer.pace, by the estimated crash states of its points, below): a round whose points
// do not fit in the time left explores an evenly spread share of each of its operations' states,
// and the first round explores a point of every operation it has (the last, with a share of its
// states, when the pacing gave the operation none), so a budget that cannot cover everything
// still covers every path before any path a second time.

// MaxWalks bounds the rounds (walks of the trace) of the order of exploration: the periods of a
// path past its first 2^(MaxWalks-2) all go in the last round. Each walk replays the whole trace
// (without running anything where it explores nothing).
const MaxWalks = 8

// opPaths returns, for each of the n operations of the trace at path, a key of its persistent
// path (above; "" for an operation with no store, flush or fence on PM), and the first operation
// of its busy period. Errors: the trace cannot be read.
func opPaths(path string, n int) (paths []string, period []int, err error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	m, err := replay.New(r, replay.Options[struct{}]{})
	if err != nil {
		return nil, nil, err
	}
	h := &pathCollector{m: m, sites: make([]map[uint64]bool, n), period: make([]int, n)}
	for k := range h.period {
		h.period[k] = k
	}
	if err := m.Run(h); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, nil, err
	}
	paths = make([]string, n)
	for k, s := range h.sites {
		paths[k] = pathKey(s)
	}
	return paths, h.period, nil
}

// pathKey is a key of a set of (site, call stack) pairs: a hash of the sorted pairs.
func pathKey(s map[uint64]bool) string {
	if len(s) == 0 {
		return ""
	}
	ids := slices.Sorted(func(yield func(uint64) bool) {
		for id := range s {
			if !yield(id) {
				return
			}
		}
	})
	h := fnv.New128a()
	var b [8]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], id)
		h.Write(b[:])
	}
	return string(h.Sum(nil))
}

// pathCollector gathers the (site, call stack) pairs of each operation's stores, flushes and
// fences, and the busy periods (replay handler).
type pathCollector struct {
	replay.Nop
	m      *replay.Machine[struct{}]
	sites  []map[uint64]bool // per operation index
	period []int             // per operation index: the first operation of its busy period
	first  int               // the first operation of the busy period in progress
}

func (h *pathCollector) OpBegan(ev *trace.Event, op replay.Op) {
	k := int(op.Index)
	if k < 0 || k >= len(h.period) {
		return
	}
	if len(h.m.Ops.InFlight()) == 1 {
		h.first = k // no other operation in flight: a new busy period
	}
	if h.first < len(h.period) {
		h.period[k] = h.first
	}
}

func (h *pathCollector) add(k int, site, stack uint32) {
	if k < 0 || k >= len(h.sites) {
		return
	}
	if h.sites[k] == nil {
		h.sites[k] = map[uint64]bool{}
	}
	h.sites[k][uint64(site)<<32|uint64(stack)] = true
}

// event adds ev's site and call stack to the path of the operation in flight on its thread.
func (h *pathCollector) event(ev *trace.Event) {
	if op, ok := h.m.Ops.Current(ev.Thread); ok {
		h.add(int(op.Index), ev.Site, ev.Context)
	}
}

func (h *pathCollector) Wrote(w *replay.Write) {
	if w.Kind == replay.InitialContent || w.Origin.Op == 0 {
		return
	}
	h.add(int(w.Origin.Op)-1, w.Origin.Site, w.Origin.Stack)
}

func (h *pathCollector) BeforeFlush(ev *trace.Event) { h.event(ev) }
func (h *pathCollector) BeforeFence(ev *trace.Event) { h.event(ev) }

// pathRounds assigns each busy period to a round of the order of exploration (above): paths[i]
// is period i's path key (periods in trace order), rounds at most maxWalks. It returns the round
// of each period and the number of distinct paths.
func pathRounds(paths []string, maxWalks int) (round []int, distinct int) {
	byPath := map[string][]int{}
	var keys []string // in order of first occurrence
	for i, p := range paths {
		if _, ok := byPath[p]; !ok {
			keys = append(keys, p)
		}
		byPath[p] = append(byPath[p], i)
	}
	round = make([]int, len(paths))
	for _, p := range keys {
		for j, i := range spread(byPath[p]) {
			round[i] = min(bits.Len(uint(j)), maxWalks-1) // 0, 1, 2, 2, 3, 3, 3, 3, 4, ...
		}
	}
	return round, len(keys)
}

// spread returns xs in spread order: by the bit-reversal of their index (the first, the middle,
// the quartiles, ...).
func spread(xs []int) []int {
	w := bits.Len(uint(len(xs) - 1))
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	rev := func(i int) uint { return bits.Reverse(uint(i)) >> (bits.UintSize - w) }
	if w == 0 {
		rev = func(int) uint { return 0 }
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(rev(a), rev(b)) })
	out := make([]int, len(xs))
	for j, i := range idx {
		out[j] = xs[i]
	}
	return out
}

// schedule is the order of exploration of a workload of n operations.
type schedule struct {
	walk  []int    // per operation: the round (walk) that explores it
	path  []string // per operation: its busy period's path key
	walks int      // the rounds
	paths int      // the distinct operation paths (of busy periods)
}

// planOrder computes the order of exploration of the trace at path for n operations (above).
// Errors: the trace cannot be read.
func planOrder(path string, n int) (schedule, error) {
	paths, period, err := opPaths(path, n)
	if err != nil {
		return schedule{}, err
	}
	return orderOf(paths, period, MaxWalks), nil
}

// orderOf is planOrder's computation: paths[k] is operation k's path key, period[k] the first
// operation of its busy period.
func orderOf(paths []string, period []int, maxWalks int) schedule {
	var firsts []int // the periods' first operations, in trace order
	key := map[int]string{}
	for k := range paths {
		f := period[k]
		if _, ok := key[f]; !ok {
			firsts = append(firsts, f)
		}
		key[f] += paths[k] + "\x00"
	}
	pp := make([]string, len(firsts))
	for i, f := range firsts {
		pp[i] = key[f]
	}
	rounds, distinct := pathRounds(pp, maxWalks)
	s := schedule{walk: make([]int, len(paths)), path: make([]string, len(paths)), paths: distinct}
	of := map[int]int{}
	for i, f := range firsts {
		of[f] = rounds[i]
		s.walks = max(s.walks, rounds[i]+1)
	}
	for k := range paths {
		s.walk[k], s.path[k] = of[period[k]], key[period[k]]
	}
	return s
}

// passes returns, per round, which operations it explores.
func (s schedule) passes() [][]bool {
	ps := make([][]bool, s.walks)
	for w := range ps {
		ps[w] = make([]bool, len(s.walk))
	}
	for k, w := range s.walk {
		ps[w][k] = true
	}
	return ps
}

// Pacing by crash states. The time budget (explorer.pace) charges each crash point its
// estimated cost, the states the strategies choose there, not one unit per point: the points of
// one operation differ by orders of magnitude (a directory split's stores, unflushed until its
// end, give its last points thousands of program-order prefixes each; an insert's points a few
// dozen states), and a budget paced by points spends itself on the first expensive operation
// it meets. A point whose share of the budget is smaller than its cost but at least
// MinPointShare states is explored in part (thinStates); one whose share is smaller than that
// is explored whole or left out, by credit.

// MinPointShare is the fewest states a crash point is explored with in part under a time
// budget (the random strategy's default sample, crash.DefaultSamples): a point whose share of
// the budget is smaller is explored whole or left out.
const MinPointShare = crash.DefaultSamples

// pointCost is the estimated cost of a crash point of space sp, in crash states: the states the
// strategies choose there (crash.Strategy.Count, after the per-point cap), their union's upper
// bound; at least 1 (the point's image is built whatever its states). The lazy strategy counts
// its space's size up to LazyTreeRuns, the bound on its run's tree.
func pointCost(sp *crash.Space, strategies []*crash.Strategy, o crash.Options) float64 {
	n := 0.0
	for _, s := range strategies {
		if s.Lazy { // one lazy run, whose tree may take as long as LazyTreeRuns runs
			size := sp.Size()
			if size.IsInt64() && size.Int64() < LazyTreeRuns {
				n += float64(size.Int64())
			} else {
				n += LazyTreeRuns
			}
			continue
		}
		_, tested := s.Count(sp, o)
		f, _ := new(big.Float).SetInt(tested).Float64()
		n += f
	}
	return max(n, 1)
}

// stateKey is the key of a crash state of a point (its prefix lengths per line): states with the
// same key are one state, whichever strategies chose it.
func stateKey(k []int) string { return fmt.Sprint(k) }

// thinStates chooses m of the states the strategies choose at a crash point of space sp (their
// union, by stateKey), for a point explored in part under a time budget: the program-order
// prefixes first (a crash that persists the stores in the order the program issued them is the
// state every recovery must handle), spread evenly over them when there are more than m (the
// middles of m equal stretches of the prefix lengths), then the rest, spread evenly in the
// order the strategies choose them. It returns the keys chosen (every state when m is at least
// their number) and the keys of the others, in the strategies' order (the remainder walk
// explores them when time is left: retry.go).
func thinStates(sp *crash.Space, strategies []*crash.Strategy, o crash.Options, m int) (keep map[string]bool, left []string) {
	var prefixes, rest []string
	seen := map[string]bool{}
	for _, s := range strategies {
		for st := range s.States(sp, o) {
			key := stateKey(st.K)
			if seen[key] {
				continue
			}
			seen[key] = true
			if st.Prefix {
				prefixes = append(prefixes, key)
			} else {
				rest = append(rest, key)
			}
		}
	}
	keep = make(map[string]bool, m)
	for _, key := range evenly(prefixes, m) {
		keep[key] = true
	}
	for _, key := range evenly(rest, m-len(keep)) {
		keep[key] = true
	}
	for _, key := range append(prefixes, rest...) {
		if !keep[key] {
			left = append(left, key)
		}
	}
	return keep, left
}

// evenly returns m of xs spread evenly over them (the middles of m equal stretches), in order;
// all of xs when m >= len(xs), none when m <= 0.
func evenly[T any](xs []T, m int) []T {
	if m >= len(xs) {
		return xs
	}
	if m <= 0 {
		return nil
	}
	out := make([]T, m)
	for i := range out {
		out[i] = xs[(2*i+1)*len(xs)/(2*m)]
	}
	return out
}
