package explore

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scry-pm/scry/internal/budget"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

func numCPU() int { return runtime.NumCPU() }

// runs are the batches of crash images and their runs: the batch the walk is building, with the
// base of the crash point its images are made at, and the batch the workers run meanwhile.
type runs struct {
	// tmp is the exploration's scratch directory, where images are named (newImage: nimg so
	// far; batches running beside the walk name some); copies the workers' working copies of
	// images (storage.go).
	tmp    string
	nimg   atomic.Int64
	copies workCopies
	// runCtx is the runs' context: the exploration's, ending at the time budget's schedule end;
	// pool the workers that run them (Options.Jobs, the scratch directory).
	runCtx context.Context
	pool   exec.Pool
	// batch is the batch being built: its items, the bytes of their patches (MaxOperationBytes),
	// the crash points they explore (counted done once judged, progress) and their estimated
	// cost (pace), and the points' own base files (removed after the batch).
	batch       []*item
	batchBytes  int
	batchPoints int
	batchCost   float64
	pointFiles  []string
	// The base of the crash point items are being made at (base): its trace event, the file and
	// the delta its images start from, the delta where it differs from the base (dedupe.go) and
	// whether its states' images are keyed.
	pointEvent uint64
	pointBase  string
	pointDelta []crash.Patch
	pointNet   []crash.Patch
	pointKeyed bool
	// running is the batch the workers run while the walk goes on; flushes counts the batches
	// handed over so far.
	running *runningBatch
	flushes int
	// fellBack counts the crash points of the batch being judged whose lazy runs fell back: not
	// covered yet (the fallback walk covers them).
	fellBack int
	// longestConsistent is the longest run on a consistent image that ended by itself, of the
	// batches judged so far (hangTimeout).
	longestConsistent time.Duration
}

// job is one run of a batch: the target on an image with a standard input, optionally the
// checker first (crash images only). With copyFrom the image is first copied from that file
// and patches are written over it (in the worker, so copies run in parallel, and a crash image
// takes disk only while it runs); with keep it is left in place after the run (a
// prep run's image, the source of oracle runs).
type job struct {
	image    string
	stdin    []byte
	checker  bool
	copyFrom string        // the image is first made a copy of this file
	patches  []crash.Patch // then these are written over it
	keep     bool
	timeout  time.Duration // bounds the run when > 0 (a crash image's: hangTimeout)
	// outputs asks a prep run to be recorded so that what each of its operations printed is
	// known (OutputRunner, responses.go).
	outputs bool
	// publish, on a legal outcome's run, is where its outcome goes (as legal outcome
	// publishAs) for the runs on the period's crash images; legal, on those, is where they
	// find them, to stop at their first diverging line (early.go).
	publish   *legalSlot
	publishAs int
	legal     *legalSlot
	// lazy makes the run a lazy run of a crash point (lazy.go), its tree bounded by tree.
	lazy *lazyPoint
	tree time.Duration
}

// makeImage makes j's image a copy of j.copyFrom (a fresh one when j.keep, else by writing what
// differs: workCopies.reset) with j's patches written over it.
func (j job) makeImage(w *workCopies) error {
	var err error
	if j.keep {
		err = exec.CopyFile(j.image, j.copyFrom)
	} else {
		err = w.reset(j.image, j.copyFrom)
	}
	if err == nil {
		err = crash.ApplyPatches(j.image, j.patches)
	}
	return err
}

// outcome is a job's result; done is set when the job ran to its end (not interrupted).
type outcome struct {
	target  exec.Outcome
	checker *exec.Outcome
	done    bool
	// outputs, on a prep run recorded to tell (job.outputs), is what each of its operations
	// printed (responses.go).
	outputs map[int][]byte
	lazy    *exec.LazyOutcome // a lazy run's (target is its root's)
	// convergeSaved, on a run stopped at a legal outcome's state (target.ConvergedTo), is how
	// much longer that legal outcome's run took (converge.go).
	convergeSaved time.Duration
	// convergedAgain: the run converged with a legal outcome whose output before that point
	// differed from its own, and ran again in full.
	convergedAgain bool
}

