package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/budget"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// Kinds returns the catalogue entries of the file-system crash findings.
func Kinds() []report.Rule {
	return []report.Rule{
		{Kind: report.FSOrderingViolation, Class: report.Correctness, Doc: "a crash state in which a file-system operation persisted while an earlier one did not fails the checker or diverges from both legal outcomes: the earlier operation must persist first (a missing fsync)"},
		{Kind: report.FSAtomicityViolation, Class: report.Correctness, Doc: "a crash state in which a file-system operation, or a run of them, persisted in part fails the checker or diverges from both legal outcomes: the program assumes it persists whole"},
		{Kind: report.FSDurabilityViolation, Class: report.Correctness, Doc: "a crash state that lost a file-system operation the program had already reported done on its output fails the checker or diverges from both legal outcomes: the output was printed before the data was durable"},
	}
}

// Strategy names (the PM ones where the meaning matches: package crash).
const (
	strategyPrefix     = "prefix"     // every operation up to a crash point persisted (ALICE's across-syscall atomicity)
	strategyOmitOne    = "omit-one"   // one operation lost, every later one up to a crash point persisted (ordering)
	strategySplit      = "split"      // an operation persisted in part (atomicity)
	strategyExhaustive = "exhaustive" // every legal state at a crash point, when few micro-operations may be lost
)

// Strategies lists the strategy names, in the order they run; DefaultStrategies those run
// without --strategy (ALICE's default checks, Pillai et al., OSDI'14 §4.3).
var (
	Strategies        = []string{strategyPrefix, strategyOmitOne, strategySplit, strategyExhaustive}
	DefaultStrategies = []string{strategyPrefix, strategyOmitOne, strategySplit}
)

// defaultMaxFree is Options.MaxFree's default: at most 2^10 states per crash point.
const defaultMaxFree = 10

// ErrCheckerFails is wrapped by the error Explore returns when the checker fails on the
// initial state or on the state of the finished run: those are consistent by definition, so the
// checker (or the workload) is wrong, and nothing it says about crash states can be trusted.
var ErrCheckerFails = errors.New("the checker fails on a consistent state")

// item is one crash state to judge and what it tests.
type item struct {
	strategy string
	build    int
	st       model.State
	point    int // last logical operation issued
	a, b     int // ordering: a lost, b persisted; atomicity: a partial (b the end of a run)
	what     string
}

// consistent reports whether it is one of the two consistent states (before the run, after
// it), which only the checker judges.
func (it item) consistent() bool { return it.strategy == "initial" || it.strategy == "final" }

// Explored is what Explore found.
type Explored struct {
	Findings []report.Finding
	Stats    report.Stats
	Warnings []string
	// Shard is set when Options.Shard selects a shard.
	Shard *report.Shard
}

// plan is a model's micro-operations under each split of an APM and its crash points: what the
// strategies choose crash states from.
type plan struct {
	m      *model.Model
	apm    *model.APM
	builds []model.Split   // builds[0] is apm.Base
	micro  [][]model.Micro // per build
	ranges [][][2]int      // per build and logical operation: its micro-operations [first, end), {-1, -1} when none
	points []int           // the crash points: logical operations with micro-operations in build 0
	// workload, if set, names the workload operations (model.Model.Operations) for reports.
	workload *workload.Workload
}

func newPlan(m *model.Model, apm *model.APM) *plan {
	p := &plan{m: m, apm: apm, builds: []model.Split{apm.Base}}
	for _, sp := range apm.Splits {
		if !slices.Contains(p.builds, sp) {
			p.builds = append(p.builds, sp)
		}
	}
	for _, sp := range p.builds {
		ms := apm.Build(m, sp)
		r := make([][2]int, len(m.Ops))
		for i := range r {
			r[i] = [2]int{-1, -1}
		}
		for j := range ms {
			op := ms[j].Op
			if r[op][0] < 0 {
				r[op][0] = j
			}
			r[op][1] = j + 1
		}
		p.micro = append(p.micro, ms)
		p.ranges = append(p.ranges, r)
	}
	for i := range m.Ops {
		if p.ranges[0][i][0] >= 0 {
			p.points = append(p.points, i)
		}
	}
	return p
}

