package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// Minimization is the choices of one search for minimal reproducers (`scry check --minimize`,
// `scry minimize`): how long it may take, where the reproducers are kept, and what the replay
// commands name.
type Minimization struct {
	// Time is the search's time for all the findings together, shared out among them in order
	// (what one leaves is the next ones'); it must be positive.
	Time time.Duration
	// Dir is the directory the reproducers are written to, one subdirectory per finding (its
	// crash id: the minimal workload, its trace), created if missing; the candidates' runs use
	// scratch subdirectories of it, removed as they end.
	Dir string
	// Report is the absolute path the JSON report will be written to ("" unknown), for the
	// `scry replay` commands of the reproducers.
	Report string
	// Notes, if non-nil, receives one line per finding as its search ends.
	Notes io.Writer
}

// MinMinimizeTime is the least time `scry check --minimize` gives the search by default (no
// --minimize-time): a third of the time the check took before it (a quarter of the whole run),
// but at least this, and with a time budget no more than the quarter of it kept for the search
// (minimizeShare).
const MinMinimizeTime = 10 * time.Second

// Minimize searches a minimal reproducer for each PM crash finding of rep whose crash id is in
// ids (every crash finding when ids is empty) and sets its Crash.Minimal: the shortest workload
// found on which a crash state of the same root cause still fails. The search for one finding
// is delta debugging (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing
// Input", TSE 2002) after cheap steps that use what the check knows, for a workload's failures
// are local: the short reproducers found for the findings before it, and the best workload of
// one that failed first in the same operation; the slices of the failing
// operation (slices: the operations sharing a key with it, then those it read PM words from
// in the recorded run, opDeps, level by level); the operations after it left out (one test);
// those before it that stored nothing to PM left out (one test); windows of the operations up
// to it, 1, 2, 4, ... long. Then ddmin over the operations (the
// paper's §3.2: n parts, each part and each complement tested, n doubled when none fails, down
// to a 1-minimal workload), or one removal at a time on a small slice; a failing candidate
// that fails in another operation is searched again from there (refocus); then the values (each
// distinct value after a line's first word renamed to a shorter one wherever it occurs, so that
// a key written and read back stays one key, kept when the failure stays). A candidate is
// tested by the check rep records (rep.Check, CheckFromRecord) run again on it with
// explore.Options.Focus set to the finding's crash id: recorded, analysed, and explored for
// that root cause alone, ending at the first failing state. The findings are searched in the
// order of their first failing operation (one that failed first in the same operation as
// another after all the others, never in the same wave), in two rounds: the first shares out 60 % of m.Time
// evenly (what one search leaves goes to the next), the second the rest among the searches the
// first stopped, each going on from its best workload; in each round the searches run in waves
// of as many at once as the check's jobs (at most maxParallelSearches), a search knowing the
// reproducers of the waves before its own only. The search is deterministic for a given check
// (its seed) when it ends within its time: the candidates come in a fixed order and each is
// judged as the check judges it. What it reports failed: its Crash is the failing state of
// the minimal workload's own recording, checked once more from scratch when time is left
// (Minimal.Confirmed). A finding whose search found nothing is left without one, with a
// warning in rep. Errors: rep records no check to run again (CheckFromRecord), an id that is no
// crash finding of rep, a workload that cannot be read, Dir cannot be written; *exec.Interrupted
// when SIGINT or SIGTERM stopped it (the reproducers found so far are kept).
func Minimize(ctx context.Context, rep *report.Report, ids []string, m Minimization) error {
	if m.Time <= 0 {
		return errors.New("minimisation needs a positive time")
	}
	if _, err := CheckFromRecord(rep.Check); err != nil {
		return err
	}
	var todo []*report.Finding
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Crash != nil && (len(ids) == 0 || containsID(ids, f.Crash.ID)) {
			todo = append(todo, f)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(todo, func(f *report.Finding) bool { return f.Crash.ID == id }) {
			return fmt.Errorf("the report has no PM crash finding %s to minimise", id)
		}
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return err
	}
	// The findings that failed first early in the workload first: their candidates are the
	// shortest, so their searches tend to end early, and what they leave of their share goes
	// to the later ones.
	slices.SortStableFunc(todo, func(a, b *report.Finding) int { return cmp.Compare(firstFailingOp(a), firstFailingOp(b)) })
	// A finding that failed first in the same operation as one before it goes after all the
	// others: in the same wave it would repeat that one's search, after it it starts from that
	// one's best workload (start).
	rank, same := map[*report.Finding]int{}, map[int]int{}
	for _, f := range todo {
		k := firstFailingOp(f)
		rank[f] = same[k]
		same[k]++
	}
	slices.SortStableFunc(todo, func(a, b *report.Finding) int { return cmp.Compare(rank[a], rank[b]) })
	end := time.Now().Add(m.Time)
	// The first round shares out part of the time: what a quick search leaves, and the rest,
	// go to the searches it stopped (most findings need a handful of tests, a few need many).
	firstEnd := time.Now().Add(m.Time * firstRoundShare / 100)
	deps := map[string]*opDeps{} // by trace: the findings of one check share its trace
	var searches []*minimizer
	for _, f := range todo {
		d, ok := deps[f.Crash.Trace]
		if !ok && f.Crash.Trace != "" {
			var err error
			if d, err = depsOf(f.Crash.Trace); err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("minimising without the operations' PM dependences: %v", err))
			}
			deps[f.Crash.Trace] = d
		}
		s, err := newMinimizer(ctx, rep.Check, f, m, d)
		if err != nil {
			return fmt.Errorf("minimising %s: %w", f.Crash.ID, err)
		}
		searches = append(searches, s)
	}
	// done reports a search that ended: its reproducer set, or a warning.
	done := func(s *minimizer) error {
		if s.err != nil {
			return fmt.Errorf("minimising %s: %w", s.f.Crash.ID, s.err)
		}
		if ie := interruptedCause(ctx); ie != nil {
			if s.min != nil {
				s.f.Crash.Minimal = s.min
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%v while minimising the workload of %s: the reproducers found before are kept", ie, s.f.Crash.ID))
			return ie
		}
		if s.min == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("no smaller workload on which %s still fails was found in its time (%.1f s)", s.f.Crash.ID, s.spent.Seconds()))
			return nil
		}
		s.f.Crash.Minimal = s.min
		if m.Notes != nil {
			fmt.Fprintf(m.Notes, "scry: %s: minimal reproducer %s\n", s.f.Crash.ID, s.min.Summary())
		}
		return nil
	}
	// Searches run in waves of width at once (each candidate's check is mostly one process: a
	// second search uses the other cores), each search of a wave with an even share of what is
	// left; a search knows the reproducers of the waves before its own only, so the rounds do
	// not depend on which search of a wave ends first.
	width := 1
	if c := rep.Check.Crash; c != nil {
		width = max(1, min(c.Jobs, maxParallelSearches))
	}
	waves := func(list []*minimizer, until time.Time, step func(*minimizer, time.Duration, []*minimizer) error, last bool) ([]*minimizer, error) {
		var stopped []*minimizer
		// A wave ends before a search whose finding failed first in the same operation as one
		// of the wave's: it goes on from that one's best workload (start).
		var bounds [][2]int
		for i, j := 0, 0; i < len(list); i = j {
			for j = i + 1; j < len(list) && j-i < width && !slices.ContainsFunc(list[i:j], func(o *minimizer) bool { return o.first == list[j].first }); j++ {
			}
			bounds = append(bounds, [2]int{i, j})
		}
		for w, b := range bounds {
			i, wave := b[0], list[b[0]:b[1]]
			share := time.Until(until) / time.Duration(len(bounds)-w)
			if share <= 0 || ctx.Err() != nil {
				for _, s := range wave {
					if !last && ctx.Err() == nil {
						// The first round's time ended before this wave (its searches
						// overran their shares): the second gives it its share.
						stopped = append(stopped, s)
						continue
					}
					if s.tests == 0 {
						rep.Warnings = append(rep.Warnings, fmt.Sprintf("no time was left to minimise the workload of %s", s.f.Crash.ID))
						continue
					}
					// A search the first round stopped keeps its best workload so far.
					s.stop = true
					s.min, s.err = s.finish(m, end)
					if err := done(s); err != nil {
						return nil, err
					}
				}
				continue
			}
			var wg sync.WaitGroup
			for _, s := range wave {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if s.err = step(s, share, list[:i]); s.err == nil && (!s.stop || last || ctx.Err() != nil) {
						s.min, s.err = s.finish(m, end)
					}
				}()
			}
			wg.Wait()
			for _, s := range wave {
				if s.err == nil && s.stop && !last && ctx.Err() == nil {
					stopped = append(stopped, s)
				} else if err := done(s); err != nil {
					return nil, err
				}
			}
		}
		return stopped, nil
	}
	resume, err := waves(searches, firstEnd, func(s *minimizer, share time.Duration, others []*minimizer) error {
		return s.start(share, others)
	}, false)
	if err != nil {
		return err
	}
	// The searches their share stopped go on with what the others left, in the same order,
	// each from its best workload so far.
	_, err = waves(resume, end, func(s *minimizer, share time.Duration, others []*minimizer) error {
		return s.resume(share, others)
	}, true)
	return err
}

