package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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
	// Shard is set when Config.Shard selects a shard: what `scry merge` needs (shard.go).
	Shard *report.Shard
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

// item is one crash image to run: everything a finding needs, materialised in the callback.
type item struct {
	op      int
	image   string        // the path its run gets: base with patches, made by the worker
	base    string        // the file the image starts from (a consistent image, or a point's)
	patches []crash.Patch // then written over it: the pages changed since base, the state's
	// key is the image's content key (imageKey; "" when not keyed) and isBase says the image is
	// its base, the consistent image before the operation (dedupe.go).
	key        string
	isBase     bool
	point      int
	pointKind  crash.PointKind
	event      uint64
	site       uint32
	loc        report.Location // the crash point's site (the lost store's, for durability)
	stack      uint32          // its call-stack node
	opText     string
	state      crash.State
	lines      []report.CrashLine
	strategy   string
	persisted  []unitRef // ordering: units persisted although an earlier one was not
	unpersist  []unitRef // ordering: the earlier units not persisted; atomicity: every unit not persisted
	region     uint32
	regionPath string
	// The operations at the crash point (oracles.go): its busy period, the period's operations
	// ended before it (OP_END order) and in flight (OP_BEGIN order), and the first operation
	// not begun (the crash-image run's standard input starts there).
	per      *period
	done     []int
	inflight []int
	next     int
	// durability: the state loses only stores assumed durable from this operation on
	// (crash.Options.AssumeDurable), to prove the missing persist matters; durable is the source
	// position of the store it is about (the others are lost with it by px86's line order).
	durability bool
	durable    report.Location
	// pointKey is the crash point's window, cause a durability state's store function (cause.go:
	// parts of its cluster key).
	cause, pointKey string
	// pairs are the Config.ConfirmPairs the state breaks; twin, for a repaired twin, what it
	// repairs, groupPassed, for a state with twins, whether each group twin passed, and
	// repeatFailed whether the state failed again when run once more (cause.go). judged and
	// failed are the state's verdict, once judged.
	pairs          []Pair
	twin           *twin
	groupPassed    []bool
	repeatFailed   bool
	judged, failed bool
	// smp is how cluster sampling applies to it (judge.go); order its place in the order of
	// judgement, cluster and variant its finding's cluster key and variant key when it failed
	// (a shard's log, shard.go).
	smp              sampling
	order            *report.ShardOrder
	cluster, variant string
	// lazy, on a crash point's lazy run (lazy.go), is what its leaves are judged with; leafOf
	// and choices, on a leaf, its run's and its choices.
	lazy    *lazyPoint
	leafOf  *lazyPoint
	choices []exec.LazyChoice
}

// period is a busy period of the workload: from an OP_BEGIN when no operation was in flight to
// the OP_END that leaves none in flight. A sequential workload has one operation per period;
// threads running operations concurrently make periods of several.
type period struct {
	ops    []int  // operations begun, in OP_BEGIN order
	ended  []int  // operations ended, in OP_END order
	image  bool   // the boundary writer holds the image at the period's first OP_BEGIN
	before string // that image, copied at the period's first explored crash point ("" before)
	region uint32 // the pool's region id at that OP_BEGIN
	gen    uint64 // its image generation there (crash.CrashPoint.Generation)
	after  string // one-operation period: the image at its OP_END ("" until then, or none)
}

// sequential reports whether the period is one operation (the two-oracle case).
func (p *period) sequential() bool { return len(p.ops) == 1 }

