package explore

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/scry-pm/scry/internal/exec"
)

// Legal outcomes of overlapping operations (WITCHER, SOSP'21, §4.7).
//
// When threads run operations concurrently, a crash point has a set D of operations ended
// (OP_END seen), a set F of M operations in flight (begun, not ended) and the operations not
// begun, N. A crash-consistent program recovers to a state where every operation of D took
// effect and each operation of F took effect entirely or not at all, in some linearization
// order; so the legal outcomes are, for every subset S of F and every order of S
// (P(M,0) + P(M,1) + ... + P(M,M) of them: 2 for M = 1, 5 for M = 2, 65 for M = 4), the
// outcome of a crash-free run applying D, then S in that order, then N. The crash-image run
// applies N to the crash image and must end like one of them.
//
// A legal outcome is computed from the consistent image at the start of the crash point's busy
// period (the last moment no operation was in flight: every earlier operation applied, none of
// the period's), in two runs of the target: a prep run applies the period's operations of D in
// their OP_END order, then S, reading them from standard input, and leaves the image it wrote;
// the oracle run then applies N to a copy of that image, and its outcome (exit status,
// filtered standard output) is the legal outcome: it prints what N prints, like the crash-image
// run. Both are cached per batch: a prep run per sequence of operations, an oracle run per
// (sequence, first operation of N), so crash points of a period sharing D and F, and
// sequences shared between configurations (D = {a}, S = {b} and D = {}, S = (a, b) apply the
// same operations in the same order), cost nothing more. A period of one operation (every
// period of a sequential workload) keeps the two oracles read off the trace (the images at its
// OP_BEGIN and OP_END): no prep run, two runs per operation.

// DefaultMaxInFlight caps the operations in flight at an explored crash point: 4 operations
// need 65 legal outcomes per configuration.
const DefaultMaxInFlight = 4

func (c *Config) maxInFlight() int {
	if c.MaxInFlight <= 0 {
		return DefaultMaxInFlight
	}
	return c.MaxInFlight
}

// legalCount returns P(m,0) + ... + P(m,m) in decimal.
func legalCount(m int) string {
	total, term := big.NewInt(1), big.NewInt(1)
	for k := 1; k <= m; k++ {
		term.Mul(term, big.NewInt(int64(m-k+1)))
		total.Add(total, term)
	}
	return total.String()
}

// orderedSubsets returns every order of every subset of ops: the empty sequence first, then by
// length, each length in lexicographic order of positions in ops (so the full sequence in the
// order of ops is the first of its length).
func orderedSubsets(ops []int) [][]int {
	var out [][]int
	used := make([]bool, len(ops))
	var cur []int
	var rec func(n int)
	rec = func(n int) {
		if len(cur) == n {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i, o := range ops {
			if used[i] {
				continue
			}
			used[i] = true
			cur = append(cur, o)
			rec(n)
			cur = cur[:len(cur)-1]
			used[i] = false
		}
	}
	for n := 0; n <= len(ops); n++ {
		rec(n)
	}
	return out
}

// opsText names a sequence of operations: "3 then 5", "none".
func opsText(ops []int) string {
	if len(ops) == 0 {
		return "none"
	}
	var parts []string
	for _, o := range ops {
		parts = append(parts, fmt.Sprint(o))
	}
	return strings.Join(parts, " then ")
}

// namedOutcome is one legal outcome of overlapping operations: which in-flight operations it
// applies, in which order.
type namedOutcome struct {
	name string
	out  exec.Outcome
}

// legalSet is what a crash-image run is compared with: the rolled-back outcome (no in-flight
// operation applied), the committed one (nil when the trace ends inside the operation of a
// sequential period) and, for overlapping operations, every other order of every subset of the
// in-flight operations.
type legalSet struct {
	rolledBack exec.Outcome
	committed  *exec.Outcome
	others     []namedOutcome
	general    bool // overlapping operations: the legal outcomes come from prep runs
}

func (l legalSet) all() []exec.Outcome {
	out := []exec.Outcome{l.rolledBack}
	if l.committed != nil {
		out = append(out, *l.committed)
	}
	for _, o := range l.others {
		out = append(out, o.out)
	}
	return out
}

// diffSize is the number of changed lines in a diff of Diff.
func diffSize(d string) int {
	n := 0
	for _, l := range strings.Split(d, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			n++
		}
	}
	return n
}

