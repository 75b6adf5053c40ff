package infer_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/trace"
)

const (
	base = 0x10000
	size = 0x10000
	X    = base + 0x100 // the guardian (flag), on its own cache line
	Y    = base + 0x200 // the guarded data, another line
	Z    = base + 0x300 // a second guardian
	W    = base + 0x400 // more data
	Out  = 0x900000     // not PM

	sX, sY, sZ, sW = 1, 2, 3, 4 // the stores writing X, Y, Z, W
)

const (
	ctl  = trace.DepControl
	val  = trace.DepValue
	addr = trace.DepAddress
)

func pool() *analysistest.Builder { return analysistest.New().Map(1, base, size) }

// guarded declares the static facts of `if (load 11) { load 12 }`: branch 20 decides on the
// load at site 11, the load at site 12 is control dependent on it.
func guarded(b *analysistest.Builder) *analysistest.Builder {
	return b.Branch(20).Dep(20, val, 11).Dep(12, ctl, 20)
}

// props lists the properties of a result as "RULE before>after" or "RULE s1,s2".
func props(res *infer.Result, rules ...infer.Rule) []string {
	var out []string
	for _, p := range res.Properties {
		if len(rules) > 0 && !slices.Contains(rules, p.Rule) {
			continue
		}
		if p.Kind == infer.Ordering {
			out = append(out, fmt.Sprintf("%s %d>%d", p.Rule, p.Before, p.After))
		} else {
			s := fmt.Sprint(p.Sites)
			out = append(out, fmt.Sprintf("%s %s", p.Rule, s[1:len(s)-1]))
		}
	}
	slices.Sort(out)
	return out
}