// end returns the number of micro-operations of build b issued up to logical operation k.
func (p *plan) end(b, k int) int {
	e := 0
	for i := 0; i <= k && i < len(p.ranges[b]); i++ {
		e = max(e, p.ranges[b][i][1])
	}
	return e
}

// upTo returns the state of build b in which every micro-operation of logical operations 0..k
// persisted.
func (p *plan) upTo(b, k int) model.State {
	st := model.State{Persisted: make([]bool, len(p.micro[b]))}
	for j := range p.end(b, k) {
		st.Persisted[j] = true
	}
	return st
}

// sane returns the two consistent states: before the run and after it.
func (p *plan) sane() []item {
	last := len(p.m.Ops) - 1
	return []item{
		{strategy: "initial", st: model.State{Persisted: make([]bool, len(p.micro[0]))}, point: -1},
		{strategy: "final", st: p.upTo(0, last), point: last, a: last, b: last},
	}
}

// prefix returns the state at each crash point in which everything issued persisted (ALICE,
// OSDI'14 §4.3: a crash-consistent program recovers from each).
func (p *plan) prefix() []item {
	var items []item
	for _, k := range p.points {
		items = append(items, item{strategy: strategyPrefix, st: p.upTo(0, k), point: k, a: k, b: k})
	}
	return items
}

// failingRuns are the failing prefix runs of an exploration (runPrefix), what omit-one and split
// judge with those failures assumed fixed.
type failingRuns struct {
	// failed holds the crash points whose prefix state failed.
	failed map[int]bool
	// units are the runs as the fix of their atomicity violation makes them: the logical
	// operations from the first failing crash point to the first passing one after it
	// (inclusive; to the last crash point when none passes), which persist as one.
	units [][2]int
}

// unit returns the index of the unit holding logical operation i, or -1.
func (r failingRuns) unit(i int) int {
	for u, x := range r.units {
		if i >= x[0] && i <= x[1] {
			return u
		}
	}
	return -1
}

// omitOne returns, for each logical operation i that is not only barriers, the states that lose
// i and persist everything else up to a later crash point j, as long as that is legal (ALICE,
// OSDI'14 §4.3: ordering vulnerabilities). Once a later operation depends on i, every later state
// is illegal, so the walk over j stops there. A failing prefix run (r) is judged as if its
// atomicity violation were fixed, as PM mode assumes an earlier bug fixed so that it does not
// hide later ones (pm/explore, AssumeDurable): its operations persist as one unit, so the unit is
// lost as a whole (never a part of it: that is the run's own failure) and j is never a crash
// point whose prefix state failed (such a state would fail for the run's reason). Each
// vulnerability is then its own finding: the run's atomicity, and any operation (or the run as a
// whole) that must persist before a later one.
func (p *plan) omitOne(r failingRuns) []item {
	var items []item
	for _, l := range p.omitLost(r) {
		for x := range p.points {
			it, ok, legal := p.omitState(r, l, x)
			if !legal {
				break
			}
			if ok {
				items = append(items, it)
			}
		}
	}
	return items
}

// omitted is what an omit-one state loses: logical operations lo..hi (one operation, or a
// failing prefix run's unit).
type omitted struct {
	lo, hi int
	what   string
}

// omitLost returns what omit-one loses, in program order (see omitOne).
func (p *plan) omitLost(r failingRuns) []omitted {
	ms, rg := p.micro[0], p.ranges[0]
	var out []omitted
	for _, i := range p.points {
		l := omitted{lo: i, hi: i}
		if u := r.unit(i); u >= 0 {
			if i != r.units[u][0] {
				continue // the unit is lost from its first operation
			}
			l.lo, l.hi = r.units[u][0], r.units[u][1]
			l.what = fmt.Sprintf("operations %d to %d lost, the failing prefix run they form assumed fixed (persisting as one)", l.lo, l.hi)
		}
		barriers := true
		for x := l.lo; x <= l.hi; x++ {
			if rg[x][0] >= 0 && !onlyBarriers(ms, rg[x]) {
				barriers = false
			}
		}
		if !barriers {
			out = append(out, l)
		}
	}
	return out
}

