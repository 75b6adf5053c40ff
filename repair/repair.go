// Package repair computes source repairs for the correctness findings of a report (`scry fix`):
// the flushes, fences, library persists and TX_ADDs to insert, and the statements to move or
// delete, so that the bug is gone from the recorded trace and nothing else gets worse; it writes
// them as a unified diff and, given a build command, validates each repair by rebuilding the
// program in a scratch copy of its source tree and running the report's own check again.
//
// The method is PMBugAssist's (Huang, Constraint-Based Analysis for PM Programs, PhD
// dissertation, USC 2023, ch. 3-4): the trace around a finding and the x86 persistency rules
// become SMT constraints over persist times (package px86's encoding of §3.3), repairs are
// computed by blocking the executions that still break the finding's property (§4.1.1), checked
// not vacuous (§4.1.2), made of inserted instructions and reordered ones (§4.2.2-4.2.3), the
// fewest instructions first. Where they go follows Hippocrates (Neal et al., ASPLOS'21, §4):
// fixes that do no harm (no flush or fence made redundant, no store made durable later), put in
// the function where the finding is reported, which package report places at the caller of a
// helper when only that caller misuses it and in the helper when every caller does
// (report.Place). docs/repair.md describes the encoding and its limits.
package repair

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/smt"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Options configure Fix.
type Options struct {
	// Report is the path of the JSON report (scry check --format json -o REPORT).
	Report string
	// Findings selects findings by 1-based number or crash id; empty: every correctness
	// finding.
	Findings []string
	// Build is a shell command that rebuilds the program in its source tree ("" no
	// validation: the patch is marked unvalidated).
	Build string
	// BuildTimeout bounds the build (0: DefaultBuildTimeout).
	BuildTimeout time.Duration
	// Dir is the source tree: diff paths are relative to it, validation copies it, the build
	// runs in it ("" the current directory).
	Dir string
	// Alternatives bounds the candidates tried per repair when validation rejects one (0:
	// DefaultAlternatives).
	Alternatives int
	// SolverTimeout bounds each solver query (0: none).
	SolverTimeout time.Duration
	// SMTLog receives the SMT-LIB transcript of every query (nil: none).
	SMTLog io.Writer
	// Notes receives progress messages (nil: none).
	Notes io.Writer
}

// Defaults.
const (
	DefaultBuildTimeout = 10 * time.Minute
	DefaultAlternatives = 4
)

// Outcome is what became of one selected finding.
type Outcome struct {
	Finding  int         // 1-based number in the report
	Kind     report.Kind // its kind
	Location report.Location
	// Repair is the repair that fixes it (nil: not repaired, Reason says why).
	Repair *Repair
	Reason string
}

// Repair is one repair: the edits for the findings of one window.
type Repair struct {
	Findings []int  // 1-based numbers of the findings it repairs
	Summary  string // the choices, for messages
	// Inserted instructions, moved or deleted statements; LinesAdded and LinesRemoved count
	// the diff's lines.
	Inserted, Moved          int
	LinesAdded, LinesRemoved int
	// Validated: the rebuilt program's check no longer shows its findings and shows no new one.
	Validated bool
	// Candidates is the number of candidates computed (more than one when the rebuild
	// rejected some); Iterations the synthesis queries.
	Candidates, Iterations int
	// ComputeSeconds is the time spent computing it (solver and encoding); ValidateSeconds
	// the time spent rebuilding and checking again.
	ComputeSeconds, ValidateSeconds float64
	// Notes explain what was not offered (a store whose address cannot be named...).
	Notes []string
	edits []edit
	// gone are the findings the accepted validation saw gone.
	gone map[int]bool
}

// Result is what Fix produced.
type Result struct {
	// Patch is the unified diff ("" when nothing was repaired).
	Patch string
	// Outcomes has one entry per selected finding, in report order.
	Outcomes []Outcome
	Repairs  []*Repair
	// Validated: a build command was given and every repair in Patch passed it.
	Validated bool
	// Warnings are things the user should know (validation that could not run...).
	Warnings []string
	// ComputeSeconds and ValidateSeconds are the totals.
	ComputeSeconds, ValidateSeconds float64
	// files are the new contents of the changed files (for --apply).
	files []fileDiff
}

