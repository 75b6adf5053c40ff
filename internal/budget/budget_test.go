package budget

import (
	"testing"
	"time"
)

// TestSchedule: the schedule ends a reserve before the budget (3 %, at least a quarter of a
// second, at most a quarter of the budget), grants a quarter of what is left as a head start
// and shares the rest equally.
func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		pos, n int
		want   time.Duration
	}{
		{60 * time.Second, 99, 100, 58200 * time.Millisecond},      // the last unit: 60s less 3 %
		{60 * time.Second, 0, 1, 58200 * time.Millisecond},         // one unit
		{60 * time.Second, 1, 4, 58200 * time.Millisecond * 5 / 8}, // h + (1-h)·2/4 = 5/8
		{5 * time.Second, 9, 10, 4750 * time.Millisecond},          // the reserve is at least 0.25 s
		{time.Second / 2, 0, 1, 375 * time.Millisecond},            // and at most a quarter
		{time.Hour, 0, 2, 3492 * time.Second * 5 / 8},              // 3 % of an hour
	} {
		if got := Schedule(c.d, c.pos, c.n); got != c.want {
			t.Errorf("Schedule(%v, %d, %d) = %v, want %v", c.d, c.pos, c.n, got, c.want)
		}
		if got, want := ScheduleEnd(c.d), Schedule(c.d, 0, 1); got != want {
			t.Errorf("ScheduleEnd(%v) = %v, want the last unit's end %v", c.d, got, want)
		}
	}
}
