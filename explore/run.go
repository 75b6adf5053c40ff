package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/scry-pm/scry/crash"
	"github.com/scry-pm/scry/exec"
)

func numCPU() int { return runtime.NumCPU() }

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
}

// outcome is a job's result; done is set when the job ran to its end (not interrupted).
type outcome struct {
	target  exec.Outcome
	checker *exec.Outcome
	done    bool
}

// flush runs the current batch: the oracle runs of every busy period with crash images (the
// periods are complete: a batch is flushed when no operation is in flight, or at the end of
// the walk), then every crash image, on exec.Map's workers; then judges the crash images in
// order. A period of one operation has two oracle runs, on its consistent images before and
// after the operation; a period of overlapping operations first has its prep runs (oracles.go),
// in a first round.
func (e *explorer) flush() error {
	if len(e.batch) == 0 {
		return nil
	}
	batch, pointFiles := e.batch, e.pointFiles
	e.batch, e.pointFiles, e.batchBytes, e.pointEvent, e.pointBase, e.pointDelta = nil, nil, 0, ^uint64(0), "", nil
	var jobs []job
	type pair struct{ before, after int }
	seqs := map[*period]*pair{}
	var periods []*period
	gen := &generalOracles{e: e, pkeys: map[string]int{}, rkeys: map[string]int{}}
	genIdx := make([][]int, len(batch))
	for i, it := range batch {
		p := it.per
		if !p.sequential() {
			if _, ok := seqs[p]; !ok {
				seqs[p] = nil
				periods = append(periods, p)
			}
			genIdx[i] = gen.add(it)
			continue
		}
		if _, ok := seqs[p]; ok {
			continue
		}
		periods = append(periods, p)
		pr := &pair{before: len(jobs), after: -1}
		chk := e.cfg.Runner.HasChecker()
		// The run on the consistent image before the operation works on a copy: the crash
		// images of the period start from that file.
		jobs = append(jobs, job{image: e.newImage("rolled-back"), copyFrom: p.before, stdin: e.cfg.Workload.Suffix(it.op), checker: chk})
		if p.after != "" {
			pr.after = len(jobs)
			jobs = append(jobs, job{image: p.after, stdin: e.cfg.Workload.Suffix(it.op), checker: chk})
		} else {
			e.warn("the trace ends inside an operation (no OP_END): its crash states are compared with the rolled-back outcome only")
		}
		seqs[p] = pr
	}
	// Images are consumed: remove whatever is left of this batch.
	defer func() {
		for _, j := range gen.preps {
			os.Remove(j.image)
		}
		for _, j := range jobs {
			os.Remove(j.image)
		}
		for _, f := range pointFiles {
			os.Remove(f)
		}
		for _, p := range periods {
			os.Remove(p.before)
			if p.after != "" {
				os.Remove(p.after)
			}
		}
	}()
	var prepOut []outcome
	if len(gen.preps) > 0 {
		var err error
		prepOut, err = exec.Map(e.ctx, e.cfg.Exec, gen.preps, e.runJob)
		if err != nil {
			return err
		}
		e.res.Stats.PrepRuns += len(gen.preps)
	}
	jobs = gen.jobs(jobs, prepOut)
	oracles := len(jobs)
	// Each distinct image runs once (dedupe.go): jobOf[i] is the job whose outcome judges item
	// i, its own, an earlier item's with the same image and input, or, for an image that is the
	// consistent image before a sequential operation, that image's rolled-back run.
	jobOf := make([]int, len(batch))
	byKey := map[string]int{}
	for i, it := range batch {
		if pr := seqs[it.per]; pr != nil && it.isBase {
			jobOf[i] = pr.before
			e.res.Stats.Reused++
			continue
		}
		if it.key != "" {
			if j, ok := byKey[it.key]; ok {
				jobOf[i] = j
				e.res.Stats.Reused++
				continue
			}
			byKey[it.key] = len(jobs)
		}
		jobOf[i] = len(jobs)
		jobs = append(jobs, job{image: it.image, copyFrom: it.base, patches: it.patches, stdin: e.cfg.Workload.Suffix(it.next - 1), checker: e.cfg.Runner.HasChecker()})
	}
	outs, err := exec.Map(e.ctx, e.cfg.Exec, jobs, e.runJob)
	// The consistent images come first: a program (or checker) that fails on them cannot judge
	// any crash image.
	for _, p := range periods {
		pr := seqs[p]
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
	interrupted := err != nil
	for i := 0; i < oracles; i++ {
		if outs[i].done {
			e.res.Stats.OracleRuns++
		}
	}
	for i, it := range batch {
		var ls legalSet
		got := outs[jobOf[i]]
		ready := got.done
		if pr := seqs[it.per]; pr != nil {
			ls.rolledBack = outs[pr.before].target
			ready = ready && outs[pr.before].done
			if pr.after >= 0 {
				ls.committed = &outs[pr.after].target
				ready = ready && outs[pr.after].done
			}
		} else {
			ls = gen.legal(it, genIdx[i], outs)
			ready = ready && !interrupted // the legal outcomes of overlapping operations are many
		}
		if !ready {
			if got.done {
				// Interrupted before its legal outcomes ran: run, but not judged.
				e.res.Stats.StatesTested++
				e.res.Stats.Inconclusive++
			}
			continue
		}
		e.res.Stats.StatesTested++
		e.judge(it, got, ls)
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
	lines := outputLines(stderr, out, 5)
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
	var out outcome
	if j.copyFrom != "" {
		err := exec.CopyFile(j.image, j.copyFrom)
		if err == nil {
			err = crash.ApplyPatches(j.image, j.patches)
		}
		if err != nil {
			out.target = exec.Outcome{ExitCode: -1, Err: err}
			os.Remove(j.image)
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
	out.target = e.cfg.Runner.Target(ctx, j.image, j.stdin, w.Dir)
	if !j.keep {
		os.Remove(j.image)
	}
	out.done = ctx.Err() == nil
	return out
}