// flush hands the current batch to the workers. Batches are pipelined: flush first waits for
// the batch handed over before (finish: its outcomes judged, its images removed), then starts
// this one in the background and returns, so that the walk builds the next batch while this
// one runs. The state the walk consults while building batch n+1 (which clusters failed often
// enough to be sampled, cluster sampling) is therefore the state after batch n-1, whatever the
// timing: results do not depend on the machine's speed or the number of jobs. A batch with
// overlapping operations (prep runs, oracles.go) runs to its end before flush returns: its
// oracle runs depend on its prep runs' outcomes.
//
// A batch runs the oracle runs of every busy period with crash images (the periods are
// complete: a batch is flushed when no operation is in flight, or at the end of the walk), then
// every crash image, on exec.Map's workers; then its crash images are judged in order. A period
// of one operation has two oracle runs, on its consistent images before and after the
// operation; a period of overlapping operations first has its prep runs (oracles.go), in a
// first round.
func (e *explorer) flush() error {
	if len(e.runs.batch) == 0 {
		return nil
	}
	if err := e.finish(); err != nil {
		return err
	}
	b := e.prepare()
	e.runs.flushes++
	b.began = e.pacer.now()
	e.pacer.overrun(b, e.runs.runCtx)
	if len(b.gen.preps) > 0 {
		b.run(e)
		e.runs.running = b
		return e.finish()
	}
	b.done = make(chan struct{})
	go func() {
		defer close(b.done)
		b.run(e)
	}()
	e.runs.running = b
	return nil
}

// hangTimeout is the bound of the runs on the crash images of the next batch: the target's
// Timeout when it has one, else (adaptive) HangFactor times the longest run on a consistent
// image of the batches judged so far, at least MinHangTimeout and at most exec.DefaultTimeout
// (0, the target's own bound, until a consistent run has been timed). Batch n+1 is planned
// before batch n is judged, so its bound comes from the batches up to n-1.
func (e *explorer) hangTimeout() time.Duration {
	if e.target.Timeout > 0 || e.runs.longestConsistent == 0 {
		return 0
	}
	return min(max(HangFactor*e.runs.longestConsistent, MinHangTimeout), exec.DefaultTimeout)
}

// batchLimit is the number of states after which the walk hands its batch to the workers:
// Options.BatchStates, but the first batches are smaller (32, 64, 128, ... states) so that the
// workers start early and a first failure is reported soon. Under a time budget a batch is also
// kept to about 1/BudgetBatches of the budget's exploration (ScheduleEnd) at the wall time per
// state measured so far (at least 32 states): the walk stops adding states once those queued
// would end past the schedule (pace), and smaller batches let it stop closer to the end; and the
// first batch is the first operation's states alone, handed to the workers at its end, so that
// the pacing has a cost per state measured before the next operations' states are chosen.
func (p *pacer) batchLimit(batchStates, flushes int) int {
	n := min(batchStates, 32<<min(flushes, 16))
	if d := p.budget; d > 0 && p.ranStates > 0 && p.ranTime > 0 {
		per := p.ranTime / time.Duration(p.ranStates)
		n = min(n, max(32, int(budget.ScheduleEnd(d)/BudgetBatches/max(per, 1))))
	} else if d > 0 && flushes == 0 {
		n = 1 // the first operation's states alone: the pacing's first measure (pace)
	}
	return n
}

// runningBatch is a batch handed to the workers (flush) and not yet judged (finish).
type runningBatch struct {
	items      []*item
	jobs       []job
	oracles    int   // jobs[:oracles] are the legal outcomes' runs
	jobOf      []int // the job whose outcome judges items[i] (-1: set after the prep runs)
	seqs       map[*period]*seqPair
	periods    []*period
	gen        *generalOracles
	genIdx     [][]int
	pointFiles []string
	hang       time.Duration // the bound of the runs on crash images (0: the target's own)
	points     int           // the crash points whose states it holds (explorer.batchPoints)
	cost       float64       // their estimated cost in crash states (explorer.batchCost)
	// ctx, under a time budget, ends the batch's runs at allow after it began (pacer.overrun;
	// nil: explorer.runCtx), cancel releases it.
	ctx    context.Context
	cancel context.CancelFunc
	allow  time.Duration
	began  time.Time // when it was handed to the workers
	// Set by run: the outcomes and the first error of exec.Map, and when it ended.
	prepOut []outcome
	outs    []outcome
	err     error
	ended   time.Time
	done    chan struct{} // closed when run returns (nil: ran synchronously)
}

