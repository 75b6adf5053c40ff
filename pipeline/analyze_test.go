package pipeline_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

const (
	base = 0x10000
	A    = base + 0x100
	B    = base + 0x200
)

func pool() *analysistest.Builder { return analysistest.New().Map(1, base, 0x10000) }

func analyze(t *testing.T, b *analysistest.Builder, opts pipeline.AnalyzeOptions) *report.Report {
	t.Helper()
	rep, err := pipeline.AnalyzeSource(b.Source(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestDedupeAndFirstOccurrence(t *testing.T) {
	b := pool()
	for i := uint64(0); i < 5; i++ {
		b.OpBegin(i, "op"+string(rune('a'+i))).Flush(11, trace.FlushCLWB, A+i*64).OpEnd(i)
	}
	rep := analyze(t, b.Exit(0), pipeline.AnalyzeOptions{Oracles: []string{"redundant-flush"}})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Count != 5 || f.Operation == nil || f.Operation.Index != 0 || f.Operation.Text != "opa" {
		t.Errorf("finding %+v op %+v", f, f.Operation)
	}
	if f.Location != (report.Location{File: "test.c", Line: 11, Column: 1, Function: "fn11"}) {
		t.Errorf("location %+v", f.Location)
	}
}

func TestUnpersistedFirstOccurrenceIsEarliestStore(t *testing.T) {
	// Two unflushed stores from one site on many lines: one finding, counted per store, first
	// event the earliest store whatever the order in which the model lists them.
	b := pool()
	for i := uint64(0); i < 20; i++ {
		b.Store(10, base+0x1000-i*64, 8)
	}
	rep := analyze(t, b.Exit(0), pipeline.AnalyzeOptions{Oracles: []string{"unpersisted-store"}})
	if len(rep.Findings) != 1 || rep.Findings[0].Count != 20 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	first := rep.Findings[0].FirstEvent
	// Events: SITES(0) THREAD? ... find the index of the first STORE.
	r := b.Reader(t)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == trace.KindStore {
			if ev.Index != first {
				t.Errorf("first event %d, want %d", first, ev.Index)
			}
			break
		}
	}
}

func TestStacks(t *testing.T) {
	b := pool().Stack(1, 0, 50).Stack(2, 1, 51).Context(2).Store(10, A, 8).Context(0).Exit(0)
	rep := analyze(t, b, pipeline.AnalyzeOptions{Oracles: []string{"unpersisted-store"}})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	var got []int
	for _, fr := range rep.Findings[0].Stack {
		got = append(got, fr.Line)
	}
	if !slices.Equal(got, []int{10, 51, 50}) {
		t.Errorf("stack lines %v, want innermost first [10 51 50]", got)
	}
	if rep.Findings[0].Stack[1].Function != "fn51" {
		t.Errorf("frame %+v", rep.Findings[0].Stack[0])
	}
}

// TestPlacement: a finding is reported at the innermost frame every execution through it shows,
// whether the helper was inlined (copies of its flush, site 5, with inlined-at chains) or called
// (one flush site under two call stacks); "kind@line×count" per finding.
func TestPlacement(t *testing.T) {
	// clean: a store to A flushed at site s; dirty: A flushed again, redundantly, at site s.
	clean := func(b *analysistest.Builder, s uint32) *analysistest.Builder {
		return b.Store(2, A, 8).Flush(s, trace.FlushCLWB, A).Fence(3, trace.FenceSFENCE)
	}
	dirty := func(b *analysistest.Builder, s uint32) *analysistest.Builder {
		return b.Flush(s, trace.FlushCLWB, A).Fence(3, trace.FenceSFENCE)
	}
	// Inlined: site 6 is the helper's flush inlined at call 20, site 7 inlined at call 30.
	inlined := func() *analysistest.Builder {
		return pool().Copy(6, 5).Copy(7, 5).InlinedAt(6, 20).InlinedAt(7, 30)
	}
	// Called: flush site 5 under stack 1 (call at 20) or 2 (call at 30).
	called := func() *analysistest.Builder {
		return pool().Stack(1, 0, 20).Stack(2, 0, 30)
	}
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"inlined, one caller wrong", dirty(clean(inlined(), 6), 7), []string{"redundant-flush@30×1"}},
		{"inlined, every caller wrong", dirty(dirty(clean(inlined(), 6), 6), 7), []string{"redundant-flush@5×2"}},
		{"called, one caller wrong", dirty(clean(called().Context(1), 5).Context(2), 5), []string{"redundant-flush@30×1"}},
		{"called, every caller wrong", dirty(dirty(clean(called().Context(1), 5), 5).Context(2), 5), []string{"redundant-flush@5×2"}},
		{"called, wrong once of many", dirty(clean(clean(called().Context(1), 5).Context(2), 5), 5), []string{"redundant-flush@30×1"}},
		{"one caller, sometimes wrong", dirty(clean(clean(called().Context(1), 5), 5), 5), []string{"redundant-flush@5×1"}},
		// An unrolled copy (site 8, same position and chain as site 6) that is clean: nothing
		// separates the contexts, so the finding stays at the instruction.
		{"copies alike", dirty(clean(inlined().Copy(8, 5).InlinedAt(8, 20), 8), 6), []string{"redundant-flush@5×1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := analyze(t, tt.b.Exit(0), pipeline.AnalyzeOptions{Oracles: []string{"redundant-flush"}})
			var got []string
			for _, f := range rep.Findings {
				got = append(got, fmt.Sprintf("%s@%d×%d", f.Kind, f.Location.Line, f.Count))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEndings(t *testing.T) {
	tests := []struct {
		name    string
		b       *analysistest.Builder
		want    []string
		warning string
	}{
		{"exit", pool().Store(10, A, 8).Flush(11, trace.FlushCLWB, B).Exit(0),
			[]string{"redundant-flush@11", "unpersisted-store@10"}, ""},
		{"signal", pool().Store(10, A, 8).Flush(11, trace.FlushCLWB, B).Signal(9),
			[]string{"redundant-flush@11"}, "signal 9"},
		{"truncated", pool().Store(10, A, 8).Flush(11, trace.FlushCLWB, B),
			[]string{"redundant-flush@11"}, "trace truncated after"},
		{"unmap then truncated", pool().Store(10, A, 8).Unmap(1, 20),
			[]string{"unpersisted-store@10"}, "trace truncated after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := analyze(t, tc.b, pipeline.AnalyzeOptions{})
			if got := analysistest.Summary(rep); !slices.Equal(got, tc.want) {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
			warn := strings.Join(rep.Warnings, "\n")
			if tc.warning == "" && warn != "" || !strings.Contains(warn, tc.warning) {
				t.Errorf("warnings %q, want %q", warn, tc.warning)
			}
		})
	}
}

func TestCutInTheMiddle(t *testing.T) {
	data, err := pool().Store(10, A, 8).Fence(12, trace.FenceSFENCE).Store(11, B, 32).Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.AnalyzeSource(analysis.BytesSource(data[:len(data)-10]), pipeline.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := analysistest.Summary(rep); !slices.Equal(got, []string{"redundant-fence@12"}) || len(rep.Warnings) != 1 {
		t.Errorf("findings %q warnings %q", got, rep.Warnings)
	}
}

func TestCorruptKeepsFindings(t *testing.T) {
	data, err := pool().Fence(12, trace.FenceSFENCE).Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	data = append(data[:len(data)-3], 0x3f, 0x3f, 0x3f) // END replaced by an unknown record kind
	rep, err := pipeline.AnalyzeSource(analysis.BytesSource(data), pipeline.AnalyzeOptions{})
	if !errors.Is(err, trace.ErrCorrupt) {
		t.Fatalf("error %v, want ErrCorrupt", err)
	}
	if rep == nil || len(rep.Findings) != 1 {
		t.Fatalf("report so far: %+v", rep)
	}
}

func TestAnalyzeFile(t *testing.T) {
	dir := t.TempDir()
	data, err := pool().Store(10, A, 8).Fence(12, trace.FenceSFENCE).Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.trace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	supp := filepath.Join(dir, "supp")
	os.WriteFile(supp, []byte("# fences are fine here\nredundant-fence test.c:fn1*\n"), 0o644)
	s, err := report.LoadSuppressions(supp)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.AnalyzeFile(path, pipeline.AnalyzeOptions{Suppressions: s})
	if err != nil {
		t.Fatal(err)
	}
	if got := analysistest.Summary(rep); !slices.Equal(got, []string{"unpersisted-store@10"}) || rep.Suppressed["redundant-fence"] != 1 {
		t.Errorf("findings %q suppressed %v", got, rep.Suppressed)
	}
	if rep.Trace != path || rep.Events == 0 || !rep.HasCorrectness() {
		t.Errorf("report %+v", rep)
	}
	// Not a trace.
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("hello, world, this is not a trace"), 0o644)
	if _, err := pipeline.AnalyzeFile(bad, pipeline.AnalyzeOptions{}); !errors.Is(err, trace.ErrNotTrace) {
		t.Errorf("not a trace: %v", err)
	}
	if _, err := pipeline.AnalyzeFile(path, pipeline.AnalyzeOptions{Oracles: []string{"bogus"}}); err == nil {
		t.Error("unknown oracle accepted")
	}
}

// TestFramework checks the driver's contract: declared result types, typed access to required
// results, prepasses over their own read of the trace, and the rejection of bad registries.
func TestFramework(t *testing.T) {
	type stores struct{ n int }
	prepassReads := 0
	pre := &analysis.Analyzer{
		Name: "count-records", Doc: "counts the records of the whole trace", ResultType: reflect.TypeOf(0),
		Prepass: func(open func() (*trace.Reader, error)) (any, error) {
			prepassReads++
			r, err := open()
			if err != nil {
				return nil, err
			}
			defer r.Close()
			n := 0
			for {
				if _, err := r.Next(); err != nil {
					return n, nil
				}
				n++
			}
		},
	}
	var seen int
	counter := &analysis.Analyzer{
		Name: "count-stores", Doc: "counts stores", Requires: []*analysis.Analyzer{pre},
		ResultType: reflect.TypeOf((*stores)(nil)),
		New: func(p *analysis.Pass) (any, error) {
			seen = analysis.ResultOf[int](p, pre)
			return &stores{}, nil
		},
	}
	b := pool().Store(10, A, 8).Exit(0)
	if _, err := analysis.Run(b.Source(t), []*analysis.Analyzer{counter}, analysis.Config{}); err != nil {
		t.Fatal(err)
	}
	if seen != 4 || prepassReads != 1 { // SITES, REGION_MAP, STORE, END
		t.Errorf("prepass result %d after %d reads, want 4 after 1", seen, prepassReads)
	}
	// A result given in Config.Results replaces the prepass.
	if _, err := analysis.Run(b.Source(t), []*analysis.Analyzer{counter}, analysis.Config{Results: map[*analysis.Analyzer]any{pre: 7}}); err != nil || seen != 7 || prepassReads != 1 {
		t.Errorf("given result: seen %d, reads %d, err %v", seen, prepassReads, err)
	}
	// A result of the wrong type is an error, not a panic later.
	wrong := &analysis.Analyzer{Name: "wrong", Doc: "returns a string", ResultType: reflect.TypeOf(0),
		New: func(*analysis.Pass) (any, error) { return "no", nil }}
	if _, err := analysis.Run(b.Source(t), []*analysis.Analyzer{wrong}, analysis.Config{}); err == nil || !strings.Contains(err.Error(), "declared int") {
		t.Errorf("wrong result type: %v", err)
	}
	bad := []struct {
		name string
		a    *analysis.Analyzer
		msg  string
	}{
		{"name", &analysis.Analyzer{Name: "Bad Name", Doc: "d", ResultType: reflect.TypeOf(0), New: counter.New}, "kebab-case"},
		{"doc", &analysis.Analyzer{Name: "no-doc", ResultType: reflect.TypeOf(0), New: counter.New}, "no doc"},
		{"result type", &analysis.Analyzer{Name: "no-type", Doc: "d", New: counter.New}, "no ResultType"},
		{"both", &analysis.Analyzer{Name: "both", Doc: "d", ResultType: reflect.TypeOf(0), New: counter.New, Prepass: pre.Prepass}, "exactly one"},
		{"prepass requires streaming", &analysis.Analyzer{Name: "pre2", Doc: "d", ResultType: reflect.TypeOf(0), Prepass: pre.Prepass, Requires: []*analysis.Analyzer{counter}}, "cannot require"},
		{"class", &analysis.Analyzer{Name: "cls", Doc: "d", Class: "style", ResultType: reflect.TypeOf(0), New: counter.New}, "unknown class"},
	}
	for _, tc := range bad {
		if err := analysis.Validate([]*analysis.Analyzer{tc.a}); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.msg)
		}
	}
	x := &analysis.Analyzer{Name: "a", Doc: "d", ResultType: reflect.TypeOf(0), New: counter.New}
	y := &analysis.Analyzer{Name: "b", Doc: "d", ResultType: reflect.TypeOf(0), New: counter.New, Requires: []*analysis.Analyzer{x}}
	x.Requires = []*analysis.Analyzer{y}
	if err := analysis.Validate([]*analysis.Analyzer{x}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}
	twin := &analysis.Analyzer{Name: "count-stores", Doc: "d", ResultType: reflect.TypeOf(0), New: counter.New}
	if err := analysis.Validate([]*analysis.Analyzer{counter, twin}); err == nil || !strings.Contains(err.Error(), "two analyzers") {
		t.Errorf("duplicate names: %v", err)
	}
}

// TestCatalogue checks the registry of finding kinds: every analyzer valid, names unique, one
// doc text each, and the selection function.
func TestCatalogue(t *testing.T) {
	if err := analysis.Validate(pipeline.Analyzers()); err != nil {
		t.Fatal(err)
	}
	seen := map[report.Kind]bool{}
	for _, k := range pipeline.Kinds() {
		if seen[k.Kind] || k.Doc == "" || (k.Class != report.Correctness && k.Class != report.Performance && k.Class != report.Unconfirmed) {
			t.Errorf("bad kind %+v", k)
		}
		seen[k.Kind] = true
	}
	tests := []struct {
		names   []string
		noInfer bool
		want    []string
		explore bool
		err     string
	}{
		{nil, false, []string{"unpersisted-store", "overwritten-unpersisted", "tx-unlogged-store", "redundant-flush", "redundant-fence", "redundant-tx-add", "pm-lock-word", "mpb-violation", "mpa-violation", "inter-thread-inconsistency"}, true, ""},
		{nil, true, []string{"unpersisted-store", "overwritten-unpersisted", "tx-unlogged-store", "redundant-flush", "redundant-fence", "redundant-tx-add", "pm-lock-word", "inter-thread-inconsistency"}, true, ""},
		{[]string{"redundant-fence,unpersisted-store"}, false, []string{"unpersisted-store", "redundant-fence"}, false, ""},
		{[]string{"mpb-violation", "ordering-violation"}, false, []string{"mpb-violation"}, true, ""},
		{[]string{"mpb-violation"}, true, nil, false, "needs inference"},
		{[]string{"bogus"}, false, nil, false, "unknown oracle bogus (known: unpersisted-store"},
	}
	for _, tc := range tests {
		sel, err := pipeline.Select(tc.names, tc.noInfer)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Select(%q, %v) error %v, want %q", tc.names, tc.noInfer, err, tc.err)
			}
			continue
		}
		var got []string
		for _, a := range sel.Analyzers {
			got = append(got, a.Name)
		}
		if err != nil || !slices.Equal(got, tc.want) || sel.Explore != tc.explore {
			t.Errorf("Select(%q, %v) = %q explore %v, %v; want %q explore %v", tc.names, tc.noInfer, got, sel.Explore, err, tc.want, tc.explore)
		}
	}
}

// flagStore is a custom analyzer for TestCustomCatalogue: it reports every store to A.
type flagStore struct{}

func (flagStore) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if s.Addr == A && !p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
		p.Report(analysis.Diagnostic{Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Message: "a store to the flag"})
	}
}

