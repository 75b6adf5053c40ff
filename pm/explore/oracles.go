package explore

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
)

// Legal outcomes: durable linearizability.
//
// The oracle is Izraelevitz, Mendes and Scott's durable linearizability ("Linearizability of
// Persistent Memory Objects Under a Full-System-Crash Failure Model", DISC'16, §3): after a
// full-system crash, what recovery shows must be explained by a linearization of the history
// cut at the crash that holds every operation completed before it, in an order consistent with
// real time (an operation that ended before another began comes first), and any subset of the
// operations still in flight. WITCHER's output equivalence (SOSP'21, §4.5, §4.7) is how a state is
// compared with such a linearization: the program runs the rest of the workload on the crash
// image, and the outcome (exit status, filtered standard output) must be that of a crash-free run
// applying the linearization and then the same rest.
//
// At a crash point of a busy period (from the last moment no operation was in flight), D are the
// period's operations ended before the point, F the M operations in flight, N those not begun
// (the crash-image run's input). The legal outcomes are:
//
//   - for every subset S of F, every order of D ∪ S consistent with real time among them (a before
//     b when a's OP_END precedes b's OP_BEGIN in the trace; an operation in flight precedes
//     nothing), applied to the consistent image at the period's start, then N;
//   - an operation made of several PMDK transactions is durable at each of them (PMDK's mapcli
//     inserts the K random keys of `n K` one transaction each): for an operation x of F and each
//     outermost transaction it committed before the point (crash.TxEnd, its nth), the consistent
//     image at that TX_END, then, for every subset S of F other than x, every order consistent
//     with real time of S and of the operations of D that had not ended by then, then N: "x
//     applied up to its nth transaction". The image holds x's transactions so far and the
//     operations ended before it in the order they ran; it is used only when no other operation
//     in flight had written to PM by then (crash.CrashPoint.Quiet), so that it holds nothing of
//     theirs, and the operations applied after it come after x's nth transaction, as their
//     writes did. A period of one operation has no order to choose: its legal outcomes are
//     rolled back (the image at its OP_BEGIN), committed (at its OP_END) and applied up to each
//     transaction committed before the point.
//
// Today's predecessor applied D in OP_END order: too strict, since an operation in flight may
// have taken effect before one that ended (it began first and was linearized first), which the
// real run allows, and operations of D that overlapped may have taken effect in either order.
//
// Counts. With D empty, the M operations of F give P(M,0) + P(M,1) + ... + P(M,M) orders (2 for M
// = 1, 5 for M = 2, 16 for 3, 65 for 4), as before: MaxInFlight (default 4) bounds them to 65
// when the period's ended operations are ordered by real time among themselves and before those
// in flight (the common case: they ended before the in-flight ones began). Ended operations that
// overlapped add their orders, up to Σ_k C(M,k)·(|D|+k)! when every operation overlaps every
// other, and each transaction cut adds the orders of what follows it; so a crash point of a
// period of several operations whose legal outcomes number more than MaxLegalOutcomes is skipped
// (Stats.SkippedConcurrent, with a warning), counted as the enumeration goes (it stops at the
// bound). A period of one operation has 2 + (its transactions committed before the point) and is
// never skipped: its partial outcomes cost one run per transaction, as its crash points do.
//
// A legal outcome of a period of several operations is computed from its base image (the
// period's start, or a transaction cut) in two runs of the target: a prep run applies the
// linearization's sequence, read from standard input, and leaves the image it wrote; the oracle
// run applies N to a copy of it. Prep runs are cached per (base, sequence) and oracle runs per
// (base, sequence, first operation of N) within a batch: crash points of a period sharing D and
// F, and sequences shared between configurations, cost nothing more. A period of one operation
// keeps its oracles read off the trace: no prep run.

// DefaultMaxInFlight caps the operations in flight at an explored crash point: 4 operations
// with nothing else to order need 65 legal outcomes.
const DefaultMaxInFlight = 4

// MaxLegalOutcomes bounds the legal outcomes of a crash point of a period of several operations
// (above): a point that needs more is skipped.
const MaxLegalOutcomes = 256

// legalCount returns P(m,0) + ... + P(m,m) in decimal: the orders of every subset of m
// operations in flight, none of them ordered by real time.
func legalCount(m int) string {
	total, term := big.NewInt(1), big.NewInt(1)
	for k := 1; k <= m; k++ {
		term.Mul(term, big.NewInt(int64(m-k+1)))
		total.Add(total, term)
	}
	return total.String()
}

