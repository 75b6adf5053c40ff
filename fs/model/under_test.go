package model

import (
	"slices"
	"testing"
)

// TestLegalUnder: the models under which a crash state of ALICE's default model (or of ext4)
// is legal, as findings report them: effects only ALICE's default produces (an unlink landing
// as a truncation, a write torn inside a 4 KiB block, garbage in an append) are default-only;
// an ordering ext4's delayed allocation breaks is shared with ext4-ordered; a prefix of the run
// is legal everywhere.
func TestLegalUnder(t *testing.T) {
	type sel func(o *Op, mi *Micro) bool
	cases := []struct {
		name  string
		init  map[string]string
		ops   []string
		apm   *APM
		split Split
		keep  sel // the micro-operations the state persists
		want  []string
	}{
		{
			name: "unlink landing as a truncation", init: map[string]string{"f": "abcdef"}, ops: []string{"unlink f"},
			apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return mi.Kind == MTrunc },
			want: []string{"default"},
		},
		{
			name: "overwrite torn in thirds", init: map[string]string{"f": "abcdef"}, ops: []string{"write f 0 UVWXYZ"},
			apm: apmDefault, split: Split{Count: 3},
			keep: func(o *Op, mi *Micro) bool { return mi.Offset == 0 },
			want: []string{"default"},
		},
		{
			name: "append showing garbage", ops: []string{"creat a", "append a xy"},
			apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return mi.Kind == MCreate || mi.Fill == FillGarbage },
			want: []string{"default"},
		},
		{
			name: "rename over a file before the data", init: map[string]string{"f": "old"},
			ops: []string{"creat t", "append t new", "rename t f"}, apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return o.Kind != OpAppend },
			want: []string{"default"},
		},
		{
			name: "rename to a new name before the data", ops: []string{"creat t", "append t new", "rename t f"},
			apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return o.Kind != OpAppend },
			want: []string{"default", "ext4-ordered"},
		},
		{
			name: "the same, found under ext4-ordered", ops: []string{"creat t", "append t new", "rename t f"},
			apm: apmExt4Ordered, split: Split{Aligned: 4096},
			keep: func(o *Op, mi *Micro) bool { return o.Kind != OpAppend },
			want: []string{"default", "ext4-ordered"},
		},
		{
			name: "a prefix", init: map[string]string{"f": "abcdef"}, ops: []string{"write f 0 UV", "creat g", "append g xy", "unlink f"},
			apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return o.Index <= 2 },
			want: []string{"default", "ext4-ordered", "ext4-journal"},
		},
		{
			name: "an O_DSYNC write's range lost", init: map[string]string{"f": "abcd"}, ops: []string{"write f 2 QQ", "write f 0 XY +dsync"},
			apm: apmDefault, split: Split{Count: 1},
			keep: func(o *Op, mi *Micro) bool { return o.Index == 0 },
			want: nil, // illegal everywhere, its own model included: the sync holds the write
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := buildTestModel(t, c.init, c.ops)
			ms := c.apm.Build(m, c.split)
			st := State{Persisted: make([]bool, len(ms))}
			for j := range ms {
				st.Persisted[j] = c.keep(&m.Ops[ms[j].Op], &ms[j])
			}
			var got []string
			for _, a := range APMs() {
				if LegalUnder(m, ms, st, len(m.Ops)-1, a, map[Split][]Micro{}) {
					got = append(got, a.Name)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("legal under %q, want %q", got, c.want)
			}
		})
	}
}
