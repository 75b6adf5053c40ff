package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Root causes. A failing crash state becomes a finding, or counts in one, by its root cause
// (clusterKey), named by source positions:
//
//   - an ordering violation by its window, in its operation's path (below): the latest store
//     the crash point's thread issued in its operation (CrashPoint.LastStore), or, before the
//     operation's first store, the function of the point's innermost user frame
//     (report.UserFrame: outside persistence helpers and system headers). The crash points
//     between two stores, before each clflush and fence that writes back what the stores wrote
//     (`pflush(key); pflush(value); mfence()`, in a helper or inlined, in the function that
//     stored or one it calls), see the same stores issued and differ only in how many of them
//     persisted: one place where a fence is missing;
//   - an atomicity violation by its operation's persistent path: the source positions of the
//     distinct stores the operation issued (CrashPoint.OpStores, at its end), WITCHER's execution
//     path restricted to what reaches PM. Operations that ran the same code (every insert into a
//     free slot, however many entries it shifted) share it; one that ran other code (an insert that
//     splits a node, an update that overwrites in place) has its own. The windows along one path
//     where a program-order state fails, in whatever function (a split's allocation, its copy, its
//     directory update), are steps of one operation that is not failure-atomic. Within a window
//     whose program-order states fail, a failing reordering is no cause of its own either: it
//     counts with the atomicity violation, unless it reorders a pair of stores an inferred
//     property asks to be ordered and the pair's twins confirmed it (foldOrdering);
//   - a durability violation by where the store it lost was left pending: the function of the
//     store's innermost user frame, or the setup before the first operation, whatever function
//     it ran (each store has its own crash state, counted per store; the stores one function, or
//     the setup, leaves pending are one missing persist).
//
// Which stores a failing state persisted and lost (the pairs persisted out of order, the stores a
// prefix lost) and its crash point make variants of the finding: the strategies' states in one
// window persist many combinations of the same missing ordering, and keying on them would make
// one missing fence several findings (four on the six stores of examples/fresh-node). Nothing in
// the workload's text takes part: whatever its syntax, every operation that fails the same way is
// one finding, and the copies of a helper inlined at several calls and the repetitions of one
// statement in every operation are one cause. WITCHER (SOSP'21) §4.6 clusters by operation type
// and execution path to the same end; keying on where persistence goes wrong instead keeps a
// workload whose every line is its own type (WITCHER's own `i;key;value;` op files) from making
// every operation a cluster, and the count of findings levels off as exploration covers more
// operations.

// places resolves the sites of the trace to source positions, each once: the walk's reader r
// (its site tables grow as modules load), the locations of (site, call stack) pairs (location),
// the keys of sites with their inlined-at chains (siteChain), the crash points' frames and
// innermost user frames (userPoint) with the persistence helpers they are computed with and the
// number of sites those were classified from.
type places struct {
	r           *trace.Reader
	locs        map[[2]uint32]report.Location
	chains      map[uint32]string
	pointFrames map[report.Context]placedPoint
	helpers     report.Helpers
	helperSites int
}

func newPlaces() *places {
	return &places{locs: map[[2]uint32]report.Location{}, chains: map[uint32]string{}, pointFrames: map[report.Context]placedPoint{}}
}

// location resolves an event at site in call-stack node stack (0: the site with its inlined-at
// chain only) to its innermost frame outside system headers (report.UserAt): a store libstdc++'s
// <atomic> makes for the program is grouped, settled and reported at the program's line. Cached:
// it runs for every unit of every state.
func (pl *places) location(site, stack uint32) report.Location {
	k := [2]uint32{site, stack}
	if l, ok := pl.locs[k]; ok {
		return l
	}
	l := report.UserAt(pl.r, site, stack)
	pl.locs[k] = l
	return l
}

// siteChain returns a key for site's source position with its inlined-at chain: the copies of
// one helper inlined at different callers differ, the same instruction in different operations
// does not.
func (pl *places) siteChain(site uint32) string {
	if k, ok := pl.chains[site]; ok {
		return k
	}
	k := report.FramesKey(report.FramesAt(pl.r, site, 0))
	if k == "" {
		k = fmt.Sprintf("site#%d", site)
	}
	pl.chains[site] = k
	return k
}