// testRun, set by tests only, replaces the candidates' checks of Minimize (the finding's crash
// id, the candidate, its directory).
var testRun func(id string, ops []string, dir string) (*report.Crash, error)

// maxParallelSearches bounds the searches Minimize runs at once (the check's jobs bound them
// too).
const maxParallelSearches = 4

// containsID reports whether ids holds id.
func containsID(ids []string, id string) bool { return slices.Contains(ids, id) }

// interruptedCause is the *exec.Interrupted that stopped ctx, nil if none did.
func interruptedCause(ctx context.Context) *exec.Interrupted {
	var ie *exec.Interrupted
	if errors.As(context.Cause(ctx), &ie) {
		return ie
	}
	return nil
}

// minimizer is the search of one finding's reproducer: the check to run again, the finding's
// crash id, the time it ends, the candidates tested (by their text) and the best one so far.
type minimizer struct {
	ctx    context.Context
	rc     *report.Check
	f      *report.Finding
	ops    []string // the finding's own workload
	spent  time.Duration
	id     string
	dir    string
	report string
	end    time.Time
	tests  int
	seen   map[string]bool
	best   []string
	crash  *report.Crash
	stop   bool // the time share ended, or a signal came
	// deps is the reads-from relation of the operations of the finding's recorded run (nil
	// when its trace could not be read): the slices' source.
	deps *opDeps
	// first is the finding's first failing operation (firstFailingOp).
	first int
	// reveal is the operation after the finding's first failing one whose output first
	// differed from the legal outcomes' in its failing state's run (opDeps.revealing), -1
	// when unknown.
	reveal int
	// readDeps reads the reads-from relation of a candidate's recorded run (depsOf; nil: the
	// search is not refocused).
	readDeps func(trace string) (*opDeps, error)
	// searched holds the operations (their line) a search started from (search): a candidate
	// failing in one of them is not searched again from it (refocus).
	searched map[string]bool
	// The search's result once it ended (finish), and the error that ended it.
	min *report.Minimal
	err error
	// run tests a candidate in a directory (test; a fake in unit tests).
	run func(ops []string, dir string) (*report.Crash, error)
}

