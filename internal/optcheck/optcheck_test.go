package optcheck

import (
	"strings"
	"testing"
	"time"
)

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" no error, else a part of it
	}{
		{"max-states positive", MaxStates(4096, true), ""},
		{"max-states -1", MaxStates(-1, true), ""},
		{"max-states 0 default", MaxStates(0, false), ""},
		{"max-states 0 typed", MaxStates(0, true), "--max-states 0: give a positive number"},
		{"max-states -2", MaxStates(-2, false), "--max-states -2"},
		{"jobs 0", Jobs(0), ""},
		{"jobs -1", Jobs(-1), "--jobs -1"},
		{"budget 0", Duration("--time-budget", 0, "no budget"), ""},
		{"budget -1s", Duration("--time-budget", -time.Second, "no budget"), "--time-budget -1s: give a positive duration, or 0 for no budget"},
	} {
		if (tc.err == nil) != (tc.want == "") || tc.err != nil && !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}
