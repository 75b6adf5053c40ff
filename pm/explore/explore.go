package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/scry-pm/scry/internal/budget"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Result is what an exploration found.
type Result struct {
	Findings []report.Finding // crash findings, clustered, in walk order of their first failure
	// Events is the number of trace events a whole walk read (0 when the time budget stopped
	// every walk early): the report's event count when no trace analysis ran (scry explore).
	Events   uint64
	Stats    report.Stats
	Warnings []string
	// Invariants counts, per invariant ID (crash.Invariant.ID, the inferred property's), the
	// crash states judged that break it and those of them that failed: a property whose states
	// failed is confirmed by a crash image (the mpb-violation and mpa-violation checks' findings
	// then stand).
	Invariants map[int]InvariantOutcome
	// Durability counts, per source position of a store never made durable in time (assumed
	// durable from the next operation on: crash.Options.AssumeDurable and AssumeLate) and per
	// frame of the context it was issued in (StoreAt), the durability states judged that lost it
	// alone and those of them that failed: a store whose state failed has a durability-violation
	// finding, which confirms the trace oracles' unpersisted-store and overwritten-unpersisted
	// findings at it, in that context.
	Durability map[StoreAt]InvariantOutcome
	// Pairs is what the crash states breaking each pair of Config.ConfirmPairs showed, with
	// their repaired twins (Pair).
	Pairs map[Pair]PairOutcome
	// Shard is set when Options.Shard selects a shard: what `scry merge` needs (shard.go).
	Shard *report.Shard
	// RunBound is what bounded a run on a crash image when the exploration ended: the target's
	// Timeout, else the adaptive hang bound (HangFactor times the longest run on a consistent
	// image), else 0 (no run was timed).
	RunBound time.Duration
}

// StoreAt is a store's source position, Store, and one frame of the context it was issued in, At
// (a location of report.FramesAt: the store itself, the calls its code was inlined at, its call
// stack). A finding reported at a caller (report.Place: a helper used wrongly by one caller) is
// settled by the states of the stores issued under that caller alone.
type StoreAt struct{ Store, At report.Location }

// InvariantOutcome is what the crash states breaking one invariant (or losing one store)
// showed.
type InvariantOutcome struct {
	Tested, Failed int
}

// unitRef is a store named by a finding (resolved inside the Walk callback; its source position
// is explorer.location(Site)). 24 bytes: an item of a state over thousands of lines holds
// thousands (MaxOperationBytes counts them).
type unitRef struct {
	Site  uint32
	Stack uint32
	Seq   uint64
	Event uint64
}

// item is one crash image to run: everything a finding needs, materialised in the callback,
// in parts: the image, where the crash is, the operations around it, what confirming inferred
// pairs needs of it (cause.go) and its verdict.
type item struct {
	crashImage
	pointAt
	opsAt
	pairCheck
	judgement
	state    crash.State
	strategy string
	// profiles are the persistency profiles (Options.Profiles) that allow the state, one bit
	// per profile (Options.profileMask).
	profiles uint8
	// persisted and unpersist are the stores a finding names: for an ordering violation the
	// units persisted although an earlier one was not, and those earlier units; for an atomicity
	// violation every unit not persisted (stateRefs); for a durability state the stores it lost.
	persisted []unitRef
	unpersist []unitRef
	// durability: the state loses only stores assumed durable from this operation on
	// (crash.Options.AssumeDurable), to prove the missing persist matters; durable is the source
	// position of the store it is about (the others are lost with it by px86's line order) and
	// cause the store's function (cause.go: part of its cluster key).
	durability bool
	durable    report.Location
	cause      string
	// lazy, on a crash point's lazy run (lazy.go), is what its leaves are judged with; leafOf
	// and choices, on a leaf, its run's and its choices.
	lazy   *lazyPoint
	leafOf *lazyPoint
	// torn, on a state of the torn strategy that tears a store, is what it is judged with.
	torn    *tornPair
	choices []exec.LazyChoice
}

// crashImage is how an item's image is made: the path its run gets (image: base with patches,
// made by the worker), the file it starts from (a consistent image, or a point's) and the
// patches written over it (the pages changed since base, the state's); key is the image's
// content key (imageKey; "" when not keyed) and isBase says the image is its base, the
// consistent image before the operation (dedupe.go).
type crashImage struct {
	image   string
	base    string
	patches []crash.Patch
	key     string
	isBase  bool
}

// pointAt is where an item's crash is: its crash point (index, kind, trace event), the site
// and call-stack node of the point (loc its location; the lost store's, for durability), the
// operation's text, the pool's region, the state's lines, and the point's window (pointKey,
// cause.go: part of the cluster key).
type pointAt struct {
	point      int
	pointOp    int // the operation of the point's thread (crash.CrashPoint.Op)
	pointKind  crash.PointKind
	event      uint64
	site       uint32
	loc        report.Location
	stack      uint32
	opText     string
	region     uint32
	regionPath string
	lines      []report.CrashLine
	pointKey   string
}

// opsAt are the operations at an item's crash point (oracles.go): its operation, its busy
// period, the period's operations ended before it (OP_END order) and in flight (OP_BEGIN order),
// the first operation not begun (the crash-image run's standard input starts there) and the
// point's legal linearizations (shared by its items).
type opsAt struct {
	op       int
	per      *period
	done     []int
	inflight []int
	next     int
	lins     []linearization
}

// pairCheck is what confirming inferred pairs needs of an item (cause.go): the
// Config.ConfirmPairs its state breaks; twin, for a repaired twin, what it repairs; groupPassed,
// for a state with twins, whether each group twin passed; repeatFailed whether the state failed
// again when run once more.
type pairCheck struct {
	pairs        []Pair
	twin         *twin
	groupPassed  []bool
	repeatFailed bool
}

// judgement is an item's verdict, once judged (judged, failed), and how sampling and sharding
// see it: smp how cluster sampling applies to it (judge.go); order its place in the order of
// judgement, cluster and variant its finding's cluster key and variant key when it failed (a
// shard's log, shard.go).
type judgement struct {
	judged, failed   bool
	smp              sampling
	order            *report.ShardOrder
	cluster, variant string
}

// period is a busy period of the workload: from an OP_BEGIN when no operation was in flight to
// the OP_END that leaves none in flight. A sequential workload has one operation per period;
// threads running operations concurrently make periods of several.
type period struct {
	ops   []int // operations begun, in OP_BEGIN order
	ended []int // operations ended, in OP_END order
	// begins and ends are the trace events of the operations' OP_BEGIN and OP_END (real-time
	// order, oracles.go); cuts the durable points inside them (their transactions, crash.TxEnd),
	// in trace order, and ntx the transactions each operation committed so far.
	begins, ends map[int]uint64
	cuts         []*txCut
	ntx          map[int]int
	image        bool   // the boundary writer holds the image at the period's first OP_BEGIN
	before       string // that image, copied at the period's first explored crash point ("" before)
	region       uint32 // the pool's region id at that OP_BEGIN
	gen          uint64 // its image generation there (crash.CrashPoint.Generation)
	after        string // one-operation period: the image at its OP_END ("" until then, or none)
}

