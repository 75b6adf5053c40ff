package explore

import (
	"os"
	"slices"

	"github.com/scry-pm/scry/internal/exec"
)

// Output that varies between identical runs.
//
// A program that prints times, process ids, random keys (mapcli's `n`, seeded with the time)
// or hash-ordered output prints something else in every run, crash or no crash; comparing such
// output with the legal outcomes would make every crash state a failure. So before a crash
// state's run that matches no legal outcome by its output is judged a failure, each of its
// legal outcomes is run a second time on the same consistent image with the same input (once
// per legal outcome, in one round for the batch, whatever the number of states that need it),
// and what differs between the two runs (exec.LearnVariance: output fields, whole lines or a
// block of lines) is left out of every comparison with that outcome (exec.Outcome.Normalized).
// A divergence that two runs without a crash also show is therefore never reported, while a
// state that loses data on a line that also prints a time still fails on the fields that do
// not vary.
//
// The second run is made only when a comparison needs it, and after the crash states' runs:
// the first run of a legal outcome and its crash states' runs often start within the same
// second, so a program seeded with the time (srand(time(NULL))) prints the same keys in them,
// and a repeat made at once would find nothing varying, while the run it is needed for printed
// other keys a second later; a repeat made after that run differs from the first run wherever
// that run could. A program whose output does not vary costs nothing more.

// learnVariance runs a second time the legal outcomes (jobs of b, first runs in outs) of the
// batch's crash states whose runs match none of their legal outcomes by output, and gives each
// legal outcome that printed something else the second time its variance (outs is updated in
// place). Returns the items whose legal outcomes' second runs were interrupted (they cannot be
// judged) and the error of exec.Map (an interruption).
func (b *runningBatch) learnVariance(e *explorer, outs []outcome) (unjudged map[int]bool, err error) {
	var repeat []int // job indices of the legal outcomes to run again
	seen := map[int]bool{}
	needs := map[int][]int{} // item -> the legal outcomes it needs run again
	for i := range b.items {
		got := outs[b.jobOf[i]]
		if !got.done || got.target.Err != nil || got.checker != nil && got.checker.Failed() {
			continue
		}
		legal := b.legalJobs(i)
		var los []exec.Outcome
		ready := true
		for _, k := range legal {
			ready = ready && outs[k].done
			los = append(los, outs[k].target)
		}
		if !ready || !slices.ContainsFunc(got.runs(), func(o exec.Outcome) bool { return exec.Mismatch(o, los...) == exec.SymptomOutput }) {
			continue
		}
		for _, k := range legal {
			if b.jobs[k].copyFrom == "" || !outs[k].target.Completed() {
				continue
			}
			needs[i] = append(needs[i], k)
			if !seen[k] {
				seen[k] = true
				repeat = append(repeat, k)
			}
		}
	}
	if len(repeat) == 0 {
		return nil, nil
	}
	jobs := make([]job, len(repeat))
	for n, k := range repeat {
		j := b.jobs[k]
		jobs[n] = job{image: e.newImage("repeat"), copyFrom: j.copyFrom, patches: j.patches, stdin: j.stdin, timeout: j.timeout}
	}
	rs, err := exec.Map(e.runs.runCtx, e.runs.pool, jobs, e.runJob) // stopped at the budget's end too
	ran := map[int]bool{}
	for n, k := range repeat {
		os.Remove(jobs[n].image)
		if n >= len(rs) || !rs[n].done {
			continue
		}
		ran[k] = true
		e.res.Stats.RepeatRuns++
		if !rs[n].target.Completed() {
			continue
		}
		if v := exec.LearnVariance(outs[k].target, rs[n].target); v != nil {
			outs[k].target = outs[k].target.WithVariance(v)
			e.res.Stats.VaryingOutcomes++
			e.res.Stats.VaryingLines = max(e.res.Stats.VaryingLines, v.Lines())
		}
	}
	for i, ks := range needs {
		for _, k := range ks {
			if !ran[k] {
				if unjudged == nil {
					unjudged = map[int]bool{}
				}
				unjudged[i] = true
			}
		}
	}
	return unjudged, err
}

// legalJobs returns the jobs of b that give item i's legal outcomes (those whose run could be
// made: a general period's outcome whose prep run failed has none).
func (b *runningBatch) legalJobs(i int) []int {
	if pr := b.seqs[b.items[i].per]; pr != nil {
		ks := []int{pr.before}
		if pr.after >= 0 {
			ks = append(ks, pr.after)
		}
		for _, l := range b.items[i].lins {
			if l.cut != nil {
				ks = append(ks, pr.cuts[l.cut])
			}
		}
		return ks
	}
	var ks []int
	for _, r := range b.genIdx[i] {
		if k := b.gen.runs[r].job; k >= 0 {
			ks = append(ks, k)
		}
	}
	return ks
}
