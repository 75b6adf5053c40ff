package explore

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
)

// Lazy exploration (the lazy strategy, crash.Strategy.Lazy; Jaaru, ASPLOS'21, §3–4;
// docs/lazy-exploration.md).
//
// At each explored crash point, one run on the fully applied image (every unit persisted)
// stands for every crash state of the point: its table lists each cache line of the pool with
// more than one possible content (crash.CrashPoint.LineContents: units 0..k-1 persisted, k = 0..n,
// deduplicated), the runtime forks at the first access to such a line, one branch per content,
// and each leaf of the tree is judged as one crash state: its resolved lines at the smallest k
// giving the content it chose, the others fully persisted (k = n). Lines are independent, so the
// leaves cover the whole space (Space.Size states); a run that never touches a listed line is
// one leaf standing for every state. The leaves are judged, clustered and reported like eager
// states (the same legal outcomes, findings and report; their strategy is "lazy"). A crash
// point whose run aborts (the runtime found branching impossible: more than one thread at the
// first branch, a fork that failed) or whose tree does not end within LazyTreeRuns runs' time
// is explored again eagerly, with DefaultStrategies, in a last walk of its own (Stats.LazyFallbacks
// counts the points by reason); so is every point when lazy runs cannot be made at all (no
// runtime with lazy support in the program, a checker).

// lazyWalk is the lazy strategy's part of an exploration: why lazy runs cannot be made (off, ""
// when they can), the crash points (by index) whose lazy runs fell back and their operations,
// whether the walk in progress is the last one that explores those eagerly (walk), the fallback
// points it explored or left out to the budget (done), their eager cost (pointCost) and the
// crash states the leaves covered.
type lazyWalk struct {
	off      string
	fallback map[int]bool
	ops      map[int]bool
	walk     bool
	done     int
	cost     float64
	covered  big.Int
}

// LazyTreeRuns bounds the whole tree of a lazy run: it may take as long as that many runs (the
// longest run on a consistent image so far, at least MinHangTimeout/HangFactor, which is also
// the run's length before one is timed; with the target's Timeout, that over HangFactor), about
// what the default strategies spend on a crash point; a tree that takes longer is stopped and its crash point explored eagerly. A recovery that
// reads every undetermined line (PMDK's pool open reads its lanes' undo logs) makes as many
// leaves as the exhaustive strategy has states, and would otherwise cost more than eager
// exploration. Each leaf has the bound of a run on a crash image, from its fork.
const LazyTreeRuns = 32

// lazyTree is the bound of a lazy run's tree when the runs on crash images are bounded by hang
// (0: the target's Timeout, else not timed yet): LazyTreeRuns runs of hang/HangFactor
// (HangFactor times the longest consistent run is the adaptive bound), at least
// MinHangTimeout/HangFactor each. Before a run is timed, a tree of the first batch that runs
// past that falls back early rather than holding the batch (a tree may have as many leaves as
// the crash point has states).
func (e *explorer) lazyTree(hang time.Duration) time.Duration {
	if hang <= 0 {
		hang = e.target.Timeout
	}
	return LazyTreeRuns * max(hang, MinHangTimeout) / HangFactor
}

// LazyRunner is a Runner that can make lazy runs (ProcessRunner can).
type LazyRunner interface {
	// LazyUnavailable says why lazy runs cannot be made ("" when they can).
	LazyUnavailable() string
	// Lazy makes a lazy run of the target on image (exec.Target.RunLazy; parent is a
	// directory for the run's own).
	Lazy(ctx context.Context, image string, stdin []byte, dir, parent string, t *exec.LazyTable, leaf, tree time.Duration) exec.LazyOutcome
}

// LazyUnavailable says why the program cannot make lazy runs: its runtime lacks lazy support
// (a black-box program, a script, a program built without scry cc or with an older runtime).
func (r ProcessRunner) LazyUnavailable() string {
	if r.Prog.Client != nil {
		return "a server driven by a client (--client) runs as a session, not lazily"
	}
	return exec.NoLazy(r.Prog)
}

// Lazy makes a lazy run, through the fork servers when there are any.
func (r ProcessRunner) Lazy(ctx context.Context, image string, stdin []byte, dir, parent string, t *exec.LazyTable, leaf, tree time.Duration) exec.LazyOutcome {
	if r.Servers != nil {
		return r.Servers.RunLazy(ctx, image, stdin, dir, parent, t, leaf, tree)
	}
	return r.Prog.RunLazy(ctx, image, stdin, dir, parent, t, leaf, tree)
}

// lazyPoint is what a lazy run at one crash point needs once the walk's callback has returned:
// the space (a clone: the units name each leaf's stores), the table (its file is the worker's
// working copy, filled in by the worker), the space line of each table line and its contents
// (crash.Contents: the smallest k of each, the content of each k).
type lazyPoint struct {
	space    *crash.Space
	table    exec.LazyTable
	lineOf   []int
	contents []crash.Contents
	// eagerCost is the point's cost (pointCost) with the strategies its fallback would run.
	eagerCost float64
	// windows, with operations overlapping, is the point's window as each operation in flight
	// sees it (explorer.pointKeyOf): a leaf's failure is blamed on its culprit.
	windows map[int]string
}

