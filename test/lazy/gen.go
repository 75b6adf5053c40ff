// Package lazy holds the differential test of lazy crash-state exploration (Jaaru, ASPLOS'21,
// §3–4) against exhaustive exploration: on the crash-mode examples and on random programs of a
// tiny persistent-memory interpreter (interp/interp.c), every crash state the exhaustive strategy
// judges must have the outcome of the lazy leaf that covers it (lazy_test.go;
// docs/lazy-exploration.md). This file generates the random programs.
package lazy

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Words is the number of 8-byte words of the interpreter's memory (interp/interp.c's WORDS): three
// cache lines.
const Words = 24

// Program is one random program of the interpreter: its recovery (its second argument) and its
// workload, one operation per line.
type Program struct {
	Recovery string
	Ops      []string
}

// Generate returns the random program of seed (the same for the same seed): 2 to 4 operations
// of 1 to 10 instructions, stores of values 0..3 (few values, so that contents recur) to words
// of a few hot ones, clwb of random words and sfences (an operation ends with one or leaves its
// stores pending), and prints; a recovery of 1 to 4 items reading those words.
func Generate(seed uint64) Program {
	r := rand.New(rand.NewPCG(seed, 0x5c4e1a2b))
	hot := make([]int, 2+r.IntN(5))
	for i := range hot {
		hot[i] = r.IntN(Words)
	}
	w := func() int {
		if r.IntN(5) == 0 {
			return r.IntN(Words)
		}
		return hot[r.IntN(len(hot))]
	}
	var p Program
	for range 2 + r.IntN(3) {
		var ins []string
		for range 1 + r.IntN(10) {
			switch n := r.IntN(10); {
			case n < 6:
				ins = append(ins, fmt.Sprintf("s%d=%d", w(), r.IntN(4)))
			case n < 8:
				ins = append(ins, fmt.Sprintf("f%d", w()))
			case n < 9:
				ins = append(ins, "F")
			default:
				ins = append(ins, fmt.Sprintf("p%d", w()))
			}
		}
		if r.IntN(4) != 0 {
			ins = append(ins, fmt.Sprintf("f%d", w()), "F")
		}
		p.Ops = append(p.Ops, strings.Join(ins, " "))
	}
	var rec []string
	for range 1 + r.IntN(4) {
		switch r.IntN(3) {
		case 0:
			rec = append(rec, fmt.Sprintf("p%d", w()))
		case 1:
			rec = append(rec, fmt.Sprintf("c%d:%d:%d", w(), r.IntN(4), w()))
		default:
			rec = append(rec, fmt.Sprintf("j%d:%d", w(), r.IntN(4)))
		}
	}
	p.Recovery = strings.Join(rec, ",")
	return p
}