// userPoint returns the frames of the crash point at (site, stack) and the index of its
// innermost user frame, computed once per context.
func (pl *places) userPoint(site, stack uint32) ([]report.Frame, int) {
	c := report.Context{Site: site, Stack: stack}
	if p, ok := pl.pointFrames[c]; ok {
		return p.frames, p.user
	}
	frames := report.FramesAt(pl.r, site, stack)
	if n := len(pl.r.Sites()); n != pl.helperSites {
		// Modules register their sites as they load: classify again when the table grew.
		pl.helpers, pl.helperSites = report.PersistenceHelpers(pl.r.Sites()), n
	}
	p := placedPoint{frames: frames, user: report.UserFrame(frames, pl.helpers)}
	pl.pointFrames[c] = p
	return p.frames, p.user
}

// placedPoint is a crash point's frames and the index of its innermost user frame.
type placedPoint struct {
	frames []report.Frame
	user   int
}

// pointKey is crash point cp's window (above).
func (e *explorer) pointKey(cp *crash.CrashPoint) string {
	if cp.LastStore != 0 {
		return "after=" + e.places.location(cp.LastStore, 0).Key()
	}
	return "start=" + e.places.userFunction(cp.Site, cp.Stack)
}

// culprit returns the operation whose stores state st of sp lost or reordered, among the
// operations in flight (inflight; the units' px86 origins, crash.Unit.Op), else fallback (the
// crash point's operation): for a program-order prefix, the operation of the first store not
// persisted; otherwise that of the earliest store not persisted that a later store of the same
// operation overtook (a reordering inside the operation), else that a later store of any
// operation overtook, else the first store not persisted. With one operation in flight it is
// that operation: only overlapping operations (WITCHER, SOSP'21, §4.7) can blame another
// operation than the crash point's thread's.
func culprit(sp *crash.Space, st crash.State, inflight []int, fallback int) int {
	if len(inflight) < 2 {
		return fallback
	}
	in := func(u crash.Unit) bool { return u.Op > 0 && slices.Contains(inflight, int(u.Op)-1) }
	maxP := map[uint32]uint64{} // per operation, its latest persisted unit
	anyP, maxAll := false, uint64(0)
	for i, l := range sp.Lines {
		for _, u := range l.Units[:st.K[i]] {
			maxP[u.Op] = max(maxP[u.Op], u.Seq+1)
			anyP, maxAll = true, max(maxAll, u.Seq)
		}
	}
	const none = ^uint64(0)
	first, same, other := none, none, none // the Seq of each candidate
	var firstOp, sameOp, otherOp uint32
	for i, l := range sp.Lines {
		for _, u := range l.Units[st.K[i]:] {
			if !in(u) {
				continue
			}
			if u.Seq < first {
				first, firstOp = u.Seq, u.Op
			}
			if st.Prefix {
				continue
			}
			if maxP[u.Op] > u.Seq+1 && u.Seq < same {
				same, sameOp = u.Seq, u.Op
			}
			if anyP && maxAll > u.Seq && u.Seq < other {
				other, otherOp = u.Seq, u.Op
			}
		}
	}
	switch {
	case same != none:
		return int(sameOp) - 1
	case other != none:
		return int(otherOp) - 1
	case first != none:
		return int(firstOp) - 1
	}
	return fallback
}

// pointKeyOf is crash point cp's window (above) as operation op sees it: cp's own (its thread's
// latest store) for cp's operation, else the latest store op issued (crash.CrashPoint.LastStoreOf):
// a failure that another thread's crash point shows is clustered by where its own operation was.
func (e *explorer) pointKeyOf(cp *crash.CrashPoint, op int) string {
	if op != int(cp.Op) {
		if s := cp.LastStoreOf(int64(op)); s != 0 {
			return "after=" + e.places.location(s, 0).Key()
		}
	}
	return e.pointKey(cp)
}

// pathKey is the persistent path of operation op (above), known once the operation ended
// (opEnd), else its crash point's window.
func (e *explorer) pathKey(op int, window string) string {
	if sig, ok := e.found.opPaths[op]; ok {
		return "path=" + sig
	}
	return window
}

// opPath returns the signature of an operation's persistent path: a hash of the sorted source
// positions of its distinct stores.
func (e *explorer) opPath(sites []uint32) string {
	keys := make([]string, 0, len(sites))
	for _, s := range sites {
		keys = append(keys, e.places.location(s, 0).Key())
	}
	slices.Sort(keys)
	sum := sha256.Sum256([]byte(strings.Join(slices.Compact(keys), "\n")))
	return hex.EncodeToString(sum[:8])
}

