package analysis_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

const base = 0x10000

// opLog records the operation hooks and, for each store, the operation it belongs to.
type opLog struct{ events []string }

func (l *opLog) OnOpBegin(p *analysis.Pass, ev *trace.Event, op replay.Op) {
	l.events = append(l.events, fmt.Sprintf("begin %d %q t%d", op.Index, op.Text, op.Thread))
}

func (l *opLog) OnOpEnd(p *analysis.Pass, ev *trace.Event, op replay.Op) {
	l.events = append(l.events, fmt.Sprintf("end %d at %s", op.Index, ev.Kind))
}

func (l *opLog) OnMap(p *analysis.Pass, ev *trace.Event, r pmdk.Region) {
	l.events = append(l.events, fmt.Sprintf("map %s %#x (%d regions)", r.Path, r.Len, p.State.Regions.Len()))
}

func (l *opLog) OnUnmap(p *analysis.Pass, ev *trace.Event, r pmdk.Region) {
	l.events = append(l.events, fmt.Sprintf("unmap %s", r.Path))
}

func (l *opLog) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	cur, ok := p.State.Ops.Current(s.Event.Thread)
	l.events = append(l.events, fmt.Sprintf("store t%d op %d (%v %d)", s.Event.Thread, s.Origin.Op, ok, cur.Index))
}

var opLogger = &analysis.Analyzer{
	Name: "op-log", Doc: "logs the operation hooks", ResultType: reflect.TypeOf((*opLog)(nil)),
	New: func(*analysis.Pass) (any, error) { return &opLog{}, nil },
}

// TestOpHooks: the operation hooks see every operation begin and end, per thread, an OP_BEGIN
// ending its thread's previous operation first; a store belongs to its thread's operation; the
// map hook sees each region after the state holds it, the unmap hook before it forgets it.
func TestOpHooks(t *testing.T) {
	pool := func() *analysistest.Builder { return analysistest.New().Map(1, base, 0x10000) }
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"begin, end", pool().OpBegin(0, "a").Store(1, base, 8).OpEnd(0).OpBegin(1, "b").Exit(0),
			[]string{"map pool1 0x10000 (1 regions)", `begin 0 "a" t0`, "store t0 op 1 (true 0)", "end 0 at OP_END", `begin 1 "b" t0`}},
		{"begin ends the thread's previous operation", pool().OpBegin(0, "a").OpBegin(1, "b").Store(1, base, 8).OpEnd(1).Exit(0),
			[]string{"map pool1 0x10000 (1 regions)", `begin 0 "a" t0`, "end 0 at OP_BEGIN", `begin 1 "b" t0`, "store t0 op 2 (true 1)", "end 1 at OP_END"}},
		{"two threads", pool().Thread(1).OpBegin(0, "a").Thread(2).OpBegin(1, "b").Thread(1).Store(1, base, 8).OpEnd(0).Store(2, base+64, 8).Thread(2).OpEnd(1).Store(3, base+128, 8).Exit(0),
			[]string{"map pool1 0x10000 (1 regions)", `begin 0 "a" t1`, `begin 1 "b" t2`, "store t1 op 1 (true 0)", "end 0 at OP_END", "store t1 op 2 (true 1)", "end 1 at OP_END", "store t2 op 0 (false 0)"}},
		{"two pools, one unmapped", pool().Map(2, 2*base, 0x1000).Store(1, base, 8).Unmap(2, 9).Exit(0),
			[]string{"map pool1 0x10000 (1 regions)", "map pool2 0x1000 (2 regions)", "store t0 op 0 (false 0)", "unmap pool2"}},
	}
	for _, tc := range tests {
		keep := map[*analysis.Analyzer]any{}
		if _, err := analysis.Run(tc.b.Source(t), []*analysis.Analyzer{opLogger}, analysis.Config{Keep: keep}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := keep[opLogger].(*opLog).events
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestRequiredFindings: an analyzer that runs only because another requires it gives its
// result, not its findings.
func TestRequiredFindings(t *testing.T) {
	inner := &analysis.Analyzer{
		Name: "every-store", Doc: "reports every store", Class: report.Performance, ResultType: reflect.TypeOf((*everyStore)(nil)),
		New: func(*analysis.Pass) (any, error) { return &everyStore{}, nil },
	}
	var seen int
	outer := &analysis.Analyzer{
		Name: "outer", Doc: "reads every-store's result", Class: report.Correctness, Requires: []*analysis.Analyzer{inner},
		ResultType: reflect.TypeOf(0),
		New: func(p *analysis.Pass) (any, error) {
			analysis.ResultOf[*everyStore](p, inner)
			seen++
			return 0, nil
		},
	}
	b := analysistest.New().Map(1, base, 0x10000).Store(7, base, 8).Persist(8, base, 8).Exit(0)
	for _, tc := range []struct {
		run       []*analysis.Analyzer
		findings  []string
		ruleKinds []report.Kind
	}{
		{[]*analysis.Analyzer{outer}, nil, []report.Kind{"outer"}},
		{[]*analysis.Analyzer{outer, inner}, []string{"every-store@7"}, []report.Kind{"outer", "every-store"}},
	} {
		rep, err := analysis.Run(b.Source(t), tc.run, analysis.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []report.Kind
		for _, r := range rep.Rules {
			kinds = append(kinds, r.Kind)
		}
		slices.Sort(kinds)
		slices.Sort(tc.ruleKinds)
		if got := analysistest.Summary(rep); !slices.Equal(got, tc.findings) || !slices.Equal(kinds, tc.ruleKinds) {
			t.Errorf("Run(%v): findings %q rules %q; want %q rules %q", tc.run, got, kinds, tc.findings, tc.ruleKinds)
		}
	}
	if seen != 2 {
		t.Errorf("outer ran %d times, want 2", seen)
	}
}

type everyStore struct{}

func (*everyStore) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if !p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
		p.Report(analysis.Diagnostic{Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Message: "a store"})
	}
}
