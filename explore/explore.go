package explore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/scry-pm/scry/crash"
	"github.com/scry-pm/scry/exec"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Result is what an exploration found.
type Result struct {
	Findings []report.Finding // crash findings, clustered, in walk order of their first failure
	Stats    report.Stats
	Warnings []string
}

// unitRef is a store named by a finding (resolved inside the Walk callback).
type unitRef struct {
	Site  uint32
	Loc   report.Location
	Seq   uint64
	Event uint64
}

// item is one crash image to run: everything a finding needs, materialised in the callback.
type item struct {
	op         int
	image      string
	point      int
	pointKind  crash.PointKind
	event      uint64
	site       uint32
	loc        report.Location
	stack      []report.Frame
	opText     string
	state      crash.State
	lines      []report.CrashLine
	strategy   string
	persisted  []unitRef // ordering: units persisted although an earlier one was not
	unpersist  []unitRef // ordering: the earlier units not persisted; atomicity: every unit not persisted
	region     uint32
	regionPath string
}

// oracle is the pair of consistent images of one operation.
type oracle struct {
	before, after string // image files; after is "" until OP_END
}

// explorer is the state of one Run.
type explorer struct {
	cfg      *Config
	r        *trace.Reader
	ctx      context.Context
	tmp      string
	iw, bw   *crash.ImageWriter
	res      *Result
	nimg     int
	batch    []*item
	oracles  map[int]*oracle
	opsDone  map[int]bool // operations whose OP_END was seen
	clusters map[string]int
	start    time.Time                  // when the exploration began
	variants map[string]map[string]bool // cluster key -> store-set keys seen
	warned   map[string]bool
	bwOp     int // operation whose OP_BEGIN image bw holds (-1 none)
}

// Run explores the crash states of cfg.Trace: see the package doc. It returns the findings and
// statistics found so far together with the first error (a bad trace, a file error, the context
// cancelled: Ctrl-C); a trace truncated by a crash of the recorded program is explored up to its
// end with a warning.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	res := &Result{}
	if err := cfg.check(); err != nil {
		return res, err
	}
	r, err := trace.Open(cfg.Trace)
	if err != nil {
		return res, err
	}
	defer r.Close()
	parent := cfg.Exec.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	tmp, err := os.MkdirTemp(parent, "scry-explore-*")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	e := &explorer{
		cfg: &cfg, r: r, ctx: ctx, tmp: tmp, res: res,
		iw:      crash.NewImageWriter(filepath.Join(tmp, "work.img")),
		bw:      crash.NewImageWriter(filepath.Join(tmp, "boundary.img")),
		oracles: map[int]*oracle{}, opsDone: map[int]bool{}, clusters: map[string]int{}, variants: map[string]map[string]bool{},
		warned: map[string]bool{}, bwOp: -1, start: start,
	}
	defer e.iw.Close()
	defer e.bw.Close()
	jobs := cfg.Exec.Jobs
	if jobs <= 0 {
		jobs = defaultJobs()
	}
	res.Stats.Jobs = jobs
	_, werr := crash.Walk(r, cfg.Options, e.visit)
	if werr != nil && errors.Is(werr, trace.ErrTruncated) {
		e.warn("trace truncated: the recorded program did not exit normally; crash states explored up to the end of the trace")
		werr = nil
	}
	if werr == nil {
		werr = e.flush()
	}
	res.Stats.Findings = len(res.Findings)
	res.Stats.ElapsedSeconds = time.Since(start).Seconds()
	return res, werr
}

func (e *explorer) warn(msg string) {
	if e.warned[msg] {
		return
	}
	e.warned[msg] = true
	e.res.Warnings = append(e.res.Warnings, msg)
}

