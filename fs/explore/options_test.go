package explore

import (
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/shard"
)

// TestOptionsCheck: Check refuses what the command line refuses, with the message naming the
// flag, and passes the flags' defaults and good values; Resolve names the persistence model.
func TestOptionsCheck(t *testing.T) {
	ok := Options{MaxStates: -1} // the flags' defaults
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string // "" no error, else a part of it
	}{
		{"defaults", func(*Options) {}, ""},
		{"good values", func(o *Options) {
			o.APM, o.Strategies, o.MaxStates, o.Jobs, o.CheckerTimeout, o.TimeBudget = "ext4-ordered", Strategies, 100, 2, time.Second, time.Minute
		}, ""},
		{"a shard", func(o *Options) { o.Shard = shard.Shard{Index: 1, Count: 3} }, ""},
		{"max-states 0", func(o *Options) { o.MaxStates = 0 }, "--max-states 0: give a positive number of states, or -1 for no cap"},
		{"max-states -2", func(o *Options) { o.MaxStates = -2 }, "--max-states -2:"},
		{"jobs -1", func(o *Options) { o.Jobs = -1 }, "--jobs -1: give a positive number of runs at once, or 0 for one per CPU"},
		{"time-budget -1s", func(o *Options) { o.TimeBudget = -time.Second }, "--time-budget -1s: give a positive duration, or 0 for no budget"},
		{"timeout -1s", func(o *Options) { o.CheckerTimeout = -time.Second }, "--timeout -1s: give a positive duration, or 0 for the default of 10s"},
		{"unknown model", func(o *Options) { o.APM = "ext9" }, `unknown persistence model "ext9"`},
		{"unknown strategy", func(o *Options) { o.Strategies = []string{"prefix", "all"} }, `unknown strategy "all" (known: [prefix omit-one split exhaustive])`},
		{"max-states with a shard", func(o *Options) { o.MaxStates, o.Shard = 5, shard.Shard{Count: 2} }, "--max-states bounds the crash states of the whole run"},
	} {
		o := ok
		tc.set(&o)
		err := o.Check()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.want)
		}
	}
	for name, want := range map[string]string{"": "default", "default": "default", "ext4-journal": "ext4-journal"} {
		if apm, err := (Options{APM: name}).Resolve(); err != nil || apm.Name != want {
			t.Errorf("Resolve() of APM %q: %v, %v; want %s", name, apm, err, want)
		}
	}
}