// seqPair indexes the oracle runs of a one-operation period in a batch's jobs: on its
// consistent images before and after it (after -1: none, the trace ends inside the operation),
// and after each of its transactions that a crash point's legal outcomes need (cuts: a job
// each); slot collects their outcomes for the runs on the period's crash images (early.go).
type seqPair struct {
	before, after int
	cuts          map[*txCut]int
	slot          *legalSlot
}

// prepare takes the walk's batch and plans its runs: the legal outcomes' runs first, then one
// run per distinct crash image (dedupe.go). Runs on the walk's goroutine.
func (e *explorer) prepare() *runningBatch {
	if f := e.cfg.Focus; f != "" {
		e.runs.batch = slices.DeleteFunc(e.runs.batch, func(it *item) bool {
			_, key := e.itemKey(it)
			return it.lazy == nil && report.ClusterID(key) != f
		})
	}
	b := &runningBatch{items: e.runs.batch, pointFiles: e.runs.pointFiles, seqs: map[*period]*seqPair{}, hang: e.hangTimeout(), points: e.runs.batchPoints, cost: e.runs.batchCost}
	e.runs.batchPoints, e.runs.batchCost = 0, 0
	e.runs.batch, e.runs.pointFiles, e.runs.batchBytes, e.runs.pointEvent, e.runs.pointBase, e.runs.pointDelta = nil, nil, 0, ^uint64(0), "", nil
	b.gen = &generalOracles{e: e, pkeys: map[string]int{}, rkeys: map[string]int{}}
	b.genIdx = make([][]int, len(b.items))
	for i, it := range b.items {
		p := it.per
		if !p.sequential() {
			if _, ok := b.seqs[p]; !ok {
				b.seqs[p] = nil
				b.periods = append(b.periods, p)
			}
			b.genIdx[i] = b.gen.add(it)
			continue
		}
		if _, ok := b.seqs[p]; ok {
			continue
		}
		b.periods = append(b.periods, p)
		conv := &convergence{stdin: e.cfg.Workload.Suffix(it.op)}
		// The transaction cuts the period's crash points need, in trace order.
		var cuts []*txCut
		for _, o := range b.items[i:] {
			if o.per != p {
				continue
			}
			for _, l := range o.lins {
				if l.cut != nil && !slices.Contains(cuts, l.cut) {
					cuts = append(cuts, l.cut)
				}
			}
		}
		slices.SortFunc(cuts, func(a, b *txCut) int { return cmp.Compare(a.event, b.event) })
		n := 1 + len(cuts)
		if p.after != "" {
			n++
		}
		pr := &seqPair{before: len(b.jobs), after: -1, cuts: map[*txCut]int{}, slot: newLegalSlot(n, conv)}
		chk := e.cfg.Runner.HasChecker()
		// The run on the consistent image before the operation works on a copy: the crash
		// images of the period start from that file.
		b.jobs = append(b.jobs, job{image: e.newImage("rolled-back"), copyFrom: p.before, stdin: e.cfg.Workload.Suffix(it.op), checker: chk, publish: pr.slot})
		if p.after != "" {
			pr.after = len(b.jobs)
			// On a copy too: p.after stays as the operation left it for a second run (vary.go).
			b.jobs = append(b.jobs, job{image: e.newImage("committed"), copyFrom: p.after, stdin: e.cfg.Workload.Suffix(it.op), checker: chk, publish: pr.slot, publishAs: 1})
		} else {
			e.warn("the trace ends inside an operation (no OP_END): its crash states are compared with the rolled-back outcome (and the operation cut after its transactions) only")
		}
		for _, c := range cuts {
			from, patches := linearization{cut: c}.base(p)
			pr.cuts[c] = len(b.jobs)
			b.jobs = append(b.jobs, job{image: e.newImage("cut"), copyFrom: from, patches: patches, stdin: e.cfg.Workload.Suffix(it.op), checker: chk, publish: pr.slot, publishAs: len(b.jobs) - pr.before})
		}
		b.seqs[p] = pr
	}
	if len(b.gen.preps) == 0 {
		b.planImages(e)
	}
	return b
}