// userFunction names the function of the innermost user frame at (site, stack).
func (pl *places) userFunction(site, stack uint32) string {
	frames, i := pl.userPoint(site, stack)
	if len(frames) == 0 {
		return "?"
	}
	return frames[i].File + ":" + frames[i].Function
}

// storeKey is the cluster key part of a durability violation losing the store at (site, stack)
// of operation op (Unit.Op): where it was left pending (above).
func (e *explorer) storeKey(site, stack, op uint32) string {
	if op == 0 {
		return "left-by=setup"
	}
	return "left-by=" + e.places.userFunction(site, stack)
}

// clusterKey is the key of the finding a failing state of the given kind falls in (above): an
// ordering violation's window in its path (a window that an insert and a shrink re-inserting
// items share is two: the two are different operations that may fail for different reasons), an
// atomicity violation's path, a durability violation's cause (storeKey), a persistency race's
// torn store (its source position), wherever the crash.
func clusterKey(kind report.Kind, window, path, cause string) string {
	switch kind {
	case report.DurabilityViolation, report.PersistencyRace:
		return string(kind) + "|" + cause
	case report.AtomicityViolation:
		return string(kind) + "|" + path
	}
	return string(kind) + "|" + window + "|" + path
}

// Pair is a pair of stores, by the source positions of their sites, that an inferred property
// (an mpb-violation or mpa-violation finding) says must persist in order: Before before After,
// or, with Atomic, together. Run confirms such a pair differentially (Config.ConfirmPairs): a
// crash state that breaks it (a store of After persisted while an earlier store of Before is
// not; for an atomic pair, a store of either persisted while one of the other is not) must fail,
// and the same state with the pair repaired (those stores persisted too) must not.
//
// A state often breaks several orderings through one store persisted too early (a node published
// before any of its fields), not all of them pairs of findings, and may fail because of another
// store persisted too early altogether. So the pairs a state breaks are grouped by the position of
// the store persisted too early, and each group gets two kinds of twins: the state without that
// store (its stores at that position unpersisted, with what follows them on their lines, built
// only when nothing else persisted follows them there), which must pass for the store's early
// persistence to be a cause at all; and, for each pair, the state
// with every store before it in program order persisted but the pair's earlier stores, which must
// fail for that pair to be one (leave-one-out). The breaking state itself is run once more and
// must fail again (twinRepeat). The pair is confirmed when all four hold.
//
// A pair whose After store was already durable at the crash point (Config.DurableAfter: no state
// can leave it unpersisted) is broken by every state that leaves an earlier Before store
// unpersisted; its twin is the same state with those Before stores persisted (twinRepairBefore),
// which must pass, and the breaking state, run again, must fail again.
type Pair struct {
	Before, After report.Location
	Atomic        bool
}

// PairOutcome is what the crash states breaking one Pair showed (Result.Pairs).
type PairOutcome struct {
	// Broken counts the states judged that break the pair; Failed those of them that failed.
	Broken, Failed int
	// Confirmed counts the failing states whose twins showed the pair is a cause (above).
	// FailedAnyway counts those whose repair of the pair (with its group) failed too: they fail
	// for another reason.
	Confirmed, FailedAnyway int
}

// Twins are spent on a pair until it is confirmed, or until MaxTwinsFailed of its breaking states
// failed without confirming it (they fail for another reason), and on at most MaxTwins of its
// breaking states in all: twins are made with the state, before anyone knows whether it fails,
// and most states that break a pair recover (the pair's other store not yet reachable).
const (
	MaxTwins       = 64
	MaxTwinsFailed = 8
)

// brokenPair is a pair a state breaks: early is the position of the side persisted too early
// (the group key), bound the program-order position (Unit.Seq) of its latest persisted unit, fix
// the indices of the stores (into the state's store list) whose persisting repairs it.
type brokenPair struct {
	pair  Pair
	early report.Location
	bound uint64
	fix   []int
	// durable: After's store was durable before the crash point (Config.DurableAfter); the
	// pair's twin persists fix (twinRepairBefore) instead of the group's.
	durable bool
}

// breaks is what a state does to the pairs of Config.ConfirmPairs: the pairs it breaks and how
// to build a state repairing any set of them.
type breaks struct {
	sp    *crash.Space
	st    crash.State
	pairs []brokenPair
	units [][][2]int        // per store: its units as (line, unit)
	locs  []report.Location // per store: its site's position
}

