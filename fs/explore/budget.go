package explore

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/scry-pm/scry/internal/budget"
)

// The time budget (Options.TimeBudget, the CLI's --time-budget) keeps PM mode's semantics
// (pm/explore's Options.TimeBudget): explore for about that long, leave out what does not fit,
// spread what is tested over the whole run, and say what was left out (Stats.SkippedBudget,
// a warning; nothing tested at all is an error). Explore's strategies run one after the other,
// so they share it by budget.Schedule: after a head start of
// budget.HeadStart of the budget D less its reserve for the final phase (clustering the
// findings, keeping the snapshot, writing the report: budget.ScheduleEnd), strategy k of n
// stops starting runs once E·h + E·(1-h)·(k+1)/n has passed since the budget began (Options.Start:
// the command's start, so recording and modelling count), E = ScheduleEnd(D); time a strategy
// leaves unused goes to the next ones; at E every run still going is killed and left out: the
// command ends within its budget. Inside a
// strategy the states run in rounds: first one state of each operation the strategy tests (the
// lost operation of omit-one, the cut one of split, the crash point of prefix and exhaustive),
// the operations in an order that spreads over the run (spread), then a second state of each,
// and so on; so a budget far too short for a program's thousands of files still tests states
// all over its run rather than many of its first operations.

// schedule returns when strategy k of n must stop starting runs (the zero time without budget).
func (e *explorer) schedule(k, n int) time.Time {
	d := e.o.TimeBudget
	if d <= 0 {
		return time.Time{}
	}
	return e.budgetStart.Add(budget.Schedule(d, k, n))
}

// overBudget reports whether a run may no longer start.
func (e *explorer) overBudget() bool {
	return !e.until.IsZero() && (e.o.Now().After(e.until) || e.bctx.Err() != nil)
}

// budgetOrder returns the order in which items run under a budget, as indexes into items: in
// rounds, one item of each tested operation per round, the operations of a round in spread
// order.
func budgetOrder(items []item) []int {
	key := func(it item) int { return it.a }
	var ops []int
	byOp := map[int][]int{}
	for i, it := range items {
		k := key(it)
		if _, ok := byOp[k]; !ok {
			ops = append(ops, k)
		}
		byOp[k] = append(byOp[k], i)
	}
	slices.SortFunc(ops, cmp.Compare)
	var order []int
	sp := spread(len(ops))
	for round := 0; len(order) < len(items); round++ {
		for _, x := range sp {
			if l := byOp[ops[x]]; round < len(l) {
				order = append(order, l[round])
			}
		}
	}
	return order
}

// spread returns 0..n-1 in an order whose every prefix is spread evenly over the range: the
// bit-reversal (van der Corput) order, 0, n/2, n/4, 3n/4, ..., so that the first runs of a
// round test operations from all over the program's run.
func spread(n int) []int {
	if n <= 0 {
		return nil
	}
	w := bits.Len(uint(n - 1))
	out := make([]int, 0, n)
	for i := range 1 << w {
		r := int(bits.Reverse(uint(i)) >> (bits.UintSize - w))
		if w == 0 {
			r = 0
		}
		if r < n {
			out = append(out, r)
		}
	}
	return out
}
