// Package optcheck holds the checks of the options both modes share, so that a flag means the
// same, and is refused with the same message, in `scry check` (pm/explore.Options) and `scry fs
// check` (fs/explore.Options).
package optcheck

import (
	"fmt"
	"time"
)

// MaxStates checks --max-states N: positive, or -1 for no cap. 0 is refused when typed (typed:
// the value comes from the command line, whose default is never 0); otherwise it is the zero
// value of an options struct, its mode's default.
func MaxStates(n int, typed bool) error {
	if n < -1 || n == 0 && typed {
		return fmt.Errorf("--max-states %d: give a positive number of states, or -1 for no cap", n)
	}
	return nil
}

// Jobs checks --jobs J: 0 (one per CPU) or positive.
func Jobs(n int) error {
	if n < 0 {
		return fmt.Errorf("--jobs %d: give a positive number of runs at once, or 0 for one per CPU", n)
	}
	return nil
}

// Duration rejects a negative duration for flag, whose 0 means zero (its default, e.g. "the
// default of 10s"): every duration option of scry is a positive duration or 0 for its default
// (--time-budget 0: no budget).
func Duration(flag string, d time.Duration, zero string) error {
	if d < 0 {
		return fmt.Errorf("%s %v: give a positive duration, or 0 for %s", flag, d, zero)
	}
	return nil
}