// planImages appends the crash images' runs to b.jobs, each distinct image once: jobOf[i] is
// the job whose outcome judges item i, its own, an earlier item's with the same image and
// input, or, for an image that is the consistent image before a sequential operation, that
// image's rolled-back run.
func (b *runningBatch) planImages(e *explorer) {
	b.oracles = len(b.jobs)
	b.jobOf = make([]int, len(b.items))
	byKey := map[string]int{}
	for i, it := range b.items {
		if pr := b.seqs[it.per]; pr != nil && it.isBase {
			b.jobOf[i] = pr.before
			e.res.Stats.Reused++
			continue
		}
		if it.key != "" {
			if j, ok := byKey[it.key]; ok {
				b.jobOf[i] = j
				e.res.Stats.Reused++
				continue
			}
			byKey[it.key] = len(b.jobs)
		}
		b.jobOf[i] = len(b.jobs)
		var legal *legalSlot
		if pr := b.seqs[it.per]; pr != nil && it.lazy == nil { // a lazy run's output is not watched
			legal = pr.slot
		}
		b.jobs = append(b.jobs, job{image: it.image, copyFrom: it.base, patches: it.patches, stdin: e.cfg.Workload.Suffix(it.next - 1), checker: e.cfg.Runner.HasChecker(), timeout: b.hang, legal: legal, lazy: it.lazy, tree: e.lazyTree(b.hang)})
	}
}

// run runs the batch's jobs on the workers (the prep runs first, when there are any). It only
// reads the explorer's configuration (and makes image names), so it may run beside the walk.
func (b *runningBatch) run(e *explorer) {
	if len(b.gen.preps) > 0 {
		var err error
		b.prepOut, err = exec.Map(b.runCtx(e), e.runs.pool, b.gen.preps, e.runJob)
		if err != nil {
			b.err, b.ended = err, e.pacer.now()
			return
		}
		b.jobs = b.gen.jobs(b.jobs, b.prepOut)
		b.planImages(e)
	}
	// The legal outcomes' runs start before the crash images': a second run of one, made
	// after them, then differs from its first run wherever theirs could (vary.go).
	pool := e.runs.pool
	pool.First = b.oracles
	b.outs, b.err = exec.Map(b.runCtx(e), pool, b.jobs, func(ctx context.Context, w *exec.Worker, j job) outcome {
		if b.allow > 0 && (e.pacer.now().Sub(b.began) >= b.allow || e.pacer.testClock && e.pacer.ended()) {
			// Past the overrun bound, or (on a test's clock, which has no deadline) the
			// schedule's end: the run is not begun.
			b.cancel()
			return outcome{}
		}
		return e.runJob(ctx, w, j)
	})
	b.ended = e.pacer.now()
}