// span is an operation of a busy period as real-time order sees it: the trace events of its
// OP_BEGIN and OP_END (end: inFlight while it runs).
type span struct {
	op         int
	begin, end uint64
}

const inFlight = ^uint64(0)

// precedes reports whether a must come before b in every linearization: a ended before b began.
func (a span) precedes(b span) bool { return a.end < b.begin }

// txCut is a durable point inside an operation (crash.TxEnd): the consistent image at the TX_END
// of its nth outermost committed transaction, as a file (a point's own, when the pages changed
// since the period began were too many) or as patches over the period's image.
type txCut struct {
	op, nth int
	event   uint64
	quiet   bool
	file    string
	patches []crash.Patch
}

// linearization is one legal outcome's recipe: from the period's image (cut nil) or a
// transaction cut, apply seq.
type linearization struct {
	cut *txCut
	seq []int
}

// String names the linearization as findings do: "operations 3 then 5 applied", "operation 3
// applied up to its 2nd transaction, then 5", "none applied".
func (l linearization) String() string {
	if l.cut == nil {
		if len(l.seq) == 0 {
			return "no operation applied"
		}
		return "operations applied: " + opsText(l.seq)
	}
	s := fmt.Sprintf("operation %d applied up to its %s transaction", l.cut.op, ordinal(l.cut.nth))
	if len(l.seq) > 0 {
		s += ", then " + opsText(l.seq)
	}
	return s
}

// ordinal writes n as "1st", "2nd", "3rd", "4th", ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// linearizations returns the legal linearizations of a crash point (above): done are the period's
// operations ended before it (in OP_END order), inflight those in flight (in OP_BEGIN order), cuts
// the transaction cuts to use (of operations in flight, before the point, in trace order). The
// whole operations come first: for every subset S of inflight, by size, then in lexicographic
// order of positions, the orders of done ∪ S consistent with real time, in lexicographic order of
// their positions in done then inflight (so the first of S = {} applies done in OP_END order and
// the first of S = inflight applies them in the order they began after done); then each cut's.
// It stops once it has more than limit (the caller skips such a point).
func linearizations(done, inflight []span, cuts []*txCut, limit int) []linearization {
	var out []linearization
	emit := func(cut *txCut, elems []span) bool {
		return extensions(elems, func(seq []int) bool {
			out = append(out, linearization{cut: cut, seq: slices.Clone(seq)})
			return len(out) <= limit
		})
	}
	subsets := func(from []span, fixed []span, cut *txCut) bool {
		for _, pick := range combinations(len(from)) {
			elems := slices.Clone(fixed)
			for _, i := range pick {
				elems = append(elems, from[i])
			}
			if !emit(cut, elems) {
				return false
			}
		}
		return true
	}
	if !subsets(inflight, done, nil) {
		return out
	}
	for _, c := range cuts {
		var rest, others []span
		for _, d := range done {
			if d.end > c.event {
				rest = append(rest, d)
			}
		}
		for _, f := range inflight {
			if f.op != c.op {
				others = append(others, f)
			}
		}
		if !subsets(others, rest, c) {
			return out
		}
	}
	return out
}

// combinations returns every subset of {0..n-1} as sorted positions: by size, each size in
// lexicographic order.
func combinations(n int) [][]int {
	out := [][]int{{}}
	for k := 1; k <= n; k++ {
		var cur []int
		var rec func(from int)
		rec = func(from int) {
			if len(cur) == k {
				out = append(out, slices.Clone(cur))
				return
			}
			for i := from; i < n; i++ {
				cur = append(cur, i)
				rec(i + 1)
				cur = cur[:len(cur)-1]
			}
		}
		rec(0)
	}
	return out
}

// extensions calls fn with every order of elems consistent with real time (their linear
// extensions), in lexicographic order of positions in elems, as operation indices; it stops and
// returns false when fn does. An element may come next when it begins before every remaining
// element ends (no remaining one precedes it): O(n) a step.
func extensions(elems []span, fn func(seq []int) bool) bool {
	n := len(elems)
	used := make([]bool, n)
	seq := make([]int, 0, n)
	var rec func() bool
	rec = func() bool {
		if len(seq) == n {
			return fn(seq)
		}
		minEnd := inFlight
		for i, e := range elems {
			if !used[i] {
				minEnd = min(minEnd, e.end)
			}
		}
		for i, e := range elems {
			if used[i] || e.begin > minEnd {
				continue
			}
			used[i] = true
			seq = append(seq, e.op)
			ok := rec()
			seq = seq[:len(seq)-1]
			used[i] = false
			if !ok {
				return false
			}
		}
		return true
	}
	return rec()
}