// explorer is the state of one Run.
type explorer struct {
	cfg *Config
	r   *trace.Reader
	ctx context.Context
	// runCtx is the runs' context: ctx, ending at the time budget's schedule end (budgetEnded).
	runCtx context.Context
	tmp    string
	bw     *crash.ImageWriter
	res    *Result
	nimg   atomic.Int64 // images named so far (newImage; batches running beside the walk name some)
	copies workCopies   // the workers' working copies of images (storage.go)
	batch  []*item
	// The base of the crash point items are being made at: its trace event, the file and the delta
	// its images start from; batchBytes the bytes of the batch's patches, pointFiles the
	// points' own base files (removed after the batch).
	pointEvent uint64
	pointBase  string
	pointDelta []crash.Patch
	pointNet   []crash.Patch // the point's delta where it differs from the base (dedupe.go)
	pointKeyed bool          // its states' images are keyed
	batchBytes int
	pointFiles []string
	cur        *period       // the busy period in progress (nil when no operation is in flight)
	running    *runningBatch // the batch the workers run while the walk goes on (run.go)
	// pass says which operations this walk explores (nil: all), walk is its number; order is
	// the order of exploration (priority.go).
	pass     []bool
	walk     int
	order    schedule
	flushes  int // batches handed to the workers so far
	clusters map[string]int
	start    time.Time                  // when the exploration began
	variants map[string]map[string]bool // cluster key -> variant keys seen
	failures map[string]int             // cluster key -> failing states judged
	// points are the finding's first crash point context, by finding index (findings are
	// placed when the exploration ends).
	points  []report.Context
	windows []string // the finding's first failing state's window and path (pointKey, pathKey), by finding index
	// prefixWindows maps a window of a path in which a program-order state failed to the
	// atomicity violation it fell in (foldOrdering).
	prefixWindows map[string]int
	// opPaths is each ended operation's persistent path (pathKey); windowFailures the failing
	// states per window and kind, for sampling.
	opPaths        map[int]string
	windowFailures map[string]int
	// windowStates counts the states built per operation, window and kind (Config.WindowStates).
	windowStates map[string]int
	// storeStates counts the durability states judged per sampling key of their store (judged,
	// failed: sampledOut).
	storeStates map[string][2]int
	// budgetStart is when the time budget began (Config.Start); ranTime, ranStates and
	// ranCost the wall time of the batches judged so far, their states and the estimated cost
	// of their crash points (queued, pace); credit is the pacing's share of estimated states
	// earned and not yet spent (negative: a point of the first round explored on credit).
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
	// allPoints is the number of crash points inside operations (countPoints), opPoints those
	// of each operation, visited those the walks reached.
	allPoints, visited int
	opPoints           []int
	// opCost is the estimated cost of each operation's crash points, in crash states
	// (pointCost), walkCost and walkVisitedCost those of the walk in progress and of the points
	// it reached, allCost and visitedCost the same over every walk (overrun); opVisited counts
	// the points reached per operation, batchCost the estimated cost of the points of the batch
	// being built (pace).
	opCost                    []float64
	walkCost, walkVisitedCost float64
	allCost, visitedCost      float64
	opVisited                 []int
	batchCost                 float64
	// retry holds the crash states whose runs an overrun bound stopped, by crash point (trace
	// event) and state key, skipped the points the pacing left out, retryOp their operations, for
	// the remainder walk (retry.go);
	// remainder says the walk in progress is that walk.
	retry     map[uint64]map[string]bool
	skipped   map[uint64]float64 // crash points the pacing left out, by trace event: their cost
	retryOp   map[int]bool
	remainder bool
	// explored says which operations had a crash point explored (Stats.PathsExplored).
	explored map[int]bool
	// prog reports the progress (Config.Progress); batchPoints counts the crash points the
	// batch being built explores (counted done once it is judged).
	prog        *exec.Progress
	batchPoints int
	// fellBack counts the crash points of the batch being judged whose lazy runs fell back: not
	// covered yet (the fallback walk covers them); took says that visitPoint built a point's
	// states (it was not left out).
	fellBack int
	took     bool
	// lastWalk is set for the remainder walk (retry.go).
	lastWalk bool
	// memoryOps are the operations whose later crash points MaxOperationBytes left out.
	memoryOps map[int]bool
	// longestConsistent is the longest run on a consistent image that ended by itself, of the
	// batches judged so far (hangTimeout).
	longestConsistent time.Duration
	msgs              []func(where string) string   // the finding's message given where its crash point is
	chains            map[uint32]string             // site -> its inlined chain's key (siteChain)
	locs              map[[2]uint32]report.Location // (site, stack) -> location (location)
	warned            map[string]bool
	invText           map[int]string // invariant ID -> text
	// The crash points' frames and innermost user frames (cause.go), the persistence helpers
	// they are computed with and the number of sites those were classified from.
	pointFrames map[report.Context]placedPoint
	helpers     report.Helpers
	helperSites int
	twins       map[Pair]int // repaired twins made per pair
	shard       *shardLog    // a shard's failing states (shard.go)
	// Lazy exploration (lazy.go): why lazy runs cannot be made ("" when they can), the crash
	// points (by index) whose lazy runs fell back and their operations, whether the walk in
	// progress is the last one that explores those eagerly, the crash states the leaves covered.
	lazyOff      string
	fallback     map[int]bool
	fallbackOps  map[int]bool
	fallbackWalk bool
	fallbackDone int     // fallback points the last walk explored or left out to the budget
	fallbackCost float64 // the eager cost (pointCost) of the fallback points
	lazyCovered  big.Int
}