// repairedGroup returns the state that repairs the pairs group (indices into b.pairs) but the
// pair except (-1: none): every unit before bound in program order persisted, and the stores that
// fix the group's pairs (for an atomic pair, stores after bound) persisted, with what precedes
// them on their lines, except the units of the stores fixing except and those after them on
// their lines: each line persists a prefix, as px86 requires.
func (b *breaks) repairedGroup(bound uint64, group []int, except int) crash.State {
	skip := map[[2]int]bool{}
	if except >= 0 {
		for _, s := range b.pairs[except].fix {
			for _, r := range b.units[s] {
				skip[r] = true
			}
		}
	}
	want := map[[2]int]bool{}
	for _, i := range group {
		if i == except {
			continue
		}
		for _, s := range b.pairs[i].fix {
			for _, r := range b.units[s] {
				want[r] = true
			}
		}
	}
	k := slices.Clone(b.st.K)
	for i, l := range b.sp.Lines {
		last := -1 // the last unit to persist on the line
		for j, u := range l.Units {
			if skip[[2]int{i, j}] {
				break
			}
			if u.Seq < bound || want[[2]int{i, j}] {
				last = j
			}
		}
		k[i] = max(k[i], last+1)
	}
	return crash.State{K: k, Prefix: b.sp.IsPrefix(k)}
}

// without returns the state with every persisted store at position early unpersisted, with the
// units after them on their lines, and whether that state differs from the state in those
// stores alone: false when a line persists, after one of them, a store of another position that
// px86's line order unpersists with it (a split's `local_depth` after the segment lock released
// on the same line: such a twin would pass because it lost the other store, and say nothing of
// the early one).
func (b *breaks) without(early report.Location) (crash.State, bool) {
	k := slices.Clone(b.st.K)
	for s, units := range b.units {
		if b.locs[s] != early {
			continue
		}
		for _, r := range units {
			k[r[0]] = min(k[r[0]], r[1])
		}
	}
	for s, units := range b.units {
		if b.locs[s] == early {
			continue
		}
		for _, r := range units {
			if r[1] < b.st.K[r[0]] && r[1] >= k[r[0]] {
				return crash.State{}, false
			}
		}
	}
	return crash.State{K: k, Prefix: b.sp.IsPrefix(k)}, true
}

// brokenPairs returns what state st of sp does to the pairs confirm (breaks), loc giving a site's
// source position; durableAfter, when not nil, gives for a pair the trace event index of its
// latest After store issued before the crash point that the program made durable there (ok
// false: none), for pairs whose After side has no store persisted in the state.
func brokenPairs(sp *crash.Space, st crash.State, confirm []Pair, loc func(site uint32) report.Location, durableAfter func(p Pair, inSpace func(store uint64) bool) (uint64, bool)) *breaks {
	b := &breaks{sp: sp, st: st}
	if len(confirm) == 0 {
		return b
	}
	type side struct {
		maxP, minU  uint64 // latest fully persisted store, earliest not fully persisted
		maxSeq      uint64 // the latest unit of a fully persisted store
		anyP, anyU  bool
		unpersisted []int // indices of the stores not fully persisted
	}
	type store struct {
		id      uint64
		loc     report.Location
		pers    bool
		lastSeq uint64 // its latest unit in program order
	}
	var stores []store
	idx := map[uint64]int{}
	for i, l := range sp.Lines {
		for j, u := range l.Units {
			k, ok := idx[u.Store]
			if !ok {
				k = len(stores)
				idx[u.Store] = k
				stores = append(stores, store{id: u.Store, loc: loc(u.Site), pers: true})
				b.units = append(b.units, nil)
				b.locs = append(b.locs, loc(u.Site))
			}
			b.units[k] = append(b.units[k], [2]int{i, j})
			stores[k].lastSeq = max(stores[k].lastSeq, u.Seq)
			if j >= st.K[i] {
				stores[k].pers = false
			}
		}
	}
	sides := map[report.Location]*side{}
	for i, s := range stores {
		sd := sides[s.loc]
		if sd == nil {
			sd = &side{}
			sides[s.loc] = sd
		}
		if s.pers {
			sd.maxP, sd.anyP = max(sd.maxP, s.id), true
			sd.maxSeq = max(sd.maxSeq, s.lastSeq)
		} else {
			if !sd.anyU || s.id < sd.minU {
				sd.minU = s.id
			}
			sd.anyU = true
			sd.unpersisted = append(sd.unpersisted, i)
		}
	}
	fix := func(from *side, before uint64) []int {
		var out []int
		for _, i := range from.unpersisted {
			if stores[i].id < before {
				out = append(out, i)
			}
		}
		return out
	}
	for _, p := range confirm {
		bs, as := sides[p.Before], sides[p.After]
		if bs != nil && bs.anyU && (as == nil || !as.anyP) && durableAfter != nil && !p.Atomic {
			inSpace := func(store uint64) bool { _, ok := idx[store]; return ok }
			if ev, ok := durableAfter(p, inSpace); ok && bs.minU < ev {
				b.pairs = append(b.pairs, brokenPair{pair: p, early: p.After, fix: fix(bs, ev), durable: true})
				continue
			}
		}
		if bs == nil || as == nil {
			continue
		}
		switch {
		case as.anyP && bs.anyU && bs.minU < as.maxP:
			b.pairs = append(b.pairs, brokenPair{pair: p, early: p.After, bound: as.maxSeq, fix: fix(bs, as.maxP)})
		case p.Atomic && bs.anyP && as.anyU:
			b.pairs = append(b.pairs, brokenPair{pair: p, early: p.Before, bound: bs.maxSeq, fix: fix(as, ^uint64(0))})
		case p.Atomic && as.anyP && bs.anyU:
			b.pairs = append(b.pairs, brokenPair{pair: p, early: p.After, bound: as.maxSeq, fix: fix(bs, ^uint64(0))})
		}
	}
	return b
}

