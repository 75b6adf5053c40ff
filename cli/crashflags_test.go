package cli

import (
	"strings"
	"testing"
)

// TestStrategyFlag checks --strategy: names, comma-separated lists, and an unknown name's error,
// which lists every strategy (lazy among them).
func TestStrategyFlag(t *testing.T) {
	tests := []struct {
		flags []string
		want  []string
		err   string
	}{
		{[]string{"lazy"}, []string{"lazy"}, ""},
		{[]string{"lazy,invariants"}, []string{"lazy", "invariants"}, ""},
		{[]string{"prefix", " random"}, []string{"prefix", "random"}, ""},
		{[]string{"eager"}, nil, "known: exhaustive, lazy, prefix, heuristic, random, invariants"},
	}
	for _, tt := range tests {
		f := crashFlags{strategies: tt.flags}
		got, err := f.strats()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one with %q", tt.flags, err, tt.err)
			}
			continue
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if err != nil || strings.Join(names, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%q: %v %v, want %v", tt.flags, names, err, tt.want)
		}
	}
	if s, _ := (&crashFlags{strategies: []string{"lazy"}}).strats(); !s[0].Lazy || !strings.Contains(s[0].Source, "Jaaru (ASPLOS'21) §3–4") {
		t.Errorf("lazy: %+v", s[0])
	}
}
