package exec

import (
	"regexp"
	"testing"
)

func TestVariance(t *testing.T) {
	out := func(s string) Outcome { return Outcome{Stdout: []byte(s)} }
	tests := []struct {
		name         string
		a, b         string // two runs of the legal outcome
		lines, flds  int    // what varies
		mask         string // a's output masked
		got          string // a crash image's run
		equivalent   bool
		withoutMasks bool // Equivalent without the variance
	}{
		{name: "identical runs", a: "x 1\ny 2\n", b: "x 1\ny 2\n", mask: "x 1\ny 2\n",
			got: "x 1\ny 3\n", equivalent: false},
		{name: "a time on a line, the rest compared", a: "at 12:03:44 put k1\nget k1: v1\n", b: "at 12:03:45 put k1\nget k1: v1\n",
			lines: 1, flds: 1, mask: "at {varies} put k1\nget k1: v1\n",
			got: "at 13:00:00 put k1\nget k1: v1\n", equivalent: true},
		{name: "a real bug next to a time", a: "at 12:03:44 put k1\nget k1: v1\n", b: "at 12:03:45 put k1\nget k1: v1\n",
			lines: 1, flds: 1, mask: "at {varies} put k1\nget k1: v1\n",
			got: "at 13:00:00 put k1\nget k1: null\n", equivalent: false},
		{name: "a varying field hides no other field of its line", a: "id=0x7f3a key=5\n", b: "id=0x11b0 key=5\n",
			lines: 1, flds: 1, mask: "id={varies} key=5\n",
			got: "id=0x0001 key=6\n", equivalent: false},
		{name: "random keys in a sorted line (mapcli's p)", a: "28 39 108972882111462039 1450742762143358998 \n0\n",
			b: "28 39 2799441533282703671 6202524480768746780 \n0\n", lines: 1, flds: 2,
			mask: "28 39 {varies} {varies} \n0\n", got: "28 39 17 23 \n0\n", equivalent: true},
		{name: "random keys that fall among the stable ones", a: "28 39 108972882111462039 1450742762143358998 \n0\n",
			b: "28 39 2799441533282703671 6202524480768746780 \n0\n", lines: 1, flds: 2,
			mask: "28 39 {varies} {varies} \n0\n", got: "17 28 23 39 \n0\n", equivalent: true},
		{name: "a lost key on that line is still seen", a: "28 39 108972882111462039 \n", b: "28 39 2799441533282703671 \n",
			lines: 1, flds: 1, mask: "28 39 {varies} \n", got: "39 17 \n", equivalent: false},
		{name: "an extra key on that line is still seen", a: "28 39 108972882111462039 \n", b: "28 39 2799441533282703671 \n",
			lines: 1, flds: 1, mask: "28 39 {varies} \n", got: "28 39 17 18 \n", equivalent: false},
		{name: "runs with as many fields: any number", a: "a b c\nend\n", b: "a b\nend\n",
			lines: 1, flds: 1, mask: "a b {varies} {varies}\nend\n", got: "a x b y\nend\n", equivalent: true},
		{name: "hash order", a: "k3 k1 k2\n", b: "k1 k2 k3\n",
			lines: 1, mask: "k1 k2 k3 {varies: order}\n", got: "k2 k3 k1\n", equivalent: true},
		{name: "hash order with a key lost", a: "k3 k1 k2\n", b: "k1 k2 k3\n",
			lines: 1, mask: "k1 k2 k3 {varies: order}\n", got: "k2 k3\n", equivalent: false},
		{name: "padding", a: "n:  7|\n", b: "n: 17|\n",
			lines: 1, flds: 1, mask: "n:  {varies}|\n", got: "n: 8|\n", equivalent: true},
		{name: "lines that differ in number: a block", a: "start\nk1\nk2\nend\n", b: "start\nk3\nend\n",
			lines: 2, mask: "start\n{varies}\nend\n", got: "start\nk9\nk8\nk7\nend\n", equivalent: true},
		{name: "a block keeps its first and last lines compared", a: "start\nk1\nk2\nend\n", b: "start\nk3\nend\n",
			lines: 2, mask: "start\n{varies}\nend\n", got: "start\nk9\nEND\n", equivalent: false},
		{name: "no final newline", a: "t=1", b: "t=2", lines: 1, flds: 1, mask: "t={varies}", got: "t=3", equivalent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := LearnVariance(out(tt.a), out(tt.b))
			if v.Lines() != tt.lines || v.Fields() != tt.flds {
				t.Errorf("LearnVariance: %d lines, %d fields; want %d, %d", v.Lines(), v.Fields(), tt.lines, tt.flds)
			}
			legal := out(tt.a).WithVariance(v)
			if m := string(legal.Normalized()); m != tt.mask {
				t.Errorf("Normalized = %q, want %q", m, tt.mask)
			}
			if m := string(out(tt.b).WithVariance(v).Normalized()); m != tt.mask {
				t.Errorf("the other run Normalized = %q, want %q", m, tt.mask)
			}
			if eq := Equivalent(out(tt.got), legal); eq != tt.equivalent {
				t.Errorf("Equivalent(%q) = %v, want %v", tt.got, eq, tt.equivalent)
			}
			if Equivalent(out(tt.got), out(tt.a)) != tt.withoutMasks {
				t.Errorf("Equivalent without the variance = %v, want %v", !tt.withoutMasks, tt.withoutMasks)
			}
			if d := DiffOutcomes(out(tt.got), legal); (d == "") != tt.equivalent {
				t.Errorf("DiffOutcomes = %q, want a diff: %v", d, !tt.equivalent)
			}
		})
	}
}

// TestVarianceAfterFilterAndPool: a variance is learned and applied after the output filter
// and the pool path's replacement, so runs on images of their own vary in nothing else.
func TestVarianceAfterFilterAndPool(t *testing.T) {
	seed := regexp.MustCompile(`^seed:`)
	run := func(pool, s string) Outcome { return Outcome{Stdout: []byte(s), filter: seed, pool: pool} }
	a := run("/w1/img", "seed: 1\nopened /w1/img at 10:00\n")
	b := run("/w2/img", "seed: 2\nopened /w2/img at 10:01\n")
	v := LearnVariance(a, b)
	if v.Lines() != 1 || v.Fields() != 1 {
		t.Fatalf("LearnVariance: %d lines, %d fields; want 1, 1", v.Lines(), v.Fields())
	}
	got := run("/w3/img", "seed: 3\nopened /w3/img at 11:30\n")
	if !Equivalent(got, a.WithVariance(v)) {
		t.Errorf("not equivalent: %s", DiffOutcomes(got, a.WithVariance(v)))
	}
	if LearnVariance(a, run("/w9/img", "seed: 7\nopened /w9/img at 10:00\n")) != nil {
		t.Error("runs that differ only in the filtered line and the pool path vary")
	}
}