// finish waits for the batch handed to the workers, if any, judges its crash images in order and
// removes its images. Runs on the walk's goroutine. The states whose runs (or legal outcomes'
// runs) the time budget's end stopped are not judged (explorer.budgetStopped).
func (e *explorer) finish() error {
	b := e.runs.running
	if b == nil {
		return nil
	}
	e.runs.running = nil
	if b.done != nil {
		<-b.done
	}
	cut := b.err != nil && b.ctx != nil && b.ctx.Err() != nil && e.ctx.Err() == nil
	if b.cancel != nil {
		b.cancel()
	}
	// A batch cut short is measured by the share of its crash images run.
	ran := 1.0
	if cut {
		ran = b.ranShare()
	}
	e.pacer.measured(b.ended.Sub(b.began), int(ran*float64(len(b.items))), ran*b.cost)
	// Images are consumed: remove whatever is left of this batch; its crash points are done.
	defer func() {
		e.prog.Advance(b.points - e.runs.fellBack) // the fallback walk covers those
		e.runs.fellBack = 0
		st := &e.res.Stats
		e.prog.Figures(exec.Figures{States: st.StatesTested, Failed: st.Failures, Findings: len(e.res.Findings)})
		for _, j := range b.gen.preps {
			os.Remove(j.image)
		}
		for _, j := range b.jobs {
			os.Remove(j.image)
		}
		for _, f := range b.pointFiles {
			os.Remove(f)
		}
		for _, p := range b.periods {
			os.Remove(p.before)
			if p.after != "" {
				os.Remove(p.after)
			}
		}
	}()
	// The runs stopped at the time budget's end (Options.TimeBudget), or at their batch's overrun,
	// are left out, not an error.
	budgetEnded := b.err != nil && (e.budgetEnded() || cut)
	if budgetEnded {
		b.err = nil
	}
	if len(b.gen.preps) > 0 {
		if b.prepOut != nil {
			e.res.Stats.PrepRuns += len(b.gen.preps)
		}
		if b.outs == nil {
			if budgetEnded {
				e.pacer.budgetStopped += len(b.items)
			}
			return b.err // the prep runs were interrupted
		}
	}
	outs, err := b.outs, b.err
	// The consistent images come first: a program (or checker) that fails on them cannot judge
	// any crash image.
	for _, p := range b.periods {
		pr := b.seqs[p]
		if pr == nil {
			continue
		}
		for _, k := range []int{pr.before, pr.after} {
			if k < 0 || !outs[k].done {
				continue
			}
			if cerr := e.consistent(p, k == pr.after, outs[k]); cerr != nil {
				return cerr
			}
		}
	}
	interrupted := err != nil || budgetEnded
	var unjudged map[int]bool // their legal outcomes' second runs were interrupted (vary.go)
	if !interrupted {
		unjudged, err = b.learnVariance(e, outs)
		if err == nil {
			// Runs stopped early whose stop the variances learned no longer decide (early.go).
			var again map[int]bool
			again, err = b.rerunUndecided(e, outs)
			for i := range again {
				if unjudged == nil {
					unjudged = map[int]bool{}
				}
				unjudged[i] = true
			}
		}
		if err != nil && e.budgetEnded() {
			// Stopped at the budget's end: the states that needed the second runs are left
			// out, the others judged.
			budgetEnded, err = true, nil
		}
		interrupted = err != nil || budgetEnded
	}
	for i := 0; i < b.oracles; i++ {
		if outs[i].done {
			e.res.Stats.OracleRuns++
			if t := outs[i].target; t.Completed() {
				e.runs.longestConsistent = max(e.runs.longestConsistent, t.Duration)
			}
		}
	}
	for _, o := range outs[b.oracles:] {
		st := &e.res.Stats
		if o.convergedAgain {
			st.ConvergedAgain++
		} else if o.done && o.target.ConvergedTo > 0 && o.target.Diverged == 0 {
			st.Converged++
			st.ConvergedSeconds += o.convergeSaved.Seconds()
		}
	}
	for i, it := range b.items {
		var ls legalSet
		got := outs[b.jobOf[i]]
		ready := got.done
		if pr := b.seqs[it.per]; pr != nil {
			ls.rolledBack = outs[pr.before].target
			ready = ready && outs[pr.before].done
			if pr.after >= 0 {
				ls.committed = &outs[pr.after].target
				ready = ready && outs[pr.after].done
			}
			for _, l := range it.lins {
				if l.cut != nil {
					k := pr.cuts[l.cut]
					ls.others = append(ls.others, namedOutcome{name: l.String(), out: outs[k].target})
					ready = ready && outs[k].done
				}
			}
		} else {
			ls = b.gen.legal(it, b.genIdx[i], outs, b.prepOut)
			ready = ready && !interrupted // the legal outcomes of overlapping operations are many
		}
		ready = ready && !unjudged[i]
		if e.found.sampledOut(it.smp) {
			// Sampled with every state judged before it (judge.go): as if never run.
			e.res.Stats.Sampled++
			continue
		}
		if !ready {
			if budgetEnded {
				e.pacer.budgetStopped++
				if cut && !e.budgetEnded() {
					e.pacer.keepRetry(it)
				}
				continue
			}
			if got.done {
				// Interrupted before its legal outcomes ran: run, but not judged.
				e.res.Stats.StatesTested++
				e.res.Stats.Inconclusive++
				e.logState(it)
			}
			continue
		}
		if it.lazy != nil {
			e.judgeLazy(it, got, ls) // its leaves, each a state
			continue
		}
		e.res.Stats.StatesTested++
		e.judge(it, got, ls)
		e.logState(it)
	}
	return err
}