// pointLegal computes the legal linearizations of crash point cp of period p (in flight: the
// point's operations in flight) and reports whether the point can be explored: false, with a
// warning, when a period of several operations needs more than MaxLegalOutcomes. The cuts
// considered are those of operations in flight before the point; in a period of several
// operations, those where another operation in flight had written to PM are left out (txCut.quiet).
func (e *explorer) pointLegal(p *period, cp *crash.CrashPoint, inflight []int) ([]linearization, bool) {
	var done, fl []span
	for _, d := range p.ended {
		done = append(done, span{op: d, begin: p.begins[d], end: p.ends[d]})
	}
	for _, f := range inflight {
		fl = append(fl, span{op: f, begin: p.begins[f], end: inFlight})
	}
	var cuts []*txCut
	for _, c := range p.cuts {
		if c.event < cp.Event && slices.Contains(inflight, c.op) && (c.quiet || len(done)+len(fl) == 1) {
			cuts = append(cuts, c)
		}
	}
	if len(done)+len(fl) == 1 {
		return linearizations(done, fl, cuts, len(cuts)+2), true
	}
	lins := linearizations(done, fl, cuts, MaxLegalOutcomes)
	if len(lins) > MaxLegalOutcomes {
		e.warn(fmt.Sprintf("crash points whose legal outcomes (the orders of their ended and in-flight operations consistent with real time, and of what follows each transaction of an operation in flight) number more than %d are not explored", MaxLegalOutcomes))
		e.res.Stats.SkippedConcurrent++
		return nil, false
	}
	return lins, true
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

// namedOutcome is one legal outcome beside the committed and rolled-back ones, named by its
// linearization.
type namedOutcome struct {
	name string
	out  exec.Outcome
}

// legalSet is what a crash-image run is compared with: the rolled-back outcome (no in-flight
// operation applied), the committed one (nil when the trace ends inside the operation of a
// sequential period) and the others: a period's operations cut after one of their transactions,
// and, for overlapping operations, every other linearization.
type legalSet struct {
	rolledBack exec.Outcome
	committed  *exec.Outcome
	others     []namedOutcome
	general    bool // overlapping operations: the legal outcomes come from prep runs
	// excluded counts the linearizations left out because a completed operation printed
	// something else in them than in the recorded run (responses.go); rolledBackAs names the
	// outcome in rolledBack when none without the in-flight operations was left.
	excluded     int
	rolledBackAs string
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

// name says which legal outcome all()[i] is, for messages, for a state during operation op.
func (l legalSet) name(i, op int) string {
	switch {
	case i == 0 && l.rolledBackAs != "":
		return l.rolledBackAs
	case i == 0:
		return fmt.Sprintf("operation %d rolled back", op)
	case i == 1 && l.committed != nil:
		return fmt.Sprintf("operation %d committed", op)
	}
	if l.committed != nil {
		i--
	}
	if i-1 < len(l.others) {
		return l.others[i-1].name
	}
	return "a legal outcome"
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
	lin    linearization
	next   int // the first operation the oracle run applies
	prep   int // index into the batch's prep jobs, -1 when the sequence is empty
	job    int // index into the batch's jobs, -1 when its prep failed
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

// key names what a prep run of linearization l of period p computes: its base and sequence.
func (g *generalOracles) key(p *period, l linearization) string {
	base := "start"
	if c := l.cut; c != nil {
		base = fmt.Sprintf("cut%d.%d", c.op, c.nth)
	}
	return fmt.Sprintf("%p|%s|%v", p, base, l.seq)
}

// base returns the file and patches the image of linearization l of period p starts from.
func (l linearization) base(p *period) (string, []crash.Patch) {
	if c := l.cut; c != nil {
		if c.file != "" {
			return c.file, nil
		}
		return p.before, c.patches
	}
	return p.before, nil
}

// add returns the indices in g.runs of the legal outcomes of it, in the order of its
// linearizations (it.lins).
func (g *generalOracles) add(it *item) []int {
	var idx []int
	for _, l := range it.lins {
		// A prep run recorded to tell what its operations printed (responds) is another run than
		// the inert one of the same linearization: an item that needs the outputs must not
		// reuse the run of an earlier item that did not (a crash point before the operation
		// whose output is checked ended).
		pk := g.key(it.per, l)
		resp := len(l.seq) > 0 && g.responds(l, it.done)
		if resp {
			pk += "|outputs"
		}
		rk := fmt.Sprintf("%s|%d", pk, it.next)
		if i, ok := g.rkeys[rk]; ok {
			idx = append(idx, i)
			continue
		}
		r := &oracleRun{per: it.per, lin: l, next: it.next, prep: -1, job: -1}
		if len(l.seq) > 0 {
			i, ok := g.pkeys[pk]
			if !ok {
				i = len(g.preps)
				g.pkeys[pk] = i
				from, patches := l.base(it.per)
				g.preps = append(g.preps, job{image: g.e.newImage("prep"), copyFrom: from, patches: patches,
					stdin: g.e.cfg.Workload.Lines(l.seq), keep: true, outputs: resp})
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
		src, patches := r.lin.base(r.per)
		if r.prep >= 0 {
			po := prepOut[r.prep].target
			if po.Err != nil || po.TimedOut || po.Signal != 0 {
				r.failed = exec.Outcome{ExitCode: -1, Err: fmt.Errorf("the run applying %s to prepare the image %s", r.lin, po.Describe())}
				continue
			}
			src, patches = g.preps[r.prep].image, nil
		}
		r.job = len(jobs)
		jobs = append(jobs, job{image: g.e.newImage("oracle"), copyFrom: src, patches: patches, stdin: g.e.cfg.Workload.Suffix(r.next - 1)})
	}
	return jobs
}

// responds reports whether the prep run of linearization l must tell what its operations
// printed: the recorded run's operations printed something, and l applies an operation of done
// (a completed one, whose response it must agree with: responses.go).
func (g *generalOracles) responds(l linearization, done []int) bool {
	if g.e.plan == nil || len(g.e.plan.outputs) == 0 {
		return false
	}
	return slices.ContainsFunc(l.seq, func(op int) bool { return slices.Contains(done, op) })
}

// legal returns the legal outcomes of a general item from the runs' outcomes (prepOut the prep
// runs'): its linearizations, less those whose completed operations print something else than
// they printed in the recorded run (responses.go; all of them, with a warning, when none agrees).
// The rolled-back outcome is the first linearization left applying no operation in flight (the
// ended ones in OP_END order first), the committed one the first applying them all (in the order
// they began), the others named.
func (g *generalOracles) legal(it *item, idx []int, outs []outcome, prepOut []outcome) legalSet {
	ls := legalSet{general: true}
	get := func(i int) exec.Outcome {
		r := g.runs[i]
		if r.job < 0 {
			return r.failed
		}
		return outs[r.job].target
	}
	keep := make([]bool, len(it.lins))
	for n, l := range it.lins {
		var said map[int][]byte
		if r := g.runs[idx[n]]; r.prep >= 0 && r.prep < len(prepOut) {
			said = prepOut[r.prep].outputs
		}
		keep[n] = g.e.agrees(l, it.done, said)
		if !keep[n] {
			ls.excluded++
		}
	}
	if ls.excluded == len(it.lins) {
		g.e.warn("at some crash points no order of the operations gives the completed ones what they printed in the recorded run (their output varies between runs?): what completed operations printed is not compared there")
		ls.excluded = 0
		for n := range keep {
			keep[n] = true
		}
	}
	nd, rb := len(it.done), -1
	for n, l := range it.lins {
		if keep[n] && l.cut == nil && len(l.seq) == nd {
			rb = n
			break
		}
	}
	if rb < 0 {
		rb = slices.Index(keep, true)
		ls.rolledBackAs = it.lins[rb].String()
	}
	for n, l := range it.lins {
		if !keep[n] {
			continue
		}
		o := get(idx[n])
		switch {
		case n == rb:
			ls.rolledBack = o
		case l.cut == nil && len(l.seq) == nd+len(it.inflight) && ls.committed == nil:
			ls.committed = &o
		default:
			ls.others = append(ls.others, namedOutcome{name: l.String(), out: o})
		}
	}
	return ls
}