// twinRole is what a repaired twin repairs: the group's early store left unpersisted, or every
// store before it persisted but its pair's earlier ones (leave-one-out); or nothing: twinRepeat
// is the breaking state itself, run once more on an image of its own, which must fail again for
// its twins to confirm anything (a program whose outcome on one image varies, a run that reads
// memory the recorded run left or hangs only under load, would otherwise confirm a pair by
// chance: one failing state against one passing twin).
type twinRole uint8

const (
	twinGroup twinRole = iota + 1
	twinAllBut
	twinRepeat
	twinRepairBefore // the state with the pair's earlier stores persisted (a durable After)
)

// twin is what a repaired twin item is about (item.twin).
type twin struct {
	of   *item
	role twinRole
	pair Pair   // twinAllBut
	grp  []Pair // twinGroup: the pairs of the group
}

// addTwins adds, after item it (a state that breaks inferred invariants), the repaired twins of
// the pairs of Config.ConfirmPairs it breaks that are not confirmed yet (Pair), judged after it.
func (e *explorer) addTwins(cp *crash.CrashPoint, it *item, k int, region uint32, path string) error {
	// Pairs name their stores as inference located them (report.At, the site alone).
	var durable func(Pair, func(uint64) bool) (uint64, bool)
	if len(e.cfg.DurableAfter) > 0 {
		durable = func(p Pair, inSpace func(uint64) bool) (uint64, bool) {
			evs := e.cfg.DurableAfter[p]
			// The latest After store issued before the crash point, if it is durable there.
			i, _ := slices.BinarySearch(evs, cp.Event)
			if i == 0 || inSpace(evs[i-1]) {
				return 0, false
			}
			return evs[i-1], true
		}
	}
	b := brokenPairs(cp.Space, it.state, e.cfg.ConfirmPairs, func(site uint32) report.Location { return report.At(e.places.r, site) }, durable)
	for _, bp := range b.pairs {
		it.pairs = append(it.pairs, bp.pair)
	}
	groups := map[report.Location][]int{}
	var order []report.Location
	for i, bp := range b.pairs {
		if bp.durable {
			continue // twins of their own, below
		}
		if _, ok := groups[bp.early]; !ok {
			order = append(order, bp.early)
		}
		groups[bp.early] = append(groups[bp.early], i)
	}
	add := func(st crash.State, t twin) error {
		tw, err := e.newItem(cp, k, region, path, st, "repaired-twin")
		if err != nil {
			return err
		}
		tw.per, tw.done, tw.inflight, tw.next, tw.lins = it.per, it.done, it.inflight, it.next, it.lins
		tw.twin = &t
		e.res.Stats.Twins++
		e.runs.batch = append(e.runs.batch, tw)
		return nil
	}
	repeated := false
	repeat := func() error {
		if repeated {
			return nil
		}
		repeated = true
		if err := add(it.state, twin{of: it, role: twinRepeat}); err != nil {
			return err
		}
		rep := e.runs.batch[len(e.runs.batch)-1]
		rep.key, rep.isBase = "", false // run, not answered by the state's own run
		return nil
	}
	for i, bp := range b.pairs {
		p := bp.pair
		if !bp.durable || len(bp.fix) == 0 || e.res.Pairs[p].Confirmed > 0 || e.res.Pairs[p].FailedAnyway >= MaxTwinsFailed || e.found.twins[p] >= MaxTwins {
			continue
		}
		e.found.twins[p]++
		if err := repeat(); err != nil {
			return err
		}
		if err := add(b.repairedGroup(0, []int{i}, -1), twin{of: it, role: twinRepairBefore, pair: p}); err != nil {
			return err
		}
	}
	for _, early := range order {
		g := groups[early]
		without, isolated := b.without(early)
		if !isolated {
			continue // no twin can tell this early store's part (without)
		}
		var want []int
		for _, i := range g {
			if p := b.pairs[i].pair; e.res.Pairs[p].Confirmed == 0 && e.res.Pairs[p].FailedAnyway < MaxTwinsFailed && e.found.twins[p] < MaxTwins {
				want = append(want, i)
				e.found.twins[p]++
			}
		}
		if len(want) == 0 {
			continue
		}
		if err := repeat(); err != nil {
			return err
		}
		var grp []Pair
		bound := uint64(0)
		for _, i := range g {
			grp = append(grp, b.pairs[i].pair)
			bound = max(bound, b.pairs[i].bound)
		}
		if err := add(without, twin{of: it, role: twinGroup, grp: grp}); err != nil {
			return err
		}
		for _, i := range want {
			if err := add(b.repairedGroup(bound, g, i), twin{of: it, role: twinAllBut, pair: b.pairs[i].pair}); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairJudged records the outcome of a state that broke pairs (it.pairs), and of its repaired
// twins, each judged after the state it repairs (Pair).
func (e *explorer) pairJudged(it *item, failed bool) {
	t := it.twin
	if t == nil {
		for _, p := range it.pairs {
			o := e.res.Pairs[p]
			o.Broken++
			if failed {
				o.Failed++
			}
			e.res.Pairs[p] = o
		}
		return
	}
	orig := t.of
	if !orig.judged || !orig.failed {
		return
	}
	switch t.role {
	case twinRepeat:
		orig.repeatFailed = failed
	case twinGroup:
		orig.groupPassed = append(orig.groupPassed, !failed)
		if failed {
			for _, p := range t.grp {
				o := e.res.Pairs[p]
				o.FailedAnyway++
				e.res.Pairs[p] = o
			}
		}
	case twinRepairBefore:
		// The repeat was judged before this twin (it was added first).
		o := e.res.Pairs[t.pair]
		switch {
		case failed:
			o.FailedAnyway++
		case orig.repeatFailed:
			o.Confirmed++
		}
		e.res.Pairs[t.pair] = o
	case twinAllBut:
		// The group twin was judged just before this one's group.
		if n := len(orig.groupPassed); n > 0 && orig.groupPassed[n-1] && failed && orig.repeatFailed {
			o := e.res.Pairs[t.pair]
			o.Confirmed++
			e.res.Pairs[t.pair] = o
		}
	}
}

// scoped answers, for a run scoped to a change (Options.Scope), whether events are in scope
// (report.Scope.InFrames of their frames), each (site, call stack) resolved once.
type scoped struct {
	s  *report.Scope
	in map[[2]uint32]bool
}

func newScoped(s *report.Scope) *scoped {
	if s == nil {
		return nil
	}
	return &scoped{s: s, in: map[[2]uint32]bool{}}
}

// point reports whether crash point cp is explored in the scope: one of its frames is in a
// touched function, or a store pending at it (a unit of its space) was issued in one. The plan
// and every walk ask it of the same points with the same answer; nil (no scope) keeps all.
func (sc *scoped) point(r *trace.Reader, cp *crash.CrashPoint) bool {
	if sc == nil {
		return true
	}
	if sc.at(r, cp.Site, cp.Stack) {
		return true
	}
	for _, l := range cp.Space.Lines {
		for _, u := range l.Units {
			if sc.at(r, u.Site, u.Stack) {
				return true
			}
		}
	}
	return false
}

// at reports whether the event at (site, stack) has a frame in a touched function (true
// without a scope).
func (sc *scoped) at(r *trace.Reader, site, stack uint32) bool {
	if sc == nil {
		return true
	}
	k := [2]uint32{site, stack}
	in, ok := sc.in[k]
	if !ok {
		in = sc.s.InFrames(report.FramesAt(r, site, stack))
		sc.in[k] = in
	}
	return in
}