// region returns the id of the pool's region at cp, or false when it is not mapped.
func (e *explorer) region(cp *crash.CrashPoint) (uint32, string, bool, error) {
	rs := cp.Regions()
	var found *int
	for i := len(rs) - 1; i >= 0; i-- {
		g := rs[i]
		if !g.Mapped && g.UnmapIndex < cp.Event {
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
		e.res.Stats.Skipped++
		return nil
	}
	k := int(cp.Op)
	if k >= len(e.cfg.Workload.Ops) {
		e.warn(fmt.Sprintf("the trace has operation %d but the workload only %d lines: later operations are not explored", k, len(e.cfg.Workload.Ops)))
		e.res.Stats.Skipped++
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
	e.res.Stats.CrashPoints++
	o := e.oracles[k]
	if o == nil {
		if e.bwOp != k {
			return fmt.Errorf("crash point %d in operation %d without its OP_BEGIN", cp.Index, k)
		}
		o = &oracle{before: e.newImage("before")}
		if err := exec.CopyFile(o.before, e.bw.Path()); err != nil {
			return err
		}
		e.oracles[k] = o
	}
	seen := map[string]bool{}
	for _, s := range e.cfg.Strategies {
		for st := range s.States(cp.Space, e.cfg.Options) {
			key := fmt.Sprint(st.K)
			if seen[key] {
				continue
			}
			seen[key] = true
			it, err := e.newItem(cp, k, id, path, st, s.Name)
			if err != nil {
				return err
			}
			e.batch = append(e.batch, it)
		}
	}
	return nil
}

func (e *explorer) newImage(what string) string {
	e.nimg++
	return filepath.Join(e.tmp, what+"-"+strconv.Itoa(e.nimg)+".img")
}

func (e *explorer) opBegin(cp *crash.CrashPoint) error {
	id, _, ok, err := e.region(cp)
	if err != nil || !ok {
		e.bwOp = -1
		return err
	}
	if err := e.bw.Write(cp, id, cp.Space.FullState()); err != nil {
		return err
	}
	e.bwOp = int(cp.Op)
	if k := int(cp.Op); k < len(e.cfg.Workload.Ops) && e.cfg.Workload.Ops[k] != cp.OpText {
		e.warn(fmt.Sprintf("operation %d of the trace is %q but line %d of the workload is %q: is this the workload the trace was recorded with?", k, cp.OpText, k+1, e.cfg.Workload.Ops[k]))
	}
	return nil
}

func (e *explorer) opEnd(cp *crash.CrashPoint) error {
	k := int(cp.Op)
	e.opsDone[k] = true
	o := e.oracles[k]
	if o == nil {
		return nil
	}
	id, _, ok, err := e.region(cp)
	if err != nil {
		return err
	}
	if ok {
		o.after = e.newImage("after")
		if err := cp.WriteImage(o.after, id, cp.Space.FullState()); err != nil {
			return err
		}
	}
	if len(e.batch) >= e.cfg.BatchStates {
		return e.flush()
	}
	return nil
}

// location resolves a site of the trace.
func (e *explorer) location(site uint32) report.Location {
	s, ok := e.r.Site(site)
	if !ok || site == 0 {
		return report.Location{}
	}
	return report.Location{File: s.File, Line: int(s.Line), Column: int(s.Column), Function: s.Function}
}

// stack resolves a call-stack node, innermost call first.
func (e *explorer) stack(node uint32) []report.Frame {
	if node == 0 {
		return nil
	}
	ids := e.r.StackOf(node)
	out := make([]report.Frame, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		l := e.location(ids[i])
		out = append(out, report.Frame{Function: l.Function, File: l.File, Line: l.Line, Column: l.Column})
	}
	return out
}

// newItem materialises the crash image of st at cp and what a finding on it needs.
func (e *explorer) newItem(cp *crash.CrashPoint, k int, region uint32, path string, st crash.State, strategy string) (*item, error) {
	if err := e.iw.Write(cp, region, st); err != nil {
		return nil, err
	}
	img := e.newImage("crash")
	if err := exec.CopyFile(img, e.iw.Path()); err != nil {
		return nil, err
	}
	it := &item{
		op: k, image: img, point: cp.Index, pointKind: cp.Kind, event: cp.Event, site: cp.Site,
		loc: e.location(cp.Site), stack: e.stack(cp.Stack), opText: cp.OpText, state: st,
		strategy: strategy, region: region, regionPath: path,
	}
	sp := cp.Space
	for _, l := range sp.Lines {
		it.lines = append(it.lines, report.CrashLine{Addr: l.Addr, Units: len(l.Units)})
	}
	// The units a finding names: for a prefix state every unit not persisted (the operation's
	// stores that did not make it); otherwise the persisted units later in program order than
	// some unpersisted one, and the unpersisted units earlier than some persisted one.
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
		return unitRef{Site: u.Site, Loc: e.location(u.Site), Seq: u.Seq, Event: u.Store}
	}
	for i, l := range sp.Lines {
		for j, u := range l.Units {
			persisted := j < st.K[i]
			switch {
			case st.Prefix && !persisted:
				it.unpersist = append(it.unpersist, ref(u))
			case !st.Prefix && persisted && anyP && u.Seq > minN:
				it.persisted = append(it.persisted, ref(u))
			case !st.Prefix && !persisted && anyP && u.Seq < maxP:
				it.unpersist = append(it.unpersist, ref(u))
			}
		}
	}
	return it, nil
}

// defaultJobs is exec.Pool's default.
func defaultJobs() int { return max(1, numCPU()) }
