package fsmode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scry-pm/scry/exec"
	"github.com/scry-pm/scry/report"
)

// Kinds of file-system crash findings, in the catalogue (package analysis).
const (
	KindOrdering   = "fs-ordering-violation"
	KindAtomicity  = "fs-atomicity-violation"
	KindDurability = "fs-durability-violation"
)

// Kinds returns the catalogue entries of the file-system crash findings.
func Kinds() []report.Rule {
	return []report.Rule{
		{Kind: KindOrdering, Class: report.Correctness, Doc: "a crash state in which a file-system operation persisted while an earlier one did not fails the checker: the earlier operation must persist first (a missing fsync)"},
		{Kind: KindAtomicity, Class: report.Correctness, Doc: "a crash state in which a file-system operation, or a run of them, persisted in part fails the checker: the program assumes it persists whole"},
		{Kind: KindDurability, Class: report.Correctness, Doc: "a crash state that lost a file-system operation the program had already reported done on its output fails the checker: the output was printed before the data was durable"},
	}
}

// Strategy names (the PM ones where the meaning matches: package crash).
const (
	StrategyPrefix     = "prefix"     // every operation up to a crash point persisted (ALICE's across-syscall atomicity)
	StrategyOmitOne    = "omit-one"   // one operation lost, every later one up to a crash point persisted (ordering)
	StrategySplit      = "split"      // an operation persisted in part (atomicity)
	StrategyExhaustive = "exhaustive" // every legal state of the micro-operations since the last barrier, when few
)

// Strategies lists the strategy names; DefaultStrategies those run without --strategy
// (ALICE's default checks, Pillai et al., OSDI'14 §4.3).
var (
	Strategies        = []string{StrategyPrefix, StrategyOmitOne, StrategySplit, StrategyExhaustive}
	DefaultStrategies = []string{StrategyPrefix, StrategyOmitOne, StrategySplit}
)

// ExploreOptions configures Explore.
type ExploreOptions struct {
	APM        *APM
	Checker    exec.Checker
	Strategies []string // nil: DefaultStrategies
	// MaxStates bounds the states tested (0: no bound); the exhaustive strategy enumerates
	// at most 2^MaxPending states per crash point.
	MaxStates  int
	MaxPending int
	Pool       exec.Pool
	// Sites resolves the operations' sites and stacks (the trace reader after BuildModel).
	Sites report.SiteTable
}

// ErrCheckerFails is wrapped by the error Explore returns when the checker fails on the
// initial state or on the state of the finished run: those are consistent by definition, so the
// checker (or the workload) is wrong, and nothing it says about crash states can be trusted.
var ErrCheckerFails = errors.New("the checker fails on a consistent state")

type item struct {
	strategy string
	build    int
	st       State
	point    int // last logical operation issued
	a, b     int // ordering: a lost, b persisted; atomicity: a partial (b the end of a run)
	what     string
}

type verdict struct {
	failed bool
	detail string
	stdout string
	err    error
}

// Explored is what Explore found.
type Explored struct {
	Findings []report.Finding
	Stats    report.Stats
	Warnings []string
}