// sequential reports whether the period is one operation (the two-oracle case).
func (p *period) sequential() bool { return len(p.ops) == 1 }

// explorer is one Run: the walk of the trace that builds crash images, and the parts it
// composes, each with its own state: the pacing of the time budget (pacer, priority.go and
// retry.go), the batches of runs (runs, run.go), the findings' clusters and causes (found,
// judge.go, cause.go, dedupe.go), the source positions of sites (places, cause.go) and the lazy
// walk (lazyWalk, lazy.go).
type explorer struct {
	cfg    *Config
	target exec.Target       // the program as its runs run it (Options.Target)
	strats []*crash.Strategy // Options.Strategies resolved
	ctx    context.Context
	res    *Result
	prog   *exec.Progress // Options.Progress
	start  time.Time      // when the exploration began
	warned map[string]bool
	// bw writes the consistent image at each busy period's start (the boundary writer); the
	// walk in progress reads the trace through places.r.
	bw *crash.ImageWriter
	// cur is the busy period in progress (nil when no operation is in flight); pass says which
	// operations this walk explores (nil: all), walk is its number.
	cur  *period
	pass []bool
	walk int
	// took says that visitPoint built a point's states (it was not left out); explored says
	// which operations had a crash point explored (Stats.PathsExplored); memoryOps are the
	// operations whose later crash points MaxOperationBytes left out.
	took      bool
	explored  map[int]bool
	memoryOps map[int]bool

	// file is the trace, opened once (ownFile: by Run, which closes it); plan what its first
	// read told (makePlan).
	file    *trace.File
	ownFile bool
	plan    *plan
	// servers are the fork servers of the runs (nil: runs by exec), hugePages whether their heap
	// is on huge pages; cancelRuns ends runs.runCtx's deadline.
	servers    *exec.ForkServers
	hugePages  bool
	cancelRuns context.CancelFunc

	pacer  *pacer
	runs   *runs
	found  *clusters
	places *places
	lazy   *lazyWalk
}

// Run explores the crash states of cfg.Trace: see the package doc. It returns the findings and
// statistics found so far together with the first error (a bad option or trace, a file error,
// the context cancelled: Ctrl-C); a trace truncated by a crash of the recorded program is
// explored up to its end with a warning. The trace is read once to plan the exploration
// (makePlan) and once per walk (a round of the order of exploration, priority.go), through one
// open file (cfg.File, else Run opens cfg.Trace).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	e, err := newExplorer(ctx, &cfg)
	defer e.close()
	if err != nil {
		return e.res, err
	}
	e.prog.Phase("exploring", "crash points covered", e.pacer.allPoints)
	err = e.walks()
	e.prog.Phase("clustering and placing the findings", "", 0)
	e.place()
	e.conclude()
	return e.res, err
}

// newExplorer sets up the exploration of cfg: the options resolved (Config.setup), the trace
// opened and the exploration planned in one read of it (makePlan), the scratch directory, the
// fork servers and the parts. It always returns an explorer whose close releases what was set
// up, and whose res holds what the error leaves.
func newExplorer(ctx context.Context, cfg *Config) (*explorer, error) {
	e := &explorer{
		cfg: cfg, ctx: ctx, res: &Result{Durability: map[StoreAt]InvariantOutcome{}, Pairs: map[Pair]PairOutcome{}},
		prog: cfg.Progress, start: time.Now(), warned: map[string]bool{}, explored: map[int]bool{}, memoryOps: map[int]bool{},
		pacer: &pacer{budget: cfg.scheduled(), now: cfg.now, testClock: cfg.Now != nil, budgetStart: cfg.Start},
		runs:  &runs{runCtx: ctx, pointEvent: ^uint64(0)}, found: newClusters(&cfg.Options), places: newPlaces(),
		lazy: &lazyWalk{fallback: map[int]bool{}, ops: map[int]bool{}},
	}
	var err error
	var hugePages bool
	if e.file = cfg.File; e.file == nil {
		if e.file, err = trace.OpenFile(cfg.Trace); err != nil {
			return e, err
		}
		e.ownFile = true
	}
	// The profiles fit the trace's architecture (px86.ForTrace): an aarch64 program's crash
	// states are the Arm profile's; asked for none, the findings stay unlabelled.
	if len(cfg.Profiles) > 0 {
		if cfg.Profiles, err = px86.ForTrace(cfg.Profiles, e.file.Header().AArch64()); err != nil {
			return e, err
		}
	}
	if e.target, e.strats, hugePages, err = cfg.setup(); err != nil {
		return e, err
	}
	if e.file.Header().AArch64() && slices.ContainsFunc(e.strats, func(s *crash.Strategy) bool { return s.Lazy }) {
		return e, errors.New("the lazy strategy needs an x86-64 program (its images single-step with x86's trap flag): use eager strategies for an aarch64 program")
	}
	if e.pacer.budgetStart.IsZero() {
		e.pacer.budgetStart = e.pacer.now()
	}
	e.invariants()
	e.lazyCheck()
	// Plan first: the crash points to explore are counted before any run, so that progress is
	// reported against a fixed total, a walk stopped at the budget's end knows how many it left
	// out, and the budget paces each walk by the estimated states of the points it has left.
	e.prog.Phase("planning: the crash points and operation paths", "", 0)
	if e.plan, err = makePlan(cfg, e.strats, e.file); err != nil {
		return e, err
	}
	e.pacer.setPlan(e.plan)
	e.res.Stats.SkippedScope = e.plan.scopedOut
	parent, where := exec.ScratchParent("", e.plan.regionBytes, cfg.AvoidTmpfs)
	e.res.Stats.Images = "images " + where
	if e.runs.tmp, err = os.MkdirTemp(parent, "scry-explore-*"); err != nil {
		return e, err
	}
	e.runs.pool = exec.Pool{Jobs: cfg.Jobs, Dir: parent}
	if pr, ok := cfg.Runner.(ProcessRunner); ok {
		e.res.Stats.Runs = "runs by exec (--no-fork-server)"
		if pr.Prog.Client != nil {
			e.res.Stats.Runs = "runs by exec: a server and its client per image (--client)"
		} else if !cfg.NoForkServer && pr.Servers == nil {
			pr.Servers = exec.NewForkServers(e.target, e.runs.tmp)
			e.servers, e.hugePages = pr.Servers, hugePages
			cfg.Runner = pr
		}
	}
	if d := cfg.TimeBudget; d > 0 {
		e.prog.Deadline(e.pacer.budgetStart.Add(d))
		if cfg.Now == nil { // a test's clock has no deadline on the wall clock
			// The runs still going at the schedule's end are stopped: the final phase has its
			// reserve whatever the runs cost (a hang bound under load, a slow last batch).
			e.runs.runCtx, e.cancelRuns = context.WithDeadline(ctx, e.pacer.budgetStart.Add(budget.ScheduleEnd(cfg.scheduled())))
		}
	}
	e.res.Stats.Jobs = cfg.Jobs
	if e.res.Stats.Jobs <= 0 {
		e.res.Stats.Jobs = defaultJobs()
	}
	return e, nil
}

