package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// The trace read once per need. A check opens its trace once (trace.File) and reads it as few
// times as its steps need: the inference of persistence properties (when the checks of inferred
// properties or the invariants strategy need them), the analysis pass, the exploration's plan
// and its walks (pm/explore). What the steps after the analysis need from the trace is computed
// in the analysis pass by two analyzers of the check's own, which report nothing: checkFacts (the
// PM files the run mapped, whether it read its standard input: report.Check) and, when crash
// states are explored, neverDurable (the stores the two durability oracles found never made
// durable, which exploration assumes durable in later operations: crash.Options.AssumeDurable).

// checkFacts is what the analysis pass learns for the report's record of the check
// (report.Check): the PM files the run mapped, in the order first mapped, each once, with
// whether the run created it, and whether the program read lines of its standard input (the
// trace has operations).
type checkFacts struct {
	pools     []report.Pool
	seen      map[string]bool
	readInput bool
	// storers are the threads that stored to PM: a program with two or more is explored under
	// several schedules (Recording.Schedules); points counts the PM stores, flushes, fences and
	// operation boundaries, an estimate of the scheduling points of a controlled schedule (PCT
	// draws its priority changes among them: ScheduleSpec).
	storers map[uint32]bool
	points  int
	// schedPoints is the scheduling points the runtime's controlled scheduler passed, as the
	// trace's last SCHEDULE record counts them (0: the operating system's schedule, or a run
	// that did not end).
	schedPoints uint64
}

// checkFactsAnalyzer computes checkFacts in the analysis pass.
var checkFactsAnalyzer = &analysis.Analyzer{
	Name:       "check-facts",
	Doc:        "the PM files the recorded run mapped, whether it read its standard input and which threads stored to PM, for the report's record of the check and its schedules",
	ResultType: reflect.TypeOf((*checkFacts)(nil)),
	New: func(*analysis.Pass) (any, error) {
		return &checkFacts{pools: []report.Pool{}, seen: map[string]bool{}, storers: map[uint32]bool{}}, nil
	},
}

func (f *checkFacts) OnMap(_ *analysis.Pass, ev *trace.Event, r pmdk.Region) {
	if r.Path == "" || f.seen[r.Path] {
		return
	}
	f.seen[r.Path] = true
	f.pools = append(f.pools, report.Pool{Path: r.Path, Created: ev.Flags&trace.RegionCreated != 0})
}

func (f *checkFacts) OnOpBegin(*analysis.Pass, *trace.Event, replay.Op) {
	f.readInput = true
	f.points++
}

func (f *checkFacts) OnOpEnd(*analysis.Pass, *trace.Event, replay.Op) { f.points++ }

func (f *checkFacts) OnStore(_ *analysis.Pass, s *analysis.StoreInfo) {
	if s.Recorded() && s.Event != nil {
		f.storers[s.Event.Thread] = true
		f.points++
	}
}

func (f *checkFacts) OnEnd(p *analysis.Pass, _ *trace.Event) {
	if s, ok := p.Schedule(); ok && s.End {
		f.schedPoints = s.Points
	}
}

func (f *checkFacts) OnFlush(*analysis.Pass, *trace.Event, px86.FlushEffect) { f.points++ }

func (f *checkFacts) OnFence(*analysis.Pass, *trace.Event, px86.FenceEffect) { f.points++ }

// neverDurableAnalyzer has the two durability oracles run in the analysis pass, for their results
// alone when --oracles selects neither (their findings are reported only when selected).
var neverDurableAnalyzer = &analysis.Analyzer{
	Name:       "never-durable-stores",
	Doc:        "the stores never made durable (unpersisted-store, overwritten-unpersisted), for crash exploration",
	Requires:   []*analysis.Analyzer{oracle.UnpersistedStore, oracle.OverwrittenUnpersisted},
	ResultType: reflect.TypeOf(struct{}{}),
	New:        func(*analysis.Pass) (any, error) { return struct{}{}, nil },
}