// omitState returns the omit-one state that loses l and persists everything else up to crash
// point p.points[x]: ok false when that crash point is not one to test (not after l, or its
// prefix state failed), legal false when the state is illegal (and so is every later one).
func (p *plan) omitState(r failingRuns, l omitted, x int) (it item, ok, legal bool) {
	j := p.points[x]
	if j <= l.hi || r.failed[j] {
		return item{}, false, true
	}
	ms, rg := p.micro[0], p.ranges[0]
	st := p.upTo(0, j)
	for o := l.lo; o <= l.hi; o++ {
		for y := rg[o][0]; y >= 0 && y < rg[o][1]; y++ {
			st.Persisted[y] = false
		}
	}
	if !model.Legal(ms, st) {
		return item{}, false, false
	}
	return item{strategy: strategyOmitOne, st: st, point: j, a: l.lo, b: j, what: l.what}, true, true
}

// split returns, for each logical operation i outside a failing prefix run's unit (failingRuns:
// fixing the run's atomicity makes its operations persist as one) and each build, the
// states after operation i-1 that persist the micro-operations of i up to each but its last one,
// and, when the build cuts i into pieces, the same with one earlier piece lost (ALICE, OSDI'14
// §4.3: atomicity vulnerabilities, under splits into 1 and 3 pieces and 4 KiB blocks). States
// that are illegal or repeat one of another build are left out.
func (p *plan) split(r failingRuns) []item {
	var items []item
	seen := map[string]bool{}
	for b, sp := range p.builds {
		bm, br := p.micro[b], p.ranges[b]
		for _, i := range p.points {
			if r.unit(i) >= 0 || br[i][0] < 0 {
				continue
			}
			lo, hi := br[i][0], br[i][1]
			add := func(st model.State, what string) {
				key := fmt.Sprint(i, st.Persisted[lo:hi], bm[lo].Offset, len(bm))
				if !model.Legal(bm, st) || seen[key] {
					return
				}
				seen[key] = true
				items = append(items, item{strategy: strategySplit, build: b, st: st, point: i, a: i, b: i, what: what})
			}
			for cut := lo; cut < hi-1; cut++ {
				st := p.upTo(b, i-1)
				for x := lo; x <= cut; x++ {
					st.Persisted[x] = true
				}
				add(st, bm[cut].What)
				if sp.Count != 1 || sp.Aligned != 0 {
					for k := lo; k < cut; k++ {
						st2 := model.State{Persisted: slices.Clone(st.Persisted)}
						st2.Persisted[k] = false
						add(st2, bm[cut].What+", an earlier piece lost")
					}
				}
			}
		}
	}
	return items
}

// exhaustive returns every legal state (model.LegalStates) at each crash point where at most
// maxFree micro-operations may be lost, except those holding no micro-operation of the crash
// point's own operation (they are states of an earlier crash point) and repeats; each is
// classified (classify). skipped counts the crash points left out.
func (p *plan) exhaustive(maxFree int) (items []item, skipped int) {
	ms := p.micro[0]
	seen := map[string]bool{}
	for _, k := range p.points {
		end := p.end(0, k)
		if len(model.Free(ms, end)) > maxFree {
			skipped++
			continue
		}
		states, _ := model.LegalStates(ms, end, 1<<maxFree)
		lo := p.ranges[0][k][0]
		for _, st := range states {
			if !slices.Contains(st.Persisted[lo:end], true) {
				continue
			}
			key := stateKey(st)
			if seen[key] {
				continue
			}
			seen[key] = true
			a, b := classify(ms, st, k)
			items = append(items, item{strategy: strategyExhaustive, st: st, point: k, a: a, b: b})
		}
	}
	return items, skipped
}