// Unrepaired returns the outcomes without a repair.
func (r *Result) Unrepaired() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Repair == nil {
			out = append(out, o)
		}
	}
	return out
}

// PatchHead recognises, from its first bytes, a patch scry fix wrote (or an empty file), which
// -o may replace.
func PatchHead(head []byte) bool {
	s := string(head)
	return strings.TrimSpace(s) == "" || strings.HasPrefix(s, patchMagic)
}

const patchMagic = "# scry fix"

// interThreadAdvice is why scry fix computes no repair of an inter-thread-inconsistency: its two
// stores are in different threads, and flushes and fences order only their own thread's stores;
// the repairs that exist change where the other thread makes its store durable or make the
// reader persist what it read.
const interThreadAdvice = "the two stores are in different threads, and a flush or fence orders only its own thread's stores: make the other thread's store durable before it becomes visible (flush and fence it before the unlock, or before setting the flag the reader waits for), or have the reader write back the line it read (flush it and fence) before it stores data derived from it (flush on read); scry fix does not compute repairs across threads"

// lockWordAdvice is why scry fix computes no repair of a pm-lock-word: no order of the stores
// keeps a crash from leaving the word held; the repair is code recovery runs.
const lockWordAdvice = "no order of flushes and fences keeps a crash inside the critical section from leaving the lock word durable as held: reset the lock words when the pool is opened, before any operation runs (as P-CLHT's clht_lock_initialization and CCEH's Recovery do), or keep the locks in DRAM; scry fix does not write recovery code"

// raceAdvice is why scry fix computes no repair of a persistency-race: no flush or fence keeps
// a crash between the store and its persist from exposing a torn value; the repair is in how
// the source writes the store.
const raceAdvice = "no flush or fence can keep a crash that comes before the store is durable from exposing part of it: write the store as an atomic access, which compilers never split (C11 atomic_store_explicit(p, v, memory_order_relaxed), GCC/clang __atomic_store_n(p, v, __ATOMIC_RELAXED), C++ std::atomic<T>::store(v, std::memory_order_relaxed); aligned, at most 8 bytes), or make recovery not trust the value (a checksum, or a commit flag written after it); scry fix does not rewrite accesses"

// fixable are the kinds scry fix handles.
var fixable = map[report.Kind]bool{
	report.UnpersistedStore: true, report.OverwrittenUnpersisted: true, report.TxUnloggedStore: true, report.MPBViolation: true,
	report.OrderingViolation: true, report.AtomicityViolation: true, report.DurabilityViolation: true, report.MPAViolation: true,
	report.CrossFailureRead: true,
}

// Fix computes the repairs of the report's selected findings and, with a build command,
// validates them. Errors: the report cannot be read or names no trace that can be read, a
// finding ID is unknown, z3 is not installed, validation cannot run (the check cannot be run
// again, the build command fails on the unchanged tree), ctx is cancelled. A result with
// unrepaired findings is not an error.
func Fix(ctx context.Context, o Options) (*Result, error) {
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.Dir = wd
	}
	if abs, err := filepath.Abs(o.Dir); err == nil {
		o.Dir = abs
	}
	if o.Alternatives <= 0 {
		o.Alternatives = DefaultAlternatives
	}
	data, err := report.ReadFile(o.Report, "a JSON report")
	if err != nil {
		return nil, err
	}
	rep, err := report.ReadJSON(data, o.Report)
	if err != nil {
		return nil, err
	}
	if s := rep.Scope; s != nil && o.Build != "" {
		// Validation runs the check again in full: what the scope left out would count as
		// new findings, and every repair would be refused.
		return nil, fmt.Errorf("%s is the report of a check scoped to the change since %s (--changed-since): --build validates by running the check again in full, which would take the findings the scope left out for new ones; validate with the report of a full check", o.Report, s.Rev)
	}
	sel, err := selectFindings(rep, o.Findings)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if len(sel) == 0 {
		res.Warnings = append(res.Warnings, "the report has no correctness finding: nothing to repair")
		return res, nil
	}
	f := &fixer{o: o, rep: rep, res: res}
	defer f.close() // solvers and temporary files, on every path
	if err := f.locateTrace(ctx, sel); err != nil {
		return nil, err
	}
	if err := f.compute(ctx, sel); err != nil {
		return res, err
	}
	if o.Build != "" && len(f.problems) > 0 {
		if err := f.validate(ctx); err != nil {
			return res, err
		}
	} else {
		for _, pr := range f.problems {
			pr.accepted = pr.current
		}
	}
	f.finish()
	return res, nil
}