// oracleRun is one legal outcome of a general (multi-operation) period to compute.
type oracleRun struct {
	per    *period
	seq    []int // the operations the prep run applies (the period's ended ones, then S)
	next   int   // the first operation the oracle run applies
	prep   int   // index into the batch's prep jobs, -1 when seq is empty
	job    int   // index into the batch's jobs, -1 when its prep failed
	failed exec.Outcome
}

// generalOracles collects the oracle runs of a batch's general periods, deduplicated.
type generalOracles struct {
	e     *explorer
	preps []job
	pkeys map[string]int
	runs  []*oracleRun
	rkeys map[string]int
}

func (g *generalOracles) key(p *period, seq []int) string {
	return fmt.Sprintf("%p|%v", p, seq)
}

// add returns the indices in g.runs of the legal outcomes of it, in orderedSubsets order of
// its in-flight operations.
func (g *generalOracles) add(it *item) []int {
	var idx []int
	for _, s := range orderedSubsets(it.inflight) {
		seq := append(append([]int(nil), it.done...), s...)
		pk := g.key(it.per, seq)
		rk := fmt.Sprintf("%s|%d", pk, it.next)
		if i, ok := g.rkeys[rk]; ok {
			idx = append(idx, i)
			continue
		}
		r := &oracleRun{per: it.per, seq: seq, next: it.next, prep: -1, job: -1}
		if len(seq) > 0 {
			i, ok := g.pkeys[pk]
			if !ok {
				i = len(g.preps)
				g.pkeys[pk] = i
				g.preps = append(g.preps, job{image: g.e.newImage("prep"), copyFrom: it.per.before,
					stdin: g.e.cfg.Workload.Lines(seq), keep: true})
			}
			r.prep = i
		}
		g.rkeys[rk] = len(g.runs)
		idx = append(idx, len(g.runs))
		g.runs = append(g.runs, r)
	}
	return idx
}

// jobs appends the oracle runs whose prep succeeded to jobs (prepOut are the prep runs'
// outcomes) and returns the result.
func (g *generalOracles) jobs(jobs []job, prepOut []outcome) []job {
	for _, r := range g.runs {
		src := r.per.before
		if r.prep >= 0 {
			po := prepOut[r.prep].target
			if po.Err != nil || po.TimedOut || po.Signal != 0 {
				r.failed = exec.Outcome{ExitCode: -1, Err: fmt.Errorf("the run applying operations %s to prepare the image %s", opsText(r.seq), po.Describe())}
				continue
			}
			src = g.preps[r.prep].image
		}
		r.job = len(jobs)
		jobs = append(jobs, job{image: g.e.newImage("oracle"), copyFrom: src, stdin: g.e.cfg.Workload.Suffix(r.next - 1)})
	}
	return jobs
}

// legal returns the legal outcomes of a general item from the runs' outcomes.
func (g *generalOracles) legal(it *item, idx []int, outs []outcome) legalSet {
	ls := legalSet{general: true}
	get := func(i int) exec.Outcome {
		r := g.runs[i]
		if r.job < 0 {
			return r.failed
		}
		return outs[r.job].target
	}
	for n, s := range orderedSubsets(it.inflight) {
		o := get(idx[n])
		switch {
		case len(s) == 0:
			ls.rolledBack = o
		case len(s) == len(it.inflight) && ls.committed == nil:
			ls.committed = &o
		default:
			ls.others = append(ls.others, namedOutcome{name: "in-flight operations applied: " + opsText(s), out: o})
		}
	}
	return ls
}
