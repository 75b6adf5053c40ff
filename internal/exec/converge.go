package exec

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stopping a run whose state has converged with a legal outcome's.
//
// WITCHER's output-equivalence oracle (WITCHER, SOSP'21, §4.5) runs the program on a crash image
// with the rest of the workload and compares its output with the legal outcomes'. A run on a crash
// image of an operation whose recovery brings the pool back to the state of one legal outcome
// then repeats that legal outcome's run, operation for operation, to the end of the workload: the
// cost of every passing state is the whole suffix of the workload, which makes a whole
// exploration quadratic in the number of operations. The runtime (native/runtime/converge.c)
// therefore hashes the pool file at the run's first read of standard input, once the program
// has opened its pool (for a libpmemobj pool: once pmemobj_open has returned, so PMDK's
// recovery has run), and the legal outcomes' runs report their hash at the same point. A run
// on a crash image whose hash equals one of theirs is stopped there: from that point on it
// would run exactly as that legal outcome's run did (same program, same pool content, same rest
// of the input), and its outcome is that legal outcome's.
//
// What the comparison ignores: byte ranges that hold nothing the program reads again unless it
// crashes once more (Converge.Exclude: the run-time state of a libpmemobj pool, and its lanes,
// whose undo and redo logs keep stale entries that differ between a recovered crash image and
// the legal images, see pmdk.ScratchRanges). What it assumes: the program keeps no volatile copy of PM data taken before
// its recovery rewrote that data (its volatile state at its first read is a function of the
// pool's content then), and it depends on nothing else that differs between the runs (files
// other than the pool). --no-converge turns the comparison off.

// Converge asks a run to hash its pool at its first read of standard input (see the comment
// above) and, when Legal is not empty, to stop there when the hash equals one of Legal's.
type Converge struct {
	// Out is the file the runtime writes the hash and the verdict to: a path scry owns (a
	// worker's directory), removed before the run and read after it.
	Out string
	// Exclude lists byte ranges [start, end) of the pool whose content the hash ignores.
	Exclude [][2]int64
	// NeedOpen: the hash may only be taken after pmemobj_open or pmemobj_create returned a
	// pool in the run (set with Exclude for a libpmemobj pool, whose lanes are recovered there).
	NeedOpen bool
	// Legal are the hashes of the legal outcomes' runs (32 hex digits each); a run whose hash
	// equals Legal[i] stops with Outcome.ConvergedTo = i+1.
	Legal []string
}

// convergeVar is the runtime's variable (native/runtime/converge.c).
const convergeVar = "SCRY_CONVERGE"

type convergeKey struct{}

// WithConverge returns a context under which Target.Run and ForkServers.RunWithin ask the run to
// hash its pool (see Converge); c nil returns ctx.
func WithConverge(ctx context.Context, c *Converge) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, convergeKey{}, c)
}

func convergeOf(ctx context.Context) *Converge {
	c, _ := ctx.Value(convergeKey{}).(*Converge)
	return c
}

// env returns the run's SCRY_CONVERGE assignment for the pool file at the absolute path pool:
// six fields separated by newlines (version 1, Out, pool, the excluded ranges as OFFSET+LENGTH
// separated by commas, NeedOpen as 0 or 1, the legal hashes separated by spaces).
func (c *Converge) env(pool string) string {
	var excl []string
	for _, r := range c.Exclude {
		excl = append(excl, fmt.Sprintf("%d+%d", r[0], r[1]-r[0]))
	}
	open := "0"
	if c.NeedOpen {
		open = "1"
	}
	return convergeVar + "=" + strings.Join([]string{"1", c.Out, pool, strings.Join(excl, ","), open, strings.Join(c.Legal, " ")}, "\n")
}

// prepare removes what an earlier run left in Out, so that the file read after the run is this
// run's.
func (c *Converge) prepare() {
	if c != nil {
		os.Remove(c.Out)
	}
}

// collect reads Out after the run into o: StateHash, and ConvergedTo when the runtime stopped the
// run at a legal outcome's state. A run that never read its standard input (or ran a program
// without the runtime's convergence) leaves no file: nothing is set. The file is removed.
func (c *Converge) collect(o *Outcome) {
	if c == nil {
		return
	}
	data, err := os.ReadFile(c.Out)
	os.Remove(c.Out)
	if err != nil {
		return
	}
	o.StateHash, o.ConvergedTo, o.ConvergeErr = parseConverge(data, len(c.Legal))
}

// parseConverge parses the runtime's report (lines "H <hash>", "C <index>", "E <reason>"): the
// hash, the legal outcome matched (index + 1, 0 for none; an index outside [0, legal) or a
// report without a valid hash is no match) and the runtime's error, if any.
func parseConverge(data []byte, legal int) (hash string, to int, errText string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		kind, arg, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "H":
			if validHash(arg) {
				hash = arg
			}
		case "C":
			if i, err := strconv.Atoi(arg); err == nil && i >= 0 && i < legal && hash != "" {
				to = i + 1
			}
		case "E":
			errText = arg
		}
	}
	return hash, to, errText
}

// validHash reports whether s is a hash as the runtime writes it: 32 lowercase hex digits.
func validHash(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ConvergedOutcome returns the outcome of a run stopped at legal's state (o.ConvergedTo names
// legal; the caller passes that legal outcome): legal's outcome, which the run would have repeated
// from that point, with the run's duration and ConvergedTo kept. ok is false when the output o
// printed before it stopped is not the beginning of legal's (normalized as Normalized does): then
// the run did not behave as legal's up to that point, and must be run again in full.
func (o Outcome) ConvergedOutcome(legal Outcome) (Outcome, bool) {
	if o.ConvergedTo == 0 || !legal.Completed() || o.Err != nil {
		return o, false
	}
	if !bytes.HasPrefix(legal.Normalized(), o.Normalized()) {
		return o, false
	}
	c := legal
	c.Duration, c.ConvergedTo, c.StateHash = o.Duration, o.ConvergedTo, o.StateHash
	return c, true
}