func custom(name string, class report.Class, requires ...*analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name: name, Doc: "a store to the flag", Class: class, Requires: requires, ResultType: reflect.TypeOf(flagStore{}),
		New: func(*analysis.Pass) (any, error) { return flagStore{}, nil },
	}
}

// TestCustomCatalogue: a catalogue with custom analyzers lists their kinds after the trace
// analyzers of scry's own, selects and runs them; bad custom analyzers are clear errors.
func TestCustomCatalogue(t *testing.T) {
	flag := custom("flag-store", report.Correctness)
	needsProps := custom("flag-store-inferred", report.Performance, infer.Properties)
	cat, err := pipeline.NewCatalogue(flag, needsProps)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range cat.Kinds() {
		names = append(names, string(k.Kind))
	}
	if i := slices.Index(names, "flag-store"); i != len(pipeline.Analyzers()) || names[i+1] != "flag-store-inferred" || len(names) != len(pipeline.Kinds())+2 {
		t.Errorf("kinds %q: want the custom ones right after scry's trace analyzers", names)
	}
	if r, ok := cat.Lookup("flag-store"); !ok || r.Doc != flag.Doc || r.Class != report.Correctness {
		t.Errorf("Lookup(flag-store) = %+v, %v", r, ok)
	}
	if _, ok := (*pipeline.Catalogue)(nil).Lookup("flag-store"); ok {
		t.Error("scry's own catalogue knows a custom kind")
	}
	for _, tc := range []struct {
		names   []string
		noInfer bool
		want    []string
		err     string
	}{
		{[]string{"flag-store"}, false, []string{"flag-store"}, ""},
		{[]string{"flag-store,redundant-fence"}, true, []string{"redundant-fence", "flag-store"}, ""},
		{nil, true, []string{"unpersisted-store", "overwritten-unpersisted", "tx-unlogged-store", "redundant-flush", "redundant-fence", "redundant-tx-add", "pm-lock-word", "inter-thread-inconsistency", "flag-store"}, ""},
		{[]string{"flag-store-inferred"}, true, nil, "needs inference"},
		{[]string{"flag-stor"}, false, nil, "unknown oracle flag-stor (known: unpersisted-store"},
	} {
		sel, err := cat.Select(tc.names, tc.noInfer)
		var got []string
		for _, a := range sel.Analyzers {
			got = append(got, a.Name)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) || tc.err == "" && (err != nil || !slices.Equal(got, tc.want)) {
			t.Errorf("Select(%q, %v) = %q, %v; want %q, %q", tc.names, tc.noInfer, got, err, tc.want, tc.err)
		}
	}
	if _, err := pipeline.AnalyzeSource(pool().Store(3, A, 8).Exit(0).Source(t), pipeline.AnalyzeOptions{Oracles: []string{"flag-store"}}); err == nil {
		t.Error("scry's own catalogue ran a custom kind")
	}
	rep := analyze(t, pool().Store(3, A, 8).Store(4, B, 8).Persist(5, A, 8).Persist(6, B, 8).Exit(0), pipeline.AnalyzeOptions{Catalogue: cat, NoInfer: true})
	if got := analysistest.Summary(rep); !slices.Equal(got, []string{"flag-store@3"}) || !rep.HasCorrectness() {
		t.Errorf("findings %q, want flag-store@3 (correctness)", got)
	}
	want := flag.Rule()
	want.Custom = true
	if !slices.Contains(rep.Rules, want) || slices.ContainsFunc(rep.Rules, func(r report.Rule) bool { return r.Custom && r.Kind != flag.Kind() }) {
		t.Errorf("rules %+v: want the custom kind, alone marked Custom", rep.Rules)
	}
	if r, _ := cat.Lookup("flag-store"); !r.Custom {
		t.Errorf("the catalogue's rule of flag-store is not marked Custom: %+v", r)
	}

	cycleA := custom("cycle-a", report.Correctness)
	cycleB := custom("cycle-b", report.Correctness, cycleA)
	cycleA.Requires = []*analysis.Analyzer{cycleB}
	for _, tc := range []struct {
		name string
		as   []*analysis.Analyzer
		err  string
	}{
		{"nil", []*analysis.Analyzer{flag, nil}, "custom analyzer 2 is nil"},
		{"not kebab-case", []*analysis.Analyzer{custom("FlagStore", report.Correctness)}, `name "FlagStore" is not kebab-case`},
		{"no class", []*analysis.Analyzer{custom("flag-only", "")}, "reports no findings"},
		{"a kind of scry's own", []*analysis.Analyzer{custom("unpersisted-store", report.Correctness)}, "unpersisted-store is a kind of scry's own"},
		{"a crash kind", []*analysis.Analyzer{custom("fs-ordering-violation", report.Correctness)}, "fs-ordering-violation is a kind of scry's own"},
		{"one of scry's analyzers", []*analysis.Analyzer{custom("infer-properties", report.Correctness)}, "two analyzers named infer-properties"},
		{"twice", []*analysis.Analyzer{flag, custom("flag-store", report.Performance)}, "two custom analyzers are named flag-store"},
		{"cycle", []*analysis.Analyzer{cycleA}, "cycle"},
	} {
		if _, err := pipeline.NewCatalogue(tc.as...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: NewCatalogue error %v, want %q", tc.name, err, tc.err)
		}
	}
}