// neverDurableOf returns, from the results of an analysis pass (analysis.Config.Keep), the stores
// the unpersisted-store oracle reports as never made durable (oracle.NeverDurable) and the earlier
// stores the overwritten-unpersisted oracle reports overwritten before they persisted
// (oracle.Overwritten), sorted by store ID, each once. ok is false when the oracles did not run.
func neverDurableOf(keep map[*analysis.Analyzer]any) (stores []px86.StoreState, ok bool) {
	nd, _ := keep[oracle.UnpersistedStore].(*oracle.NeverDurable)
	ow, _ := keep[oracle.OverwrittenUnpersisted].(*oracle.Overwritten)
	if nd == nil || ow == nil {
		return nil, false
	}
	stores = append(append(stores, nd.Stores...), ow.Stores...)
	slices.SortFunc(stores, func(a, b px86.StoreState) int { return cmp.Compare(a.ID, b.ID) })
	return slices.CompactFunc(stores, func(a, b px86.StoreState) bool { return a.ID == b.ID }), true
}

// passed is what a check's analysis pass gave the steps after it.
type passed struct {
	facts *checkFacts
	// neverDurable are the stores never made durable (neverDurableOf), when asked for; durableErr
	// says why they could not be found (the pass did not complete).
	neverDurable []px86.StoreState
	durableErr   error
	// windows are the trace's window candidates (schedWindows.best), when asked for.
	windows []windowCandidate
	// interPairs are the store pairs of the inter-thread-inconsistency findings, to confirm
	// with crash states (infer.InterThreadPairs).
	interPairs []infer.StorePair
}

// analyzePass runs the analysis step of a check over tf: the analyses a selects, with the
// properties already inferred (props, nil: the checks infer their own, in a prepass over tf), and
// the check's own analyzers (checkFacts; with durable, the stores never made durable; with
// windows > 0, up to that many window candidates for the schedules after it). Errors as
// AnalyzeSource's.
func analyzePass(tf *trace.File, a Analysis, props *infer.Result, durable bool, windows int) (*report.Report, *passed, error) {
	keep := map[*analysis.Analyzer]any{}
	also := []*analysis.Analyzer{checkFactsAnalyzer}
	if durable {
		also = append(also, neverDurableAnalyzer)
	}
	if windows > 0 {
		also = append(also, schedWindowsAnalyzer)
	}
	rep, err := analyzeProfiles(a.Profiles, tf.Header().AArch64(), func(p px86.Profile, first bool) (*report.Report, error) {
		o := AnalyzeOptions{
			Oracles: a.Kinds, NoInfer: a.NoInfer, Suppressions: a.Suppressions, Properties: props, Catalogue: a.Catalogue,
			Trace: tf.Path(), Profile: p,
		}
		if first {
			// The later steps use the first profile's facts (the stores it never made durable).
			o.Keep, o.Also = keep, also
		}
		return AnalyzeSource(tf.Reader, o)
	})
	if err != nil && !errors.Is(err, trace.ErrNotTrace) && rep != nil {
		err = fmt.Errorf("%s: %w", tf.Path(), err)
	}
	p := &passed{facts: &checkFacts{pools: []report.Pool{}}}
	if f, _ := keep[checkFactsAnalyzer].(*checkFacts); f != nil {
		p.facts = f
	}
	p.interPairs = infer.InterThreadPairs(keep[infer.InterThread])
	if w, _ := keep[schedWindowsAnalyzer].(*schedWindows); w != nil {
		p.windows = w.best(windows)
	}
	if durable {
		var ok bool
		p.neverDurable, ok = neverDurableOf(keep)
		switch {
		case err != nil:
			p.durableErr = err
		case !ok:
			p.durableErr = errors.New("the durability oracles did not run")
		}
	}
	return rep, p, err
}