// selectFindings returns the 1-based numbers of the findings to repair.
func selectFindings(rep *report.Report, ids []string) ([]int, error) {
	var out []int
	if len(ids) == 0 {
		for i, f := range rep.Findings {
			if f.Class == report.Correctness {
				out = append(out, i+1)
			}
		}
		return out, nil
	}
	for _, id := range ids {
		n, err := strconv.Atoi(id)
		if err != nil {
			n = 0
			for i, f := range rep.Findings {
				if f.Crash != nil && f.Crash.ID == id {
					n = i + 1
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("--finding %q: the report has no finding with that crash id (give a finding's number, 1 to %d, or its crash id)", id, len(rep.Findings))
			}
		}
		if n < 1 || n > len(rep.Findings) {
			return nil, fmt.Errorf("--finding %d: the report has %d findings", n, len(rep.Findings))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// fixer is the state of one Fix.
type fixer struct {
	o      Options
	rep    *report.Report
	res    *Result
	trace  string
	events map[int]uint64 // finding number -> the record it names in trace
	// callers are, per finding reported at its instruction with several callers
	// (report.RoleCaller), a record of the instruction reached through each caller: the finding
	// is repaired at each caller, as one reported there would be.
	callers  map[int][]callerAt
	problems []*fixProblem
	// outcome per finding number, filled as decided.
	reasons map[int]string
	cleanup []func()
	// validateSeconds is the wall-clock time validation took (copies, builds, checks).
	validateSeconds float64
}

// fixProblem is one problem with its search and candidates.
type fixProblem struct {
	p        *problem
	search   *search
	current  *Repair // the candidate being tried
	accepted *Repair
	tried    int
	reason   string // why it has no repair
}

func (f *fixer) note(format string, args ...any) {
	if f.o.Notes != nil {
		fmt.Fprintf(f.o.Notes, "scry fix: "+format+"\n", args...)
	}
}

// scheduleName names a finding's thread schedule in reasons.
func scheduleName(spec string) string {
	if spec == "" {
		return "of the operating system"
	}
	return "SCRY_SCHED=" + spec
}

// locateTrace finds the trace the report's findings come from, or records the check again.
func (f *fixer) locateTrace(ctx context.Context, sel []int) error {
	f.events = map[int]uint64{}
	f.reasons = map[int]string{}
	cands := []string{}
	if t := f.rep.Trace; t != "" {
		if !filepath.IsAbs(t) && f.rep.Check != nil {
			cands = append(cands, filepath.Join(f.rep.Check.Dir, t))
		}
		cands = append(cands, t)
	}
	// A crash finding of a controlled thread schedule names its own trace
	// (pipeline.ScheduleTrace), and a trace finding of that schedule has the same: the repair
	// is computed on the trace of the first finding selected, and a finding of another schedule
	// is left for a run of its own.
	bySchedule := map[string]string{}
	for _, fd := range f.rep.Findings {
		if fd.Schedule != "" && fd.Crash != nil && fd.Crash.Trace != "" {
			bySchedule[fd.Schedule] = fd.Crash.Trace
		}
	}
	traceOf := func(fd *report.Finding) string {
		if fd.Schedule == "" {
			return ""
		}
		if fd.Crash != nil && fd.Crash.Trace != "" {
			return fd.Crash.Trace
		}
		return bySchedule[fd.Schedule]
	}
	if len(sel) > 0 {
		if t := traceOf(&f.rep.Findings[sel[0]-1]); t != "" {
			cands = append([]string{t}, cands...)
		}
	}
	for _, n := range sel {
		if c := f.rep.Findings[n-1].Crash; c != nil && c.Trace != "" {
			cands = append(cands, c.Trace)
		}
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			f.trace = c
			break
		}
	}
	if f.trace != "" {
		first := ""
		if len(sel) > 0 {
			first = traceOf(&f.rep.Findings[sel[0]-1])
		}
		for _, n := range sel {
			fd := &f.rep.Findings[n-1]
			if t := traceOf(fd); t != first {
				f.reasons[n] = fmt.Sprintf("it was found under the thread schedule %s, in the trace %s, and finding %d under another: repair it in a run of its own (--finding %d)", scheduleName(fd.Schedule), cmp.Or(t, f.rep.Trace), sel[0], n)
				continue
			}
			if fd.Crash != nil {
				f.events[n] = fd.Crash.Event
			} else {
				f.events[n] = fd.FirstEvent
			}
		}
		return nil
	}
	if f.rep.Check == nil {
		return fmt.Errorf("%s names no trace that exists (%s) and records no check to run again: keep the trace with scry check --trace FILE", f.o.Report, strings.Join(cands, ", "))
	}
	f.note("the report's trace is gone: recording the check again")
	dir, err := os.MkdirTemp("", "scry-fix-")
	if err != nil {
		return err
	}
	f.cleanup = append(f.cleanup, func() { os.RemoveAll(dir) })
	r2, tracePath, err := rerun(ctx, f.rep.Check, "", "", dir)
	if err != nil {
		return fmt.Errorf("recording the check again: %w", err)
	}
	f.trace = tracePath
	for _, n := range sel {
		fd := &f.rep.Findings[n-1]
		for _, g := range r2.Findings {
			if g.Kind == fd.Kind && g.Location == fd.Location {
				if g.Crash != nil {
					f.events[n] = g.Crash.Event
				} else {
					f.events[n] = g.FirstEvent
				}
				break
			}
		}
		if _, ok := f.events[n]; !ok {
			f.reasons[n] = "the check recorded again does not show it"
		}
	}
	return nil
}

// label names finding n in hunk headings: its kind, number and location.
func (f *fixer) label(n int) string {
	fd := &f.rep.Findings[n-1]
	return fmt.Sprintf("%s (finding %d) at %s:%d", fd.Kind, n, filepath.Base(fd.Location.File), fd.Location.Line)
}

// compute builds the problems and their first candidates.
func (f *fixer) compute(ctx context.Context, sel []int) error {
	anchors := map[uint64]bool{}
	for _, ev := range f.events {
		anchors[ev] = true
	}
	if err := f.findCallers(sel); err != nil {
		return fmt.Errorf("reading the trace %s: %w", f.trace, err)
	}
	for _, cs := range f.callers {
		for _, c := range cs {
			anchors[c.event] = true
		}
	}
	ix, err := readIndex(f.trace, anchors)
	if err != nil {
		return fmt.Errorf("reading the trace %s: %w", f.trace, err)
	}
	// Durability violations are repaired with the unpersisted-store findings of their stores.
	groups := map[string][]*target{}
	var order []string
	joinedTo := map[int]int{}
	for _, n := range sel {
		fd := &f.rep.Findings[n-1]
		if _, ok := f.reasons[n]; ok {
			continue
		}
		if fd.Kind == report.InterThreadInconsistency {
			f.reasons[n] = interThreadAdvice
			continue
		}
		if fd.Kind == report.PMLockWord {
			f.reasons[n] = lockWordAdvice
			continue
		}
		if fd.Kind == report.PersistencyRace {
			f.reasons[n] = raceAdvice
			continue
		}
		if !fixable[fd.Kind] {
			f.reasons[n] = "scry fix repairs correctness findings of the kinds unpersisted-store, overwritten-unpersisted, tx-unlogged-store, mpb-violation, ordering-violation, atomicity-violation, durability-violation and cross-failure-read, not " + string(fd.Kind)
			continue
		}
		if fd.Kind == report.MPAViolation {
			f.reasons[n] = "stores that must persist atomically cannot be ordered into atomicity by flushes and fences: " + atomicAdvice
			continue
		}
		if fd.Kind == report.OverwrittenUnpersisted {
			// A store overwritten before it persisted, by a later instance of itself, that is
			// also never made durable in the end (a counter): one repair persists it, the
			// unpersisted-store's, computed and validated once for both; two would each add a
			// flush, the second redundant.
			if m := f.sameStoreUnpersisted(fd, sel); m > 0 {
				joinedTo[n] = m
				continue
			}
		}
		if fd.Kind == report.DurabilityViolation || fd.Kind == report.CrossFailureRead {
			// A cross-failure-read is a durability-violation whose recovery trusted the lost
			// bytes: persisting its store is the repair computed (the other, not trusting it in
			// recovery, is code scry fix does not write).
			if m := f.unpersistedFor(fd, sel); m > 0 {
				joinedTo[n] = m
				continue
			}
			f.reasons[n] = "the stores it loses are not reported as unpersisted-store findings selected for repair (select them with --finding)"
			continue
		}
		ts := []*target{{n: n, f: fd, anchor: f.events[n]}}
		if cs := f.callers[n]; len(cs) > 0 {
			ts = ts[:0]
			for _, c := range cs {
				at := *fd
				at.Location = c.loc
				at.Related = slices.DeleteFunc(slices.Clone(fd.Related), func(r report.Related) bool { return r.Role == report.RoleCaller })
				ts = append(ts, &target{n: n, f: &at, anchor: c.event})
			}
		}
		for _, t := range ts {
			a, ok := ix.at[t.anchor]
			if !ok {
				f.reasons[n] = fmt.Sprintf("its record %d is not in the trace %s", t.anchor, f.trace)
				break
			}
			key := fmt.Sprintf("%d|%d|%s", a.thread, a.op.begin, t.f.Location.Function)
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], t)
		}
	}
	var windows []*window
	var probs []*problem
	src := newSources(f.srcDirs()...)
	for _, key := range order {
		ts := groups[key]
		lo, hi := ts[0].anchor, ts[0].anchor
		for _, t := range ts {
			lo, hi = min(lo, t.anchor), max(hi, t.anchor)
		}
		w := &window{thread: ix.at[ts[0].anchor].thread, anchors: map[uint64]bool{}}
		for _, t := range ts {
			w.anchors[t.anchor] = true
		}
		w.start, w.end = ix.spanAround(lo, hi)
		w.deadline = w.end
		for _, t := range ts {
			if t.f.Kind == report.UnpersistedStore {
				w.deadline = ix.end
				w.tailLines = map[uint64]bool{}
				w.anchor = t.anchor
			}
		}
		windows = append(windows, w)
		probs = append(probs, &problem{w: w, lineSize: ix.lineSize, sources: src, targets: ts})
	}
	styleSites, tbl, err := collect(f.trace, windows)
	if err != nil {
		return fmt.Errorf("reading the trace %s: %w", f.trace, err)
	}
	// A store overwritten before it persisted may be older than its window (a counter written
	// once per operation): such windows start again at it, and are read once more.
	var again []*window
	for _, w := range windows {
		for _, prev := range w.prev {
			if prev < w.start && w.start-prev <= 8*maxSpan {
				w.start = prev
				again = append(again, w)
			}
		}
	}
	if len(again) > 0 {
		for _, w := range again {
			w.events, w.initial, w.initialFlush = nil, nil, nil
			if w.tailLines != nil {
				w.tailLines = map[uint64]bool{}
			}
		}
		if _, _, err := collect(f.trace, again); err != nil {
			return fmt.Errorf("reading the trace %s: %w", f.trace, err)
		}
	}
	arm := false
	if h, ok := tbl.(interface{ Header() trace.Header }); ok {
		arm = h.Header().AArch64()
	}
	for _, p := range probs {
		p.tbl, p.arm = tbl, arm
		for n, m := range joinedTo {
			for _, t := range p.targets {
				if t.n == m {
					p.targets = append(p.targets, &target{n: n, f: &f.rep.Findings[n-1], joined: true})
				}
			}
		}
		fp := &fixProblem{p: p}
		f.problems = append(f.problems, fp)
		start := time.Now()
		if err := f.prepare(ctx, fp, styleSites); err != nil {
			return err
		}
		if fp.reason != "" {
			continue
		}
		r, err := f.nextCandidate(fp)
		if err != nil {
			return err
		}
		if r != nil {
			r.ComputeSeconds += time.Since(start).Seconds()
		}
	}
	return nil
}

// srcDirs are the directories relative source paths are looked for in.
func (f *fixer) srcDirs() []string {
	var dirs []string
	if f.rep.Check != nil {
		dirs = append(dirs, f.rep.Check.Dir)
	}
	return append(dirs, f.o.Dir)
}

// unpersistedFor returns the number of a selected unpersisted-store finding at a location a
// durability violation loses, 0 when none.
// sameStoreUnpersisted returns the selected unpersisted-store finding (its number) at the store
// of overwritten-unpersisted finding fd when fd's store overwrites an earlier instance of itself
// (its related unpersisted-store is its own location); 0 when there is none.
func (f *fixer) sameStoreUnpersisted(fd *report.Finding, sel []int) int {
	i := slices.IndexFunc(fd.Related, func(r report.Related) bool { return r.Role == report.RoleUnpersistedStore })
	if i < 0 || !sameLoc(storeAt(fd), fd.Related[i]) {
		return 0
	}
	for _, n := range sel {
		if g := &f.rep.Findings[n-1]; g.Kind == report.UnpersistedStore && storeAt(g) == storeAt(fd) {
			return n
		}
	}
	return 0
}

// storeAt is where a trace finding's store is: its instruction (the innermost frame of its
// first occurrence) when it is reported at a caller, else its location.
func storeAt(fd *report.Finding) report.Location {
	if len(fd.Stack) > 0 {
		return fd.Stack[0].Location()
	}
	return fd.Location
}

func (f *fixer) unpersistedFor(fd *report.Finding, sel []int) int {
	for _, r := range fd.Related {
		if r.Role != report.RoleUnpersisted {
			continue
		}
		for _, n := range sel {
			g := &f.rep.Findings[n-1]
			if g.Kind != report.UnpersistedStore {
				continue
			}
			// Its place, or its instruction when it is placed at a caller.
			if sameLoc(g.Location, r) || len(g.Stack) > 0 && sameLoc(g.Stack[0].Location(), r) {
				return n
			}
		}
	}
	return 0
}

// external reports whether finding fd is reported at a frame outside the program's own code
// (report.Frame.External): every frame of its stack is, so there is nothing of the program's to
// edit.
func external(fd *report.Finding) bool {
	for _, fr := range fd.Stack {
		if sameLoc(fr.Location(), fd.Location.Related("")) {
			return fr.External
		}
	}
	return false
}

// prepare derives a problem's obligations, choices and search.
func (f *fixer) prepare(ctx context.Context, fp *fixProblem, sites []styleSite) error {
	p := fp.p
	if err := p.level(); err != nil {
		fp.reason = "its place in the trace could not be found (" + err.Error() + ")"
		return nil
	}
	file := ""
	if k := p.find(p.targets[0].anchor); k >= 0 && p.stmtAt[k] != nil {
		file = p.stmtAt[k].file.name
	}
	if file == "" {
		fp.reason = fmt.Sprintf("its source %s cannot be read (looked in %s)", p.targets[0].f.Location.File, strings.Join(f.srcDirs(), ", "))
		return nil
	}
	if external(p.targets[0].f) {
		fp.reason = fmt.Sprintf("it is reported in %s, outside the program's own sources (no frame of the program's code is further out): scry fix edits only the program's code", p.targets[0].f.Location.File)
		return nil
	}
	p.styles = deriveStyles(p.tbl, sites, p.sources, p.fn, file, p.arm)
	p.buildGaps()
	why := p.obligations()
	for ti, r := range why {
		f.reasons[p.targets[ti].n] = r
	}
	if len(p.obls) == 0 {
		fp.reason = "no obligation could be derived"
		return nil
	}
	p.buildChoices()
	p.buildInstrs()
	p.dump()
	s, err := p.newSearch(ctx, smt.Options{Timeout: f.o.SolverTimeout, Log: f.o.SMTLog})
	if err != nil {
		return err
	}
	fp.search = s
	f.cleanup = append(f.cleanup, s.close)
	return nil
}

// nextCandidate computes the problem's next candidate (nil, with fp.reason set, when none).
func (f *fixer) nextCandidate(fp *fixProblem) (*Repair, error) {
	p := fp.p
	start := time.Now()
	sol, err := fp.search.next()
	elapsed := time.Since(start).Seconds()
	if err != nil {
		if errors.Is(err, smt.ErrNotInstalled) {
			return nil, err
		}
		fp.reason = "the search failed: " + err.Error()
		fp.current = nil
		return nil, nil
	}
	if sol == nil {
		fp.current = nil
		if fp.tried == 0 {
			fp.reason = "no insertion, move or deletion of flushes, fences, persists and TX_ADDs in " + p.fn + " meets it without harm"
			atomic := true
			for _, o := range p.obls {
				atomic = atomic && o.kind == oAtomic
			}
			if atomic {
				fp.reason = "no placement of flushes and fences makes the operation failure-atomic (scry fix moves flushes, fences, persists and TX_ADDs, never stores): " + adviceFor(p.targets)
			}
			if len(p.notes) > 0 {
				fp.reason += " (" + strings.Join(p.notes, "; ") + ")"
			}
		} else {
			fp.reason = fmt.Sprintf("the rebuilt program still failed the check with each of the %d repairs computed", fp.tried)
		}
		return nil, nil
	}
	fp.tried++
	var nums []int
	var ls []string
	for _, t := range p.targets {
		if _, bad := f.reasons[t.n]; !bad && !slices.Contains(nums, t.n) {
			if !t.joined {
				nums = append(nums, t.n)
			}
			ls = append(ls, f.label(t.n))
		}
	}
	edits, err := p.edits(sol, ls)
	if err != nil {
		fp.reason = err.Error()
		fp.current = nil
		return nil, nil
	}
	r := &Repair{Findings: nums, Summary: sol.describe(), Inserted: sol.inserted, Moved: sol.moved, edits: edits,
		Candidates: fp.tried, Iterations: fp.search.iterations, ComputeSeconds: elapsed, Notes: p.notes}
	if fp.current != nil {
		r.ComputeSeconds += fp.current.ComputeSeconds
		r.ValidateSeconds = fp.current.ValidateSeconds
	}
	fp.current = r
	return r, nil
}

// files returns the new contents of the files the repairs change.
func (f *fixer) files(repairs []*Repair) []fileDiff {
	byFile := map[*srcFile][]edit{}
	var order []*srcFile
	for _, r := range repairs {
		for _, e := range r.edits {
			if _, ok := byFile[e.file]; !ok {
				order = append(order, e.file)
			}
			byFile[e.file] = append(byFile[e.file], e)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].path < order[j].path })
	var out []fileDiff
	for _, sf := range order {
		text, changes := applyEdits(sf, byFile[sf])
		name, abs := diffName(sf.path, f.o.Dir)
		out = append(out, fileDiff{name: name, abs: abs, old: string(sf.text), new: text, changes: changes, path: sf.path})
	}
	return out
}