// close releases what newExplorer set up: the fork servers (Stats.Runs says how the runs ran),
// the boundary writer, the scratch directory, the trace file it opened.
func (e *explorer) close() {
	if e.cancelRuns != nil {
		e.cancelRuns()
	}
	if e.servers != nil {
		e.res.Stats.Runs = e.servers.Mode()
		if e.hugePages {
			e.res.Stats.Runs += ", heap on huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)"
		}
		e.servers.Close()
	}
	if e.bw != nil {
		e.bw.Close()
	}
	if e.runs.tmp != "" {
		os.RemoveAll(e.runs.tmp)
	}
	if e.ownFile && e.file != nil {
		e.file.Close()
	}
}

// walks runs the walks of the exploration: the rounds of the order of exploration (one walk in
// trace order with NoPriority; the paths are grouped either way, for Stats.OperationPaths),
// then the crash points whose lazy runs fell back, eagerly, then, with time left in the budget,
// what the pacing left out or an overrun bound stopped (retry.go). It returns the first error;
// every batch built is judged whatever happened (partial results are kept).
func (e *explorer) walks() error {
	passes := [][]bool{nil}
	if !e.cfg.NoPriority && e.pacer.order.walks > 1 {
		passes = e.pacer.order.passes()
	}
	if n := len(e.cfg.Workload.Ops); e.cfg.Focus != "" && n > 1 {
		// The last operation first: a minimiser's candidate ends with the operation that
		// failed (Options.Focus), and when it fails there the others are not walked.
		last, rest := make([]bool, n), make([]bool, n)
		for k := range rest {
			rest[k] = k < n-1
		}
		last[n-1] = true
		passes = [][]bool{last, rest}
	}
	for i := 0; i < len(passes) && !e.pacer.budgetStop && !e.found.focusHit; i++ {
		if err := e.walkOnce(i, passes[i]); err != nil {
			return err
		}
		if i == len(passes)-1 {
			if fp := e.fallbackPass(); fp != nil {
				passes = append(passes, fp)
			} else if pass := e.remainderPass(); pass != nil {
				passes = append(passes, pass)
			}
		}
	}
	return nil
}

// walkOnce is walk i of the trace, exploring the operations of pass (nil: all): one read of
// the trace (crash.Walk, visit), its last batch handed over and every batch judged.
func (e *explorer) walkOnce(i int, pass []bool) error {
	e.pass, e.walk = pass, i
	e.pacer.beginWalk(e.inPass, e.lazy)
	r, err := e.file.Reader()
	if err != nil {
		return err
	}
	e.places.r, e.cur, e.runs.pointEvent = r, nil, ^uint64(0)
	if e.bw != nil {
		e.bw.Close()
	}
	e.bw = crash.NewImageWriter(filepath.Join(e.runs.tmp, fmt.Sprintf("boundary-%d.img", i)))
	wst, err := crash.Walk(r, e.cfg.Crash, e.visit)
	n := wst.Assumed + wst.AssumedLate
	if len(e.cfg.Profiles) > 0 && !slices.Contains(e.cfg.Profiles, px86.ADR) {
		n -= wst.AssumedVisible // durable under eADR, the only profile checked
	}
	if n > 0 && i == 0 {
		e.res.Stats.AssumedDurable = n
		e.warn(fmt.Sprintf("%d store(s) not durable when the operation that issued them ended (never made durable: unpersisted-store or overwritten-unpersisted, or made durable late by a later flush) assumed durable in the crash states of the operations after it, as if fixed, so that a crash in a later operation is not blamed on them and other bugs stay visible; a crash right before the next operation that loses one of them tests whether it matters (durability-violation) (--no-assume-fixed explores the literal model)", n))
	}
	if err != nil && errors.Is(err, trace.ErrTruncated) {
		e.warn("trace truncated: the recorded program did not exit normally; crash states explored up to the end of the trace")
		err = nil
	}
	if err == nil && !e.pacer.budgetStop {
		e.res.Events = max(e.res.Events, wst.Events) // a whole walk: the trace's events
	}
	if err == nil && !e.found.focusHit {
		err = e.flush()
	}
	// The batch still running is judged whatever happened (partial results are kept); a walk
	// ends with every batch judged.
	if ferr := e.finish(); err == nil {
		err = ferr
	}
	return err
}

// conclude completes the statistics and warnings once the walks ended and the findings are
// placed.
func (e *explorer) conclude() {
	res, cfg := e.res, e.cfg
	if res.Stats.LazyRuns > 0 {
		res.Stats.LazyStates = e.lazy.covered.String()
	}
	if n := len(e.lazy.fallback) - e.lazy.done; n > 0 {
		// Fallen back, then never explored eagerly: the budget ended first.
		res.Stats.CrashPoints -= n
		res.Stats.SkippedBudget += n
	}
	if n := res.Stats.SkippedMemory; n > 0 {
		e.warn(fmt.Sprintf("partial: %d crash points of %d operations were left out: the crash states of each of those operations held more than %d MiB before it ended (an operation's states run once it has ended); the results cover the others", n, len(e.memoryOps), maxOperationBytes>>20))
	}
	e.pathStats()
	if n, m := res.Stats.SkippedBudget, res.Stats.PartialBudget; n+m > 0 {
		paths := ""
		if st := res.Stats; st.OperationPaths > 0 {
			paths = fmt.Sprintf(", in %d of the %d operation paths", st.PathsExplored, st.OperationPaths)
		}
		e.warn(fmt.Sprintf("partial: %d crash points were left out and %d explored with a share of their crash states (the program-order prefixes first) to keep to the time budget of %v (spread over every operation path, the rarest first, by their estimated crash states); the results cover the %d explored%s", n, m, cfg.TimeBudget, res.Stats.CrashPoints, paths))
	}
	if n := e.pacer.budgetStopped; n > 0 {
		e.warn(fmt.Sprintf("partial: the runs of %d crash states were stopped at the end of the time budget of %v (its last %v are kept for the final phase: the recovery loads and the report), or when their batch ran past its share of the budget, and the states were not judged", n, cfg.TimeBudget, cfg.TimeBudget-budget.ScheduleEnd(cfg.scheduled())))
	}
	res.Stats.Findings = len(res.Findings)
	res.Stats.ElapsedSeconds = time.Since(e.start).Seconds()
	res.RunBound = e.target.Timeout
	if res.RunBound == 0 {
		res.RunBound = e.hangTimeout()
	}
}

// pace is pacer.pace for the next crash point of the walk in progress. Until a batch has been
// judged there is no cost per state: once a first batch is running the walk waits for it to be
// judged (finish) rather than queue the next operations' states at a cost unknown (a split's
// thousands). Errors: those of judging that batch.
func (e *explorer) pace(cost float64, force bool) (float64, error) {
	p := e.pacer
	if p.budget > 0 && p.ranCost == 0 && e.runs.running != nil && p.left(e.runs) > 0 {
		if err := e.finish(); err != nil {
			return 0, err
		}
	}
	return p.pace(cost, force, e.runs), nil
}

