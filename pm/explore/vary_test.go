package explore

import (
	"strings"
	"testing"

	"github.com/scry-pm/scry/report"
)

// TestVaryingOutput: the slots program prints the time and its pid before the slots
// (SLOTS_STAMP=1), so no two runs print the same output. The legal outcomes a crash state's run
// fails to match are run a second time and the fields that vary are not compared: the fixed
// interleavings have no finding, the buggy ones still have their ordering violation, with
// sequential and with overlapping operations (the legal outcomes of prep runs).
func TestVaryingOutput(t *testing.T) {
	tests := []struct {
		name    string
		steps   []string
		finding bool
	}{
		{"sequential fixed", []string{"1 begin 0", "1 data 0", "1 valid 0", "1 end 0", "1 begin 1", "1 data 1", "1 valid 1", "1 end 1", "1 begin 2", "1 end 2"}, false},
		{"sequential buggy", []string{"1 begin 0", "1 data 0", "1 valid 0", "1 end 0", "1 begin 1", "1 both 1", "1 end 1", "1 begin 2", "1 end 2"}, true},
		{"overlapping fixed", []string{"1 begin 0", "2 begin 1", "1 data 0", "2 data 1", "2 valid 1", "2 end 1", "1 valid 0", "1 end 0", "1 begin 2", "1 end 2"}, false},
		{"overlapping buggy", []string{"1 begin 0", "2 begin 1", "2 data 1", "1 both 0", "2 valid 1", "2 end 1", "1 end 0", "1 begin 2", "1 end 2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tr, w := slotTrace(t, dir, slotOps, tt.steps)
			r := exploreSlots(t, dir, tr, w, Config{Options: Options{Strategies: []string{"exhaustive"}}}, "SLOTS_STAMP=1")
			st := r.Stats
			if st.RepeatRuns == 0 || st.VaryingOutcomes == 0 || st.VaryingLines != 1 {
				t.Errorf("stats %+v: want legal outcomes run twice, varying in one line", st)
			}
			if !tt.finding {
				if len(r.Findings) != 0 || st.Failures != 0 {
					t.Fatalf("findings %+v, stats %+v", r.Findings, st)
				}
				return
			}
			if len(r.Findings) != 1 || r.Findings[0].Kind != report.OrderingViolation {
				t.Fatalf("findings %+v, want one ordering violation", r.Findings)
			}
			c := r.Findings[0].Crash
			if !strings.Contains(c.DiffCommitted, "+0:0") && !strings.Contains(c.DiffCommitted, "+1:0") {
				t.Errorf("diff:\n%s", c.DiffCommitted)
			}
			if !strings.Contains(c.DiffCommitted, " at {varies} pid {varies}\n") {
				t.Errorf("the stamp line is not left out of the diff:\n%s", c.DiffCommitted)
			}
		})
	}
}