// Run explores the crash states of cfg.Trace: see the package doc. It returns the findings and
// statistics found so far together with the first error (a bad trace, a file error, the context
// cancelled: Ctrl-C); a trace truncated by a crash of the recorded program is explored up to its
// end with a warning.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	res := &Result{}
	hugePages := cfg.Runner == nil && !cfg.NoHugePages && len(cfg.Target.Args) > 0 && exec.LinksLibrary(cfg.Target.Args[0], "libpmemobj.so")
	if hugePages {
		// libpmemobj's open allocates about 10 MiB per run (exec.WithHugePages).
		cfg.Target.Env = exec.WithHugePages(cfg.Target.Env)
	}
	if err := cfg.check(); err != nil {
		return res, err
	}
	r, err := trace.Open(cfg.Trace)
	if err != nil {
		return res, err
	}
	defer r.Close()
	parent, where := exec.ScratchParent(cfg.Exec.Dir, firstRegionBytes(cfg.Trace), cfg.AvoidTmpfs)
	res.Stats.Images = "images " + where
	cfg.Exec.Dir = parent
	tmp, err := os.MkdirTemp(parent, "scry-explore-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	if _, ok := cfg.Runner.(ProcessRunner); ok && cfg.NoForkServer {
		res.Stats.Runs = "runs by exec (--no-fork-server)"
	}
	if pr, ok := cfg.Runner.(ProcessRunner); ok && pr.Servers == nil && !cfg.NoForkServer {
		pr.Servers = exec.NewForkServers(cfg.Target, tmp)
		defer func() {
			res.Stats.Runs = pr.Servers.Mode()
			if hugePages {
				res.Stats.Runs += ", heap on huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)"
			}
			pr.Servers.Close()
		}()
		cfg.Runner = pr
	}
	e := &explorer{
		cfg: &cfg, r: r, ctx: ctx, tmp: tmp, res: res,
		bw: crash.NewImageWriter(filepath.Join(tmp, "boundary.img")), pointEvent: ^uint64(0),
		clusters: map[string]int{}, variants: map[string]map[string]bool{},
		failures: map[string]int{},
		warned:   map[string]bool{}, start: start, invText: map[int]string{}, chains: map[uint32]string{},
		locs:        map[[2]uint32]report.Location{},
		pointFrames: map[report.Context]placedPoint{}, twins: map[Pair]int{}, prefixWindows: map[string]int{},
		opPaths: map[int]string{}, windowFailures: map[string]int{}, windowStates: map[string]int{}, storeStates: map[string][2]int{}, memoryOps: map[int]bool{},
		explored: map[int]bool{}, fallback: map[int]bool{}, fallbackOps: map[int]bool{},
	}
	e.budgetStart, e.prog, e.runCtx = cfg.Start, cfg.Progress, ctx
	if e.budgetStart.IsZero() {
		e.budgetStart = e.now()
	}
	if cfg.TimeBudget > 0 && cfg.Now == nil { // a test's clock has no deadline on the wall clock
		// The runs still going at the schedule's end are stopped: the final phase has its reserve
		// whatever the runs cost (a hang bound under load, a slow last batch).
		var cancel context.CancelFunc
		e.runCtx, cancel = context.WithDeadline(ctx, e.budgetStart.Add(budget.ScheduleEnd(cfg.TimeBudget)))
		defer cancel()
	}
	res.Durability, res.Pairs = map[StoreAt]InvariantOutcome{}, map[Pair]PairOutcome{}
	defer func() { e.bw.Close() }()
	jobs := cfg.Exec.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	res.Stats.Jobs = jobs
	if err := e.invariants(); err != nil {
		return res, err
	}
	e.lazyCheck()
	// Rounds of walks: every operation path before any path a second time (priority.go); one
	// walk in trace order with NoPriority (the paths are grouped either way, for
	// Stats.OperationPaths).
	e.prog.Phase("planning: grouping the operations by path", "", 0)
	if e.order, err = planOrder(cfg.Trace, len(cfg.Workload.Ops)); err != nil {
		return res, err
	}
	passes := [][]bool{nil}
	if !cfg.NoPriority && e.order.walks > 1 {
		passes = e.order.passes()
	}
	// Plan first: the crash points to explore are counted before any run, so that progress
	// is reported against a fixed total, a walk stopped at the budget's end knows how many it
	// left out, and the budget paces each walk by the estimated states of the points it has left
	// (pace).
	e.prog.Phase("planning: counting the crash points", "", 0)
	if e.opPoints, e.opCost, err = countPoints(cfg.Trace, cfg.Strategies, cfg.Options, len(cfg.Workload.Ops), cfg.has); err != nil {
		return res, err
	}
	e.opVisited = make([]int, len(e.opPoints))
	for _, c := range e.opCost {
		e.allCost += c
	}
	for _, n := range e.opPoints {
		e.allPoints += n
	}
	if cfg.TimeBudget > 0 {
		e.prog.Deadline(e.budgetStart.Add(cfg.TimeBudget))
	}
	e.prog.Phase("exploring", "crash points covered", e.allPoints)
	var werr error
	for i := 0; i < len(passes); i++ {
		if e.budgetStop {
			break
		}
		e.pass, e.walk = passes[i], i
		e.walkRanTime, e.walkRanCost, e.walkCost, e.walkVisitedCost = 0, 0, 0, 0
		for k, c := range e.opCost {
			if e.inPass(k) && !e.remainder && !e.fallbackWalk {
				e.walkCost += c
			}
		}
		if e.remainder { // its points cost their states to retry, or their own (retry.go)
			for _, keys := range e.retry {
				e.walkCost += float64(len(keys))
			}
			for _, c := range e.skipped {
				e.walkCost += c
			}
		}
		if e.fallbackWalk { // the eager cost of the points whose lazy runs fell back
			e.walkCost = e.fallbackCost
		}
		if i > 0 {
			if r, err = trace.Open(cfg.Trace); err != nil {
				werr = err
				break
			}
			defer r.Close()
			e.r, e.cur, e.pointEvent = r, nil, ^uint64(0)
			e.bw.Close()
			e.bw = crash.NewImageWriter(filepath.Join(tmp, fmt.Sprintf("boundary-%d.img", i)))
		}
		var wst crash.Stats
		wst, werr = crash.Walk(r, cfg.Options, e.visit)
		if n := wst.Assumed + wst.AssumedLate; n > 0 && i == 0 {
			res.Stats.AssumedDurable = n
			e.warn(fmt.Sprintf("%d store(s) not durable when the operation that issued them ended (never made durable: unpersisted-store or overwritten-unpersisted, or made durable late by a later flush) assumed durable in the crash states of the operations after it, as if fixed, so that a crash in a later operation is not blamed on them and other bugs stay visible; a crash right before the next operation that loses one of them tests whether it matters (durability-violation) (--no-assume-fixed explores the literal model)", n))
		}
		if werr != nil && errors.Is(werr, trace.ErrTruncated) {
			e.warn("trace truncated: the recorded program did not exit normally; crash states explored up to the end of the trace")
			werr = nil
		}
		if werr == nil && !e.budgetStop {
			res.Events = max(res.Events, wst.Events) // a whole walk: the trace's events
		}
		if werr == nil {
			werr = e.flush()
		}
		// The batch still running is judged whatever happened (partial results are kept);
		// a walk ends with every batch judged.
		if ferr := e.finish(); werr == nil {
			werr = ferr
		}
		if werr != nil {
			break
		}
		if i == len(passes)-1 {
			// The crash points whose lazy runs fell back, eagerly; then, with time left in the
			// budget, what the pacing left out or an overrun bound stopped (retry.go).
			if fp := e.fallbackPass(); fp != nil {
				passes = append(passes, fp)
			} else if pass := e.remainderPass(); pass != nil {
				passes = append(passes, pass)
			}
		}
	}
	if res.Stats.LazyRuns > 0 {
		res.Stats.LazyStates = e.lazyCovered.String()
	}
	if n := len(e.fallback) - e.fallbackDone; n > 0 {
		// Fallen back, then never explored eagerly: the budget ended first.
		res.Stats.CrashPoints -= n
		res.Stats.SkippedBudget += n
	}
	e.prog.Phase("clustering and placing the findings", "", 0)
	e.place()
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
	if n := e.budgetStopped; n > 0 {
		e.warn(fmt.Sprintf("partial: the runs of %d crash states were stopped at the end of the time budget of %v (its last %v are kept for the report), or when their batch ran past its share of the budget, and the states were not judged", n, cfg.TimeBudget, cfg.TimeBudget-budget.ScheduleEnd(cfg.TimeBudget)))
	}
	res.Stats.Findings = len(res.Findings)
	res.Stats.ElapsedSeconds = time.Since(start).Seconds()
	return res, werr
}