// budgetEnded reports whether the time budget's end stopped the runs (not a cancellation of
// ctx: Ctrl-C).
func (e *explorer) budgetEnded() bool { return e.runs.runCtx.Err() != nil && e.ctx.Err() == nil }

func (e *explorer) warn(msg string) {
	if e.warned[msg] {
		return
	}
	e.warned[msg] = true
	e.res.Warnings = append(e.res.Warnings, msg)
}

// region returns the id of the pool's region at cp, or false when it is not mapped. At an
// operation's boundary (OP_BEGIN, OP_END) a pool the program has unmapped counts too, its latest
// mapping: a program that opens its pool inside each operation and closes it before the next
// leaves the file as that mapping's bytes, the consistent image the operation starts from or
// ends with.
func (e *explorer) region(cp *crash.CrashPoint) (uint32, string, bool, error) {
	rs := cp.Regions()
	boundary := cp.Kind == crash.OpBegin || cp.Kind == crash.OpEnd
	var found *int
	for i := len(rs) - 1; i >= 0; i-- {
		g := rs[i]
		if !g.Mapped && g.UnmapIndex < cp.Event && !boundary {
			continue
		}
		if e.cfg.Pool != "" {
			if filepath.Clean(g.Path) == e.cfg.Pool {
				return g.ID, g.Path, true, nil
			}
			continue
		}
		if found != nil && rs[*found].Path != g.Path {
			return 0, "", false, fmt.Errorf("the trace maps several files (%s, %s): name the pool with --pool", rs[*found].Path, g.Path)
		}
		if found == nil {
			i := i
			found = &i
		}
	}
	if found == nil {
		return 0, "", false, nil
	}
	g := rs[*found]
	return g.ID, g.Path, true, nil
}

// visit is the Walk callback.
func (e *explorer) visit(cp *crash.CrashPoint) error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	if e.found.focusHit {
		return crash.ErrStop // the finding Options.Focus seeks failed
	}
	switch cp.Kind {
	case crash.OpBegin:
		return e.opBegin(cp)
	case crash.OpEnd:
		return e.opEnd(cp)
	case crash.TxEnd:
		return e.txEnd(cp)
	}
	if cp.Op < 0 {
		if e.walk == 0 && e.cfg.Shard.Index == 0 {
			e.res.Stats.Skipped++ // once, by the first shard
		}
		return nil
	}
	k := int(cp.Op)
	if !e.inPass(k) || e.lazy.walk && !e.lazy.fallback[cp.Index] || !e.plan.scope.point(e.places.r, cp) {
		return nil // not this walk's, or outside the change the run is scoped to (planned so)
	}
	if e.pacer.ended() {
		// The budget has ended: the rest of the trace is not walked (a long trace takes a
		// while), its crash points are left out (and the later walks' too).
		// The states built and not yet handed to the workers are not run: their runs would
		// be stopped at once (runCtx has ended).
		left := max(e.pacer.allPoints-e.pacer.visited, 0)
		e.res.Stats.SkippedBudget += left
		e.pacer.budgetStopped += len(e.runs.batch)
		e.runs.batch, e.runs.batchPoints, e.runs.batchBytes, e.runs.batchCost = nil, 0, 0, 0
		e.pacer.budgetStop = true
		return crash.ErrStop
	}
	if e.pacer.remainder {
		return e.visitRetry(cp, k)
	}
	e.pacer.visited++
	explored := e.res.Stats.CrashPoints
	strategies := e.strats
	if e.lazy.walk {
		strategies = e.eagerStrategies(false)
	}
	cost := pointCost(cp.Space, strategies, e.cfg.Crash)
	if k < len(e.pacer.opVisited) {
		e.pacer.opVisited[k]++
	}
	e.took = false
	err := e.visitPoint(cp, k, cost)
	e.pacer.walkVisitedCost += cost
	e.pacer.visitedCost += cost
	if e.res.Stats.CrashPoints > explored || e.lazy.walk && e.took {
		e.runs.batchPoints++ // covered once its batch is judged (progress)
		e.explored[k] = true
	}
	return err
}