// lazyStrategy returns the lazy strategy among the configured ones, or nil.
func (e *explorer) lazyStrategy() *crash.Strategy {
	if i := slices.IndexFunc(e.strats, func(s *crash.Strategy) bool { return s.Lazy }); i >= 0 {
		return e.strats[i]
	}
	return nil
}

// lazyCheck decides, before the walks, whether lazy runs can be made (explorer.lazyOff says why
// not).
func (e *explorer) lazyCheck() {
	if e.lazyStrategy() == nil {
		return
	}
	lr, ok := e.cfg.Runner.(LazyRunner)
	switch {
	case e.cfg.Runner.HasChecker():
		e.lazy.off = "a checker runs on every crash image (a lazy run's leaves have no image of their own)"
	case !ok:
		e.lazy.off = "the runner cannot make lazy runs"
	default:
		e.lazy.off = lr.LazyUnavailable()
	}
	if e.lazy.off != "" {
		e.warn(fmt.Sprintf("lazy exploration is not possible (%s): crash points are explored eagerly with %s instead", e.lazy.off, strings.Join(DefaultStrategies, ",")))
	}
}

// eagerStrategies returns the strategies whose states visitPoint builds one by one at a crash
// point: with the lazy strategy, those that choose states from invariants when the point has a
// lazy run (its leaves cover every state; those states also name the invariants they break),
// else, when the point falls back, DefaultStrategies and the others configured.
func (e *explorer) eagerStrategies(lazy bool) []*crash.Strategy {
	if e.lazyStrategy() == nil {
		return e.strats
	}
	var out []*crash.Strategy
	if !lazy {
		for _, n := range DefaultStrategies {
			out = append(out, crash.StrategyByName(n))
		}
	}
	for _, s := range e.strats {
		if !s.Lazy && !slices.Contains(out, s) && (!lazy || s.NeedsInvariants) {
			out = append(out, s)
		}
	}
	return out
}

// lazyHere reports whether crash point cp gets a lazy run (in the fallback walk, the points
// explored lazily before are not visited); a point that cannot have one counts as a fallback.
func (e *explorer) lazyHere(cp *crash.CrashPoint) bool {
	if e.lazyStrategy() == nil || e.lazy.walk {
		return false
	}
	if e.lazy.off != "" {
		e.countFallback(e.lazy.off)
		return false
	}
	return true
}

// countFallback counts a crash point explored eagerly instead of lazily, by reason.
func (e *explorer) countFallback(reason string) {
	if e.res.Stats.LazyFallbacks == nil {
		e.res.Stats.LazyFallbacks = map[string]int{}
	}
	e.res.Stats.LazyFallbacks[reason]++
}

// lazyItem adds the lazy run of crash point cp of operation k (region id, at path) to the
// batch. Lines of other regions than the pool's are left fully persisted.
func (e *explorer) lazyItem(cp *crash.CrashPoint, k int, id uint32, path string) (*item, error) {
	it, err := e.newItem(cp, k, id, path, cp.Space.FullState(), "lazy")
	if err != nil {
		return nil, err
	}
	it.key, it.isBase = "", false // its run is its own: never reused, never a base's
	lp := &lazyPoint{space: cp.Clone().Space, eagerCost: pointCost(cp.Space, e.eagerStrategies(false), e.cfg.Crash)}
	for i, l := range cp.Space.Lines {
		g := l.Region
		if g == nil || g.ID != id {
			continue
		}
		c, err := cp.LineContents(i)
		if err != nil {
			return nil, err
		}
		if len(c.Values) < 2 {
			continue
		}
		lp.table.Lines = append(lp.table.Lines, exec.LazyLine{Offset: g.FileOffset + l.Addr - g.Base, Values: c.Values})
		lp.lineOf = append(lp.lineOf, i)
		c.Values = nil // in the table
		lp.contents = append(lp.contents, c)
		e.runs.batchBytes += len(lp.table.Lines[len(lp.table.Lines)-1].Values) * crash.LineSize
	}
	for _, l := range lp.space.Lines {
		e.runs.batchBytes += 64 * len(l.Units) // the clone's units and their old bytes
	}
	if len(cp.InFlight) > 1 {
		lp.windows = map[int]string{}
		for _, f := range cp.InFlight {
			lp.windows[int(f)] = e.pointKeyOf(cp, int(f))
		}
	}
	it.lazy = lp
	return it, nil
}

// leafState is the crash state a leaf stands for: its chosen lines at the smallest k giving
// their content, every other line fully persisted.
func (lp *lazyPoint) leafState(choices []exec.LazyChoice) crash.State {
	st := lp.space.FullState()
	for _, c := range choices {
		st.K[lp.lineOf[c.Line]] = lp.contents[c.Line].MinK[c.Value]
	}
	st.Prefix = lp.space.IsPrefix(st.K)
	return st
}