// Explore tests the crash states of model m that the strategies choose under the persistence
// model, with the checker run in each crash directory (ALICE, Pillai et al., OSDI'14 §4.3;
// Barowsky et al., Improving Application Crash Consistency with Symbolic Execution and Fuzzing,
// 2021, §4): prefix states find runs of operations that must persist atomically, states that
// lose one operation find the operations that must persist before later ones (a later output
// makes it a durability violation), states that persist part of one operation find atomicity
// assumptions. The checker first runs on the initial and the final state; failing there is
// ErrCheckerFails. Crash directories live in the pool's temporary directory and are removed
// when Explore returns, also when ctx is cancelled (then the error is ctx's, with the findings
// so far).
func Explore(ctx context.Context, m *Model, o ExploreOptions) (*Explored, error) {
	start := time.Now()
	strats := o.Strategies
	if len(strats) == 0 {
		strats = DefaultStrategies
	}
	for _, s := range strats {
		if !slices.Contains(Strategies, s) {
			return nil, fmt.Errorf("unknown strategy %q (known: %s)", s, strings.Join(Strategies, ", "))
		}
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 10
	}
	apm := o.APM
	builds := []Split{apm.Base}
	for _, sp := range apm.Splits {
		if sp != apm.Base {
			builds = append(builds, sp)
		}
	}
	micro := make([][]Micro, len(builds))
	for i, sp := range builds {
		micro[i] = apm.Build(m, sp)
	}
	ms := micro[0]
	// ranges of each logical operation's micro-operations in a build
	ranges := func(ms []Micro) [][2]int {
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
		return r
	}
	rg := ranges(ms)
	var points []int // logical operations with micro-operations: the crash points
	for i := range m.Ops {
		if rg[i][0] >= 0 {
			points = append(points, i)
		}
	}
	upTo := func(ms []Micro, r [][2]int, k int) State {
		st := State{Persisted: make([]bool, len(ms))}
		end := 0
		for i := 0; i <= k && i < len(r); i++ {
			if r[i][1] > end {
				end = r[i][1]
			}
		}
		for j := 0; j < end; j++ {
			st.Persisted[j] = true
		}
		return st
	}
	res := &Explored{Stats: report.Stats{CrashPoints: len(points)}}
	jobs := o.Pool.Jobs
	if jobs <= 0 {
		jobs = max(1, runtimeCPUs())
	}
	res.Stats.Jobs = jobs
	var firstFail time.Duration
	run := func(items []item) ([]verdict, error) {
		if o.MaxStates > 0 && res.Stats.StatesTested+len(items) > o.MaxStates {
			n := max(0, o.MaxStates-res.Stats.StatesTested)
			if n < len(items) {
				res.Warnings = appendOnce(res.Warnings, fmt.Sprintf("--max-states %d: %d crash states were left untested", o.MaxStates, len(items)-n))
				items = items[:n]
			}
		}
		vs, err := exec.Map(ctx, o.Pool, items, func(ctx context.Context, w *exec.Worker, it item) verdict {
			return judge(ctx, m, micro[it.build], it.st, w.Dir, o.Checker)
		})
		for i, v := range vs {
			if i >= len(items) || (v.err == nil && v.detail == "" && !v.failed) {
				continue
			}
			if v.err == nil {
				res.Stats.StatesTested++
			}
			if v.failed {
				res.Stats.Failures++
				if firstFail == 0 {
					firstFail = time.Since(start)
				}
			}
		}
		for _, v := range vs {
			if v.err != nil && err == nil && ctx.Err() == nil {
				err = v.err
			}
		}
		return vs[:len(items)], err
	}
	finish := func(err error) (*Explored, error) {
		res.Stats.ElapsedSeconds = time.Since(start).Seconds()
		res.Stats.FirstFailureSeconds = firstFail.Seconds()
		res.Stats.Findings = len(res.Findings)
		return res, err
	}

	// The consistent states: before the run and after it.
	sane := []item{
		{strategy: "initial", st: State{Persisted: make([]bool, len(ms))}, point: -1},
		{strategy: "final", st: upTo(ms, rg, len(m.Ops)-1), point: len(m.Ops) - 1},
	}
	vs, err := run(sane)
	if err != nil {
		return finish(err)
	}
	for i, v := range vs {
		if v.failed {
			which := "the initial state (the workload directory before the run)"
			if i == 1 {
				which = "the state of the finished run"
			}
			return finish(fmt.Errorf("%w: %s: %s", ErrCheckerFails, which, v.detail))
		}
	}
	res.Stats.Failures = 0
	firstFail = 0

	cl := newClusters(m, apm, o.Sites)
	patch := map[int]bool{}

	if slices.Contains(strats, StrategyPrefix) {
		var items []item
		for _, k := range points {
			items = append(items, item{strategy: StrategyPrefix, st: upTo(ms, rg, k), point: k, a: k, b: k})
		}
		vs, err := run(items)
		// Runs of failing prefixes: ALICE's across-syscall atomicity.
		for i := 0; i < len(vs); i++ {
			if !vs[i].failed {
				continue
			}
			j := i
			for j+1 < len(vs) && vs[j+1].failed {
				j++
			}
			end := len(points) - 1
			if j+1 < len(points) {
				end = j + 1
			}
			for x := i; x <= j; x++ {
				patch[points[x]] = true
			}
			it := items[i]
			it.a, it.b = points[i], points[end]
			cl.add(KindAtomicity, it, vs[i], micro[0])
			i = j
		}
		if err != nil {
			return finish2(res, cl, finish, err)
		}
	}

	if slices.Contains(strats, StrategyOmitOne) {
		var items []item
		for _, i := range points {
			if patch[i] || patch[i-1] || onlyBarriers(ms, rg[i]) {
				continue
			}
			for _, j := range points {
				if j <= i || patch[j] {
					continue
				}
				st := upTo(ms, rg, j)
				for x := rg[i][0]; x < rg[i][1]; x++ {
					st.Persisted[x] = false
				}
				if !Legal(ms, st) {
					break // every later state persists what depends on operation i
				}
				items = append(items, item{strategy: StrategyOmitOne, st: st, point: j, a: i, b: j})
			}
		}
		vs, err := run(items)
		done := map[int]bool{}
		for x, v := range vs {
			it := items[x]
			if !v.failed || done[it.a] {
				continue
			}
			done[it.a] = true
			kind := KindOrdering
			if m.Ops[it.b].Kind == OpOutput {
				kind = KindDurability
			}
			cl.add(kind, it, v, ms)
		}
		if err != nil {
			return finish2(res, cl, finish, err)
		}
	}

	if slices.Contains(strats, StrategySplit) {
		var items []item
		seen := map[string]bool{}
		for b, sp := range builds {
			bm := micro[b]
			br := ranges(bm)
			for _, i := range points {
				if patch[i] || patch[i-1] || br[i][0] < 0 {
					continue
				}
				lo, hi := br[i][0], br[i][1]
				for cut := lo; cut < hi-1; cut++ {
					st := upTo(bm, br, i-1)
					for x := lo; x <= cut; x++ {
						st.Persisted[x] = true
					}
					add := func(st State, what string) {
						key := fmt.Sprint(i, st.Persisted[lo:hi], bm[lo].Offset, len(bm))
						if !Legal(bm, st) || seen[key] {
							return
						}
						seen[key] = true
						items = append(items, item{strategy: StrategySplit, build: b, st: st, point: i, a: i, b: i, what: what})
					}
					add(st, bm[cut].What)
					if sp.Count != 1 || sp.Aligned != 0 {
						for k := lo; k < cut; k++ {
							st2 := State{Persisted: slices.Clone(st.Persisted)}
							st2.Persisted[k] = false
							add(st2, bm[cut].What+", an earlier piece lost")
						}
					}
				}
			}
		}
		vs, err := run(items)
		for x, v := range vs {
			if v.failed {
				cl.add(KindAtomicity, items[x], v, micro[items[x].build])
			}
		}
		if err != nil {
			return finish2(res, cl, finish, err)
		}
	}

	if slices.Contains(strats, StrategyExhaustive) {
		var items []item
		for _, k := range points {
			base := upTo(ms, rg, k)
			lastBarrier := -1
			for j := 0; j < rg[k][1]; j++ {
				if ms[j].barrier() {
					lastBarrier = j
				}
			}
			var pending []int
			for j := lastBarrier + 1; j < rg[k][1]; j++ {
				pending = append(pending, j)
			}
			if len(pending) == 0 || len(pending) > o.MaxPending {
				if len(pending) > o.MaxPending {
					res.Warnings = appendOnce(res.Warnings, fmt.Sprintf("exhaustive: crash points with more than %d micro-operations pending since the last sync were left to the other strategies", o.MaxPending))
				}
				continue
			}
			for mask := 0; mask < 1<<len(pending)-1; mask++ {
				st := State{Persisted: slices.Clone(base.Persisted)}
				for b, j := range pending {
					st.Persisted[j] = mask&(1<<b) != 0
				}
				if !Legal(ms, st) {
					continue
				}
				a, b := classify(ms, st, k)
				items = append(items, item{strategy: StrategyExhaustive, st: st, point: k, a: a, b: b})
			}
		}
		vs, err := run(items)
		for x, v := range vs {
			if !v.failed {
				continue
			}
			it := items[x]
			kind := KindAtomicity
			if it.a != it.b {
				kind = KindOrdering
				if m.Ops[it.b].Kind == OpOutput {
					kind = KindDurability
				}
			}
			cl.add(kind, it, v, ms)
		}
		if err != nil {
			return finish2(res, cl, finish, err)
		}
	}
	res.Findings = cl.findings()
	return finish(nil)
}

