// Package budget is the schedule of a time budget (`--time-budget D`), shared by PM mode's
// crash exploration (pm/explore, which paces its walks by estimated crash states and stops the
// runs still going at ScheduleEnd) and file-system mode's (fs/explore, whose strategies share
// the budget by Schedule).
package budget

import "time"

// Reserve is the fraction of a time budget kept for the final phase, what runs after the last
// crash state is judged (clustering and placing the findings, writing the report), at least
// MinReserve: the exploration's schedule ends that much before the budget does. Measured on
// mapcli btree (2 000 operations, docs/crash-exploration.md) the final phase takes well under a
// second; the reserve also absorbs the error of the estimate of the runs still queued when the
// schedule ends; the runs still going at the schedule's end are stopped.
const (
	Reserve    = 0.03
	MinReserve = 250 * time.Millisecond
)

// HeadStart is the fraction of a time budget's exploration (ScheduleEnd) Schedule grants before
// its equal shares: one quarter.
const HeadStart = 0.25

// ScheduleEnd is the part of a time budget d its exploration may use: d less the reserve for the
// final phase (Reserve of d, at least MinReserve, at most a quarter of d).
func ScheduleEnd(d time.Duration) time.Duration {
	r := max(time.Duration(float64(d)*Reserve), MinReserve)
	return d - min(r, d/4)
}

// Schedule is the time since a budget of d began by which the unit of work done pos-th (from 0)
// of n must be done: after a head start of HeadStart of the exploration's part of d
// (ScheduleEnd), an equal share of the rest per unit, so that the last one ends at
// ScheduleEnd(d). File-system mode's strategies share their budget so.
func Schedule(d time.Duration, pos, n int) time.Duration {
	h := HeadStart
	return time.Duration(float64(ScheduleEnd(d)) * (h + (1-h)*float64(pos+1)/float64(n)))
}
