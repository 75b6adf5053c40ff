package explore

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"time"

	"github.com/scry-pm/scry/internal/budget"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/pmdk"
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
// own (pacer.pace, by the estimated crash states of its points, below): a round whose points
// do not fit in the time left explores an evenly spread share of each of its operations' states,
// and the first round explores a point of every operation it has (the last, with a share of its
// states, when the pacing gave the operation none), so a budget that cannot cover everything
// still covers every path before any path a second time.

// MaxWalks bounds the rounds (walks of the trace) of the order of exploration: the periods of a
// path past its first 2^(MaxWalks-2) all go in the last round. Each walk replays the whole trace
// (without running anything where it explores nothing).
const MaxWalks = 8

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
// fences, and the busy periods: a replay handler observing the plan's walk (makePlan), with the
// replay's operations in flight, ops. mapped is called with every region mapped.
type pathCollector struct {
	replay.Nop
	ops    *replay.Ops
	sites  []map[uint64]bool // per operation index
	period []int             // per operation index: the first operation of its busy period
	first  int               // the first operation of the busy period in progress
	mapped func(pmdk.Region)
}

func newPathCollector(ops *replay.Ops, n int, mapped func(pmdk.Region)) *pathCollector {
	h := &pathCollector{ops: ops, sites: make([]map[uint64]bool, n), period: make([]int, n), mapped: mapped}
	for k := range h.period {
		h.period[k] = k
	}
	return h
}

// keys returns each operation's path key (pathKey; "" for an operation with no store, flush or
// fence on PM).
func (h *pathCollector) keys() []string {
	paths := make([]string, len(h.sites))
	for k, s := range h.sites {
		paths[k] = pathKey(s)
	}
	return paths
}

func (h *pathCollector) Mapped(_ *trace.Event, r pmdk.Region) { h.mapped(r) }

