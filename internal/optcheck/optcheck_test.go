package optcheck

import (
	"fmt"
	"time"
)

// The checks give nil for what a flag accepts and an error naming the flag for the rest: a
// typed --max-states 0 is refused, the zero value of an options struct (its default) is not.
func Example() {
	fmt.Println(MaxStates(4096, true))
	fmt.Println(MaxStates(-1, true))
	fmt.Println(MaxStates(0, false))
	fmt.Println(MaxStates(0, true))
	fmt.Println(MaxStates(-2, false))
	fmt.Println(Jobs(0))
	fmt.Println(Jobs(-1))
	fmt.Println(Duration("--time-budget", 0, "no budget"))
	fmt.Println(Duration("--time-budget", -time.Second, "no budget"))
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// --max-states 0: give a positive number of states, or -1 for no cap
	// --max-states -2: give a positive number of states, or -1 for no cap
	// <nil>
	// --jobs -1: give a positive number of runs at once, or 0 for one per CPU
	// <nil>
	// --time-budget -1s: give a positive duration, or 0 for no budget
}
