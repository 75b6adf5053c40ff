package explore

import (
	"slices"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

// Root causes. A failing crash state becomes a finding, or counts in one, by its root cause
// (clusterKey): its kind and the crash point's innermost user frame (report.UserFrame: outside
// persistence helpers and system headers), the place where the program lets stores reach PM in an
// order, or a grouping, it cannot recover from; a durability violation by the store never made
// durable in time instead, wherever the crash. Which stores a failing state persisted and lost
// (the pairs persisted out of order, the stores a prefix lost) make variants of the finding: the
// strategies' states at one fence persist many combinations of the same missing ordering, and
// keying on the pairs would make one missing fence several findings (four on the six stores of
// examples/fresh-node). Stores and crash points are named by source position, not by trace site,
// so the copies of a helper inlined at several calls and the repetitions of one statement in
// every operation are one cause, and nothing in the workload's text takes part: whatever its
// syntax, every operation that fails the same way is one finding. WITCHER (SOSP'21) §4.6
// clusters by operation type and execution path to the same end; keying on where persistence goes
// wrong instead keeps a workload whose every line is its own type (WITCHER's own `i;key;value;`
// op files) from making every operation a cluster, and the count of findings levels off as
// exploration covers more operations.

// userPoint returns the frames of the crash point at (site, stack) and the index of its
// innermost user frame, computed once per context.
func (e *explorer) userPoint(site, stack uint32) ([]report.Frame, int) {
	c := report.Context{Site: site, Stack: stack}
	if p, ok := e.pointFrames[c]; ok {
		return p.frames, p.user
	}
	frames := report.FramesAt(e.r, site, stack)
	if n := len(e.r.Sites()); n != e.helperSites {
		// Modules register their sites as they load: classify again when the table grew.
		e.helpers, e.helperSites = report.PersistenceHelpers(e.r.Sites()), n
	}
	p := placedPoint{frames: frames, user: report.UserFrame(frames, e.helpers)}
	e.pointFrames[c] = p
	return p.frames, p.user
}

// placedPoint is a crash point's frames and the index of its innermost user frame.
type placedPoint struct {
	frames []report.Frame
	user   int
}

// pointKey is the cluster key part of the crash point at (site, stack): its innermost user
// frame's position.
func (e *explorer) pointKey(site, stack uint32) string {
	frames, i := e.userPoint(site, stack)
	if len(frames) == 0 {
		return "?"
	}
	return frames[i].Location().Key()
}

// cause returns the cause part of the cluster key of state st (see above): "prefix" for a
// program-order prefix (an atomicity violation), "reordered" for any other state (an ordering
// violation).
func cause(st crash.State) string {
	if st.Prefix {
		return "prefix"
	}
	return "reordered"
}

// clusterKey is the key of the finding a failing state falls in: the kind, the crash point's
// innermost user frame (pointKey) and the state's cause; for a durability violation, the store
// lost (its cause: "lost=" and the store's position), wherever the crash.
func clusterKey(kind report.Kind, point, cause string) string {
	if kind == report.DurabilityViolation {
		return string(kind) + "|" + cause
	}
	return string(kind) + "|point=" + point + "|" + cause
}

// Pair is a pair of stores, by the source positions of their sites, that an inferred property
// (an mpb-violation or mpa-violation finding) says must persist in order: Before before After,
// or, with Atomic, together. Run confirms such a pair differentially (Config.ConfirmPairs): a
// crash state that breaks it (a store of After persisted while an earlier store of Before is
// not; for an atomic pair, a store of either persisted while one of the other is not) must fail,
// and the same state with the pair repaired (those Before stores persisted too) must not.
type Pair struct {
	Before, After report.Location
	Atomic        bool
}

// PairOutcome is what the crash states breaking one Pair showed (Result.Pairs).
type PairOutcome struct {
	// Broken counts the states judged that break the pair; Failed those of them that failed.
	Broken, Failed int
	// Confirmed counts the failing states whose repaired twin did not fail: the pair is a cause.
	// FailedAnyway counts those whose twin failed too: they fail for another reason.
	Confirmed, FailedAnyway int
}

// MaxTwins bounds the repaired twins tested per pair that is not yet confirmed.
const MaxTwins = 8

// brokenPairs returns the pairs of Config.ConfirmPairs that state st of sp breaks, each with the
// state that repairs it: the unpersisted stores of its earlier side that the break involves
// persisted too (with what precedes them on their lines, as px86 requires).
func (e *explorer) brokenPairs(sp *crash.Space, st crash.State) (pairs []Pair, twins []crash.State) {
	return brokenPairs(sp, st, e.cfg.ConfirmPairs, e.location)
}

// brokenPairs is explorer.brokenPairs over the pairs confirm, with loc giving a site's source
// position.
func brokenPairs(sp *crash.Space, st crash.State, confirm []Pair, loc func(site uint32) report.Location) (pairs []Pair, twins []crash.State) {
	if len(confirm) == 0 {
		return nil, nil
	}
	type side struct {
		persisted   bool
		maxP, minU  uint64 // latest fully persisted store, earliest not fully persisted
		anyP, anyU  bool
		unpersisted []int // indices into stores of the stores not fully persisted
	}
	type store struct {
		id    uint64
		loc   report.Location
		units [][2]int // (line, unit)
		pers  bool
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
			}
			stores[k].units = append(stores[k].units, [2]int{i, j})
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
		} else {
			if !sd.anyU || s.id < sd.minU {
				sd.minU = s.id
			}
			sd.anyU = true
			sd.unpersisted = append(sd.unpersisted, i)
		}
	}
	repair := func(from *side, before uint64) crash.State {
		k := slices.Clone(st.K)
		for _, i := range from.unpersisted {
			if stores[i].id >= before {
				continue
			}
			for _, r := range stores[i].units {
				k[r[0]] = max(k[r[0]], r[1]+1)
			}
		}
		return crash.State{K: k, Prefix: sp.IsPrefix(k)}
	}
	for _, p := range confirm {
		b, a := sides[p.Before], sides[p.After]
		if b == nil || a == nil {
			continue
		}
		switch {
		case a.anyP && b.anyU && b.minU < a.maxP:
			pairs, twins = append(pairs, p), append(twins, repair(b, a.maxP))
		case p.Atomic && b.anyP && a.anyU:
			pairs, twins = append(pairs, p), append(twins, repair(a, ^uint64(0)))
		case p.Atomic && a.anyP && b.anyU:
			pairs, twins = append(pairs, p), append(twins, repair(b, ^uint64(0)))
		}
	}
	return pairs, twins
}

// pairJudged records the outcome of a state that broke pairs (it.pairs), and of its repaired
// twins: called when twin, or the state itself when it has no twin, is judged.
func (e *explorer) pairJudged(it *item, failed bool) {
	if it.twinOf != nil {
		orig := it.twinOf
		if !orig.judged || !orig.failed {
			return
		}
		o := e.res.Pairs[it.twinPair]
		if failed {
			o.FailedAnyway++
		} else {
			o.Confirmed++
		}
		e.res.Pairs[it.twinPair] = o
		return
	}
	for _, p := range it.pairs {
		o := e.res.Pairs[p]
		o.Broken++
		if failed {
			o.Failed++
		}
		e.res.Pairs[p] = o
	}
}

// wantTwin reports whether a state breaking pair p gets a repaired twin: the pair is not
// confirmed yet and has had fewer than MaxTwins.
func (e *explorer) wantTwin(p Pair) bool {
	o := e.res.Pairs[p]
	return o.Confirmed == 0 && e.twins[p] < MaxTwins
}
