package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/pm/explore"
)

// TestCrashFlags checks the crash-exploration flags bound to explore.Options: --strategy names,
// comma-separated lists, an unknown name's error (which lists every strategy, lazy among them),
// and counts whose 0 is typed, never a default, refused with their flag named.
func TestCrashFlags(t *testing.T) {
	tests := []struct {
		args []string
		want []string // the strategies after CheckFlags
		err  string
	}{
		{[]string{"--strategy", "lazy"}, []string{"lazy"}, ""},
		{[]string{"--strategy", "lazy,invariants"}, []string{"lazy", "invariants"}, ""},
		{[]string{"--strategy", "prefix", "--strategy", " random"}, []string{"prefix", "random"}, ""},
		{nil, nil, ""},
		{[]string{"--strategy", "eager"}, nil, "known: exhaustive, lazy, prefix, heuristic, random, invariants, torn"},
		{[]string{"--max-states", "0"}, nil, "--max-states 0: give a positive number of states, or -1 for no cap"},
		{[]string{"--samples", "0"}, nil, "--samples 0"},
		{[]string{"--cluster-failures", "0"}, nil, "--cluster-failures 0"},
		{[]string{"--max-in-flight", "0"}, nil, "--max-in-flight must be at least 1"},
		{[]string{"--jobs", "-1"}, nil, "--jobs -1"},
		{[]string{"--timeout", "-1s"}, nil, "--timeout -1s"},
		{[]string{"--time-budget", "-1s"}, nil, "--time-budget -1s"},
		{[]string{"--checker", "true"}, nil, "no {image} in the command"},
		{[]string{"--output-filter", "("}, nil, "--output-filter"},
	}
	for _, tt := range tests {
		var o explore.Options
		c := &cobra.Command{Use: "x"}
		addCrashFlags(c, &o, "")
		if err := c.ParseFlags(tt.args); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		err := o.CheckFlags()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one with %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || strings.Join(o.Strategies, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%q: %v %v, want %v", tt.args, o.Strategies, err, tt.want)
		}
	}
	s, err := explore.ResolveStrategies([]string{"lazy"})
	if err != nil || !s[0].Lazy || !strings.Contains(s[0].Source, "Jaaru (ASPLOS'21) §3–4") {
		t.Errorf("lazy: %+v %v", s, err)
	}
}