func (h *pathCollector) OpBegan(ev *trace.Event, op replay.Op) {
	k := int(op.Index)
	if k < 0 || k >= len(h.period) {
		return
	}
	if len(h.ops.InFlight()) == 1 {
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
	if op, ok := h.ops.Current(ev.Thread); ok {
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

// orderOf computes the order of exploration (above): paths[k] is operation k's path key, period[k] the first
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

// Pacing by crash states. The time budget (pacer.pace) charges each crash point its
// estimated cost, the states the strategies choose there, not one unit per point: the points of
// one operation differ by orders of magnitude (a directory split's stores, unflushed until its
// end, give its last points thousands of program-order prefixes each; an insert's points a few
// dozen states), and a budget paced by points spends itself on the first expensive operation
// it meets. A point whose share of the budget is smaller than its cost but at least
// MinPointShare states is explored in part (thinStates); one whose share is smaller than that
// is explored whole or left out, by credit.

// pacer paces the walks by the time budget (Options.TimeBudget) and keeps what it left out for
// the remainder walk (retry.go): the order of exploration, the wall time and estimated cost of
// the batches judged, the credit of the pacing, the crash points and their costs.
type pacer struct {
	budget time.Duration    // Options.TimeBudget (0: none)
	now    func() time.Time // the exploration's clock (Options.Now)
	// testClock says now is a test's clock (Options.Now), which sets no deadline on the wall
	// clock: the runs past a bound are not begun rather than stopped.
	testClock bool
	// order is the order of exploration (the rounds of operation paths).
	order schedule
	// budgetStart is when the time budget began (Options.Start); ranTime, ranStates and ranCost
	// the wall time of the batches judged so far, their states and the estimated cost of their
	// crash points (queued, pace); credit is the pacing's share of estimated states earned and
	// not yet spent (negative: a point of the first round explored on credit).
	budgetStart time.Time
	ranTime     time.Duration
	ranStates   int
	ranCost     float64
	credit      float64
	// walkRanTime and walkRanCost are ranTime and ranCost of the walk in progress.
	walkRanTime time.Duration
	walkRanCost float64
	// budgetStopped counts the crash states not judged because the budget's end stopped their
	// runs; budgetStop says the walk stopped there (the points it did not reach are left out).
	budgetStopped int
	budgetStop    bool
	// allPoints is the number of crash points inside operations (plan), opPoints those of each
	// operation, visited those the walks reached, opVisited those reached per operation.
	allPoints, visited  int
	opPoints, opVisited []int
	// opCost is the estimated cost of each operation's crash points, in crash states
	// (pointCost), walkCost and walkVisitedCost those of the walk in progress and of the points
	// it reached, allCost and visitedCost the same over every walk (overrun).
	opCost                    []float64
	walkCost, walkVisitedCost float64
	allCost, visitedCost      float64
	// retry holds the crash states whose runs an overrun bound stopped, by crash point (trace
	// event) and state key, skipped the points the pacing left out, retryOp their operations, for
	// the remainder walk (retry.go); remainder says the walk in progress is that walk, lastWalk
	// that it has begun (nothing is kept for a later one).
	retry     map[uint64]map[string]bool
	skipped   map[uint64]float64 // crash points the pacing left out, by trace event: their cost
	retryOp   map[int]bool
	remainder bool
	lastWalk  bool
}

// setPlan takes the crash points and costs of each operation from the plan.
func (p *pacer) setPlan(pl *plan) {
	p.order, p.opPoints, p.opCost = pl.order, pl.opPoints, pl.opCost
	p.opVisited = make([]int, len(p.opPoints))
	for _, c := range p.opCost {
		p.allCost += c
	}
	for _, n := range p.opPoints {
		p.allPoints += n
	}
}

// beginWalk starts the pacing of a walk of the operations inPass: its cost is that of their
// crash points; the remainder walk's, the states it retries and the points it takes up again
// (retry.go); the fallback walk's, the eager cost of the points whose lazy runs fell back.
func (p *pacer) beginWalk(inPass func(k int) bool, lz *lazyWalk) {
	p.walkRanTime, p.walkRanCost, p.walkCost, p.walkVisitedCost = 0, 0, 0, 0
	switch {
	case lz.walk:
		p.walkCost = lz.cost
	case p.remainder:
		for _, keys := range p.retry {
			p.walkCost += float64(len(keys))
		}
		for _, c := range p.skipped {
			p.walkCost += c
		}
	default:
		for k, c := range p.opCost {
			if inPass(k) {
				p.walkCost += c
			}
		}
	}
}

// pace returns how many of the cost estimated crash states of the next crash point of the walk
// in progress are explored to keep to Options.TimeBudget: cost (the whole point, always without a
// budget), 0 (the point is left out) or a share in between (the point is explored in part:
// thinStates). Cost is in crash states (pointCost); the durability states at an operation's
// start count as a point of cost 1. The walk is paced by the time its points need against the
// time left: the time left is the schedule's end (ScheduleEnd: the budget less a reserve for the
// final phase) less the time spent since the budget began and the estimated time of the crash
// states built but not yet judged (queued); the time needed is the wall time per estimated state
// of the batches of this walk judged so far (of every walk, before the first of this one: the
// paths of a round cost differently, a table's expansions against its inserts) times the
// estimated states of the points the walk has not reached yet (this one included). Charging
// states rather than points, a point with thousands of states (a split's last points) is paid
// for as such, and the estimate of a walk's need does not depend on which points came first.
// While what is needed fits, every point is explored whole: a budget the whole exploration fits
// in leaves nothing out. When it does not fit, each point earns a share left/needed of its cost
// (less the time of the credit held) as credit: a point is explored whole when the credit covers
// its cost; else in part, with the
// states the credit covers, when its share is at least MinPointShare states; else it is left
// out, its share kept for the next. The share is recomputed at every point, so that an estimate
// that was too high (the first operations' re-executions run the longest) lets more in later.
// Each walk (a round of every operation path, above) is paced by its own points, so a
// round that does not fit covers a share of every path of it rather than the paths it reaches
// first, and the next round starts only with the time this one leaves. When force is set (the
// last point of an operation of the first round with no point explored), a point that would be
// left out is explored with MinPointShare states (at most its cost) on credit: every operation
// path has a crash point explored before any path a second time. Until a batch has been judged
// there is no cost per state: the points are explored whole (pacer.pace waits for the first
// batch). q holds the batches built and running (queued).
func (p *pacer) pace(cost float64, force bool, q *runs) float64 {
	d := p.budget
	if d <= 0 {
		return cost
	}
	left := p.left(q)
	if left <= 0 {
		return 0
	}
	ran, c := p.walkRanTime, p.walkRanCost
	if c == 0 {
		ran, c = p.ranTime, p.ranCost
	}
	if c == 0 {
		return cost // nothing measured yet (the first batch: the first operation's states)
	}
	per := ran.Seconds() / c
	need := per * max(p.walkCost-p.walkVisitedCost, cost)
	if need <= left.Seconds() {
		return cost
	}
	// The credit is time promised to points still to come: it is not shared again.
	share := cost * max(left.Seconds()-max(p.credit, 0)*per, 0) / need
	p.credit += share
	take := 0.0
	switch {
	case p.credit >= cost:
		take = cost
	case share >= MinPointShare:
		take = math.Floor(p.credit)
	case force:
		take = min(cost, MinPointShare)
	}
	p.credit -= take
	return take
}

// measured counts a batch judged: its wall time d, the states it ran and their estimated cost
// (of the walk in progress and of every walk).
func (p *pacer) measured(d time.Duration, states int, cost float64) {
	p.ranTime += d
	p.ranStates += states
	p.ranCost += cost
	p.walkRanTime += d
	p.walkRanCost += cost
}

// left is the time the schedule has left (budget.ScheduleEnd) after what was spent and the
// estimated time of the crash states of q queued.
func (p *pacer) left(q *runs) time.Duration {
	return budget.ScheduleEnd(p.budget) - p.spent() - p.queued(q)
}

// spent is the time since the budget began (Options.Start).
func (p *pacer) spent() time.Duration { return p.now().Sub(p.budgetStart) }

// queued estimates the time the crash states built but not yet judged will take: the batch the
// walk is building and what is left of the one running (q), at the wall time per state of the
// batches judged so far (0 before any).
func (p *pacer) queued(q *runs) time.Duration {
	if p.ranStates == 0 {
		return 0
	}
	per := p.ranTime / time.Duration(p.ranStates)
	d := per * time.Duration(len(q.batch))
	if b := q.running; b != nil {
		d += max(per*time.Duration(len(b.items))-p.now().Sub(b.began), 0)
	}
	return d
}

// ended reports whether the budget's schedule has ended (never without a budget).
func (p *pacer) ended() bool { return p.budget > 0 && p.spent() >= budget.ScheduleEnd(p.budget) }

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
func stateKey(st crash.State) string {
	if st.Tear != nil {
		return fmt.Sprint(st.K) + "|" + st.Tear.String()
	}
	return fmt.Sprint(st.K)
}

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
			key := stateKey(st)
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
