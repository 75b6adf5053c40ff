package exec

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Equivalent is WITCHER's output-equivalence oracle (WITCHER, SOSP'21, §4.5): after
// a crash during operation k, a crash-consistent program recovers as if operation k had either
// committed or rolled back, so running the rest of the workload on the crash image must end like
// one of the two crash-free executions (the legal outcomes, or oracles). Equivalent reports
// whether got matches at least one legal outcome, where two outcomes match when
//
//   - they ended the same way: both exited with the same status, or both were killed by the same
//     signal; and
//   - their normalized standard outputs (Outcome.Normalized, each with its own target's filter,
//     got masked by the legal outcome's Variance: what varies between two identical runs of it)
//     are equal byte for byte.
//
// Consequences, which are the rules for failing runs:
//   - got failing (non-zero exit, signal) where the legal outcomes succeeded is a mismatch, as
//     WITCHER counts a fault as a mismatch.
//   - A legal outcome that itself exited non-zero or crashed (both oracles crashing, say,
//     because the workload hits a bug that has nothing to do with the crash image) still counts:
//     got matches it if it ended the same way with the same output, so the image is not blamed
//     for a failure the crash-free program has too. The caller should report failing oracles
//     on their own.
//   - A hang is never equivalent: got timing out never matches, and a legal outcome that timed
//     out, could not start or was interrupted (Err) matches nothing; with no usable legal
//     outcome the comparison is inconclusive and Equivalent returns false, so the caller should
//     look at the oracles before blaming the image.
//   - got that could not start or was interrupted (Err) matches nothing.
//
// Truncated outputs are compared as they are (both were cut at the same bound).
func Equivalent(got Outcome, legal ...Outcome) bool {
	if got.Err != nil || got.TimedOut {
		return false
	}
	for _, l := range legal {
		if l.Err != nil || l.TimedOut {
			continue
		}
		if got.Signal != l.Signal || (got.Signal == 0 && got.ExitCode != l.ExitCode) {
			continue
		}
		if bytes.Equal(got.WithVariance(l.vary).Normalized(), l.Normalized()) {
			return true
		}
	}
	return false
}

// Symptoms: how a crash image's run shows a bug (Mismatch), or that the checker rejected the
// image.
const (
	SymptomOutput  = "output"  // standard output matches neither legal outcome
	SymptomExit    = "exit"    // an exit status no legal outcome has
	SymptomSignal  = "signal"  // killed by a signal
	SymptomHang    = "hang"    // timed out
	SymptomChecker = "checker" // the checker failed
)

// Completed reports whether a run ran to its end: it started, did not hang, was not
// interrupted, was not killed by a signal, and was not stopped at a diverging line (Diverged). Only such a run is a legal outcome: one killed by
// a signal (a program that crashes without a crash, or lacks the environment it needs) would
// make every crash image that dies the same way look legal.
func (o Outcome) Completed() bool {
	return o.Err == nil && !o.TimedOut && o.Signal == 0 && o.Diverged == 0
}

// Stopped reports whether a run was stopped from outside before it could give a verdict: it
// timed out (scry killed its process group: TimedOut), or it was killed by a signal that is no
// fault of its own: SIGKILL (the kernel's out-of-memory killer, a user), SIGTERM, SIGINT, SIGHUP
// or SIGQUIT. A run that died of a signal its own code raised (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGTRAP, SIGABRT, SIGSYS, SIGPIPE, ...: signal(7)'s synchronous and self-sent signals) was not
// stopped: it crashed. A stopped run says nothing about the image it ran on: its state is
// inconclusive (Stats.Inconclusive), not a failure.
func (o Outcome) Stopped() bool {
	if o.Err != nil {
		return false
	}
	switch o.Signal {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return o.TimedOut
}

// Mismatch compares a crash image's run with the legal outcomes (WITCHER, SOSP'21, §4.5): ""
// when it is Equivalent to one of those that Completed, else its symptom: SymptomHang,
// SymptomSignal, SymptomExit (no legal outcome exited with its status) or SymptomOutput. The
// caller checks first that got started and that some legal outcome completed: with none,
// nothing can be judged.
func Mismatch(got Outcome, legal ...Outcome) string {
	var usable []Outcome
	for _, l := range legal {
		if l.Completed() {
			usable = append(usable, l)
		}
	}
	switch {
	case Equivalent(got, usable...):
		return ""
	case got.TimedOut:
		return SymptomHang
	case got.Signal != 0:
		return SymptomSignal
	case got.Diverged > 0:
		return SymptomOutput // stopped at a line no legal outcome prints there
	}
	for _, l := range usable {
		if l.ExitCode == got.ExitCode {
			return SymptomOutput
		}
	}
	return SymptomExit
}

// DivergedLine returns the 1-based line of got's standard output (normalized as Equivalent
// compares it, with each legal outcome's variance) at which it differs from every completed
// legal outcome: for each, the first line where the two differ or one of them ended, and the
// latest of these over the legal outcomes (got matches that one up to there); a run stopped at
// a diverging line (Diverged) gives that line. of is the number of lines of that legal outcome's
// output, so that of-line+1 of them, from the diverging one, are what the rest of its run
// printed. 0, 0 when no legal outcome completed or got could not run.
func DivergedLine(got Outcome, legal ...Outcome) (line, of int) {
	if got.Err != nil {
		return 0, 0
	}
	for _, l := range legal {
		if !l.Completed() {
			continue
		}
		g, w := splitLines(got.WithVariance(l.vary).Normalized()), splitLines(l.Normalized())
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		if i+1 > line {
			line, of = i+1, len(w)
		}
	}
	if got.Diverged > 0 && line > 0 {
		line = got.Diverged
	}
	return line, of
}

// FirstLine returns ": " and the first non-empty line of a run's output a, or of b when a has
// none (at most 200 bytes), or "": what a message quotes of a failed run.
func FirstLine(a, b []byte) string {
	ls := OutputLines(a, b, 1)
	if len(ls) == 0 {
		return ""
	}
	l := ls[0]
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return ": " + l
}

// OutputLines returns the first n non-empty lines (trimmed) of a run's output a, or of b when
// a has none, for messages that quote what a program printed.
func OutputLines(a, b []byte, n int) []string {
	for _, s := range [][]byte{a, b} {
		var ls []string
		for _, l := range strings.Split(string(s), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(ls) < n {
				ls = append(ls, l)
			}
		}
		if len(ls) > 0 {
			return ls
		}
	}
	return nil
}

// DiffMaxLines bounds the lines Diff returns; a longer diff ends with a line saying how many
// were left out.
const DiffMaxLines = 40

// Diff returns a short unified diff (3 lines of context, "--- want" / "+++ got" headers, at most
// DiffMaxLines lines) from want to got, for reports; "" when they are equal. Inputs are
// compared as lines of text (a missing final newline is marked as in diff(1)).
func Diff(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	d := udiff.Unified("want", "got", string(want), string(got))
	lines := strings.SplitAfter(d, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= DiffMaxLines {
		return d
	}
	var b strings.Builder
	for _, l := range lines[:DiffMaxLines] {
		b.WriteString(l)
	}
	fmt.Fprintf(&b, "... (%d more diff lines)\n", len(lines)-DiffMaxLines)
	return b.String()
}