// consistent checks the run of the target (and checker) on a consistent image of period p:
// before its operation or, with after, at its end. A run that failed by itself, or a checker
// that rejected the image, is an error quoting the program's standard error: scry cannot tell
// crash bugs from a target that cannot run at all (a wrong working directory, a pool it cannot
// reopen, a broken checker).
func (e *explorer) consistent(p *period, after bool, o outcome) error {
	op := p.ops[0]
	where := fmt.Sprintf("the pool as the recorded run left it before operation %d (%q)", op, e.cfg.Workload.Ops[op])
	if after {
		where = fmt.Sprintf("the pool as the recorded run left it after operation %d (%q)", op, e.cfg.Workload.Ops[op])
	}
	if c := o.checker; c != nil && c.Failed() {
		return fmt.Errorf("the checker fails on a consistent image (%s): it %s%s; a checker must accept the images of the uncrashed run", where, c.Describe(), quoteStderr(c.Stdout, c.Stderr))
	}
	if t := o.target; t.Failed() {
		return fmt.Errorf("the program fails on a consistent image (%s): it %s%s; crash images cannot be judged when the uncrashed pool fails too: the program must reopen an existing pool and go on with the rest of the workload, in the directory scry was started in", where, t.Describe(), quoteStderr(nil, t.Stderr))
	}
	return nil
}

// quoteStderr quotes the first lines of a run's standard error (else of out) for an error
// message: "; its standard error: ..." or "".
func quoteStderr(out, stderr []byte) string {
	lines := exec.OutputLines(stderr, out, 5)
	if len(lines) == 0 {
		return ""
	}
	q := strings.Join(lines, "\n    ")
	if len(q) > 1000 {
		q = q[:1000] + "..."
	}
	return "; it printed:\n    " + q
}

// runJob runs one job in the worker's directory: the checker on a copy of the image (so that
// it sees the raw crash image and cannot change what the target sees), then the target on the
// image itself, which the job owns.
func (e *explorer) runJob(ctx context.Context, w *exec.Worker, j job) outcome {
	defer e.prog.Ran()
	var out outcome
	if j.copyFrom != "" {
		if !j.keep {
			// A working copy of the worker's, made equal to the source by writing what
			// differs, instead of a fresh copy per run (storage.go).
			j.image = e.runs.copies.get(e.runs.tmp)
			defer e.runs.copies.put(j.image)
		}
		if err := j.makeImage(&e.runs.copies); err != nil {
			out.target = exec.Outcome{ExitCode: -1, Err: err}
			if j.keep {
				os.Remove(j.image)
			}
			return out
		}
	}
	if j.checker {
		cp := filepath.Join(w.Dir, "check.img")
		if err := exec.CopyFile(cp, j.image); err != nil {
			co := exec.Outcome{ExitCode: -1, Err: err}
			out.checker = &co
		} else if co, ok := e.cfg.Runner.Checker(ctx, cp, w.Dir); ok {
			out.checker = &co
		}
		os.Remove(cp)
	}
	if j.lazy != nil {
		out.lazy = e.lazyRun(ctx, w, j, j.image)
		out.target, out.done = out.lazy.Root, ctx.Err() == nil
		return out
	}
	if or, ok := e.cfg.Runner.(OutputRunner); ok && j.outputs {
		out.target, out.outputs = or.TargetOutputs(ctx, j.image, j.stdin, w.Dir, j.timeout)
		out.done = ctx.Err() == nil
		return out
	}
	conv, legal := e.converge(ctx, w, j)
	out.target = e.cfg.Runner.Target(exec.WithConverge(e.withLegal(ctx, j), conv), j.image, j.stdin, w.Dir, j.timeout)
	if out.target.ConvergedTo > 0 && out.target.Diverged == 0 { // a diverged run's verdict stands
		if got, saved := converged(out.target, legal); got != nil {
			out.target, out.convergeSaved = *got, saved
		} else {
			// Its output so far disagrees with the legal outcome it converged with: run the
			// image again, in full.
			out.convergedAgain = true
			if err := j.makeImage(&e.runs.copies); err != nil {
				out.target = exec.Outcome{ExitCode: -1, Err: err}
				return out
			}
			out.target = e.cfg.Runner.Target(e.withLegal(ctx, j), j.image, j.stdin, w.Dir, j.timeout)
		}
	}
	if j.publish != nil && ctx.Err() == nil {
		j.publish.publish(j.publishAs, out.target)
	}
	if !j.keep && j.copyFrom == "" {
		os.Remove(j.image)
	}
	out.done = ctx.Err() == nil
	return out
}