func finish2(res *Explored, cl *clusters, finish func(error) (*Explored, error), err error) (*Explored, error) {
	res.Findings = cl.findings()
	return finish(err)
}

// classify names the pair of an exhaustive state: the first logical operation with a lost
// micro-operation and the last one persisted after it (equal when the state persists a
// prefix, ending inside one operation).
func classify(ms []Micro, st State, k int) (a, b int) {
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

func onlyBarriers(ms []Micro, r [2]int) bool {
	for j := r[0]; j < r[1]; j++ {
		if !ms[j].barrier() {
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

// judge materializes a state in dir and runs the checker inside it.
func judge(ctx context.Context, m *Model, ms []Micro, st State, dir string, chk exec.Checker) verdict {
	crash := filepath.Join(dir, "crash")
	stdout, stderr, err := Materialize(m, ms, st, crash)
	if err != nil {
		return verdict{err: fmt.Errorf("building a crash directory: %w", err)}
	}
	outPath := filepath.Join(dir, "stdout")
	errPath := filepath.Join(dir, "stderr")
	if err := os.WriteFile(outPath, stdout, 0o644); err != nil {
		return verdict{err: err}
	}
	if err := os.WriteFile(errPath, stderr, 0o644); err != nil {
		return verdict{err: err}
	}
	c := chk
	c.Env = append(slices.Clone(chk.Env), "SCRY_STDOUT="+outPath, "SCRY_STDERR="+errPath, "SCRY_CRASH_DIR="+crash)
	out := c.Run(ctx, crash, crash)
	if out.Err != nil && ctx.Err() != nil {
		return verdict{err: ctx.Err()}
	}
	v := verdict{failed: out.Failed(), stdout: string(stdout)}
	if out.Err != nil && !out.TimedOut && out.ExitCode == -1 && out.Signal == 0 {
		return verdict{err: fmt.Errorf("checker: %s", out.Describe())}
	}
	tail := strings.TrimSpace(string(out.Stdout) + string(out.Stderr))
	if len(tail) > 300 {
		tail = "..." + tail[len(tail)-300:]
	}
	v.detail = out.Describe()
	if tail != "" {
		v.detail += ": " + tail
	}
	return v
}

// clusters groups failing states into findings by their static pair: the frames of the
// operation that must persist first (or atomically) and of the one persisted after it (ALICE,
// OSDI'14 §4.3: static vulnerabilities are the source lines of dynamic ones).
type clusters struct {
	m     *Model
	apm   *APM
	sites report.SiteTable
	order []string
	by    map[string]*report.Finding
	dyn   map[string]map[[2]int]bool
}

func newClusters(m *Model, apm *APM, sites report.SiteTable) *clusters {
	return &clusters{m: m, apm: apm, sites: sites, by: map[string]*report.Finding{}, dyn: map[string]map[[2]int]bool{}}
}

func (c *clusters) frames(op int) []report.Frame {
	o := &c.m.Ops[op]
	if c.sites == nil || o.Site == 0 {
		return nil
	}
	return report.FramesAt(c.sites, o.Site, o.Stack)
}

func (c *clusters) callOf(op int) string {
	o := &c.m.Ops[op]
	s := fmt.Sprintf("%s %s", o.Call, o.Describe())
	if fr := c.frames(op); len(fr) > 0 {
		s += " at " + frameString(fr[0])
	}
	return s
}

func frameString(f report.Frame) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d (%s)", f.File, f.Line, f.Function)
	}
	return fmt.Sprintf("%s (%s)", f.File, f.Function)
}

func (c *clusters) add(kind string, it item, v verdict, ms []Micro) {
	fa, fb := c.frames(it.a), c.frames(it.b)
	key := kind + "\x00" + report.FramesKey(fa) + "\x00" + report.FramesKey(fb)
	if kind == KindAtomicity && it.strategy == StrategySplit {
		key = kind + "\x00" + report.FramesKey(fa) + "\x00split"
	}
	pair := [2]int{it.a, it.b}
	f, ok := c.by[key]
	if !ok {
		oa, ob := &c.m.Ops[it.a], &c.m.Ops[it.b]
		var msg string
		switch kind {
		case KindOrdering:
			msg = fmt.Sprintf("%s must persist before %s: a crash that keeps the second and loses the first fails the checker", oa.Describe(), ob.Describe())
		case KindDurability:
			msg = fmt.Sprintf("%s is not durable when the program prints %s: a crash after the output loses it and fails the checker", oa.Describe(), ob.Describe())
		default:
			if it.a == it.b {
				msg = fmt.Sprintf("%s must persist atomically: a crash that persists part of it (%s) fails the checker", oa.Describe(), it.what)
			} else {
				msg = fmt.Sprintf("operations %d (%s) to %d (%s) must persist atomically: a crash between them fails the checker", it.a, oa.Describe(), it.b, ob.Describe())
			}
		}
		f = &report.Finding{Kind: kind, Class: report.Correctness, Message: msg, FirstEvent: oa.Event, Stack: fa}
		if len(fa) > 0 {
			f.Location = fa[0].Location()
		}
		if it.a != it.b && len(fb) > 0 {
			role := "persisted before it"
			if kind == KindDurability {
				role = "output"
			} else if kind == KindAtomicity {
				role = "end of the run"
			}
			f.Related = append(f.Related, fb[0].Location().Related(role))
		}
		fs := &report.FSCrash{APM: c.apm.Name, Strategy: it.strategy, CrashPoint: it.point, What: it.what, Checker: v.detail}
		if it.strategy == StrategySplit {
			fs.Split = c.splitName(ms)
		}
		stdout := v.stdout
		if len(stdout) > 1024 {
			stdout = stdout[len(stdout)-1024:]
		}
		fs.Stdout = stdout
		fs.Persisted, fs.Lost = describeState(c.m, ms, it.st)
		f.FS = fs
		c.by[key] = f
		c.dyn[key] = map[[2]int]bool{}
		c.order = append(c.order, key)
	}
	if c.dyn[key][pair] {
		return
	}
	c.dyn[key][pair] = true
	f.Count = len(c.dyn[key])
	f.FS.Count = f.Count
	if len(f.FS.Dynamic) < report.MaxFSDynamic {
		f.FS.Dynamic = append(f.FS.Dynamic, report.FSVulnerability{A: it.a, B: it.b, CallA: c.callOf(it.a), CallB: c.callOf(it.b)})
	}
}

func (c *clusters) splitName(ms []Micro) string {
	for _, sp := range append([]Split{c.apm.Base}, c.apm.Splits...) {
		if len(c.apm.Build(c.m, sp)) == len(ms) {
			return sp.String()
		}
	}
	return ""
}

// describeState lists the logical operations a state persisted (whole or in part) and lost,
// up to its last persisted one, at most 20 of each.
func describeState(m *Model, ms []Micro, st State) (persisted, lost []string) {
	full := map[int]int{}
	count := map[int]int{}
	last := -1
	for j, p := range st.Persisted {
		count[ms[j].Op]++
		if p {
			full[ms[j].Op]++
			last = max(last, ms[j].Op)
		}
	}
	ops := make([]int, 0, len(count))
	for op := range count {
		ops = append(ops, op)
	}
	sort.Ints(ops)
	for _, op := range ops {
		if op > last {
			break
		}
		d := fmt.Sprintf("%d %s", op, m.Ops[op].Describe())
		switch {
		case full[op] == count[op]:
			if len(persisted) < 20 {
				persisted = append(persisted, d)
			}
		case full[op] == 0:
			if len(lost) < 20 {
				lost = append(lost, d)
			}
		default:
			if len(persisted) < 20 {
				persisted = append(persisted, d+" (in part)")
			}
		}
	}
	return persisted, lost
}

func (c *clusters) findings() []report.Finding {
	out := make([]report.Finding, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, *c.by[k])
	}
	return out
}

func runtimeCPUs() int { return runtime.NumCPU() }
