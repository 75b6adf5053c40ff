package exec

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sync"
)

// Stopping a run at its first diverging line.
//
// WITCHER's output-equivalence oracle (Equivalent) compares a crash image's whole output with
// the legal outcomes'. A run whose output, line by line as it streams, already differs from
// every legal outcome's at some line cannot become equivalent to any of them whatever it prints
// next: its verdict is decided there (a mismatch), and the rest of the workload need not run.
// Under a context made by WithLegal, Target.Run and ForkServers.RunWithin compare each complete
// line of standard output, normalized as Normalized does (the target's OutputFilter, the pool's
// path written {pool}), with the same line of each legal outcome, and kill the run's process
// group at the first line that matches none of the legal outcomes still possible: the outcome
// is then Diverged at that line.
//
// A run whose output keeps matching is never stopped: a matching prefix decides nothing, since
// the run may still crash, hang or print something else later (its state on the image may
// differ from the legal outcomes' in what it has not printed yet).
//
// What varies between identical runs (Variance) is learned after the runs, so the comparison as
// output streams cannot mask it: a run stopped on a line that varies must be judged again once
// the variance is known (DecidedDivergence), and run again in full when the stop was not
// decided.

// Legal holds the legal outcomes a run is compared with as its output streams (WithLegal): the
// normalized lines of each legal outcome that ran to its end (Completed). Safe for concurrent
// use by many runs.
type Legal struct {
	lines [][][]byte // per legal outcome, its normalized output split after each newline
}

// NewLegal prepares the legal outcomes for the streaming comparison. It returns nil, which
// WithLegal ignores, when no run can be stopped early against them: none ran to its end, or
// one's output was cut (Truncated) or is compared under a Variance already.
func NewLegal(legal ...Outcome) *Legal {
	l := &Legal{}
	for _, o := range legal {
		if !o.Completed() {
			continue
		}
		if o.Truncated || o.vary != nil {
			return nil
		}
		var ls [][]byte
		for out := o.Normalized(); len(out) > 0; {
			i := bytes.IndexByte(out, '\n')
			if i < 0 {
				i = len(out) - 1
			}
			ls = append(ls, out[:i+1])
			out = out[i+1:]
		}
		l.lines = append(l.lines, ls)
	}
	if len(l.lines) == 0 {
		return nil
	}
	return l
}

// Lines returns the number of output lines of the legal outcome that has the most (0 for nil).
func (l *Legal) Lines() int {
	n := 0
	if l != nil {
		for _, ls := range l.lines {
			n = max(n, len(ls))
		}
	}
	return n
}

type legalKey struct{}

// WithLegal returns a context under which runs stop at the first line of standard output that
// matches none of l's legal outcomes (see Outcome.Diverged). A nil l returns ctx.
func WithLegal(ctx context.Context, l *Legal) context.Context {
	if l == nil {
		return ctx
	}
	return context.WithValue(ctx, legalKey{}, l)
}

// watch compares a run's standard output with legal outcomes as it is written (a Writer in
// front of the run's bounded buffer) and calls stop once, at the first complete line no legal
// outcome has at that position.
type watch struct {
	out    *boundedBuffer
	legal  *Legal
	filter *regexp.Regexp
	pool   []byte
	stop   func()

	mu       sync.Mutex
	partial  []byte // an incomplete last line
	raw      int    // complete lines seen
	n        int    // normalized lines seen (lines the filter keeps)
	alive    []bool // legal outcomes the output still matches
	diverged int    // the raw line number (from 1) of the divergence, 0 while none
}

// newWatch returns the watch of a run under ctx, or nil when ctx has no legal outcomes.
func newWatch(ctx context.Context, out *boundedBuffer, filter *regexp.Regexp, pool string) *watch {
	l, _ := ctx.Value(legalKey{}).(*Legal)
	if l == nil {
		return nil
	}
	w := &watch{out: out, legal: l, filter: filter, pool: []byte(pool), alive: make([]bool, len(l.lines))}
	for i := range w.alive {
		w.alive[i] = true
	}
	return w
}

func (w *watch) Write(p []byte) (int, error) {
	n, _ := w.out.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.diverged > 0 {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) > stdoutLimit {
				// Longer than any legal outcome's whole output (a cut one is no legal
				// outcome to compare with as output streams): this line matches none.
				w.raw++
				w.diverged = w.raw
				w.partial = nil
				w.stop()
			}
			break
		}
		line := p[:i+1]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
			w.partial = nil
		}
		p = p[i+1:]
		if w.line(line) {
			w.stop()
			break
		}
	}
	return n, nil
}

// line compares one complete line and reports whether the output has diverged from every
// legal outcome.
func (w *watch) line(line []byte) bool {
	w.raw++
	if w.filter != nil && w.filter.Match(line[:len(line)-1]) {
		return false
	}
	if len(w.pool) > 0 && bytes.Contains(line, w.pool) {
		line = bytes.ReplaceAll(line, w.pool, []byte(PoolPlaceholder))
	}
	k := w.n
	w.n++
	any := false
	for j, ls := range w.legal.lines {
		w.alive[j] = w.alive[j] && k < len(ls) && bytes.Equal(ls[k], line)
		any = any || w.alive[j]
	}
	if !any {
		w.diverged = w.raw
	}
	return !any
}

// divergedAt returns the line at which the output diverged (from 1), or 0.
func (w *watch) divergedAt() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.diverged
}

// diverge turns the outcome of a run whose output diverged at line k into a Diverged one,
// whether the SIGKILL the watch sent ended it or it ended by itself before the signal landed.
// Its standard output is cut after that line (the program may have printed more before the
// signal landed).
func (o *Outcome) diverge(k int, legal *Legal) {
	o.Diverged, o.Signal, o.ExitCode = k, 0, -1
	o.LinesLeft = max(legal.Lines()-k, 0)
	end := 0
	for i := 0; i < k; i++ {
		j := bytes.IndexByte(o.Stdout[end:], '\n')
		if j < 0 {
			return
		}
		end += j + 1
	}
	o.Stdout, o.Truncated = o.Stdout[:end], false
}

// divergedText is how Describe says a run was stopped at its diverging line.
func divergedText(k int) string {
	return fmt.Sprintf("was stopped at line %d of its output, which no legal outcome prints there", k)
}

// DecidedDivergence reports whether a run stopped at its diverging line (Outcome.Diverged)
// still matches none of the legal outcomes that ran to their end once each is compared under
// its variance (WithVariance, learned after the run): its output so far, masked line by line,
// is a prefix of none of theirs. False when got did not diverge, or when a legal outcome's
// variance is a block of lines (the number of lines varies: a prefix cannot be masked); the
// caller then runs the state again in full.
func DecidedDivergence(got Outcome, legal ...Outcome) bool {
	if got.Diverged == 0 || got.Err != nil {
		return false
	}
	for _, l := range legal {
		if !l.Completed() {
			continue
		}
		if l.vary != nil && l.vary.block {
			return false
		}
		g := got.WithVariance(l.vary).Normalized()
		if bytes.HasPrefix(l.Normalized(), g) {
			return false
		}
	}
	return true
}