// overrun bounds the runs of batch b, handed to the workers now, under a time budget. The cost
// per state of one kind of operation can be a hundred times another's (CCEH's split states hang
// until the hang bound, a second each, where an insert's run in a hundredth of a second), and the
// pacing (pace) learns it only when a batch of that kind is judged: a batch of such states,
// chosen at the cheaper kinds' cost, would hold the walk for the rest of the budget and leave the
// rest of the exploration (the other paths, the later rounds) nothing. So the batch's runs may
// take the time the schedule has left when it begins (L) less the estimated time of the rest, the
// crash points not yet reached at the cost per estimated state measured so far (R), at least
// BatchOverrun times its own estimated time (its states at that cost: the pacing chose them to
// fit) and 1/BudgetBatches of the schedule; the runs still going then are stopped (and retried
// by the remainder walk if the walks end early, retry.go). A batch whose cost was estimated
// right ends long before. The states of the runs stopped are
// not judged (explorer.budgetStopped), like those stopped at the budget's end; the pacing
// measures the batch by the share of its images run (handed out shuffled, exec.Pool: a sample
// of all its points). No bound before a cost per state is measured; on a test's clock
// (Options.Now) the runs past it are not begun.
func (p *pacer) overrun(b *runningBatch, runCtx context.Context) {
	d := p.budget
	if d <= 0 || p.ranStates == 0 || p.ranCost == 0 {
		return
	}
	b.allow = overrunBound(budget.ScheduleEnd(d), b.began.Sub(p.budgetStart), p.ranTime.Seconds()/p.ranCost, b.cost, max(p.allCost-p.visitedCost, 0))
	if p.testClock {
		// A test's clock: no deadline on the wall clock; a run past the bound is not begun.
		b.ctx, b.cancel = context.WithCancel(runCtx)
		return
	}
	b.ctx, b.cancel = context.WithDeadline(runCtx, b.began.Add(b.allow))
}

// BatchOverrun is the multiple of its estimated time a batch's runs may always take under a time
// budget (pacer.overrun).
const BatchOverrun = 4

// overrunBound is overrun's bound of a batch of estimated cost c (crash states) that begins
// spent into a schedule ending at end, when an estimated state costs per seconds and the crash
// points not yet reached cost rest.
func overrunBound(end, spent time.Duration, per, c, rest float64) time.Duration {
	left := end - spent
	need := time.Duration(per * rest * float64(time.Second))
	own := time.Duration(BatchOverrun * per * c * float64(time.Second))
	return max(left-need, own, end/BudgetBatches)
}

// runCtx is the context of b's runs: its overrun bound's, else the explorer's (runCtx).
func (b *runningBatch) runCtx(e *explorer) context.Context {
	if b.ctx != nil {
		return b.ctx
	}
	return e.runs.runCtx
}

// ranShare is the share of b's crash images whose runs ended (1 when it has none).
func (b *runningBatch) ranShare() float64 {
	if len(b.outs) <= b.oracles {
		if b.outs == nil && len(b.items) > 0 {
			return 0
		}
		return 1
	}
	done := 0
	for _, o := range b.outs[b.oracles:] {
		if o.done {
			done++
		}
	}
	return float64(done) / float64(len(b.outs)-b.oracles)
}