// visitPoint explores crash point cp of operation k (of this walk), of estimated cost cost
// (pointCost), or leaves it out.
func (e *explorer) visitPoint(cp *crash.CrashPoint, k int, cost float64) error {
	p := e.cur
	if p == nil {
		return fmt.Errorf("crash point %d in operation %d without its OP_BEGIN", cp.Index, k)
	}
	next := slices.Max(p.ops) + 1 // the operations begin in index order
	if next > len(e.cfg.Workload.Ops) {
		e.warn(fmt.Sprintf("the trace has operation %d but the workload only %d lines: later operations are not explored", next-1, len(e.cfg.Workload.Ops)))
		e.res.Stats.Skipped++
		return nil
	}
	if m := len(cp.InFlight); m > e.cfg.maxInFlight() {
		e.warn(fmt.Sprintf("crash points with more than %d operations in flight are not explored (they would need %s legal outcomes each, or more)",
			e.cfg.maxInFlight(), legalCount(m)))
		e.res.Stats.SkippedConcurrent++
		return nil
	}
	inflight := make([]int, len(cp.InFlight))
	for i, f := range cp.InFlight {
		inflight[i] = int(f)
	}
	lins, ok := e.pointLegal(p, cp, inflight)
	if !ok {
		return nil
	}
	id, path, ok, err := e.region(cp)
	if err != nil {
		return err
	}
	if !ok {
		e.res.Stats.Skipped++
		return nil
	}
	if e.lazy.walk {
		e.lazy.done++
	}
	// The last point of an operation of the first round of paths, none of its points explored.
	force := e.pass != nil && e.walk == 0 && !e.explored[k] && k < len(e.pacer.opVisited) && e.pacer.opVisited[k] == e.pacer.opPoints[k]
	take, err := e.pace(cost, force)
	if err != nil {
		return err
	}
	if take == 0 {
		switch {
		case e.lazy.walk:
			e.res.Stats.SkippedBudget++
			e.res.Stats.CrashPoints-- // counted explored by its lazy run, which fell back
		case !e.pacer.remainder:
			e.res.Stats.SkippedBudget++
			e.pacer.keepSkipped(cp.Event, k, cost)
		}
		return nil
	}
	if e.runs.batchBytes >= maxOperationBytes {
		e.res.Stats.SkippedMemory++
		e.memoryOps[k] = true
		return nil
	}
	if !p.image {
		// The pool did not exist when the operations began: the program creates it inside them,
		// and there is no consistent image to roll back to.
		e.warn("crash points in an operation that begins before its pool exists (the program creates the pool inside it) are not explored")
		e.res.Stats.Skipped++
		return nil
	}
	lazy := e.lazyHere(cp)
	e.runs.batchCost += take
	var keep map[string]bool // nil: every state
	switch {
	case e.pacer.remainder:
		var partDone bool
		if keep, partDone = e.pacer.retryStates(cp.Event, int(take)); partDone {
			e.res.Stats.PartialBudget-- // the point's states are all explored now
		}
	case take < cost && !lazy: // a lazy run is all or nothing (its tree is bounded: LazyTreeRuns)
		var left []string
		keep, left = thinStates(cp.Space, e.eagerStrategies(false), e.cfg.Crash, int(take))
		e.pacer.keepThinned(cp.Event, k, left)
		e.res.Stats.PartialBudget++
		if !e.lazy.walk {
			e.res.Stats.CrashPoints++
		}
	case !e.lazy.walk:
		e.res.Stats.CrashPoints++
	}
	e.took = true
	if err := e.keepBefore(p, cp); err != nil {
		return err
	}
	done := slices.Clone(p.ended)
	if lazy {
		it, err := e.lazyItem(cp, k, id, path)
		if err != nil {
			return err
		}
		it.per, it.done, it.inflight, it.next, it.lins = p, done, inflight, next, lins
		e.runs.batch = append(e.runs.batch, it)
	}
	seen, skipped := map[string]*item{}, map[string]bool{}
	for _, s := range e.eagerStrategies(lazy) {
		for st := range s.States(cp.Space, e.cfg.Crash) {
			key := stateKey(st)
			if keep != nil && !keep[key] {
				continue
			}
			if e.cfg.profileMask(cp.Space, st) == 0 {
				continue // no profile checked allows it (--persistency eadr alone)
			}
			var torn *tornPair
			if st.Tear != nil {
				// Judged against the whole states next to it, which the strategy yielded
				// first: without them (left out) it proves nothing.
				if torn = tornPairOf(cp.Space, st, seen); torn == nil {
					continue
				}
			}
			if it := seen[key]; it != nil {
				// Attributed to the first strategy; the invariants it violates still count.
				if len(st.Invariants) > 0 {
					first := len(it.state.Invariants) == 0
					it.smp = sampling{} // a state that breaks invariants is never left out
					it.state.Invariants = slices.Compact(slices.Sorted(slices.Values(append(it.state.Invariants, st.Invariants...))))
					// (With DurableAfter, every state got its twins when it was made.)
					if first && len(e.cfg.DurableAfter) == 0 {
						if err := e.addTwins(cp, it, k, id, path); err != nil {
							return err
						}
					}
				}
				continue
			}
			if skipped[key] {
				if len(st.Invariants) == 0 {
					continue // another strategy's copy of a state left out
				}
				skipped[key] = false // it breaks invariants after all: run it
				e.res.Stats.Sampled--
			}
			var smp sampling
			if torn == nil {
				op := culprit(cp.Space, st, inflight, k)
				smp = e.found.windowSampling(cp, op, st, e.pointKeyOf(cp, op))
				if e.found.sampledOut(smp) {
					skipped[key] = true
					e.res.Stats.Sampled++
					continue
				}
			}
			it, err := e.newItem(cp, k, id, path, st, s.Name)
			if err != nil {
				return err
			}
			if torn != nil {
				e.tornItem(cp, it, torn)
			}
			it.per, it.done, it.inflight, it.next, it.lins, it.smp = p, done, inflight, next, lins, smp
			seen[key] = it
			e.runs.batch = append(e.runs.batch, it)
			// A state breaks a pair by the invariants it violates, or, for a pair whose After
			// store is durable at the point (DurableAfter), by any Before store it leaves out.
			if len(st.Invariants) > 0 || len(e.cfg.DurableAfter) > 0 {
				if err := e.addTwins(cp, it, k, id, path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keepBefore copies the consistent image at period p's first OP_BEGIN (the rolled-back
// oracle's) when p gets its first crash image.
func (e *explorer) keepBefore(p *period, cp *crash.CrashPoint) error {
	if p.before != "" {
		return nil
	}
	if !p.image {
		return fmt.Errorf("crash point %d in operation %d without its OP_BEGIN", cp.Index, cp.Op)
	}
	p.before = e.newImage("before")
	return exec.CopyFile(p.before, e.bw.Path())
}

func (e *explorer) newImage(what string) string {
	n := e.runs.nimg.Add(1)
	return filepath.Join(e.runs.tmp, what+"-"+strconv.FormatInt(n, 10)+".img")
}

// opBegin starts a busy period when no operation is in flight (the boundary writer then holds
// its consistent image), or adds the operation to the period in progress.
func (e *explorer) opBegin(cp *crash.CrashPoint) error {
	k := int(cp.Op)
	if e.cur != nil {
		e.cur.ops = append(e.cur.ops, k)
		e.cur.begins[k] = cp.Event
		e.checkText(cp)
		return nil
	}
	p := &period{ops: []int{k}, begins: map[int]uint64{k: cp.Event}, ends: map[int]uint64{}, ntx: map[int]int{}}
	e.cur = p
	id, _, ok, err := e.region(cp)
	if err != nil || !ok {
		return err
	}
	if err := e.bw.Write(cp, id, cp.Space.FullState()); err != nil {
		return err
	}
	p.image, p.region, p.gen = true, id, cp.Generation()
	if e.walk == 0 {
		e.checkText(cp)
	}
	if !e.durabilityPass(k) || e.lazy.walk || e.pacer.remainder {
		return nil
	}
	return e.durability(cp, p, id)
}

// durability adds, at the OP_BEGIN of an operation run alone, one crash state per source
// position of the stores assumed durable from it on (crash.CrashPoint.Assumed: never made
// durable by the program, or left pending by the operation that issued them), each losing that
// position's stores and nothing else px86 lets persist: each line keeps the units before the
// first unit of such a store (a later unit of the line, another position's, is lost with it).
// Its run is judged like a crash at the operation's start; a failure is a durability-violation at
// the store, proving the missing persist matters, and the state, with the store kept, is the
// consistent image the rolled-back outcome runs from: the proof is differential by construction.
// A position whose states failed or passed often enough (Options.ClusterFailures) is sampled
// like a cluster. Under a time budget the states go with the operation before k, whose stores
// they test: they are made when it had a crash point explored, else when the budget's pacing
// explores them as one more point of cost 1 (pace). (Paced on their own, they were left out right
// after an operation whose many states were just queued: a shrink's unflushed stores.)
func (e *explorer) durability(cp *crash.CrashPoint, p *period, region uint32) error {
	if len(cp.Assumed) == 0 {
		return nil
	}
	k := int(cp.Op)
	if k+1 > len(e.cfg.Workload.Ops) {
		return nil
	}
	if !e.explored[k-1] {
		if take, err := e.pace(1, false); err != nil || take < 1 {
			return err
		}
	}
	// Whether each unit stands for an assumed store, and where it was issued, once: a server's
	// crash point may hold thousands of units and hundreds of assumed stores.
	ids := make([]uint64, len(cp.Assumed))
	for i, s := range cp.Assumed {
		ids[i] = uint64(s.ID)
	}
	slices.Sort(ids)
	isAssumed := make([][]bool, len(cp.Space.Lines))
	locs := make([][]report.Location, len(cp.Space.Lines))
	// The positions, in program order of their first unit.
	type group struct {
		loc   report.Location
		first uint64
		op    uint32 // the operation of its first unit (Unit.Op)
	}
	var groups []group
	at := map[report.Location]int{}
	for i, l := range cp.Space.Lines {
		isAssumed[i], locs[i] = make([]bool, len(l.Units)), make([]report.Location, len(l.Units))
		for j, u := range l.Units {
			n, _ := slices.BinarySearch(ids, u.First)
			if isAssumed[i][j] = n < len(ids) && u.StandsFor(ids[n]); !isAssumed[i][j] {
				continue
			}
			loc := e.places.location(u.Site, u.Stack)
			locs[i][j] = loc
			if !e.plan.scope.at(e.places.r, u.Site, u.Stack) {
				continue // scoped to a change: the stores issued outside it are not tested
			}
			if k, ok := at[loc]; ok {
				if u.Seq < groups[k].first {
					groups[k].first, groups[k].op = u.Seq, u.Op
				}
			} else {
				at[loc] = len(groups)
				groups = append(groups, group{loc, u.Seq, u.Op})
			}
		}
	}
	slices.SortFunc(groups, func(a, b group) int { return cmp.Compare(a.first, b.first) })
	for _, g := range groups {
		smp := e.found.storeSampling(cp.Event, g.loc)
		if e.found.sampledOut(smp) {
			e.res.Stats.Sampled++
			continue
		}
		st := crash.State{K: make([]int, len(cp.Space.Lines))}
		// The stores the state loses, one per site and stack (its earliest; stateRefs).
		var lost []unitRef
		type place struct{ site, stack uint32 }
		lostAt := map[place]int{}
		for i, l := range cp.Space.Lines {
			st.K[i] = len(l.Units)
			for j := range l.Units {
				if isAssumed[i][j] && locs[i][j] == g.loc {
					st.K[i] = j
					break
				}
			}
			for j, u := range l.Units[st.K[i]:] {
				if !isAssumed[i][st.K[i]+j] {
					continue
				}
				ref := unitRef{Site: u.Site, Stack: u.Stack, Seq: u.Seq, Event: u.Store}
				if n, ok := lostAt[place{u.Site, u.Stack}]; !ok {
					lostAt[place{u.Site, u.Stack}] = len(lost)
					lost = append(lost, ref)
				} else if u.Seq < lost[n].Seq {
					lost[n] = ref
				}
			}
		}
		if len(lost) == 0 || e.cfg.profileMask(cp.Space, st) == 0 {
			continue // nothing lost, or no profile checked allows the state
		}
		_, path, _, err := e.region(cp)
		if err != nil {
			return err
		}
		if err := e.keepBefore(p, cp); err != nil {
			return err
		}
		it, err := e.newItem(cp, k, region, path, st, "assumed-durable")
		if err != nil {
			return err
		}
		slices.SortFunc(lost, func(a, b unitRef) int { return cmp.Compare(a.Seq, b.Seq) })
		// The store the state is about comes first: it is where the finding is reported.
		if i := slices.IndexFunc(lost, func(u unitRef) bool { return e.places.location(u.Site, u.Stack) == g.loc }); i > 0 {
			lost[0], lost[i] = lost[i], lost[0]
		}
		it.persisted, it.unpersist, it.durability, it.durable, it.smp = nil, lost, true, g.loc, smp
		it.loc, it.site, it.stack = e.places.location(lost[0].Site, lost[0].Stack), lost[0].Site, lost[0].Stack
		it.cause = e.storeKey(it.site, it.stack, g.op)
		it.per, it.inflight, it.next = p, []int{k}, k+1
		it.lins = []linearization{{}, {seq: []int{k}}}
		e.runs.batch = append(e.runs.batch, it)
	}
	return nil
}

// checkText warns when an operation's text in the trace is not the workload's line. The runtime
// records a line without its line ending (\n or \r\n), so a CRLF workload matches too.
func (e *explorer) checkText(cp *crash.CrashPoint) {
	if e.target.Client != nil {
		return // a request's first line, not the client's workload line
	}
	if k := int(cp.Op); k < len(e.cfg.Workload.Ops) && strings.TrimSuffix(e.cfg.Workload.Ops[k], "\r") != cp.OpText {
		e.warn(fmt.Sprintf("operation %d of the trace is %q but line %d of the workload is %q: is this the workload the trace was recorded with?", k, cp.OpText, k+1, e.cfg.Workload.Ops[k]))
	}
}

// opEnd ends an operation; when none is left in flight the busy period ends: a one-operation
// period keeps its consistent image after the operation (the committed oracle), and a full
// batch is run.
func (e *explorer) opEnd(cp *crash.CrashPoint) error {
	if _, ok := e.found.opPaths[int(cp.Op)]; !ok {
		e.found.opPaths[int(cp.Op)] = e.opPath(cp.OpStores)
	}
	p := e.cur
	if p == nil {
		return nil
	}
	p.ended = append(p.ended, int(cp.Op))
	p.ends[int(cp.Op)] = cp.Event
	if len(p.ended) < len(p.ops) {
		return nil
	}
	e.cur = nil
	if p.before == "" {
		return nil
	}
	if p.sequential() {
		id, _, ok, err := e.region(cp)
		if err != nil {
			return err
		}
		if ok {
			p.after = e.newImage("after")
			if err := cp.WriteImage(p.after, id, cp.Space.FullState()); err != nil {
				return err
			}
		}
	}
	// With a focus, each operation's states are a batch: the walk stops at the first batch in
	// which the finding sought failed, and smaller batches run fewer states past it.
	if len(e.runs.batch) >= e.pacer.batchLimit(e.cfg.BatchStates, e.runs.flushes) || e.runs.batchBytes >= MaxBatchBytes || e.cfg.Focus != "" {
		return e.flush()
	}
	return nil
}

// txEnd records a durable point inside an operation of the busy period in progress (the TX_END
// of one of its outermost transactions that committed, crash.TxEnd): the consistent image there,
// as the pages written since the period began (crash.CrashPoint.Delta), or a file of its own when
// those exceed MaxPointDelta. The crash points after it in the period may find the operation
// applied up to it (oracles.go). Only the walks exploring the operation keep it.
func (e *explorer) txEnd(cp *crash.CrashPoint) error {
	p, k := e.cur, int(cp.Op)
	if p == nil || !p.image || k < 0 {
		return nil
	}
	p.ntx[k]++
	if !e.inPass(k) {
		return nil
	}
	id, _, ok, err := e.region(cp)
	if err != nil || !ok || id != p.region {
		return err
	}
	c := &txCut{op: k, nth: p.ntx[k], event: cp.Event, quiet: cp.Quiet}
	delta, n, err := cp.Delta(id, p.gen)
	if err != nil {
		return err
	}
	if n <= maxPointDelta {
		c.patches = delta
		e.runs.batchBytes += n
	} else {
		c.file = e.newImage("cut")
		if err := cp.WriteImage(c.file, id, cp.Space.FullState()); err != nil {
			return err
		}
		e.runs.pointFiles = append(e.runs.pointFiles, c.file)
	}
	p.cuts = append(p.cuts, c)
	return nil
}

// place reports each finding at its crash point's innermost user frame (report.UserFrame: a
// flush or fence in a persistence helper is reported at the caller that persists through it,
// whether the compiler inlined the helper or not), with the crash point's frames as the stack.
// Durability findings, located at the lost store, keep their store's frames.
func (e *explorer) place() {
	for i := range e.res.Findings {
		e.placeFinding(&e.res.Findings[i], e.found.points[i], e.found.msgs[i])
	}
	if e.cfg.Shard.Active() {
		if l := e.found.shard; l != nil {
			for _, a := range l.alts {
				e.placeFinding(&l.clusters[a.cluster].Alternates[a.index].Finding, a.at, a.msg)
			}
		}
		e.res.Shard = e.shardReport() // folded when the shards are merged
		return
	}
	e.res.Findings = e.found.foldOrdering(e.res.Findings, e.res.Pairs)
}

// placeFinding places finding f, whose first crash point is c, with its message given where
// that is (place).
func (e *explorer) placeFinding(f *report.Finding, c report.Context, msg func(string) string) {
	if f.Kind == report.DurabilityViolation {
		return
	}
	frames, u := e.places.userPoint(c.Site, c.Stack)
	if len(frames) == 0 {
		return
	}
	f.Location, f.Stack = frames[u].Location(), frames
	f.Message = msg(f.Location.String())
	if f.Kind == report.PersistencyRace {
		return // placed at the torn store; Related[0] stays the crash point
	}
	if len(f.Related) > 0 && f.Related[0].Role == report.RoleCrashPoint {
		f.Related[0] = f.Location.Related(report.RoleCrashPoint)
	}
}

// foldOrdering merges an ordering violation into the atomicity violation of its window in the path
// of its first failing state (a window a shrink and an insert share is two windows here), when
// there is one: a window whose program-order states fail is not failure-atomic, and its failing
// reorderings are variants of that finding, unless they reorder a pair of stores that an inferred
// property asks to be ordered and that its twins confirmed to be a cause (pairs, Result.Pairs: the
// state fails, the same state without the store persisted too early does not, and the state with
// only that pair out of order fails again): a token persisted before its value, in a window that
// also fails because of a counter incremented after both, stays a finding of its own (cause.go).
// fs are the findings by index (c.windows); it returns those kept.
func (c *clusters) foldOrdering(fs []report.Finding, pairs map[Pair]PairOutcome) []report.Finding {
	folded := map[int]bool{}
	for i := range fs {
		f := &fs[i]
		if f.Kind != report.OrderingViolation {
			continue
		}
		if j, ok := c.prefixWindows[c.windows[i]]; ok && !confirmedPair(f, pairs) {
			mergeFinding(&fs[j], f)
			folded[i] = true
		}
	}
	if len(folded) == 0 {
		return fs
	}
	kept := fs[:0]
	for i, f := range fs {
		if !folded[i] {
			kept = append(kept, f)
		}
	}
	return kept
}

// confirmedPair reports whether ordering violation f's first failing state reorders a pair of
// stores whose inferred property its twins confirmed (pairs): the pair's later store among those
// it persisted, its earlier store among those it did not.
func confirmedPair(f *report.Finding, pairs map[Pair]PairOutcome) bool {
	var persisted, unpersisted []report.Location
	for _, r := range f.Related {
		switch r.Role {
		case report.RolePersisted:
			persisted = append(persisted, r.Location())
		case report.RoleUnpersisted:
			unpersisted = append(unpersisted, r.Location())
		}
	}
	for p, o := range pairs {
		if o.Confirmed > 0 && slices.Contains(persisted, p.After) && slices.Contains(unpersisted, p.Before) {
			return true
		}
	}
	return false
}

// mergeFinding adds crash finding g to f: its count, its variants (g's own state becomes one of
// f's replayable variants) and its operations.
func mergeFinding(f, g *report.Finding) {
	f.Count += g.Count
	f.Profiles = report.UnionProfiles(f.Profiles, g.Profiles)
	fc, gc := f.Crash, g.Crash
	fc.Variants += gc.Variants
	add := func(v report.CrashVariant) {
		if len(fc.VariantImages) < report.MaxVariantImages {
			fc.VariantImages = append(fc.VariantImages, v)
		}
	}
	add(report.CrashVariant{ID: gc.ID, CrashPoint: gc.CrashPoint, Event: gc.Event, State: gc.State, Operation: g.Operation.Index, Input: gc.Input})
	for _, v := range gc.VariantImages {
		add(v)
	}
	for _, op := range gc.Operations {
		if len(fc.Operations) < report.MaxCrashOperations && !slices.Contains(fc.Operations, op) {
			fc.Operations = append(fc.Operations, op)
		}
	}
}

// MaxBatchBytes bounds the bytes of patches a batch keeps in memory before it is run (checked
// when no operation is in flight, like BatchStates).
const MaxBatchBytes = 256 << 20

// MaxOperationBytes bounds the memory the crash states of one operation (with those of the
// batch it joins, at most MaxBatchBytes) hold before they run:
// they run once the operation has ended (its committed outcome needs its end), so a resize that
// copies a whole table, with thousands of crash points over thousands of cache lines, would
// otherwise keep every state's patches and per-line vectors until then (P-CLHT's resize: more
// than 20 GiB). Counted are the patches (their bytes and headers), 32 bytes per line of each
// state and the stores each state names (unitRef); once an
// operation's states reach the bound, its further crash points are left out
// (Stats.SkippedMemory) and the report says so.
const MaxOperationBytes = 1 << 30

var maxOperationBytes = MaxOperationBytes // tests lower it

// MaxPointDelta bounds the bytes a crash point's images keep in memory as the pages written
// since their period's consistent image; a point that changed more gets a base file of its own.
const MaxPointDelta = 4 << 20

var maxPointDelta = MaxPointDelta // tests set it below 0: every crash point gets its own file

// base returns the file crash images at cp start from and the patches that bring it to cp's
// fully applied image, computed once per crash point: the period's consistent image and the
// pages written since (crash.CrashPoint.Delta), or, when those exceed MaxPointDelta or the pool
// was mapped anew inside the period, a file of the point's own.
func (e *explorer) base(cp *crash.CrashPoint, region uint32) (string, []crash.Patch, error) {
	// A point is known by its trace event: operation boundaries (where durability states are
	// made) all have Index -1.
	if e.runs.pointEvent == cp.Event && e.runs.pointBase != "" {
		return e.runs.pointBase, e.runs.pointDelta, nil
	}
	e.runs.pointEvent, e.runs.pointBase, e.runs.pointDelta, e.runs.pointNet, e.runs.pointKeyed = cp.Event, "", nil, nil, false
	if p := e.cur; p != nil && p.before != "" && p.region == region {
		delta, n, err := cp.Delta(region, p.gen)
		if err != nil {
			return "", nil, err
		}
		if n <= maxPointDelta {
			e.runs.pointBase, e.runs.pointDelta = p.before, delta
			e.runs.batchBytes += n
			e.runs.pointNet, e.runs.pointKeyed = netDelta(p.before, delta)
			return e.runs.pointBase, e.runs.pointDelta, nil
		}
	}
	f := e.newImage("point")
	if err := cp.WriteImage(f, region, cp.Space.FullState()); err != nil {
		return "", nil, err
	}
	e.runs.pointFiles = append(e.runs.pointFiles, f)
	e.runs.pointBase = f
	return f, nil, nil
}

// newItem describes the crash image of st at cp (a base file and patches, materialised by the
// worker that runs it) and what a finding on it needs.
func (e *explorer) newItem(cp *crash.CrashPoint, k int, region uint32, path string, st crash.State, strategy string) (*item, error) {
	base, delta, err := e.base(cp, region)
	if err != nil {
		return nil, err
	}
	ps, err := cp.RegionPatches(region, st)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		e.runs.batchBytes += len(p.Data)
	}
	img := e.newImage("crash")
	var key string
	var isBase bool
	if e.runs.pointKeyed && base == e.runs.pointBase {
		next := 0
		if e.cur != nil {
			next = slices.Max(e.cur.ops) + 1
		}
		key, isBase = imageKey(base, e.runs.pointNet, ps, next)
	}
	it := &item{
		crashImage: crashImage{image: img, base: base, patches: append(delta[:len(delta):len(delta)], ps...), key: key, isBase: isBase},
		pointAt: pointAt{
			point: cp.Index, pointKind: cp.Kind, event: cp.Event, site: cp.Site, loc: e.places.location(cp.Site, cp.Stack),
			stack: cp.Stack, opText: cp.OpText, region: region, regionPath: path, pointKey: e.pointKey(cp), pointOp: k,
		},
		opsAt: opsAt{op: k}, state: st, strategy: strategy, profiles: e.cfg.profileMask(cp.Space, st),
	}
	// The operation whose stores the state lost or reordered (culprit), when another operation
	// than the point's thread's is in flight.
	if len(cp.InFlight) > 1 {
		inflight := make([]int, len(cp.InFlight))
		for i, f := range cp.InFlight {
			inflight[i] = int(f)
		}
		if op := culprit(cp.Space, st, inflight, k); op != k {
			it.op, it.pointKey = op, e.pointKeyOf(cp, op)
			if op < len(e.cfg.Workload.Ops) {
				it.opText = e.cfg.Workload.Ops[op]
			}
		}
	}
	sp := cp.Space
	for _, l := range sp.Lines {
		it.lines = append(it.lines, report.CrashLine{Addr: l.Addr, Units: len(l.Units)})
	}
	e.runs.batchBytes += 32 * len(sp.Lines) // it.lines and it.state.K (MaxOperationBytes)
	it.persisted, it.unpersist = stateRefs(sp, st)
	e.runs.batchBytes += int(unsafe.Sizeof(unitRef{}))*(cap(it.unpersist)+cap(it.persisted)) + int(unsafe.Sizeof(crash.Patch{}))*len(it.patches)
	return it, nil
}

// stateRefs returns the units a finding on state st of sp names: for a prefix state every unit
// not persisted (the operation's stores that did not make it); otherwise the persisted units
// later in program order than some unpersisted one, and the unpersisted units earlier than some
// persisted one. Each list holds one unit per site and stack, the first in line order: a finding
// names its stores by where they were issued (uniqueSites), and a state of a server's crash
// point can leave a 1 MiB memset's 131 072 units unpersisted.
func stateRefs(sp *crash.Space, st crash.State) (persisted, unpersist []unitRef) {
	const none = ^uint64(0)
	maxP, minN := uint64(0), none
	anyP := false
	for i, l := range sp.Lines {
		if st.K[i] > 0 {
			anyP = true
			maxP = max(maxP, l.Units[st.K[i]-1].Seq)
		}
		if st.K[i] < len(l.Units) {
			minN = min(minN, l.Units[st.K[i]].Seq)
		}
	}
	ref := func(u crash.Unit) unitRef {
		return unitRef{Site: u.Site, Stack: u.Stack, Seq: u.Seq, Event: u.Store}
	}
	type place struct{ site, stack uint32 }
	seenP, seenN := map[place]bool{}, map[place]bool{}
	add := func(list []unitRef, seen map[place]bool, u crash.Unit) []unitRef {
		if pl := (place{u.Site, u.Stack}); !seen[pl] {
			seen[pl] = true
			list = append(list, ref(u))
		}
		return list
	}
	for i, l := range sp.Lines {
		for j, u := range l.Units {
			isP := j < st.K[i]
			switch {
			case st.Prefix && !isP:
				unpersist = add(unpersist, seenN, u)
			case !st.Prefix && isP && anyP && u.Seq > minN:
				persisted = add(persisted, seenP, u)
			case !st.Prefix && !isP && anyP && u.Seq < maxP:
				unpersist = add(unpersist, seenN, u)
			}
		}
	}
	return persisted, unpersist
}

// defaultJobs is exec.Pool's default.
func defaultJobs() int { return max(1, numCPU()) }

// inPass reports whether this walk explores operation k (in this shard: Options.Shard).
func (e *explorer) inPass(k int) bool {
	return (e.pass == nil || k >= len(e.pass) || e.pass[k]) && e.plan.inShard(e.cfg, k)
}

// durabilityPass reports whether this walk makes the durability states at operation k's start
// (in this shard): they test the stores the operations before k left not durable, so they go
// with operation k-1's walk, the path that issued them (k's own for the first operation).
func (e *explorer) durabilityPass(k int) bool {
	j := max(k-1, 0)
	return (e.pass == nil || j >= len(e.pass) || e.pass[j]) && e.plan.inShard(e.cfg, k)
}

// pathStats sets Stats.OperationPaths, the operation paths with crash points (of the busy
// periods, priority.go), and Stats.PathsExplored, those of them with a crash point explored.
// A shard also lists them in its report (report.Shard.Paths, PathsExplored; after place, which
// makes it), each by the first operation of the trace on it, for the merge to count their union.
func (e *explorer) pathStats() {
	if e.pacer.order.paths == 0 {
		return
	}
	first := map[string]int{} // path key -> the first operation on it
	for k := len(e.pacer.order.path) - 1; k >= 0; k-- {
		first[e.pacer.order.path[k]] = k
	}
	with, explored := map[int]bool{}, map[int]bool{}
	for k, n := range e.pacer.opPoints {
		if n == 0 || k >= len(e.pacer.order.path) {
			continue
		}
		p := first[e.pacer.order.path[k]]
		with[p] = true
		if e.explored[k] {
			explored[p] = true
		}
	}
	e.res.Stats.OperationPaths, e.res.Stats.PathsExplored = len(with), len(explored)
	if sh := e.res.Shard; sh != nil {
		sh.Paths, sh.PathsExplored = slices.Sorted(maps.Keys(with)), slices.Sorted(maps.Keys(explored))
	}
}