// newMinimizer returns the search of f's reproducer, not started.
func newMinimizer(ctx context.Context, rc *report.Check, f *report.Finding, m Minimization, deps *opDeps) (*minimizer, error) {
	w, err := workload.Read(f.Crash.Workload)
	if err != nil {
		return nil, fmt.Errorf("the finding's workload: %w", err)
	}
	s := &minimizer{ctx: ctx, rc: rc, f: f, ops: w.Ops, id: f.Crash.ID, dir: filepath.Join(m.Dir, f.Crash.ID), report: m.Report, seen: map[string]bool{}, searched: map[string]bool{}, deps: deps, readDeps: depsOf}
	s.run = s.test
	s.first = firstFailingOp(f)
	s.reveal = revealingOp(deps, f.Crash, s.first, len(w.Ops))
	if testRun != nil {
		s.run = func(ops []string, dir string) (*report.Crash, error) { return testRun(s.id, ops, dir) }
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// start runs the search for share: first the reproducers the searches before (others) found,
// when they are short, smallest first (findings of one check often share their operations), and
// the best workload of a search whose finding failed first in the same operation as this one,
// whatever its size (the ordering and the atomicity violation of one movement: the same
// candidates fail for both, so this search goes on from where that one got, not from the
// start), then the search proper (search).
func (s *minimizer) start(share time.Duration, others []*minimizer) error {
	t0 := time.Now()
	s.end = t0.Add(share)
	defer func() { s.spent += time.Since(t0) }()
	var tries []*minimizer
	for _, o := range others {
		if o.crash != nil && len(o.best) < len(s.ops) && (len(o.best) <= report.MaxInlineOps || o.first == s.first) {
			tries = append(tries, o)
		}
	}
	if ok, err := s.tryOthers(tries); err != nil || ok || s.stop {
		return err
	}
	return s.search(s.ops, s.first)
}

// tryOthers tests the best workloads of other searches (tries), smallest first, until one fails
// here, and then shrinks it whole (its failure may lie in any of its operations), without
// searching again from the operations that search started from: true then.
func (s *minimizer) tryOthers(tries []*minimizer) (bool, error) {
	slices.SortStableFunc(tries, func(a, b *minimizer) int { return cmp.Compare(len(a.best), len(b.best)) })
	for _, o := range tries {
		ok, err := s.fails(o.best)
		if err != nil || s.stop {
			return false, err
		}
		if ok {
			maps.Copy(s.searched, o.searched)
			return true, s.shrink(s.best, len(s.best) <= maxRemoveEach)
		}
	}
	return false, nil
}

// resume goes on with a search its share stopped (or starts one the first round left no time
// to: start), for share more: from the best workload of
// a search of others (those resumed before it) whose finding failed first in the same operation,
// when that is smaller than its own and fails here (tryOthers); else its best workload so far
// shrunk further (shrink; its first failing operation unknown), or, when no candidate failed
// yet, the workload up to the operation that showed the failure, then the search's slices and
// windows (where most searches that need more time are stopped), only
// those smaller than a failing candidate; the candidates tested before are not tested again.
func (s *minimizer) resume(share time.Duration, others []*minimizer) error {
	if s.tests == 0 {
		return s.start(share, others) // the first round left it no time
	}
	t0 := time.Now()
	s.end, s.stop = t0.Add(share), false
	defer func() { s.spent += time.Since(t0) }()
	// A search whose finding failed first in the same operation that got further this round.
	var tries []*minimizer
	for _, o := range others {
		if o.first == s.first && o.crash != nil && (s.crash == nil || len(o.best) < len(s.best)) {
			tries = append(tries, o)
		}
	}
	if ok, err := s.tryOthers(tries); err != nil || ok || s.stop {
		return err
	}
	if s.crash == nil {
		first := s.first
		if r := s.reveal; first >= 0 && r > first && r+1 < len(s.ops) {
			// One test first: the workload up to the operation that showed the failure,
			// which fails as the whole did (the same operations before it), and which the
			// slices and windows smaller than it then try to beat.
			if _, err := s.fails(s.ops[:r+1]); err != nil || s.stop {
				return err
			}
		}
		if s.crash == nil {
			return s.search(s.ops, first)
		}
		if _, _, err := s.slices(s.ops, first); err != nil || s.stop {
			return err
		}
	}
	return s.shrink(s.best, len(s.best) <= maxRemoveEach)
}

// finish returns the search's result (nil when no candidate failed): its reproducer checked
// once more from scratch when its search ended within its time and time is left before end
// (that of the whole minimisation).
func (s *minimizer) finish(m Minimization, end time.Time) (*report.Minimal, error) {
	f := s.f
	t0 := time.Now()
	if !s.stop {
		// The check from scratch may use the time left to all: it is one test, and a
		// reproducer is worth more confirmed.
		s.end = end
	}
	defer func() { s.spent += time.Since(t0) }()
	min := &report.Minimal{Of: len(s.ops), Complete: !s.stop}
	switch {
	case s.crash == nil && !s.stop:
		// No smaller workload fails, and the search ran to its end: the finding's own workload
		// is 1-minimal.
		c := *f.Crash
		c.Minimal, c.VariantImages = nil, nil
		s.best, s.crash = s.ops, &c
		min.Confirmed, min.Note = true, "no operation can be left out of the finding's own workload"
		os.Remove(s.dir)
	case s.crash == nil:
		return nil, nil
	case !s.stop && time.Now().Before(s.end):
		// Once more from scratch, in the reproducer's own directory.
		s.tests++
		c, err := s.run(s.best, s.dir)
		switch {
		case err != nil:
			return nil, err
		case c != nil:
			if s.crash.Trace != "" {
				os.RemoveAll(filepath.Dir(s.crash.Trace)) // the search's copy
			}
			s.crash, min.Confirmed = c, true
		case s.stop:
			min.Note = "the time share ended during the check from scratch"
		default:
			min.Note = "the minimal workload did not fail again when checked from scratch: the failure depends on more than the workload (timing, the environment, or a nondeterminism of the check itself)"
		}
	default:
		min.Note = "no time was left to check it again from scratch"
	}
	min.Tests, min.Seconds = s.tests, (s.spent + time.Since(t0)).Seconds()
	min.Operations = len(s.best)
	if len(s.best) <= report.MaxInlineOps {
		min.Ops = s.best
	}
	c := *s.crash
	c.ID = f.Crash.ID + report.MinimalSuffix
	c.ImageCommand = explore.ImageCommand(m.Report, c.ID)
	min.Crash = &c
	return min, nil
}

// search shrinks ops, on which the finding failed first in operation first: the slices of
// first and the windows up to it (slices); when none failed, the operations after first left
// out in one test, then those before it that stored nothing to PM, then growing windows around
// first and ddmin; after a slice, one removal at a time (removeEach) when it is small; then the
// values (s.best is the result, s.crash its failing state; both nil when no candidate failed).
func (s *minimizer) search(ops []string, first int) error {
	if first >= 0 && first < len(ops) {
		s.searched[ops[first]] = true
	}
	after := true // the operations after first are needed
	sliced := false
	if first >= 0 && first < len(ops) {
		var err error
		if sliced, after, err = s.slices(ops, first); err != nil || s.stop {
			return err
		}
		if sliced {
			ops = s.best
		}
	}
	if !sliced && first >= 0 && first+1 < len(ops) {
		// The operations after the first that failed run only after the crash: most often
		// they are not needed to show it (one test instead of ddmin's many), or only up to
		// the one that showed it.
		cut := first + 1
		if r := s.reveal; r > first && r+1 < len(ops) {
			cut = r + 1
		}
		ok, err := s.fails(ops[:cut])
		if err != nil {
			return err
		}
		if ok {
			ops, after = s.best, cut > first+1
		}
	}
	if !sliced && first >= 0 && first < len(ops) && s.deps != nil {
		// The operations up to first that stored nothing to PM (lookups, reads of a full
		// table) left out in one test: they leave the persistent state as it was, and a bug
		// that needs the structure filled keeps every operation that fills it.
		var keep []int
		for k := range ops {
			if k >= first || s.deps.writes[k] {
				keep = append(keep, k)
			}
		}
		if len(keep) < len(ops) {
			ok, err := s.fails(pick(ops, keep))
			if err != nil || s.stop {
				return err
			}
			if ok {
				ops, first = s.best, slices.Index(keep, first)
			}
		}
	}
	if first >= 0 && first < len(ops) && !sliced {
		// Windows around the failing operation, growing: the last m operations up to it (and
		// m after it when those are needed), m = 1, 2, 4, ... A small candidate is fast to
		// check and most bugs need few operations, so this finds a small failing workload in
		// a few cheap tests where ddmin's first tests check halves of the whole.
		for m := 1; m < len(ops); m *= 2 {
			end := first + 1
			if after {
				end = min(len(ops), first+1+m)
			}
			w := ops[max(0, first+1-m):end]
			if len(w) == len(ops) {
				break
			}
			ok, err := s.fails(w)
			if err != nil {
				return err
			}
			if ok {
				ops = w
				break
			}
			if s.stop {
				return nil
			}
		}
	}
	return s.shrink(ops, sliced && len(ops) <= maxRemoveEach)
}

// revealingOp is opDeps.revealing for crash c of a workload of n operations whose first failing
// operation is first: -1 unless c's failing state is in first (the lines then count from the
// operation after it).
func revealingOp(d *opDeps, c *report.Crash, first, n int) int {
	if first != c.Input-2 {
		return -1
	}
	return d.revealing(c.Input-1, n, c.DivergedLine, c.LegalLines)
}

// shrink ends a search on ops (which fail, or the finding's own workload): the search again
// from the operation the failing state of ops is in (refocus), when that is new; else one
// removal at a time when each is likely needed (a small slice), else ddmin; then the values.
func (s *minimizer) shrink(ops []string, each bool) error {
	if first, ok := s.refocus(ops); ok {
		return s.search(ops, first)
	}
	var err error
	if each {
		ops, err = s.removeEach(ops)
	} else {
		var first int
		ops, first, err = s.ddmin(ops)
		if err == nil && first >= 0 {
			return s.search(ops, first)
		}
	}
	if err != nil {
		return err
	}
	return s.values(ops)
}

// refocus prepares the search of ops, the best workload so far, from its own failing state:
// it returns the first failing operation of that state's check (crashFirstOp), and makes the
// reads-from relation and the revealing operation those of its recorded run. A candidate made
// of many operations (a window, a ddmin half, the workload up to the revealing operation) often
// fails in another operation than the finding's, far before it (the check of a short workload
// explores every crash state where the finding's sampled them): the slices of that operation are
// far smaller than what ddmin reaches in its time. False when the search started from that
// operation already (its line), when ops is small enough to shrink one removal at a time, or
// when there is nothing to go on from (no failing state, its trace unreadable).
func (s *minimizer) refocus(ops []string) (int, bool) {
	c := s.crash
	if c == nil || c.Trace == "" || s.readDeps == nil || len(ops) <= maxRemoveEach || !slices.Equal(ops, s.best) || s.stop {
		return -1, false
	}
	first := crashFirstOp(c, c.Input-2)
	if first < 0 || first >= len(ops) || s.searched[ops[first]] {
		return -1, false
	}
	d, err := s.readDeps(c.Trace)
	if err != nil {
		return -1, false
	}
	s.deps, s.reveal = d, revealingOp(d, c, first, len(ops))
	return first, true
}

// slices tests the slices of the failing operation first of ops, smallest first, until one
// fails (true; s.best is it, and after tells whether it holds operations after first): the
// operations that share a key with it, then those it read PM from (opDeps), one level of the
// relation deeper each time while that is at most half the workload; each without the later
// operations, then with those that share its key or read what it wrote. One test each, and
// the smallest that fails is often the answer itself (an insert and the remove of its key; an
// insert, the update of its key and the lookup that reads it; the inserts that filled the
// bucket an insert moves an item out of), where windows and ddmin need tens of tests of large
// candidates to bring together operations far apart. The windows up to first, 2, 4, 8, ...
// operations long, are tested among them in order of size. When the operation that showed the
// failure is known (s.reveal), the slices without the later operations and the windows are
// also tried with it and the operations up to it that share its key (a lookup of the key a
// resize or a movement lost, and that key's insert). The slices are small, so they come before
// everything else.
func (s *minimizer) slices(ops []string, first int) (ok, after bool, err error) {
	var cands [][]int
	seen := map[string]bool{}
	// add keeps candidate c once; false when it is more than half the workload.
	add := func(c []int) bool {
		if 2*len(c) > len(ops) {
			return false
		}
		if k := fmt.Sprint(c); !seen[k] {
			seen[k] = true
			cands = append(cands, c)
		}
		return true
	}
	window := func(m int) []int { // the m operations up to first
		w := make([]int, m)
		for i := range w {
			w[i] = first + 1 - m + i
		}
		return w
	}
	// The operation that showed the failure (the lookup that misses a key the crash lost),
	// with the operations that share its key up to it: a structure-wide operation (a resize, a
	// movement) writes what many later operations read, so its own after-slice is most of the
	// workload, where one of them is enough to show the loss.
	var shown []int
	if r := s.reveal; r > first && r < len(ops) {
		shown = keySlice(ops, r, false)
	}
	type variant struct {
		after bool
		with  []int
	}
	variants := []variant{{false, nil}, {true, nil}}
	if shown != nil {
		variants = append(variants, variant{false, shown})
	}
	for _, v := range variants {
		key := keySlice(ops, first, v.after)
		for l := 0; l <= maxSliceLevels; l++ {
			c := key
			if l > 0 {
				if s.deps == nil {
					break
				}
				c = union(key, s.deps.slice(first, len(ops), l, v.after))
			}
			if !add(union(c, v.with)) {
				break
			}
		}
	}
	if shown != nil {
		// And the windows up to first with it: the operations that brought the structure
		// to the state first needs are most often the latest ones; the last is every
		// operation up to first, the structure as it was.
		for m := 4; m < 2*(first+1); m *= 2 {
			if !add(union(window(min(m, first+1)), shown)) {
				break
			}
		}
	}
	// The windows up to first compete with them: a bug of neighbouring operations (an insert
	// that fills the bucket the next one overflows) is in a small window and a large slice.
	for m := 2; m <= first+1; m *= 2 {
		if !add(window(m)) {
			break
		}
	}
	slices.SortStableFunc(cands, func(a, b []int) int { return cmp.Compare(len(a), len(b)) })
	for _, c := range cands {
		if s.stop || s.crash != nil && len(c) >= len(s.best) {
			break // a smaller candidate failed already (resume)
		}
		ok, err := s.fails(pick(ops, c))
		if err != nil || ok {
			return ok, ok && c[len(c)-1] > first, err
		}
	}
	return false, true, nil
}

// removeEach leaves out the operations of ops (which fail) one at a time, keeping each removal
// under which the failure stays, in passes until a pass removes nothing: a 1-minimal workload
// unless s.stop. Used on a slice instead of ddmin: a slice holds mostly operations the failure
// needs, where ddmin's halves and quarters all pass and only its last round, this one, removes
// anything.
func (s *minimizer) removeEach(ops []string) ([]string, error) {
	for removed := true; removed && len(ops) > 1 && !s.stop; {
		removed = false
		for i := len(ops) - 1; i >= 0 && len(ops) > 1 && !s.stop; i-- {
			ok, err := s.fails(slices.Delete(slices.Clone(ops), i, i+1))
			if err != nil {
				return nil, err
			}
			if ok {
				ops, removed = s.best, true
			}
		}
	}
	return ops, nil
}

// firstRoundShare is the percentage of Minimization.Time the first round of the searches (one
// each, in order) shares out; the searches it stopped share the rest.
const firstRoundShare = 60

// maxRemoveEach is the most operations a failing slice may hold for removeEach to shrink it
// (one test per operation); a larger one goes to ddmin, whose halves pay off when most of its
// operations are not needed.
const maxRemoveEach = 8

// maxSliceLevels bounds the levels of the reads-from relation the slices follow: each level is
// one test, and past a few levels a slice is most of the workload (every operation reads the
// counters the one before it wrote).
const maxSliceLevels = 4

// firstFailingOp is the earliest operation of f's failing states the report names (the
// operation of its first failing state and those of Crash.Operations), or, when operations were
// in flight, the latest of those in flight with it.
func firstFailingOp(f *report.Finding) int {
	j := f.Crash.Input - 2
	if f.Operation != nil {
		j = int(f.Operation.Index)
	}
	return crashFirstOp(f.Crash, j)
}

// crashFirstOp is firstFailingOp of a crash whose first failing state is in operation j.
func crashFirstOp(c *report.Crash, j int) int {
	for _, o := range c.Operations {
		j = min(j, int(o))
	}
	for _, o := range c.InFlight {
		j = max(j, int(o.Index))
	}
	return j
}

// ddmin is Zeller and Hildebrandt's ddmin over the operations ops (which fail): the smallest
// failing subsequence it reaches, 1-minimal unless s.stop; or, when a subsequence it reached
// fails in an operation the search did not start from yet (refocus), that one and the
// operation (the search goes on from there; -1 otherwise).
func (s *minimizer) ddmin(ops []string) ([]string, int, error) {
	n := 2
	for len(ops) >= 2 && !s.stop {
		parts := split(ops, n)
		reduced := false
		for i := 0; i < len(parts) && !reduced && !s.stop; i++ {
			ok, err := s.fails(parts[i])
			if err != nil {
				return nil, -1, err
			}
			if ok {
				ops, n, reduced = parts[i], 2, true
			}
		}
		for i := 0; n > 2 && i < len(parts) && !reduced && !s.stop; i++ {
			// With two parts each complement is the other part, tested above.
			comp := complement(parts, i)
			ok, err := s.fails(comp)
			if err != nil {
				return nil, -1, err
			}
			if ok {
				ops, n, reduced = comp, max(n-1, 2), true
			}
		}
		if reduced {
			if first, ok := s.refocus(ops); ok {
				return ops, first, nil
			}
		}
		if !reduced {
			if n >= len(ops) {
				break // 1-minimal: no single operation can be left out
			}
			n = min(2*n, len(ops))
		}
	}
	return ops, -1, nil
}

// split cuts ops into n parts of nearly equal length, in order.
func split(ops []string, n int) [][]string {
	var parts [][]string
	for i := 0; i < n; i++ {
		lo, hi := i*len(ops)/n, (i+1)*len(ops)/n
		if hi > lo {
			parts = append(parts, ops[lo:hi])
		}
	}
	return parts
}

// complement is every part but part i, in order.
func complement(parts [][]string, i int) []string {
	var out []string
	for j, p := range parts {
		if j != i {
			out = append(out, p...)
		}
	}
	return out
}

// values shortens the values of the best workload (ops, the ddmin's result; the finding's own
// workload when nothing smaller failed): every distinct word after a line's first (a run of
// letters and digits) is renamed, wherever it occurs, to a shorter one ("1", "2", ... for
// numbers, "a", "b", ... otherwise, in the order the words first occur), all at once first, then
// one at a time, keeping each renaming under which the failure stays.
func (s *minimizer) values(ops []string) error {
	if s.stop {
		return nil
	}
	words, renames := valueRenames(ops)
	if len(renames) == 0 {
		return nil
	}
	ok, err := s.fails(applyRenames(ops, renames))
	if err != nil || ok {
		return err
	}
	applied := map[string]string{}
	for _, w := range words {
		to, ok := renames[w]
		if !ok || s.stop {
			continue
		}
		try := map[string]string{w: to}
		for k, v := range applied {
			try[k] = v
		}
		ok, err := s.fails(applyRenames(ops, try))
		if err != nil {
			return err
		}
		if ok {
			applied[w] = to
		}
	}
	return nil
}

// valueRenames returns the distinct value words of ops in the order they first occur, and for
// each that can be shortened the shorter name it gets: the first of "1", "2", ... (a number) or
// "a", "b", ... (a word) that no word of ops is and no earlier word was renamed to.
func valueRenames(ops []string) ([]string, map[string]string) {
	var words []string
	present := map[string]bool{}
	for _, op := range ops {
		for i, w := range lineWords(op) {
			if !present[w.text] {
				present[w.text] = true
				if i > 0 {
					words = append(words, w.text)
				}
			}
		}
	}
	renames := map[string]string{}
	for _, w := range words {
		// The first name of its sequence that no word of ops has, nor a renamed one.
		to := ""
		for n := 1; to == "" || present[to]; n++ {
			if isDigits(w) {
				to = fmt.Sprint(n)
			} else {
				to = letters(n)
			}
		}
		if len(to) < len(w) {
			renames[w] = to
			present[to] = true
		}
	}
	return words, renames
}

// word is a run of letters and digits in a line, at byte offsets [start, end).
type word struct {
	text       string
	start, end int
}

// lineWords splits a workload line into its words (runs of letters and digits).
func lineWords(line string) []word {
	var out []word
	start := -1
	for i, r := range line + " " {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && start < 0:
			start = i
		case !alnum && start >= 0:
			out = append(out, word{line[start:i], start, i})
			start = -1
		}
	}
	return out
}

// applyRenames renames the value words (all but each line's first) of ops by renames.
func applyRenames(ops []string, renames map[string]string) []string {
	out := make([]string, len(ops))
	for k, op := range ops {
		var b strings.Builder
		last := 0
		for i, w := range lineWords(op) {
			to, ok := renames[w.text]
			if i == 0 || !ok {
				continue
			}
			b.WriteString(op[last:w.start])
			b.WriteString(to)
			last = w.end
		}
		b.WriteString(op[last:])
		out[k] = b.String()
	}
	return out
}

// isDigits reports whether w is made of decimal digits only.
func isDigits(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

// letters is the n-th (1-based) name of the sequence a, b, ..., z, aa, ab, ...
func letters(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('a' + (n-1)%26)}, b...)
	}
	return string(b)
}

