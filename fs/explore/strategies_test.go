package explore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/fs/model"
)

// buildTestModel builds the model of a hand-written run (fstest.RecordRun) as a recorded run
// is built: from its trace records, by the model's builder.
func buildTestModel(t *testing.T, init map[string]string, ops []string) *model.Model {
	t.Helper()
	base, tr := fstest.RecordRun(t, init, ops)
	m := buildModelFrom(t, base, tr)
	if len(m.Warnings) > 0 {
		t.Fatalf("model warnings: %v", m.Warnings)
	}
	return m
}

// TestStrategies checks the crash states each strategy chooses (ALICE, OSDI'14 §4.3) on small
// runs: the crash points of prefix, the (lost, persisted) pairs of omit-one, and how many
// states split and exhaustive build.
func TestStrategies(t *testing.T) {
	cases := []struct {
		name, apm string
		init      map[string]string
		ops       []string
		failed    []int    // crash points whose prefix state fails
		units     [][2]int // failing prefix runs as units (failingRuns)
		points    []int
		omitOne   []string
		split     int
		exhaust   int
	}{
		// Under the default model nothing is ordered: every operation can be lost before each
		// later one. split: the append cut after its zeros and after its garbage (1 piece), the
		// same with its 3 one-byte pieces (8 cuts, each also with an earlier piece lost: 36),
		// and with 4 KiB blocks the one state not seen already (the garbage without the
		// zeros). exhaustive: 1 + 14 + 16 states holding a micro-operation of their crash point.
		{name: "rename over a file", apm: "default", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"}, points: []int{0, 1, 2},
			omitOne: []string{"0-1", "0-2", "1-2"}, split: 2 + 36 + 1, exhaust: 31},
		// ext4-ordered orders the three: no state loses one and keeps a later one, no call is
		// cut (each is one block), one state per crash point.
		{name: "rename over a file", apm: "ext4-ordered", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"}, points: []int{0, 1, 2},
			split: 0, exhaust: 3},
		// Operations in a failing prefix run, and the one after it, are one unit: split leaves
		// them to prefix, omit-one loses the unit whole, and there is no later crash point;
		// exhaustive tries them all (the truncation, then 14 states of the truncation and the
		// append's zeros, garbage and data).
		{name: "patched", apm: "default", init: map[string]string{"f": "ba"},
			ops: []string{"opentrunc f", "append f ab"}, failed: []int{0}, units: [][2]int{{0, 1}}, points: []int{0, 1}, exhaust: 15},
		// The same unit followed by a log: omit-one loses the unit whole before the log's
		// creation and append (0-2, 0-3), never its truncation alone (that is the run's own
		// failure), and the log's creation before its append; split cuts the log's creation and
		// append only (the unit persists as one), 18 states under the model's splits, where
		// without the unit the truncation and the first append would add theirs.
		{name: "patched then log", apm: "default", init: map[string]string{"f": "ba"},
			ops: []string{"opentrunc f", "append f ab", "creat l", "append l ok"}, failed: []int{0}, units: [][2]int{{0, 1}},
			points: []int{0, 1, 2, 3}, omitOne: []string{"0-2", "0-3", "2-3"}, split: 18, exhaust: 255},
		// The output is kept by every later state; the write may be lost before it only.
		// split: the write's 3 one-byte pieces, the first, two, the second alone.
		// exhaustive: {write}, {out}, {write, out}, {write, out, fsync}.
		{name: "fsync after an output", apm: "default", init: map[string]string{"f": "abc"},
			ops: []string{"write f 0 xyz", "out 1", "fsync f"}, points: []int{0, 1, 2},
			omitOne: []string{"0-1"}, split: 3, exhaust: 4},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.apm, func(t *testing.T) {
			apm, err := model.APMByName(c.apm)
			if err != nil {
				t.Fatal(err)
			}
			p := newPlan(buildTestModel(t, c.init, c.ops), apm)
			patch := failingRuns{failed: map[int]bool{}, units: c.units}
			for _, i := range c.failed {
				patch.failed[i] = true
			}
			var points []int
			for _, it := range p.prefix() {
				points = append(points, it.point)
				if !slices.Equal(it.st.Persisted, p.upTo(0, it.point).Persisted) {
					t.Errorf("prefix state at %d is not everything issued", it.point)
				}
			}
			if !slices.Equal(points, c.points) {
				t.Errorf("prefix crash points %v, want %v", points, c.points)
			}
			var pairs []string
			for _, it := range p.omitOne(patch) {
				pairs = append(pairs, fmt.Sprintf("%d-%d", it.a, it.b))
				if !model.Legal(p.micro[0], it.st) {
					t.Errorf("omit-one state %d-%d is illegal", it.a, it.b)
				}
			}
			if !slices.Equal(pairs, c.omitOne) {
				t.Errorf("omit-one pairs %v, want %v", pairs, c.omitOne)
			}
			sp := p.split(patch)
			for _, it := range sp {
				if !model.Legal(p.micro[it.build], it.st) {
					t.Errorf("split state of %d is illegal", it.a)
				}
			}
			if len(sp) != c.split {
				t.Errorf("split: %d states, want %d", len(sp), c.split)
			}
			ex, skipped := p.exhaustive(defaultMaxFree)
			if len(ex) != c.exhaust || skipped != 0 {
				t.Errorf("exhaustive: %d states (%d points skipped), want %d", len(ex), skipped, c.exhaust)
			}
		})
	}
}