// pace returns how many of the cost estimated crash states of the next crash point of the walk
// in progress are explored to keep to Config.TimeBudget: cost (the whole point, always without a
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
// Each walk (a round of every operation path, priority.go) is paced by its own points, so a
// round that does not fit covers a share of every path of it rather than the paths it reaches
// first, and the next round starts only with the time this one leaves. When force is set (the
// last point of an operation of the first round with no point explored), a point that would be
// left out is explored with MinPointShare states (at most its cost) on credit: every operation
// path has a crash point explored before any path a second time. Until a batch has been judged
// there is no cost per state: the points are explored whole, and once a first batch is running
// the walk waits for it to be judged (explorer.finish) rather than queue the next operations'
// states at a cost unknown. Errors: those of judging that batch.
func (e *explorer) pace(cost float64, force bool) (float64, error) {
	d := e.cfg.TimeBudget
	if d <= 0 {
		return cost, nil
	}
	left := budget.ScheduleEnd(d) - e.spent() - e.queued()
	if left <= 0 {
		return 0, nil
	}
	if e.ranCost == 0 && e.running != nil {
		// Nothing measured yet: the first batch is judged before the walk goes on, rather than
		// the next operations' states queued whole at a cost unknown (a split's thousands).
		if err := e.finish(); err != nil {
			return 0, err
		}
		left = budget.ScheduleEnd(d) - e.spent() - e.queued()
		if left <= 0 {
			return 0, nil
		}
	}
	ran, c := e.walkRanTime, e.walkRanCost
	if c == 0 {
		ran, c = e.ranTime, e.ranCost
	}
	if c == 0 {
		return cost, nil // nothing measured yet (the first batch: the first operation's states)
	}
	per := ran.Seconds() / c
	need := per * max(e.walkCost-e.walkVisitedCost, cost)
	if need <= left.Seconds() {
		return cost, nil
	}
	// The credit is time promised to points still to come: it is not shared again.
	share := cost * max(left.Seconds()-max(e.credit, 0)*per, 0) / need
	e.credit += share
	take := 0.0
	switch {
	case e.credit >= cost:
		take = cost
	case share >= MinPointShare:
		take = math.Floor(e.credit)
	case force:
		take = min(cost, MinPointShare)
	}
	e.credit -= take
	return take, nil
}

// budgetEnded reports whether the time budget's end stopped the runs (not a cancellation of
// ctx: Ctrl-C).
func (e *explorer) budgetEnded() bool { return e.runCtx.Err() != nil && e.ctx.Err() == nil }