// covers reports whether the leaf of choices stands for state k: each chosen line's k gives the
// chosen content.
func (lp *lazyPoint) covers(choices []exec.LazyChoice, k []int) bool {
	for _, c := range choices {
		if lp.contents[c.Line].Of[k[lp.lineOf[c.Line]]] != c.Value {
			return false
		}
	}
	return true
}

// leafCovers returns the number of crash states a leaf stands for: the states whose chosen
// lines have the chosen contents (any k giving them) and whose other lines have any k.
func (lp *lazyPoint) leafCovers(choices []exec.LazyChoice) *big.Int {
	n := lp.space.Size()
	var f big.Int
	for _, c := range choices {
		of := lp.contents[c.Line].Of
		n.Div(n, f.SetInt64(int64(len(of))))
		n.Mul(n, f.SetInt64(int64(countOf(of, c.Value))))
	}
	return n
}

// countOf counts the k whose content is v.
func countOf(of []int, v int) int {
	n := 0
	for _, x := range of {
		if x == v {
			n++
		}
	}
	return n
}

// judgeLazy judges the leaves of lazy item it's run (got) against the legal outcomes ls, each as
// one crash state, or records its fallback.
func (e *explorer) judgeLazy(it *item, got outcome, ls legalSet) {
	lo, lp := got.lazy, it.lazy
	st := &e.res.Stats
	if lo == nil || lo.Root.Err != nil {
		// The run could not start or was interrupted: judged (inconclusive) like an eager state.
		e.res.Stats.StatesTested++
		e.judge(it, got, ls)
		e.logState(it)
		return
	}
	st.LazyRuns++
	if lo.Fallback != "" {
		e.countFallback(lo.Fallback)
		e.lazy.fallback[it.point] = true
		e.lazy.ops[it.op] = true
		e.lazy.cost += lp.eagerCost
		e.runs.fellBack++
		return
	}
	leaves := lo.Leaves
	if len(leaves) == 0 {
		leaves = []exec.LazyLeaf{{Outcome: lo.Root}} // never branched: one leaf, every state
	}
	for _, l := range leaves {
		leaf := *it
		leaf.lazy, leaf.leafOf, leaf.choices = nil, lp, l.Choices
		leaf.state = lp.leafState(l.Choices)
		// The profiles that allow the leaf's state (the one state named for it of those it
		// stands for): a profile is claimed only for a state it allows.
		leaf.profiles = e.cfg.profileMask(lp.space, leaf.state)
		leaf.persisted, leaf.unpersist = stateRefs(lp.space, leaf.state)
		if op := culprit(lp.space, leaf.state, leaf.inflight, leaf.pointOp); op != leaf.op {
			leaf.op, leaf.pointKey = op, lp.windows[op]
			if op < len(e.cfg.Workload.Ops) {
				leaf.opText = e.cfg.Workload.Ops[op]
			}
		}
		st.StatesTested++
		st.LazyLeaves++
		e.lazy.covered.Add(&e.lazy.covered, lp.leafCovers(l.Choices))
		e.judge(&leaf, outcome{target: l.Outcome, done: true}, ls)
		e.logState(&leaf)
	}
}

// lazyRun makes job j's lazy run on image (the worker's working copy, made): its table gets
// the image's path and the leaf bound (the job's, else the target's, else exec.DefaultTimeout).
func (e *explorer) lazyRun(ctx context.Context, w *exec.Worker, j job, image string) *exec.LazyOutcome {
	leaf := j.timeout
	if leaf <= 0 {
		leaf = e.target.Timeout
	}
	if leaf <= 0 {
		leaf = exec.DefaultTimeout
	}
	abs, err := filepath.Abs(image)
	if err != nil {
		return &exec.LazyOutcome{Root: exec.Outcome{ExitCode: -1, Err: err}}
	}
	t := j.lazy.table
	t.Files, t.LeafTimeout = []string{abs}, leaf
	lo := e.cfg.Runner.(LazyRunner).Lazy(ctx, abs, j.stdin, w.Dir, w.Dir, &t, leaf, j.tree)
	return &lo
}

// runs returns the outcomes a batch's run gave its states: a lazy run's leaves (its root when
// it never branched), else the run's own.
func (o outcome) runs() []exec.Outcome {
	if o.lazy == nil {
		return []exec.Outcome{o.target}
	}
	if len(o.lazy.Leaves) == 0 {
		return []exec.Outcome{o.lazy.Root}
	}
	out := make([]exec.Outcome, len(o.lazy.Leaves))
	for i, l := range o.lazy.Leaves {
		out[i] = l.Outcome
	}
	return out
}

// fallbackPass returns the operations of the last walk, which explores eagerly the crash points
// whose lazy runs fell back (nil when there are none, or it has run).
func (e *explorer) fallbackPass() []bool {
	if e.lazy.walk || e.pacer.remainder || len(e.lazy.fallback) == 0 || e.pacer.budgetStop {
		return nil
	}
	e.lazy.walk = true
	pass := make([]bool, len(e.cfg.Workload.Ops))
	for _, k := range slices.Sorted(maps.Keys(e.lazy.ops)) {
		if k < len(pass) {
			pass[k] = true
		}
	}
	return pass
}
