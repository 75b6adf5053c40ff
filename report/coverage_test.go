package report

import (
	"testing"
	"time"
)

// TestChartTicks: the axes' tick steps and the time labels.
func TestChartTicks(t *testing.T) {
	for _, tc := range []struct {
		max, step float64
	}{{0, 1}, {2, 1}, {7, 2}, {57, 20}, {366, 100}, {608, 200}, {5256, 2000}, {80009, 20000}} {
		if got := niceStep(tc.max); got != tc.step {
			t.Errorf("niceStep(%v) = %v, want %v", tc.max, got, tc.step)
		}
	}
	for _, tc := range []struct {
		max, step float64
	}{{0, 1}, {5, 1}, {60, 10}, {300, 60}, {600, 120}, {3600, 600}, {86400, 21600}, {10 * 86400, 2 * 86400}} {
		if got := niceSeconds(tc.max); got != tc.step {
			t.Errorf("niceSeconds(%v) = %v, want %v", tc.max, got, tc.step)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {30 * time.Second, "30s"}, {90 * time.Second, "1m30s"}, {2 * time.Minute, "2m"},
		{time.Hour, "1h"}, {90 * time.Minute, "1h30m"}} {
		if got := durationLabel(tc.d); got != tc.want {
			t.Errorf("durationLabel(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