// spent is the time since the budget began (Config.Start).
func (e *explorer) spent() time.Duration { return e.now().Sub(e.budgetStart) }

// queued estimates the time the crash states built but not yet judged will take: the batch the
// walk is building and what is left of the one running, at the wall time per state of the
// batches judged so far (0 before any).
func (e *explorer) queued() time.Duration {
	if e.ranStates == 0 {
		return 0
	}
	per := e.ranTime / time.Duration(e.ranStates)
	q := per * time.Duration(len(e.batch))
	if b := e.running; b != nil {
		q += max(per*time.Duration(len(b.items))-e.now().Sub(b.began), 0)
	}
	return q
}

// now is the exploration's clock (Config.Now).
func (e *explorer) now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return time.Now()
}

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
	switch cp.Kind {
	case crash.OpBegin:
		return e.opBegin(cp)
	case crash.OpEnd:
		return e.opEnd(cp)
	}
	if cp.Op < 0 {
		if e.walk == 0 && e.cfg.Shard.Index == 0 {
			e.res.Stats.Skipped++ // once, by the first shard
		}
		return nil
	}
	k := int(cp.Op)
	if !e.inPass(k) || e.fallbackWalk && !e.fallback[cp.Index] {
		return nil
	}
	if d := e.cfg.TimeBudget; d > 0 && e.spent() >= budget.ScheduleEnd(d) {
		// The budget has ended: the rest of the trace is not walked (a long trace takes a
		// while), its crash points are left out (and the later walks' too).
		// The states built and not yet handed to the workers are not run: their runs would
		// be stopped at once (runCtx has ended).
		left := max(e.allPoints-e.visited, 0)
		e.res.Stats.SkippedBudget += left
		e.budgetStopped += len(e.batch)
		e.batch, e.batchPoints, e.batchBytes, e.batchCost = nil, 0, 0, 0
		e.budgetStop = true
		return crash.ErrStop
	}
	if e.remainder {
		return e.visitRetry(cp, k)
	}
	e.visited++
	explored := e.res.Stats.CrashPoints
	strategies := e.cfg.Strategies
	if e.fallbackWalk {
		strategies = e.eagerStrategies(false)
	}
	cost := pointCost(cp.Space, strategies, e.cfg.Options)
	if k < len(e.opVisited) {
		e.opVisited[k]++
	}
	e.took = false
	err := e.visitPoint(cp, k, cost)
	e.walkVisitedCost += cost
	e.visitedCost += cost
	if e.res.Stats.CrashPoints > explored || e.fallbackWalk && e.took {
		e.batchPoints++ // covered once its batch is judged (progress)
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
		e.warn(fmt.Sprintf("crash points with more than %d operations in flight are not explored (they would need %s legal outcomes each)",
			e.cfg.maxInFlight(), legalCount(m)))
		e.res.Stats.SkippedConcurrent++
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
	if e.fallbackWalk {
		e.fallbackDone++
	}
	// The last point of an operation of the first round of paths, none of its points explored.
	force := e.pass != nil && e.walk == 0 && !e.explored[k] && k < len(e.opVisited) && e.opVisited[k] == e.opPoints[k]
	take, err := e.pace(cost, force)
	if err != nil {
		return err
	}
	if take == 0 {
		switch {
		case e.fallbackWalk:
			e.res.Stats.SkippedBudget++
			e.res.Stats.CrashPoints-- // counted explored by its lazy run, which fell back
		case !e.remainder:
			e.res.Stats.SkippedBudget++
			e.keepSkipped(cp, k, cost)
		}
		return nil
	}
	if e.batchBytes >= maxOperationBytes {
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
	e.batchCost += take
	var keep map[string]bool // nil: every state
	switch {
	case e.remainder:
		keep = e.retryStates(cp, int(take))
	case take < cost && !lazy: // a lazy run is all or nothing (its tree is bounded: LazyTreeRuns)
		var left []string
		keep, left = thinStates(cp.Space, e.eagerStrategies(false), e.cfg.Options, int(take))
		e.keepThinned(cp, k, left)
		e.res.Stats.PartialBudget++
		if !e.fallbackWalk {
			e.res.Stats.CrashPoints++
		}
	case !e.fallbackWalk:
		e.res.Stats.CrashPoints++
	}
	e.took = true
	if err := e.keepBefore(p, cp); err != nil {
		return err
	}
	inflight := make([]int, len(cp.InFlight))
	for i, f := range cp.InFlight {
		inflight[i] = int(f)
	}
	done := slices.Clone(p.ended)
	if lazy {
		it, err := e.lazyItem(cp, k, id, path)
		if err != nil {
			return err
		}
		it.per, it.done, it.inflight, it.next = p, done, inflight, next
		e.batch = append(e.batch, it)
	}
	seen, skipped := map[string]*item{}, map[string]bool{}
	for _, s := range e.eagerStrategies(lazy) {
		for st := range s.States(cp.Space, e.cfg.Options) {
			key := stateKey(st.K)
			if keep != nil && !keep[key] {
				continue
			}
			if it := seen[key]; it != nil {
				// Attributed to the first strategy; the invariants it violates still count.
				if len(st.Invariants) > 0 {
					first := len(it.state.Invariants) == 0
					it.smp = sampling{} // a state that breaks invariants is never left out
					it.state.Invariants = slices.Compact(slices.Sorted(slices.Values(append(it.state.Invariants, st.Invariants...))))
					if first {
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
			smp := e.windowSampling(cp, st)
			if e.sampledOut(smp) {
				skipped[key] = true
				e.res.Stats.Sampled++
				continue
			}
			it, err := e.newItem(cp, k, id, path, st, s.Name)
			if err != nil {
				return err
			}
			it.per, it.done, it.inflight, it.next, it.smp = p, done, inflight, next, smp
			seen[key] = it
			e.batch = append(e.batch, it)
			if len(st.Invariants) > 0 {
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
	n := e.nimg.Add(1)
	return filepath.Join(e.tmp, what+"-"+strconv.FormatInt(n, 10)+".img")
}

// opBegin starts a busy period when no operation is in flight (the boundary writer then holds
// its consistent image), or adds the operation to the period in progress.
func (e *explorer) opBegin(cp *crash.CrashPoint) error {
	k := int(cp.Op)
	if e.cur != nil {
		e.cur.ops = append(e.cur.ops, k)
		e.checkText(cp)
		return nil
	}
	p := &period{ops: []int{k}}
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
	if !e.durabilityPass(k) || e.fallbackWalk || e.remainder {
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
// A position whose states failed or passed often enough (Config.ClusterFailures) is sampled
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
	assumed := func(u crash.Unit) bool {
		return slices.ContainsFunc(cp.Assumed, func(s px86.StoreState) bool { return u.StandsFor(uint64(s.ID)) })
	}
	// The positions, in program order of their first unit.
	type group struct {
		loc   report.Location
		first uint64
		op    uint32 // the operation of its first unit (Unit.Op)
	}
	var groups []group
	for _, l := range cp.Space.Lines {
		for _, u := range l.Units {
			if !assumed(u) {
				continue
			}
			loc := e.location(u.Site, u.Stack)
			if i := slices.IndexFunc(groups, func(g group) bool { return g.loc == loc }); i >= 0 {
				if u.Seq < groups[i].first {
					groups[i].first, groups[i].op = u.Seq, u.Op
				}
			} else {
				groups = append(groups, group{loc, u.Seq, u.Op})
			}
		}
	}
	slices.SortFunc(groups, func(a, b group) int { return cmp.Compare(a.first, b.first) })
	for _, g := range groups {
		smp := e.storeSampling(cp.Event, g.loc)
		if e.sampledOut(smp) {
			e.res.Stats.Sampled++
			continue
		}
		st := crash.State{K: make([]int, len(cp.Space.Lines))}
		var lost []unitRef
		for i, l := range cp.Space.Lines {
			st.K[i] = len(l.Units)
			for j, u := range l.Units {
				if assumed(u) && e.location(u.Site, u.Stack) == g.loc && j < st.K[i] {
					st.K[i] = j
				}
			}
			for _, u := range l.Units[st.K[i]:] {
				if assumed(u) {
					lost = append(lost, unitRef{Site: u.Site, Stack: u.Stack, Seq: u.Seq, Event: u.Store})
				}
			}
		}
		if len(lost) == 0 {
			continue
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
		if i := slices.IndexFunc(lost, func(u unitRef) bool { return e.location(u.Site, u.Stack) == g.loc }); i > 0 {
			lost[0], lost[i] = lost[i], lost[0]
		}
		it.persisted, it.unpersist, it.durability, it.durable, it.smp = nil, lost, true, g.loc, smp
		it.loc, it.site, it.stack = e.location(lost[0].Site, lost[0].Stack), lost[0].Site, lost[0].Stack
		it.cause = e.storeKey(it.site, it.stack, g.op)
		it.per, it.inflight, it.next = p, []int{k}, k+1
		e.batch = append(e.batch, it)
	}
	return nil
}

// checkText warns when an operation's text in the trace is not the workload's line. The runtime
// records a line without its line ending (\n or \r\n), so a CRLF workload matches too.
func (e *explorer) checkText(cp *crash.CrashPoint) {
	if k := int(cp.Op); k < len(e.cfg.Workload.Ops) && strings.TrimSuffix(e.cfg.Workload.Ops[k], "\r") != cp.OpText {
		e.warn(fmt.Sprintf("operation %d of the trace is %q but line %d of the workload is %q: is this the workload the trace was recorded with?", k, cp.OpText, k+1, e.cfg.Workload.Ops[k]))
	}
}

// opEnd ends an operation; when none is left in flight the busy period ends: a one-operation
// period keeps its consistent image after the operation (the committed oracle), and a full
// batch is run.
func (e *explorer) opEnd(cp *crash.CrashPoint) error {
	if _, ok := e.opPaths[int(cp.Op)]; !ok {
		e.opPaths[int(cp.Op)] = e.opPath(cp.OpStores)
	}
	p := e.cur
	if p == nil {
		return nil
	}
	p.ended = append(p.ended, int(cp.Op))
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
	if len(e.batch) >= e.batchLimit() || e.batchBytes >= MaxBatchBytes {
		return e.flush()
	}
	return nil
}

// location resolves an event at site in call-stack node stack (0: the site with its inlined-at
// chain only) to its innermost frame outside system headers (report.UserAt): a store libstdc++'s
// <atomic> makes for the program is grouped, settled and reported at the program's line. Cached:
// it runs for every unit of every state.
func (e *explorer) location(site, stack uint32) report.Location {
	k := [2]uint32{site, stack}
	if l, ok := e.locs[k]; ok {
		return l
	}
	l := report.UserAt(e.r, site, stack)
	e.locs[k] = l
	return l
}

// siteChain returns a key for site's source position with its inlined-at chain: the copies of
// one helper inlined at different callers differ, the same instruction in different operations
// does not.
func (e *explorer) siteChain(site uint32) string {
	if k, ok := e.chains[site]; ok {
		return k
	}
	k := report.FramesKey(report.FramesAt(e.r, site, 0))
	if k == "" {
		k = fmt.Sprintf("site#%d", site)
	}
	e.chains[site] = k
	return k
}

// place reports each finding at its crash point's innermost user frame (report.UserFrame: a
// flush or fence in a persistence helper is reported at the caller that persists through it,
// whether the compiler inlined the helper or not), with the crash point's frames as the stack.
// Durability findings, located at the lost store, keep their store's frames.
func (e *explorer) place() {
	for i := range e.res.Findings {
		e.placeFinding(&e.res.Findings[i], e.points[i], e.msgs[i])
	}
	if e.cfg.Shard.Active() {
		if l := e.shard; l != nil {
			for _, a := range l.alts {
				e.placeFinding(&l.clusters[a.cluster].Alternates[a.index].Finding, a.at, a.msg)
			}
		}
		e.res.Shard = e.shardReport() // folded when the shards are merged
		return
	}
	e.foldOrdering()
}

// placeFinding places finding f, whose first crash point is c, with its message given where
// that is (place).
func (e *explorer) placeFinding(f *report.Finding, c report.Context, msg func(string) string) {
	if f.Kind == report.DurabilityViolation {
		return
	}
	frames, u := e.userPoint(c.Site, c.Stack)
	if len(frames) == 0 {
		return
	}
	f.Location, f.Stack = frames[u].Location(), frames
	f.Message = msg(f.Location.String())
	if len(f.Related) > 0 && f.Related[0].Role == report.RoleCrashPoint {
		f.Related[0] = f.Location.Related(report.RoleCrashPoint)
	}
}

// foldOrdering merges an ordering violation into the atomicity violation of its window in the path
// of its first failing state (a window a shrink and an insert share is two windows here), when
// there is one: a window whose program-order states fail is not failure-atomic, and its failing
// reorderings are variants of that finding, unless they reorder a pair of stores that an inferred
// property asks to be ordered and that its twins confirmed to be a cause (Result.Pairs: the
// state fails, the same state without the store persisted too early does not, and the state with
// only that pair out of order fails again): a token persisted before its value, in a window that
// also fails because of a counter incremented after both, stays a finding of its own (cause.go).
func (e *explorer) foldOrdering() {
	folded := map[int]bool{}
	for i := range e.res.Findings {
		f := &e.res.Findings[i]
		if f.Kind != report.OrderingViolation {
			continue
		}
		if j, ok := e.prefixWindows[e.windows[i]]; ok && !e.confirmedPair(f) {
			mergeFinding(&e.res.Findings[j], f)
			folded[i] = true
		}
	}
	if len(folded) == 0 {
		return
	}
	kept := e.res.Findings[:0]
	for i, f := range e.res.Findings {
		if !folded[i] {
			kept = append(kept, f)
		}
	}
	e.res.Findings = kept
}

// confirmedPair reports whether ordering violation f's first failing state reorders a pair of
// stores whose inferred property its twins confirmed: the pair's later store among those it
// persisted, its earlier store among those it did not.
func (e *explorer) confirmedPair(f *report.Finding) bool {
	var persisted, unpersisted []report.Location
	for _, r := range f.Related {
		switch r.Role {
		case report.RolePersisted:
			persisted = append(persisted, r.Location())
		case report.RoleUnpersisted:
			unpersisted = append(unpersisted, r.Location())
		}
	}
	for p, o := range e.res.Pairs {
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
	if e.pointEvent == cp.Event && e.pointBase != "" {
		return e.pointBase, e.pointDelta, nil
	}
	e.pointEvent, e.pointBase, e.pointDelta, e.pointNet, e.pointKeyed = cp.Event, "", nil, nil, false
	if p := e.cur; p != nil && p.before != "" && p.region == region {
		delta, n, err := cp.Delta(region, p.gen)
		if err != nil {
			return "", nil, err
		}
		if n <= maxPointDelta {
			e.pointBase, e.pointDelta = p.before, delta
			e.batchBytes += n
			e.pointNet, e.pointKeyed = netDelta(p.before, delta)
			return e.pointBase, e.pointDelta, nil
		}
	}
	f := e.newImage("point")
	if err := cp.WriteImage(f, region, cp.Space.FullState()); err != nil {
		return "", nil, err
	}
	e.pointFiles = append(e.pointFiles, f)
	e.pointBase = f
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
		e.batchBytes += len(p.Data)
	}
	img := e.newImage("crash")
	var key string
	var isBase bool
	if e.pointKeyed && base == e.pointBase {
		next := 0
		if e.cur != nil {
			next = slices.Max(e.cur.ops) + 1
		}
		key, isBase = imageKey(base, e.pointNet, ps, next)
	}
	it := &item{
		key: key, isBase: isBase,
		base: base, patches: append(delta[:len(delta):len(delta)], ps...),
		op: k, image: img, point: cp.Index, pointKind: cp.Kind, event: cp.Event, site: cp.Site,
		loc: e.location(cp.Site, cp.Stack), stack: cp.Stack, opText: cp.OpText, state: st,
		strategy: strategy, region: region, regionPath: path,
		pointKey: e.pointKey(cp),
	}
	sp := cp.Space
	for _, l := range sp.Lines {
		it.lines = append(it.lines, report.CrashLine{Addr: l.Addr, Units: len(l.Units)})
	}
	e.batchBytes += 32 * len(sp.Lines) // it.lines and it.state.K (MaxOperationBytes)
	it.persisted, it.unpersist = stateRefs(sp, st)
	e.batchBytes += int(unsafe.Sizeof(unitRef{}))*(cap(it.unpersist)+cap(it.persisted)) + int(unsafe.Sizeof(crash.Patch{}))*len(it.patches)
	return it, nil
}

// stateRefs returns the units a finding on state st of sp names: for a prefix state every unit
// not persisted (the operation's stores that did not make it); otherwise the persisted units
// later in program order than some unpersisted one, and the unpersisted units earlier than some
// persisted one.
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
	for i, l := range sp.Lines {
		for j, u := range l.Units {
			isP := j < st.K[i]
			switch {
			case st.Prefix && !isP:
				unpersist = append(unpersist, ref(u))
			case !st.Prefix && isP && anyP && u.Seq > minN:
				persisted = append(persisted, ref(u))
			case !st.Prefix && !isP && anyP && u.Seq < maxP:
				unpersist = append(unpersist, ref(u))
			}
		}
	}
	return persisted, unpersist
}

// countPoints walks the trace at path once (crash.Walk with opts, building no state) and
// returns the crash points inside each of the n operations and their estimated cost in crash
// states (pointCost of strategies): the total the exploration's progress is reported against
// (each point is explored or left out once, in whichever walk takes its operation) and what the
// budget paces its walks by, only those of the operations k for which keep(k) holds (a shard's:
// Config.Shard; the others count 0). A truncated trace counts up to its end. Errors: the trace
// cannot be read.
func countPoints(path string, strategies []*crash.Strategy, opts crash.Options, n int, keep func(int) bool) ([]int, []float64, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	opts.OpBoundaries = false
	points, cost := make([]int, n), make([]float64, n)
	_, err = crash.Walk(r, opts, func(cp *crash.CrashPoint) error {
		if k := int(cp.Op); cp.Op >= 0 && k < n && keep(k) {
			points[k]++
			cost[k] += pointCost(cp.Space, strategies, opts)
		}
		return nil
	})
	if errors.Is(err, trace.ErrTruncated) {
		err = nil
	}
	return points, cost, err
}

// defaultJobs is exec.Pool's default.
func defaultJobs() int { return max(1, numCPU()) }

// inPass reports whether this walk explores operation k (in this shard: Config.Shard).
func (e *explorer) inPass(k int) bool {
	return (e.pass == nil || k >= len(e.pass) || e.pass[k]) && e.cfg.has(k)
}

// durabilityPass reports whether this walk makes the durability states at operation k's start
// (in this shard): they test the stores the operations before k left not durable, so they go
// with operation k-1's walk, the path that issued them (k's own for the first operation).
func (e *explorer) durabilityPass(k int) bool {
	j := max(k-1, 0)
	return (e.pass == nil || j >= len(e.pass) || e.pass[j]) && e.cfg.has(k)
}

// pathStats sets Stats.OperationPaths, the operation paths with crash points (of the busy
// periods, priority.go), and Stats.PathsExplored, those of them with a crash point explored.
// A shard also lists them in its report (report.Shard.Paths, PathsExplored; after place, which
// makes it), each by the first operation of the trace on it, for the merge to count their union.
func (e *explorer) pathStats() {
	if e.order.paths == 0 {
		return
	}
	first := map[string]int{} // path key -> the first operation on it
	for k := len(e.order.path) - 1; k >= 0; k-- {
		first[e.order.path[k]] = k
	}
	with, explored := map[int]bool{}, map[int]bool{}
	for k, n := range e.opPoints {
		if n == 0 || k >= len(e.order.path) {
			continue
		}
		p := first[e.order.path[k]]
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