func run(t *testing.T, b *analysistest.Builder, rules infer.RuleSet) *infer.Result {
	t.Helper()
	res, err := infer.Infer(b.Reader(t), infer.Options{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestInferRules(t *testing.T) {
	// writes: the data Y, then the flag X (any order works for inference).
	writes := func(b *analysistest.Builder) *analysistest.Builder { return b.Store(sY, Y, 8).Store(sX, X, 8) }
	tests := []struct {
		name  string
		b     *analysistest.Builder
		rules []infer.Rule // compared; nil: MPB, MPA, RO1, RO2, RO3, RA1
		want  []string
	}{
		{"MPB minimal: guarded read",
			writes(guarded(pool())).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, []string{"MPB 2>1", "RO3 2>1"}},
		{"DURA: every PM store site",
			writes(guarded(pool())).Store(sW, Out, 8).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			[]infer.Rule{infer.DURA}, []string{"DURA 1", "DURA 2"}},
		{"no dependence fact: nothing",
			writes(pool()).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"dependent load before the guard load",
			writes(guarded(pool())).Load(12, Y, 8).Load(11, X, 8).Exit(0),
			nil, nil},
		{"guard and dependent in different activations of one function",
			writes(guarded(pool())).Frames(1).Load(11, X, 8).Frames(2).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"guard in a caller's activation does not guard the callee's own branch",
			writes(guarded(pool())).Frames(1).Load(11, X, 8).Frames(1, 2).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"same activation after a call returned",
			writes(guarded(pool())).Frames(1).Load(11, X, 8).Frames(1, 2).Load(13, W, 8).Frames(1).Load(12, Y, 8).Exit(0),
			nil, []string{"MPB 2>1", "RO3 2>1"}},
		{"guard read initial content",
			guarded(pool()).External(0, X, 8, trace.ExternalInitial).Store(sY, Y, 8).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"dependent read initial content",
			guarded(pool()).Store(sX, X, 8).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"library write has no store site",
			guarded(pool()).Store(sY, Y, 8).External(50, X, 8, trace.ExternalPersisted).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"both loads read one store",
			guarded(pool()).Store(sX, X, 0x200).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"guard load outside PM supersedes an older PM instance",
			writes(guarded(pool())).Load(11, X, 8).Load(11, Out, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"dependent load outside PM",
			writes(guarded(pool())).Load(11, X, 8).Load(12, Out, 8).Exit(0),
			nil, nil},
		{"region unmapped: its writers are forgotten",
			writes(guarded(pool())).Unmap(1, 60).Map(2, base, size).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, nil},
		{"transitive control dependence within a function",
			writes(pool().Branch(20).Branch(21).Dep(20, val, 11).Dep(21, ctl, 20).Dep(12, ctl, 21)).
				Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, []string{"MPB 2>1", "RO3 2>1"}},
		{"control dependence through a call site",
			writes(guarded(pool()).Stack(1, 0, 30).Stack(2, 1, 31).Dep(31, ctl, 20).Dep(12, ctl, 99)).
				Context(1).Frames(5).Load(11, X, 8).
				Context(2).Frames(5, 6).Load(12, Y, 8).Exit(0),
			nil, []string{"MPB 2>1", "RO3 2>1"}},
		{"control dependence through two calls",
			writes(pool().Branch(20).Dep(20, val, 11).Dep(31, ctl, 20).Stack(1, 0, 30).Stack(2, 1, 31).Stack(3, 2, 32)).
				Context(1).Frames(5).Load(11, X, 8).
				Context(2).Frames(5, 6).Load(14, W, 8).
				Context(3).Frames(5, 6, 7).Load(13, Y, 8).Exit(0),
			[]infer.Rule{infer.MPB}, []string{"MPB 2>1"}},
		{"call site not control dependent: nothing inherited",
			writes(guarded(pool()).Stack(1, 0, 30).Stack(2, 1, 31)).
				Context(1).Frames(5).Load(11, X, 8).
				Context(2).Frames(5, 6).Load(13, Y, 8).Exit(0),
			nil, nil},
		{"call returned: the next call does not inherit the guard of the earlier one",
			writes(guarded(pool()).Stack(1, 0, 30).Stack(2, 1, 31).Stack(3, 1, 32).Dep(31, ctl, 20)).
				Context(1).Frames(5).Load(11, X, 8).
				Context(2).Frames(5, 6).Load(14, W, 8).
				Context(3).Frames(5, 7).Load(13, Y, 8).Exit(0),
			nil, nil},
		{"inter-thread: writer thread, reader thread",
			guarded(pool()).Thread(1).Store(sY, Y, 8).Store(sX, X, 8).Thread(2).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			nil, []string{"MPB 2>1", "RO3 2>1"}},
		{"MPA: a cycle of two MPBs",
			writes(guarded(pool()).Branch(21).Dep(21, val, 13).Dep(14, ctl, 21)).
				Load(11, X, 8).Load(12, Y, 8).Load(13, Y, 8).Load(14, X, 8).Exit(0),
			[]infer.Rule{infer.MPB, infer.MPA}, []string{"MPA 1 2", "MPB 1>2", "MPB 2>1"}},
		{"MPA: no cycle, no property",
			writes(guarded(pool()).Store(sW, W, 8).Branch(21).Dep(21, val, 13).Dep(14, ctl, 21)).
				Load(11, X, 8).Load(12, Y, 8).Load(13, Y, 8).Load(14, W, 8).Exit(0),
			[]infer.Rule{infer.MPB, infer.MPA}, []string{"MPB 2>1", "MPB 4>2"}},
		{"RO2: store control dependent on a load",
			writes(pool().Branch(20).Dep(20, val, 11).Dep(5, ctl, 20)).Load(11, X, 8).Store(5, W, 8).Exit(0),
			[]infer.Rule{infer.RO2}, []string{"RO2 1>5"}},
		{"RO1: store value dependent on a load",
			writes(pool().Dep(6, val, 11)).Load(11, X, 8).Store(6, W, 8).Exit(0),
			[]infer.Rule{infer.RO1, infer.RO2}, []string{"RO1 1>6"}},
		{"RO1: store address dependent on a load",
			writes(pool().Dep(6, addr, 11)).Load(11, X, 8).Store(6, W, 8).Exit(0),
			[]infer.Rule{infer.RO1}, []string{"RO1 1>6"}},
		{"RO1: the load runs after the store",
			writes(pool().Dep(6, val, 11)).Store(6, W, 8).Load(11, X, 8).Exit(0),
			[]infer.Rule{infer.RO1}, nil},
		{"RA1: two guardians in one operation",
			guarded(pool().Branch(21).Dep(21, val, 13).Dep(14, ctl, 21)).
				Store(sY, Y, 8).Store(sX, X, 8).Store(sW, W, 8).Store(sZ, Z, 8).
				OpBegin(0, "get").Load(11, X, 8).Load(12, Y, 8).Load(13, Z, 8).Load(14, W, 8).OpEnd(0).Exit(0),
			[]infer.Rule{infer.RA1}, []string{"RA1 1 3"}},
		{"RA1: guardians in different operations are not paired",
			guarded(pool().Branch(21).Dep(21, val, 13).Dep(14, ctl, 21)).
				Store(sY, Y, 8).Store(sX, X, 8).Store(sW, W, 8).Store(sZ, Z, 8).
				OpBegin(0, "get").Load(11, X, 8).Load(12, Y, 8).OpEnd(0).
				OpBegin(1, "get").Load(13, Z, 8).Load(14, W, 8).OpEnd(1).Exit(0),
			[]infer.Rule{infer.RA1}, nil},
		{"RA1: two instances of one guardian site",
			guarded(pool()).Store(sY, Y, 8).Store(sX, X, 8).Store(sW, W, 8).Store(sX, Z, 8).
				OpBegin(0, "get").Load(11, X, 8).Load(12, Y, 8).Load(11, Z, 8).Load(12, W, 8).OpEnd(0).Exit(0),
			[]infer.Rule{infer.RA1}, []string{"RA1 1"}},
		{"loop: the guard's previous instance guards the next",
			guarded(pool()).Dep(11, ctl, 20).
				Store(sY, Y, 8).Store(sX, X, 8).Load(11, X, 8).Load(11, Y, 8).Exit(0),
			[]infer.Rule{infer.MPB}, []string{"MPB 2>1"}},
		{"rule set mpb leaves WITCHER's rules out",
			writes(guarded(pool())).Load(11, X, 8).Load(12, Y, 8).Exit(0),
			[]infer.Rule{infer.RO3, infer.MPB}, []string{"MPB 2>1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := infer.Both
			if tt.name == "rule set mpb leaves WITCHER's rules out" {
				set = infer.MPBSet
			}
			res := run(t, tt.b, set)
			rules := tt.rules
			if rules == nil {
				rules = []infer.Rule{infer.MPB, infer.MPA, infer.RO1, infer.RO2, infer.RO3, infer.RA1}
			}
			if got := props(res, rules...); !slices.Equal(got, tt.want) {
				t.Errorf("properties %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEvidenceAndCounts(t *testing.T) {
	b := guarded(pool()).Store(sY, Y, 8).Store(sX, X, 8)
	for range 3 {
		b.Load(11, X, 8).Load(12, Y, 8)
	}
	b.Exit(0)
	res, err := infer.Infer(b.Reader(t), infer.Options{Rules: infer.MPBSet, MaxEvidence: 2})
	if err != nil {
		t.Fatal(err)
	}
	mpb := res.Of(infer.MPB)
	if len(mpb) != 1 {
		t.Fatalf("MPB properties %+v, want one", mpb)
	}
	p := mpb[0]
	if p.Count != 3 {
		t.Errorf("count %d, want 3", p.Count)
	}
	if len(p.Evidence) != 1 { // the three instances have the same static evidence
		t.Errorf("evidence %+v, want one example", p.Evidence)
	}
	e := p.Evidence[0]
	if e.Guard != 11 || e.Dependent != 12 || e.Branch != 20 || e.GuardEvent >= e.DependentEvent {
		t.Errorf("evidence %+v", e)
	}
	if got, want := res.Counts, map[infer.Rule]int{infer.DURA: 2, infer.MPB: 1, infer.MPA: 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	for _, id := range []uint32{1, 2, 11, 12, 20} {
		if _, ok := res.Sites[id]; !ok {
			t.Errorf("site %d missing from Result.Sites", id)
		}
	}
	if res.Loads != 6 || res.Stores != 2 {
		t.Errorf("loads %d stores %d", res.Loads, res.Stores)
	}
	if got, want := p.Describe(res.Sites), "MPB: store at test.c:2 (fn2) must persist before store at test.c:1 (fn1)"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	for i, p := range res.Properties {
		if p.ID != i+1 {
			t.Errorf("property %d has id %d", i, p.ID)
		}
	}
	none, err := infer.Infer(b.Reader(t), infer.Options{Rules: infer.MPBSet, MaxEvidence: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ev := none.Of(infer.MPB)[0].Evidence; len(ev) != 0 {
		t.Errorf("MaxEvidence -1 kept %v", ev)
	}
}

func TestInferErrors(t *testing.T) {
	if _, err := infer.Infer(pool().Exit(0).Reader(t), infer.Options{Rules: "bogus"}); err == nil {
		t.Error("unknown rule set accepted")
	}
	// A truncated trace: the properties so far and an ErrTruncated error.
	b := guarded(pool()).Store(sY, Y, 8).Store(sX, X, 8).Load(11, X, 8).Load(12, Y, 8)
	res, err := infer.Infer(b.Reader(t), infer.Options{})
	if err == nil || res == nil || len(res.Of(infer.MPB)) != 1 {
		t.Errorf("truncated trace: %v, %+v", err, res)
	}
}

func TestDeterministic(t *testing.T) {
	b := guarded(pool().Branch(21).Dep(21, val, 13).Dep(14, ctl, 21).Dep(5, ctl, 20).Dep(6, val, 11)).
		Store(sY, Y, 8).Store(sX, X, 8).Store(sW, W, 8).Store(sZ, Z, 8).
		Load(11, X, 8).Load(12, Y, 8).Load(13, Z, 8).Load(14, W, 8).Load(13, Y, 8).Load(14, X, 8).Store(5, W, 8).Store(6, Z, 8).Exit(0)
	first := fmt.Sprintf("%+v", run(t, b, infer.Both).Properties)
	for range 10 {
		if got := fmt.Sprintf("%+v", run(t, b, infer.Both).Properties); got != first {
			t.Fatalf("results differ between runs:\n%s\n%s", first, got)
		}
	}
}
