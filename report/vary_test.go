package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestVaryingLinesNote: the text report says how many output lines vary between identical runs
// when some legal outcome varied, and nothing when none did; JSON carries the counts.
func TestVaryingLinesNote(t *testing.T) {
	for _, tt := range []struct {
		stats Stats
		want  string
	}{
		{Stats{RepeatRuns: 14, VaryingOutcomes: 12, VaryingLines: 3}, "scry: 3 output lines vary between identical runs and are not compared where they vary (12 of the 14 legal outcomes run a second time printed something else)\n"},
		{Stats{RepeatRuns: 2, VaryingOutcomes: 1, VaryingLines: 1}, "scry: 1 output line varies between identical runs and is not compared where they vary (1 of the 2 legal outcomes run a second time printed something else)\n"},
		{Stats{RepeatRuns: 2}, ""},
	} {
		r := sample()
		s := tt.stats
		r.Stats = &s
		var b bytes.Buffer
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, l := range strings.SplitAfter(b.String(), "\n") {
			if strings.Contains(l, "between identical runs") {
				got += l
			}
		}
		if got != tt.want {
			t.Errorf("%+v: note %q, want %q", tt.stats, got, tt.want)
		}
		b.Reset()
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(b.String(), `"varying_lines"`); has != (tt.stats.VaryingLines > 0) {
			t.Errorf("%+v: JSON has varying_lines: %v", tt.stats, has)
		}
	}
}
