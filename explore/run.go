package explore

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/scry-pm/scry/exec"
)

func numCPU() int { return runtime.NumCPU() }

// job is one run of a batch: the target on an image with a standard input, optionally the
// checker first (crash images only).
type job struct {
	image   string
	stdin   []byte
	checker bool
}

// outcome is a job's result.
type outcome struct {
	target  exec.Outcome
	checker *exec.Outcome
}

// flush runs the current batch: the two oracle runs of every operation with crash images (the
// operations are complete: a batch is flushed at an OP_END or at the end of the walk), then
// every crash image, on exec.Map's workers; then judges the crash images in order.
func (e *explorer) flush() error {
	if len(e.batch) == 0 {
		return nil
	}
	batch := e.batch
	e.batch = nil
	var jobs []job
	type pair struct{ before, after int }
	ops := map[int]*pair{}
	var opOrder []int
	for _, it := range batch {
		if ops[it.op] != nil {
			continue
		}
		o := e.oracles[it.op]
		p := &pair{before: len(jobs), after: -1}
		jobs = append(jobs, job{image: o.before, stdin: e.cfg.Workload.Suffix(it.op)})
		if o.after != "" {
			p.after = len(jobs)
			jobs = append(jobs, job{image: o.after, stdin: e.cfg.Workload.Suffix(it.op)})
		} else {
			e.warn("the trace ends inside an operation (no OP_END): its crash states are compared with the rolled-back outcome only")
		}
		ops[it.op] = p
		opOrder = append(opOrder, it.op)
	}
	first := len(jobs)
	for _, it := range batch {
		jobs = append(jobs, job{image: it.image, stdin: e.cfg.Workload.Suffix(it.op), checker: e.cfg.Checker != nil})
	}
	outs, err := exec.Map(e.ctx, e.cfg.Exec, jobs, e.runJob)
	// Images are consumed: remove whatever is left of this batch.
	for _, j := range jobs {
		os.Remove(j.image)
	}
	for _, k := range opOrder {
		delete(e.oracles, k)
	}
	if err != nil {
		return err
	}
	e.res.Stats.OracleRuns += first
	for i, it := range batch {
		p := ops[it.op]
		rb := outs[p.before].target
		var cm *exec.Outcome
		if p.after >= 0 {
			cm = &outs[p.after].target
		}
		e.res.Stats.StatesTested++
		e.judge(it, outs[first+i], cm, rb)
	}
	return nil
}

// runJob runs one job in the worker's directory: the checker on a copy of the image (so that
// it sees the raw crash image and cannot change what the target sees), then the target on the
// image itself, which the job owns.
func (e *explorer) runJob(ctx context.Context, w *exec.Worker, j job) outcome {
	var out outcome
	if j.checker {
		cp := filepath.Join(w.Dir, "check.img")
		if err := exec.CopyFile(cp, j.image); err != nil {
			co := exec.Outcome{ExitCode: -1, Err: err}
			out.checker = &co
		} else {
			co := e.cfg.Checker.Run(ctx, cp, w.Dir)
			out.checker = &co
		}
		os.Remove(cp)
	}
	out.target = e.cfg.Target.Run(ctx, j.image, j.stdin, w.Dir)
	os.Remove(j.image)
	return out
}