// fails tests a candidate workload (each distinct one once): it fails when the check run again
// on it reports the finding; the failing state is kept as the best so far.
func (s *minimizer) fails(ops []string) (bool, error) {
	if len(ops) == 0 || s.stop {
		return false, nil
	}
	key := strings.Join(ops, "\n")
	if s.seen[key] {
		return false, nil // a failing candidate is never tested twice: it became the best
	}
	s.seen[key] = true
	s.tests++
	dir := filepath.Join(s.dir, fmt.Sprintf("try-%d", s.tests))
	c, err := s.run(ops, dir)
	if err != nil || c == nil {
		os.RemoveAll(dir)
		if s.stop && err == nil {
			delete(s.seen, key) // cut by the share's end, not judged: a resumed search tests it
		}
		return false, err
	}
	if s.crash != nil && s.crash.Trace != "" {
		os.RemoveAll(filepath.Dir(s.crash.Trace)) // the previous best's directory
	}
	s.best, s.crash = ops, c
	return true, nil
}

// test runs the check again on the workload ops in dir (created): its failing state of the
// finding, nil when it did not fail so (or the time share ended, or a signal came: s.stop).
// Errors are those that make every further test fail too.
func (s *minimizer) test(ops []string, dir string) (*report.Crash, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	wpath := filepath.Join(dir, "workload")
	if err := os.WriteFile(wpath, []byte(strings.Join(ops, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	c, err := CheckFromRecord(s.rc)
	if err != nil {
		return nil, err
	}
	c.Recording.Workload, c.Recording.Trace = wpath, filepath.Join(dir, "run.trace")
	c.Recording.Stdout, c.Recording.Stderr = io.Discard, io.Discard
	if s.rc.Program != "" {
		// The program the check ran, wherever this search runs from.
		c.Recording.Args = append([]string{s.rc.Program}, s.rc.Args[1:]...)
	}
	c.Explore.Focus, c.Explore.Report, c.Explore.TimeBudget, c.Explore.Pool = s.id, s.report, 0, ""
	ctx, cancel := context.WithDeadline(s.ctx, s.end)
	defer cancel()
	rep, err := c.Run(ctx)
	if s.ctx.Err() != nil || ctx.Err() != nil {
		s.stop = true
		return nil, nil
	}
	var pf *ProgramFailed
	if errors.As(err, &pf) {
		return nil, nil // the program fails on this workload without a crash: not the finding
	}
	if rep != nil {
		for _, f := range rep.Findings {
			if f.Crash != nil && f.Crash.ID == s.id {
				return f.Crash, nil
			}
		}
	}
	if err != nil && rep == nil {
		return nil, err
	}
	return nil, nil
}

// MinimizeReport is `scry minimize`: Minimize on the JSON report at path for the findings ids
// names (crash ids or finding numbers; every crash finding when empty) within d, the reproducers
// kept in out + ".min" (a new directory beside it when that exists) and their replay commands
// naming out, the report to be written, when it is written as JSON (json). It returns the report
// read, with the reproducers set, to be written to out; the report at path is not changed.
// Errors: the report cannot be read, has no such crash finding or no check to run again, and
// those of Minimize.
func MinimizeReport(ctx context.Context, path string, ids []string, out string, json bool, d time.Duration, notes io.Writer) (*report.Report, error) {
	b, err := report.ReadFile(path, "a JSON report")
	if err != nil {
		return nil, err
	}
	rep, err := report.ReadJSON(b, path)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if n, err := strconv.Atoi(id); err == nil {
			// A finding's number, as the text report gives it.
			if n < 1 || n > len(rep.Findings) || rep.Findings[n-1].Crash == nil {
				return nil, fmt.Errorf("%s has no PM crash finding numbered %d", path, n)
			}
			ids[i] = rep.Findings[n-1].Crash.ID
		}
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	dir := abs + ".min"
	if _, err := os.Lstat(dir); err == nil {
		if dir, err = os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-*"); err != nil {
			return nil, err
		}
	}
	if notes != nil {
		fmt.Fprintf(notes, "scry: minimising for %s; the reproducers go to %s\n", d.Round(time.Second), dir)
	}
	rep.Rules = Kinds()
	name := ""
	if json {
		name = abs
	}
	err = Minimize(ctx, rep, ids, Minimization{Time: d, Dir: dir, Report: name, Notes: notes})
	for i := range rep.Findings {
		if c := rep.Findings[i].Crash; c != nil {
			c.ImageCommand = explore.ImageCommand(name, c.ID)
		}
	}
	return rep, err
}