// finish writes the outcomes and the patch.
func (f *fixer) finish() {
	res := f.res
	var accepted []*Repair
	byFinding := map[int]*Repair{}
	for _, fp := range f.problems {
		if fp.accepted != nil {
			accepted = append(accepted, fp.accepted)
			for _, n := range fp.accepted.Findings {
				byFinding[n] = fp.accepted
			}
			// A durability violation joined to its unpersisted-store is repaired with it when
			// validation saw it gone too (without --build, when the store is repaired).
			for _, t := range fp.p.targets {
				if !t.joined {
					continue
				}
				if f.o.Build != "" && !fp.accepted.gone[t.n] {
					f.reasons[t.n] = "the repair of its unpersisted-store leaves it: the check of the rebuilt program still loses the store (on another path)"
					continue
				}
				byFinding[t.n] = fp.accepted
				if !slices.Contains(fp.accepted.Findings, t.n) {
					fp.accepted.Findings = append(fp.accepted.Findings, t.n)
				}
			}
			continue
		}
		for _, t := range fp.p.targets {
			if _, ok := f.reasons[t.n]; !ok {
				f.reasons[t.n] = fp.reason
			}
		}
	}
	// A finding repaired at its callers is repaired when the repair of every caller was.
	for n, cs := range f.callers {
		done, why := 0, ""
		for _, fp := range f.problems {
			if !slices.ContainsFunc(fp.p.targets, func(t *target) bool { return t.n == n && !t.joined }) {
				continue
			}
			if fp.accepted != nil {
				done++
			} else if why == "" {
				why = fp.reason
			}
		}
		if _, ok := byFinding[n]; ok && why != "" {
			delete(byFinding, n)
			f.reasons[n] = fmt.Sprintf("repaired at %d of its %d callers (the patch has those repairs), not at the others: %s", done, len(cs), why)
		}
	}
	res.Repairs = accepted
	nums := []int{}
	for n := range f.reasons {
		nums = append(nums, n)
	}
	for n := range byFinding {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	for _, n := range nums {
		fd := &f.rep.Findings[n-1]
		o := Outcome{Finding: n, Kind: fd.Kind, Location: fd.Location, Repair: byFinding[n]}
		if o.Repair == nil {
			o.Reason = f.reasons[n]
			if o.Reason == "" {
				o.Reason = "no repair was found"
			}
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	res.Validated = f.o.Build != "" && len(accepted) > 0
	for _, fp := range f.problems {
		for _, r := range []*Repair{fp.accepted, fp.current} {
			if r != nil {
				res.ComputeSeconds += r.ComputeSeconds
				break
			}
		}
	}
	for _, r := range accepted {
		res.Validated = res.Validated && r.Validated
	}
	res.ValidateSeconds = f.validateSeconds
	files := f.files(accepted)
	res.files = files
	var b strings.Builder
	f.header(&b, accepted)
	writeDiff(&b, files)
	res.Patch = b.String()
	for _, r := range accepted {
		r.LinesAdded, r.LinesRemoved = countLines(f.files([]*Repair{r}))
	}
}

// countLines counts the added and removed lines of the diffs.
func countLines(files []fileDiff) (added, removed int) {
	for _, fd := range files {
		var b strings.Builder
		writeDiff(&b, []fileDiff{fd})
		for _, l := range strings.Split(b.String(), "\n") {
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			case strings.HasPrefix(l, "+"):
				added++
			case strings.HasPrefix(l, "-"):
				removed++
			}
		}
	}
	return added, removed
}

// header writes the patch's leading comment (git apply and patch skip it).
func (f *fixer) header(b *strings.Builder, accepted []*Repair) {
	state := "UNVALIDATED: not rebuilt nor checked again (give --build CMD to validate)"
	if f.o.Build != "" {
		state = "validated: rebuilt with `" + f.o.Build + "` and checked again, each finding gone and no new one"
	}
	fmt.Fprintf(b, "%s: %d repair(s) of %s, %s\n", patchMagic, len(accepted), f.o.Report, state)
	for _, r := range accepted {
		var ls []string
		for _, n := range r.Findings {
			ls = append(ls, f.label(n))
		}
		fmt.Fprintf(b, "#   %s: %s (%d inserted, %d moved or deleted)\n", strings.Join(ls, "; "), r.Summary, r.Inserted, r.Moved)
	}
	for _, o := range f.res.Outcomes {
		if o.Repair == nil {
			fmt.Fprintf(b, "#   not repaired: %s: %s\n", f.label(o.Finding), o.Reason)
		}
	}
}

// close stops the solvers and removes temporary files.
func (f *fixer) close() {
	for _, c := range f.cleanup {
		c()
	}
	f.cleanup = nil
}