// stateKey identifies a state of one build.
func stateKey(st model.State) string {
	b := make([]byte, (len(st.Persisted)+7)/8)
	for i, p := range st.Persisted {
		if p {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return string(b)
}

// classify names the pair of an exhaustive state: the first logical operation with a lost
// micro-operation and the last one persisted after it (equal when the state persists a
// prefix, ending inside one operation).
func classify(ms []model.Micro, st model.State, k int) (a, b int) {
	a, b = -1, -1
	for j, p := range st.Persisted {
		if !p && a < 0 {
			a = ms[j].Op
		}
		if p && a >= 0 && ms[j].Op > a {
			b = ms[j].Op
		}
	}
	if a < 0 {
		return k, k
	}
	if b < 0 {
		return a, a
	}
	return a, b
}

func onlyBarriers(ms []model.Micro, r [2]int) bool {
	for j := r[0]; j < r[1]; j++ {
		if !ms[j].Barrier() {
			return false
		}
	}
	return true
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// explorer runs the strategies of one Explore call.
type explorer struct {
	ctx    context.Context
	o      Options
	s      Setup
	pool   exec.Pool // the workers: Options.Jobs in Setup.Dir
	p      *plan
	res    *Explored
	cl     *clusters
	start  time.Time
	mu     sync.Mutex
	first  time.Duration // the first failing state, when it was judged
	judged map[string]bool
	legal  map[int]*legalPair // by workload operation (Equivalence)
	// stopped counts the crash states whose checker or re-execution was stopped from outside
	// (verdict.stopped), stoppedHow says how the first was.
	stopped    int
	stoppedHow string
	// With a time budget: bctx ends at its end (runs still going then are killed and left
	// out), and until is when the strategy running must stop starting runs (budget.go).
	bctx  context.Context
	until time.Time
	// budgetStart is when the budget began (Options.Start); strategy is the index of the
	// strategy running, of strategies (progress).
	budgetStart          time.Time
	strategy, strategies int
	// With Options.Shard: the states of each strategy after prefix (all shards'), and the
	// shard of each logical operation's states (shard.go).
	lists map[string][]item
	owner []int
}

// Explore tests the crash states of model m that the strategies of o choose under the
// persistence model of s, each judged in a crash directory by s's checker and, with a workload,
// by output equivalence (ALICE, Pillai et al., OSDI'14 §4.3; Barowsky et al., Improving Application
// Crash Consistency with Symbolic Execution and Fuzzing, 2021, §3.1.3; WITCHER, SOSP'21, §4.5):
// prefix states find runs of operations that must persist atomically, states that lose one
// operation find the operations that must persist before later ones (a later output makes it a
// durability violation), states that persist part of one operation find atomicity assumptions,
// and the exhaustive strategy tries every legal state where few are possible. The checker first
// runs on the initial and the final state; failing there is ErrCheckerFails. Crash directories
// live under s.Dir and are removed when Explore returns, also when ctx is cancelled (then the
// error is ctx's, with the findings so far). Of o's checks (Options.Check) Explore makes those
// it cannot run without: known strategies, no MaxStates with a Shard; and it needs an oracle.
func Explore(ctx context.Context, m *model.Model, o Options, s Setup) (*Explored, error) {
	strats := o.Strategies
	if len(strats) == 0 {
		strats = DefaultStrategies
	}
	if err := checkStrategies(strats); err != nil {
		return nil, err
	}
	if len(s.Checker.Args) == 0 && s.Oracle == nil {
		return nil, errors.New("no oracle: give a checker, a workload, or both")
	}
	if err := o.checkShard(); err != nil {
		return nil, err
	}
	if o.MaxFree <= 0 {
		o.MaxFree = defaultMaxFree
	}
	realClock := o.Now == nil
	if realClock {
		o.Now = time.Now
	}
	p := newPlan(m, s.APM)
	if s.Oracle != nil {
		p.workload = &s.Oracle.Workload
	}
	e := &explorer{ctx: ctx, bctx: ctx, o: o, s: s, pool: exec.Pool{Jobs: o.Jobs, Dir: s.Dir}, p: p, start: o.Now(), judged: map[string]bool{}, legal: map[int]*legalPair{}}
	e.budgetStart = o.Start
	if e.budgetStart.IsZero() {
		e.budgetStart = e.start
	}
	if o.TimeBudget > 0 {
		o.Progress.Deadline(e.budgetStart.Add(o.TimeBudget))
	}
	if o.TimeBudget > 0 && realClock { // a test's clock has no deadline on the wall clock
		var cancel context.CancelFunc
		e.bctx, cancel = context.WithDeadline(ctx, e.budgetStart.Add(budget.ScheduleEnd(o.TimeBudget)))
		defer cancel()
	}
	e.res = &Explored{Stats: report.Stats{CrashPoints: len(e.p.points), Jobs: o.Jobs}}
	if e.res.Stats.Jobs <= 0 {
		e.res.Stats.Jobs = max(1, runtimeCPUs())
	}
	e.cl = newClusters(e.p, s.Sites, s.Dir)
	if err := e.sane(); err != nil {
		return e.finish(err)
	}
	runs := failingRuns{failed: map[int]bool{}}
	var order []string
	for _, s := range Strategies { // in their order: omit-one and split use prefix's runs
		if slices.Contains(strats, s) {
			order = append(order, s)
		}
	}
	e.strategies = len(order)
	for k, s := range order {
		e.until, e.strategy = e.schedule(k, len(order)), k
		if o.Shard.Active() && e.lists == nil && s != strategyPrefix {
			e.planShards(order, runs)
		}
		var err error
		switch s {
		case strategyPrefix:
			err = e.runPrefix(&runs)
		case strategyOmitOne:
			err = e.runOmitOne(runs)
		case strategySplit:
			err = e.runSplit(runs)
		case strategyExhaustive:
			err = e.runExhaustive()
		}
		if err != nil {
			return e.finish(err)
		}
	}
	if o.Shard.Active() && e.lists == nil {
		e.planShards(order, runs) // prefix alone
	}
	return e.finish(nil)
}

func (e *explorer) finish(err error) (*Explored, error) {
	e.o.Progress.Phase("clustering the findings", "", 0)
	if n := e.res.Stats.SkippedBudget; n > 0 {
		e.warn(fmt.Sprintf("partial: %d crash states were left out to keep to the time budget of %v (spread over the run: every operation's states got their first runs before any got more); the results cover the %d tested", n, e.o.TimeBudget, e.res.Stats.StatesTested))
		if err == nil && e.res.Stats.StatesTested == 0 {
			err = fmt.Errorf("--time-budget %v: the budget ended before any crash state was judged (%d left out): nothing was tested; give a longer budget", e.o.TimeBudget, n)
		}
	}
	if e.stopped > 0 {
		e.warn(fmt.Sprintf("inconclusive: %d crash states were not judged: their checker or re-execution was stopped before it could say (the first: %s); they are neither findings nor passes (raise --timeout when runs hang at it)", e.stopped, e.stoppedHow))
	}
	e.res.Findings = e.cl.findings()
	if e.res.Shard != nil {
		e.res.Shard.Clusters = e.cl.shardClusters()
		if e.o.Shard.Index > 0 {
			e.res.Stats.CrashPoints = 0 // shard 0's (every shard judges the prefix states)
		}
	}
	e.res.Stats.ElapsedSeconds = e.o.Now().Sub(e.start).Seconds()
	e.res.Stats.FirstFailureSeconds = e.first.Seconds()
	e.res.Stats.Findings = len(e.res.Findings)
	return e.res, err
}

func (e *explorer) warn(s string) { e.res.Warnings = appendOnce(e.res.Warnings, s) }

// phase begins the progress phase of the strategy running, named name, against total units
// (states; crash points for prefix, one state each).
func (e *explorer) phase(name, unit string, total int) {
	e.o.Progress.Phase(fmt.Sprintf("exploring: %s (strategy %d of %d)", name, e.strategy+1, e.strategies), unit, total)
}

// figures shows the states judged, failed and the findings so far.
func (e *explorer) figures() {
	st := &e.res.Stats
	e.o.Progress.Figures(exec.Figures{States: st.StatesTested, Failed: st.Failures, Findings: len(e.cl.order)})
}

// sane judges the consistent states (before the run, after it): the oracles must accept them.
func (e *explorer) sane() error {
	items := e.p.sane()
	e.o.Progress.Phase("checking the consistent states", "states", len(items))
	vs, err := e.run(items)
	if err != nil {
		return err
	}
	for i, v := range vs {
		which := "the initial state (the workload directory before the run)"
		if i == 1 {
			which = "the state of the finished run"
		}
		if v.stopped != "" {
			return fmt.Errorf("%s on %s: no state can be judged (raise --timeout)", v.stopped, which)
		}
		if !v.judged && e.budgetEnded() {
			return fmt.Errorf("--time-budget %v: the budget ended before the checker judged %s: nothing was tested; give a longer budget", e.o.TimeBudget, which)
		}
		if v.failed {
			return fmt.Errorf("%w: %s: %s", ErrCheckerFails, which, v.detail)
		}
	}
	e.stopped, e.stoppedHow = 0, ""
	e.res.Stats.Failures, e.res.Stats.StatesTested, e.res.Stats.Inconclusive = 0, 0, 0 // they are no crash states
	e.first = 0
	return nil
}

// at returns the place of state i of strategy s in the unsharded order (a shard's report).
func at(s string, i int) report.ShardOrder {
	return report.ShardOrder{Walk: slices.Index(Strategies, s), Event: uint64(i)}
}

// runPrefix judges the prefix states; a run of failing ones is one across-operation atomicity
// violation, from the first failing crash point to the first passing one after it (ALICE's
// across-syscall atomicity), which omit-one and split then judge as fixed (r). Every shard
// judges them all (shard.go); shards other than the first count and cluster none.
func (e *explorer) runPrefix(r *failingRuns) error {
	items := e.p.prefix()
	e.phase(strategyPrefix, "crash points", len(items))
	before := e.res.Stats
	vs, err := e.run(items)
	defer e.figures()
	counted := !e.o.Shard.Active() || e.o.Shard.Index == 0
	if !counted {
		st := &e.res.Stats
		st.StatesTested, st.Failures, st.Inconclusive, st.SkippedBudget = before.StatesTested, before.Failures, before.Inconclusive, before.SkippedBudget
		st.OracleRuns, st.RepeatRuns = before.OracleRuns, before.RepeatRuns
	}
	points := e.p.points
	for i := 0; i < len(vs); i++ {
		if !vs[i].failed {
			continue
		}
		// A state not judged (inconclusive, left out) between failing ones does not cut the
		// run in two.
		j := i
		for k := i + 1; k < len(vs) && (vs[k].failed || !vs[k].judged); k++ {
			if vs[k].failed {
				j = k
			}
		}
		end := len(points) - 1
		if j+1 < len(points) {
			end = j + 1
		}
		for x := i; x <= j; x++ {
			r.failed[points[x]] = true
		}
		r.units = append(r.units, [2]int{points[i], points[end]})
		it := items[i]
		it.a, it.b = points[i], points[end]
		if counted {
			e.cl.add(report.FSAtomicityViolation, it, vs[i], at(strategyPrefix, i))
		}
		i = j
	}
	return err
}

// runOmitOne judges the omit-one states: the first failing state of each lost operation is an
// ordering violation, or a durability violation when the later operation is an output.
func (e *explorer) runOmitOne(r failingRuns) error {
	if e.o.TimeBudget > 0 {
		return e.runOmitOneRounds(r)
	}
	items, idx := e.share(strategyOmitOne, func() []item { return e.p.omitOne(r) })
	e.phase(strategyOmitOne, "crash states", len(items))
	vs, err := e.run(items)
	done := map[int]bool{}
	for x, v := range vs {
		e.omitVerdict(done, items[x], v, at(strategyOmitOne, idx[x]))
	}
	e.figures()
	return err
}

// omitVerdict records an omit-one verdict: the first failing state of each lost operation is a
// finding (done: the operations with one).
func (e *explorer) omitVerdict(done map[int]bool, it item, v verdict, o report.ShardOrder) {
	if !v.failed || done[it.a] {
		return
	}
	done[it.a] = true
	e.cl.add(e.orderKind(it), it, v, o)
}

// runOmitOneRounds is runOmitOne under a time budget: omit-one has up to one state per pair of
// crash points (quadratic: 8 million for 4 000 crash points, too many to build before running
// any), so its states are built round by round, one state per lost operation and round (the
// next later crash point), and building stops with the budget. The pairs never built are
// counted as left out (Stats.SkippedBudget: an upper bound, as some would be illegal).
func (e *explorer) runOmitOneRounds(r failingRuns) error {
	lost := slices.DeleteFunc(e.p.omitLost(r), func(l omitted) bool { return !e.mine(l.lo) })
	e.phase(strategyOmitOne, "crash states at most", e.omitLeft(r, lost, make([]int, len(lost)), nil))
	next := make([]int, len(lost)) // per lost operation: the index of the next crash point to try
	alive := make([]bool, len(lost))
	for i := range alive {
		alive[i] = true
	}
	done := map[int]bool{}
	for round := 0; ; round++ {
		var items []item
		var us []int
		for u, l := range lost {
			for alive[u] && next[u] < len(e.p.points) {
				it, ok, legal := e.p.omitState(r, l, next[u])
				next[u]++
				if !legal {
					alive[u] = false
				}
				if ok {
					items = append(items, it)
					us = append(us, u)
					break
				}
			}
		}
		if len(items) == 0 {
			return nil
		}
		vs, err := e.run(items)
		for x, v := range vs {
			e.omitVerdict(done, items[x], v, report.ShardOrder{Walk: slices.Index(Strategies, strategyOmitOne), Event: uint64(round), Seq: lost[us[x]].lo})
		}
		e.figures()
		if err != nil {
			return err
		}
		if e.overBudget() {
			e.res.Stats.SkippedBudget += e.omitLeft(r, lost, next, alive)
			return nil
		}
	}
}

// omitLeft counts the omit-one states not yet built of each lost operation u (from crash point
// next[u] on, while alive[u]; nil: all alive): the later crash points whose prefix state did not
// fail (an upper bound: some would be illegal).
func (e *explorer) omitLeft(r failingRuns, lost []omitted, next []int, alive []bool) int {
	n := 0
	for u := range lost {
		for x := next[u]; (alive == nil || alive[u]) && x < len(e.p.points); x++ {
			if j := e.p.points[x]; j > lost[u].hi && !r.failed[j] {
				n++
			}
		}
	}
	return n
}

// orderKind is the kind of a failing state that lost operation it.a and kept it.b.
func (e *explorer) orderKind(it item) report.Kind {
	if e.p.m.Ops[it.b].Kind == model.OpOutput {
		return report.FSDurabilityViolation
	}
	return report.FSOrderingViolation
}

// runSplit judges the split states: each failing one is an atomicity violation.
func (e *explorer) runSplit(r failingRuns) error {
	items, idx := e.share(strategySplit, func() []item { return e.p.split(r) })
	e.phase(strategySplit, "crash states", len(items))
	vs, err := e.run(items)
	for x, v := range vs {
		if v.failed {
			e.cl.add(report.FSAtomicityViolation, items[x], v, at(strategySplit, idx[x]))
		}
	}
	e.figures()
	return err
}

// runExhaustive judges the exhaustive states not judged by an earlier strategy.
func (e *explorer) runExhaustive() error {
	all, skipped := e.p.exhaustive(e.o.MaxFree)
	if skipped > 0 {
		e.warn(fmt.Sprintf("exhaustive: %d crash points where more than %d micro-operations may be lost were left to the other strategies", skipped, e.o.MaxFree))
	}
	e.othersJudged()
	var items []item
	var idx []int // each state's index in all: the unsharded order
	for i, it := range all {
		if !e.judged[stateKey(it.st)] && e.mine(groupOf(strategyExhaustive, it)) {
			items = append(items, it)
			idx = append(idx, i)
		}
	}
	e.phase(strategyExhaustive, "crash states", len(items))
	vs, err := e.run(items)
	defer e.figures()
	for x, v := range vs {
		if !v.failed {
			continue
		}
		it := items[x]
		kind := report.FSAtomicityViolation
		if it.a != it.b {
			kind = e.orderKind(it)
		}
		e.cl.add(kind, it, v, at(strategyExhaustive, idx[x]))
	}
	return err
}
