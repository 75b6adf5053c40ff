// Package pipeline runs scry from end to end: record a run of the program under test, infer
// persistence properties from its trace (once, for both the checks of inferred properties and
// the invariants strategy), run the trace analyses, explore crash states on images, and write
// one report. The command line (package cli) only turns flags into calls of this
// package and errors into exit statuses; everything that composes the parts lives here (the
// catalogue of finding kinds, with a checker's custom analyzers, too), behind explore's Runner
// interface so that exploration can be tested without compiling or starting anything.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// Analysis says what the trace analyses report.
type Analysis struct {
	// Kinds names the kinds to report (Select); nil: all.
	Kinds []string
	// NoInfer leaves out the checks of inferred properties.
	NoInfer bool
	// Suppressions removes accepted findings (nil: none).
	Suppressions *report.Suppressions
	// Catalogue holds the kinds Kinds names and the analyzers that report them (nil: scry's
	// own; NewCatalogue adds custom analyzers).
	Catalogue *Catalogue
	// Profiles are the persistency profiles to check under (--persistency; px86.Profile): the
	// trace analyses run once per profile and crash exploration labels its findings with the
	// profiles that allow a failing state (docs/persistency-profiles.md). nil: ADR alone, the
	// findings unlabelled.
	Profiles []px86.Profile
}

// Check validates the selection: an unknown kind, or a check of inferred properties with
// NoInfer, is an error.
func (a Analysis) Check() error {
	_, err := a.Catalogue.Select(a.Kinds, a.NoInfer)
	return err
}

// explores reports whether the selection asks for crash findings.
func (a Analysis) explores() bool {
	sel, err := a.Catalogue.Select(a.Kinds, a.NoInfer)
	return err == nil && sel.Explore
}

// Exploration configures crash exploration (docs/crash-exploration.md): the user's options,
// handed to pm/explore whole, and what the check works out for them.
type Exploration struct {
	explore.Options
	// confirm: the checks of inferred properties run too, so properties are inferred once for
	// both (Infer), and the properties their findings break are confirmed with crash images
	// (Explore; confirmIDs are those properties' IDs).
	confirm    bool
	confirmIDs []int
	// avoidTmpfs says why the crash images should not go on the tmpfs (AllocatesPool).
	avoidTmpfs string
	// opBegin and opEnd are the recorded run's operation markers (Record.OpBegin, OpEnd).
	opBegin, opEnd string
	// pmGlobs are the recorded run's PM globs (Recording.PM), for the traced runs on crash
	// images that look for a recovery's loads (recoveryLoads).
	pmGlobs []string
}

// needsInvariants reports whether a strategy chooses states from inferred invariants.
func (x *Exploration) needsInvariants() bool {
	return x != nil && x.NeedsInvariants()
}

// Infer infers the persistence properties of the trace tf once for everything that needs them:
// with every rule when the invariants strategy explores (its invariants are WITCHER's rules and
// the dissertation's) or when the checks' findings are to be confirmed with crash images (the
// checks and the invariants must number the properties alike), else nothing (the checks of
// inferred properties infer their own rules in their prepass). It returns nil properties when
// nothing needs them. warning is set when the trace was truncated (the properties come from its
// complete records).
func Infer(tf *trace.File, x *Exploration) (props *infer.Result, warning string, err error) {
	if !x.needsInvariants() && (x == nil || !x.confirm) {
		return nil, "", nil
	}
	r, err := tf.Reader()
	if err != nil {
		return nil, "", err
	}
	res, ierr := infer.Infer(r, infer.Options{Rules: infer.Both})
	if ierr != nil {
		if res == nil || !errors.Is(ierr, trace.ErrTruncated) {
			return nil, "", fmt.Errorf("inferring invariants: %w", ierr)
		}
		warning = "invariant inference: the trace is truncated; invariants come from its complete records"
	}
	return res, warning, nil
}

// Analyze runs the trace analyses selected by a over the trace at path, with the properties
// already inferred (props, nil: the checks infer their own). A truncated trace is analysed up
// to its last complete record, with a warning. Errors: a bad selection or a trace that cannot
// be opened (nil report); a corrupt trace (the report so far and the error).
func Analyze(path string, a Analysis, props *infer.Result) (*report.Report, error) {
	var aarch64 bool
	if tf, err := trace.OpenFile(path); err == nil {
		aarch64 = tf.Header().AArch64()
		tf.Close()
	}
	return analyzeProfiles(a.Profiles, aarch64, func(p px86.Profile, _ bool) (*report.Report, error) {
		return AnalyzeFile(path, AnalyzeOptions{
			Oracles: a.Kinds, NoInfer: a.NoInfer, Suppressions: a.Suppressions, Properties: props, Catalogue: a.Catalogue, Profile: p,
		})
	})
}

// NoCrashPointWarning is the report's warning for an exploration that found no crash point
// inside an operation: nothing was tested.
const NoCrashPointWarning = "no crash point inside an operation: the trace has no operation (a line of the workload read from standard input) with a fence or a library call that persists data, so no crash state was tested; does the program read its workload from standard input?"

// NeverDurable returns the stores the trace oracles report as never made durable (neverDurableOf):
// one analysis pass over the trace at path with the unpersisted-store and overwritten-unpersisted
// oracles alone. Errors: the trace cannot be read to its end (a truncated trace is read up to
// its cut).
func NeverDurable(path string) ([]px86.StoreState, error) {
	tf, err := trace.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	return neverDurableFile(tf)
}

// assumeFixed makes opts model the program with its durability findings repaired, as the
// exploration and its dry run both do (docs/crash-states.md): stores, the stores never made
// durable, and every store still pending when an operation starts are assumed durable. It
// returns err, finding those stores, and leaves opts literal then.
func assumeFixed(opts *crash.Options, stores []px86.StoreState, err error) error {
	if err != nil {
		return err
	}
	opts.AssumeDurable, opts.AssumeLate = stores, true
	return nil
}

// neverDurableFile is NeverDurable over tf.
func neverDurableFile(tf *trace.File) ([]px86.StoreState, error) {
	keep := map[*analysis.Analyzer]any{}
	_, err := AnalyzeSource(tf.Reader, AnalyzeOptions{
		Oracles: []string{oracle.UnpersistedStore.Name, oracle.OverwrittenUnpersisted.Name}, NoInfer: true, Keep: keep, Trace: tf.Path(),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tf.Path(), err)
	}
	stores, _ := neverDurableOf(keep)
	return stores, nil
}

// exploreCrashes explores the crash states of the trace tf, recorded from target (with {pool}) on the
// workload file, and adds its findings, warnings, kinds and statistics to rep. props are the
// properties inferred for the invariants strategy (Infer); durable are the stores never made
// durable (neverDurableOf), from the analysis pass, nil to find them in a pass of their own
// (unless NoAssumeFixed). It returns the exploration's error (a bad option, target or workload, a
// file error, ctx cancelled) after adding what was found.
func exploreCrashes(ctx context.Context, rep *report.Report, tf *trace.File, workloadPath string, target []string, x Exploration, props *infer.Result, durable *passed) error {
	w, err := workload.Read(workloadPath)
	if err != nil {
		return err
	}
	opts := &x.Crash
	if x.needsInvariants() && opts.Invariants == nil && props != nil {
		opts.Invariants = explore.Invariants(props)
	}
	var inter []crash.Invariant
	if durable != nil {
		inter = interThreadInvariants(durable.interPairs, props)
	}
	if !x.needsInvariants() && (len(x.confirmIDs) > 0 && props != nil || len(inter) > 0) {
		// The properties the checks found broken are confirmed the way the invariants strategy
		// tests invariants: their violating crash states join the others.
		if x.Strategies == nil {
			x.Strategies = slices.Clone(explore.DefaultStrategies)
		}
		x.Strategies = append(slices.Clone(x.Strategies), "invariants")
		if props != nil {
			opts.Invariants = slices.DeleteFunc(explore.Invariants(props), func(iv crash.Invariant) bool { return !slices.Contains(x.confirmIDs, iv.ID) })
		}
	}
	opts.Invariants = append(slices.Clone(opts.Invariants), inter...)
	if !x.NoAssumeFixed && opts.AssumeDurable == nil {
		var stores []px86.StoreState
		var err error
		if durable != nil {
			stores, err = durable.neverDurable, durable.durableErr
		} else {
			stores, err = neverDurableFile(tf)
		}
		if err := assumeFixed(opts, stores, err); err != nil {
			rep.Warnings = append(rep.Warnings, "the stores never made durable could not be found ("+err.Error()+"): crash states use the literal model")
		}
	}
	if len(x.Profiles) > 0 && rep.Profiles == nil {
		rep.Profiles = px86.ProfileNames(x.Profiles)
	}
	xo := x.Options
	if xo.TimeBudget > 0 && x.Focus == "" {
		// The exploration leaves the recovery loads' traced runs their reserve (recoveryLoads
		// runs them to the end of the budget).
		xo.Reserve = recoveryLoadReserve(xo.TimeBudget)
	}
	res, xerr := explore.Run(ctx, explore.Config{
		Options: xo, Trace: tf.Path(), File: tf, Args: target, Workload: w,
		ConfirmPairs: confirmPairs(rep), DurableAfter: durableAfter(durable), AvoidTmpfs: x.avoidTmpfs, OpBegin: x.opBegin, OpEnd: x.opEnd,
	})
	if res != nil && rep.Events == 0 {
		rep.Events = res.Events // scry explore: no analysis counted them
	}
	if xerr == nil {
		confirm(rep, res.Pairs, x.needsInvariants() || len(x.confirmIDs) > 0 || len(inter) > 0, res.Durability)
		if opts.AssumeLate {
			// Durability states exist only where stores are assumed fixed: the literal model
			// tests no claim (the findings keep their trace evidence).
			settleDurability(rep, res.Durability)
		}
	}
	rep.Findings = append(rep.Findings, res.Findings...)
	if xerr == nil && opts.AssumeLate {
		settleLockWords(rep, res.Durability)
	}
	if xerr == nil && x.Focus == "" {
		// A focused check (a minimiser's candidate) asks only whether the finding fails.
		recoveryLoads(ctx, rep, tf, x, target, w, opts.AssumeDurable, res.RunBound)
	}
	rep.Warnings = append(rep.Warnings, res.Warnings...)
	rep.Shard = res.Shard
	for _, k := range explore.Kinds() {
		if !slices.ContainsFunc(rep.Rules, func(r report.Rule) bool { return r.Kind == k.Kind }) {
			rep.Rules = append(rep.Rules, k)
		}
	}
	if xerr == nil && res.Stats.StatesTested == 0 && res.Stats.CrashPoints == 0 {
		rep.Warnings = append(rep.Warnings, NoCrashPointWarning)
	}
	return explored(ctx, rep, res.Stats, xerr)
}

// durableAfter gives crash exploration the dependent stores of the inter-thread-inconsistency
// findings (explore.Config.DurableAfter), which their threads make durable while the other
// thread's store they derive from is not: crash points after them break the pair with no state
// of the invariants strategy. nil: no such finding (or no analysis pass).
func durableAfter(p *passed) map[explore.Pair][]uint64 {
	if p == nil || len(p.interPairs) == 0 {
		return nil
	}
	out := map[explore.Pair][]uint64{}
	for _, sp := range p.interPairs {
		k := explore.Pair{Before: sp.BeforeAt, After: sp.AfterAt}
		out[k] = append(out[k], sp.Events...)
	}
	for k := range out {
		slices.Sort(out[k])
		out[k] = slices.Compact(out[k])
	}
	return out
}

// interThreadInvariants turns the store pairs of inter-thread-inconsistency findings into
// ordering invariants for the invariants strategy, numbered after the inferred properties' IDs
// (props, nil: none inferred), so that crash exploration builds the states that persist the
// dependent store and not the other thread's store it derives from, which confirm the findings
// (confirm, by the findings' pairs of locations).
func interThreadInvariants(pairs []infer.StorePair, props *infer.Result) []crash.Invariant {
	id := 0
	if props != nil {
		for _, p := range props.Properties {
			id = max(id, p.ID)
		}
	}
	var out []crash.Invariant
	for _, p := range pairs {
		id++
		out = append(out, crash.Invariant{ID: id, Rule: string(report.InterThreadInconsistency), Before: p.Before, After: p.After,
			Text: fmt.Sprintf("the store at site %d, which another thread's store at site %d feeds, persists after it (inter-thread-inconsistency)", p.After, p.Before)})
	}
	return out
}

// lostAlone sums, over every frame, what the crash states that lost a store at one of stores alone
// right before the next operation showed (explore.Result.Durability).
func lostAlone(outcomes map[explore.StoreAt]explore.InvariantOutcome, stores []report.Location) explore.InvariantOutcome {
	var o explore.InvariantOutcome
	for k, v := range outcomes {
		if slices.Contains(stores, k.Store) {
			o.Tested += v.Tested
			o.Failed += v.Failed
		}
	}
	return o
}

// settleLockWords settles the pm-lock-word findings by crash, after settleDurability and with the
// crash findings in rep: the crash states that lost one of a lock word's releases right before
// the next operation (explore.Result.Durability, under any frame) leave the word durable as held. When
// one made the program fail, the finding is a correctness finding, confirmed by a crash (the
// durability-violation at the release is the replayable proof); when the program recovered from
// each, it stays a warning that says so (recovery resets the word); with no such state, a
// warning that says none was tested. Either way the lock word is one bug reported once: the
// trace oracles' findings of its release (unpersisted-store) and of its acquire rewriting that
// release (overwritten-unpersisted) are folded into it.
func settleLockWords(rep *report.Report, outcomes map[explore.StoreAt]explore.InvariantOutcome) {
	drop := map[int]bool{}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Kind != report.PMLockWord {
			continue
		}
		var rels []report.Location
		for _, r := range f.Related {
			if r.Role == report.RoleRelease {
				rels = append(rels, r.Location())
			}
		}
		if len(rels) == 0 {
			continue
		}
		acq := storeLocation(f)
		o := lostAlone(outcomes, rels)
		proof := ""
		for k := range rep.Findings {
			g := &rep.Findings[k]
			switch {
			case g.Kind == report.UnpersistedStore && slices.Contains(rels, storeLocation(g)):
				drop[k] = true
			case g.Kind == report.OverwrittenUnpersisted && storeLocation(g) == acq && slices.ContainsFunc(g.Related, func(r report.Related) bool {
				return r.Role == report.RoleUnpersistedStore && slices.Contains(rels, r.Location())
			}):
				drop[k] = true
			case g.Kind == report.DurabilityViolation && slices.Contains(rels, g.Location) && g.Crash != nil && proof == "":
				proof = fmt.Sprintf(" (the durability-violation at %s, finding %s, replays one)", g.Location, g.Crash.ID)
			}
		}
		switch {
		case o.Failed > 0:
			f.Class, f.Evidence = report.Correctness, report.EvidenceCrash
			f.Message += fmt.Sprintf("; confirmed by a crash: %d of the %d crash states that lost the release right before the next operation, leaving the word durable as held, made the program fail%s: recovery does not reset it", o.Failed, o.Tested, proof)
		case o.Tested > 0:
			f.Message += fmt.Sprintf("; not confirmed by a crash: the program recovered from each of the %d crash states that lost the release right before the next operation, leaving the word durable as held (recovery resets it, or no later operation takes it)", o.Tested)
		default:
			f.Message += "; not confirmed by a crash: no crash state lost the release before an operation that could take the word again"
		}
	}
	if len(drop) == 0 {
		return
	}
	kept := rep.Findings[:0]
	for i, f := range rep.Findings {
		if !drop[i] {
			kept = append(kept, f)
		}
	}
	rep.Findings = kept
}

// findingPair returns the pair of stores an mpb-violation, mpa-violation or
// inter-thread-inconsistency finding is about: its store (the innermost frame of its first
// occurrence) and the earlier store it names (related report.RoleEarlierStore;
// report.RoleOtherStore for atomicity; report.RoleOtherThreadStore, the other thread's store its
// data derives from, which must persist first). ok is false for other findings.
func findingPair(f *report.Finding) (p explore.Pair, ok bool) {
	role := report.RoleEarlierStore
	switch f.Kind {
	case report.MPBViolation:
	case report.MPAViolation:
		role, p.Atomic = report.RoleOtherStore, true
	case report.InterThreadInconsistency:
		role = report.RoleOtherThreadStore
	default:
		return p, false
	}
	i := slices.IndexFunc(f.Related, func(r report.Related) bool { return r.Role == role })
	if i < 0 {
		return p, false
	}
	p.Before, p.After = f.Related[i].Location(), storeLocation(f)
	return p, true
}

// storeLocation is where a trace finding's store is: the innermost frame of its first
// occurrence (a finding may be reported at a caller of the store's function).
func storeLocation(f *report.Finding) report.Location {
	if len(f.Stack) > 0 {
		return f.Stack[0].Location()
	}
	return f.Location
}

// confirmPairs returns the pairs of the report's unconfirmed mpb/mpa findings, to confirm
// differentially (explore.Config.ConfirmPairs).
func confirmPairs(rep *report.Report) []explore.Pair {
	var out []explore.Pair
	for i := range rep.Findings {
		if p, ok := findingPair(&rep.Findings[i]); ok && rep.Findings[i].Class == report.Unconfirmed && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// confirm settles the class of the findings that break inferred properties (mpb-violation,
// mpa-violation: report.Unconfirmed), each by its own pair of stores (findingPair), from the
// crash states that broke that pair and their repaired twins (explore.Pair): a finding is a
// correctness finding when a state breaking its pair failed and the same state with the pair in
// order did not; otherwise it stays unconfirmed (a warning), its message saying what the states
// showed. A property's other pairs, or a state that fails anyway, confirm nothing. tested says
// whether the pairs' crash states were explored at all.
//
// An inter-thread-inconsistency is not confirmed when a crash that loses the other thread's
// store alone right before the next operation already fails (durability, explore.Result's
// Durability: a durability-violation of that store): its twins show that store must be durable,
// not that the derived store matters.
func confirm(rep *report.Report, outcomes map[explore.Pair]explore.PairOutcome, tested bool, durability map[explore.StoreAt]explore.InvariantOutcome) {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		p, ok := findingPair(f)
		if !ok || f.Class != report.Unconfirmed || !tested {
			continue
		}
		o := outcomes[p]
		pair := fmt.Sprintf("this store persisted while the one at %s was not", p.Before)
		if p.Atomic {
			pair = fmt.Sprintf("one of this store and the one at %s persisted without the other", p.Before)
		}
		alone := 0
		if f.Kind == report.InterThreadInconsistency {
			alone = lostAlone(durability, []report.Location{p.Before}).Failed
		}
		switch {
		case o.Confirmed > 0 && alone > 0:
			f.Message += fmt.Sprintf("; not confirmed: %d crash states that break it made the program fail, but a crash that loses the store at %s alone fails too (a durability-violation of that store): the derived store is not shown to matter", o.Failed, p.Before)
		case o.Confirmed > 0 && f.Kind == report.InterThreadInconsistency:
			f.Class = report.Correctness
			f.Message += fmt.Sprintf("; confirmed: %d of the %d crash states that break it (%s) made the program fail, and %d of them failed again on an image of their own and recovered with the store at %s persisted too, or without this store persisted (see the crash findings)", o.Failed, o.Broken, pair, o.Confirmed, p.Before)
		case o.Confirmed > 0:
			f.Class = report.Correctness
			f.Message += fmt.Sprintf("; confirmed: %d of the %d crash states that break it (%s) made the program fail, and %d of them passed without the store persisted too early but failed again with only these two out of order (see the crash findings)", o.Failed, o.Broken, pair, o.Confirmed)
		case o.FailedAnyway > 0:
			f.Message += fmt.Sprintf("; not confirmed: the %d crash states that break it (%s) and failed also failed without the store persisted too early: they fail for another reason", o.Failed, pair)
		case o.Failed > 0:
			f.Message += fmt.Sprintf("; not confirmed: %d of the %d crash states that break it (%s) failed, but the same states without the store persisted too early, or with only these two out of order, did not show them to be the cause", o.Failed, o.Broken, pair)
		case o.Broken > 0:
			f.Message += fmt.Sprintf("; not confirmed: the program recovered from each of the %d crash states that break it (%s)", o.Broken, pair)
		default:
			f.Message += "; not confirmed: no crash state inside an operation breaks it"
		}
	}
}

// settleDurability tests the trace oracles' claims that a store is not durable in time
// (unpersisted-store; overwritten-unpersisted, about the earlier store it names) by the crash
// states that lost that store alone right before the next operation, issued under the frame the
// finding is reported at (explore.Result.Durability: a store a helper writes into a fresh node
// for one caller and into a live one for another is settled per caller):
// a claim stands, confirmed by a crash (a durability-violation finding), when such a state made
// the program fail; otherwise the finding becomes unconfirmed (a warning) that says why: the
// program recovered from every such state (recovery never reads the data, or rewrites it before
// reading), or no state lost it (it was issued in the last operation, outside operations, or
// made durable before the next one began).
func settleDurability(rep *report.Report, outcomes map[explore.StoreAt]explore.InvariantOutcome) {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Class != report.Correctness {
			continue
		}
		var loc report.Location
		switch f.Kind {
		case report.UnpersistedStore:
			loc = storeLocation(f)
		case report.OverwrittenUnpersisted:
			j := slices.IndexFunc(f.Related, func(r report.Related) bool { return r.Role == report.RoleUnpersistedStore })
			if j < 0 {
				continue
			}
			loc = f.Related[j].Location()
		default:
			continue
		}
		o := durabilityOf(f, loc, outcomes)
		switch {
		case o.Failed > 0:
			f.Evidence = report.EvidenceCrash
			f.Message += fmt.Sprintf("; confirmed by a crash: %d of the %d crash states that %s", o.Failed, o.Tested, lostStore(loc, string(report.DurabilityViolation)))
		case o.Tested > 0:
			f.Class, f.Evidence = report.Unconfirmed, ""
			f.Message += fmt.Sprintf("; not confirmed by a crash: the program recovered from each of the %d crash states that lost the store at %s right before the next operation (recovery never reads it, or rewrites it before reading it)", o.Tested, loc)
		default:
			f.Class, f.Evidence = report.Unconfirmed, ""
			f.Message += fmt.Sprintf("; not confirmed by a crash: no crash state lost the store at %s before an operation that could read it (it was issued in the last operation or outside operations, or was durable before the next operation began)", loc)
		}
	}
}

// durabilityOf returns what the durability states that lost the store at loc showed, for finding
// f: the states of the stores issued under the frame f is reported at, when it is reported at a
// caller (report.Place); for an overwritten-unpersisted finding, those of the earlier store issued
// under a frame of the function the overwrite happened in (a constructor's store that a merge
// rewrites in the node it just built is not confirmed by the same constructor's store in the
// setup's root, left pending for good); otherwise every state of the store.
func durabilityOf(f *report.Finding, loc report.Location, outcomes map[explore.StoreAt]explore.InvariantOutcome) explore.InvariantOutcome {
	if f.Location != storeLocation(f) {
		return outcomes[explore.StoreAt{Store: loc, At: f.Location}]
	}
	if f.Kind != report.OverwrittenUnpersisted {
		return outcomes[explore.StoreAt{Store: loc, At: loc}]
	}
	// The counts under one frame of the function, the innermost such frame of each state (every
	// state records all its frames: the one with the most states is the one all share).
	var best explore.InvariantOutcome
	for k, o := range outcomes {
		if k.Store == loc && k.At.Function == f.Location.Function && k.At.File == f.Location.File && o.Tested > best.Tested {
			best = o
		}
	}
	return best
}

// Recording configures the recorded run of the program under test.
type Recording struct {
	// Args is the program and its arguments (with {pool} in crash mode).
	Args []string
	// Trace keeps the trace at this path ("" a temporary file, see Check).
	Trace string
	// PM are --pm globs; NoLoads and NoForcePMEM as record.Options.
	PM                   []string
	NoLoads, NoForcePMEM bool
	// OpBegin and OpEnd name the functions whose calls mark operations (record.Options).
	OpBegin, OpEnd string
	// Env are NAME=VALUE variables added to the program's environment (--env; exec.CheckEnv);
	// in crash mode the re-executions get them too.
	Env []string
	// Workload is the file fed to the program's standard input ("": Stdin).
	Workload string
	Stdin    io.Reader
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// Timeout is the recorded run's time limit (record.Options.Timeout; 0: none).
	Timeout time.Duration
	// BlackBox records a program not built with `scry cc` under scry's Valgrind tool
	// (record.Options.BlackBox); re-executions on crash images run it natively.
	BlackBox bool
	// Client is the shell command of the client that drives the program, a server
	// (explore.Options.Client; "" none): record.Options.Client.
	Client string
	// Schedules is the number of thread schedules a program with two or more threads storing
	// to PM is recorded and explored under in crash mode (--schedules; schedules.go): the
	// operating system's, then Schedules-1 controlled ones (ScheduleSpec); 0 or 1: the
	// operating system's alone.
	Schedules int
}

// ProgramFailed is the error for a recorded program that did not exit with status 0: the
// results cover its run up to that point.
type ProgramFailed struct {
	Prog   string
	Result Ending
	Trace  string // where its trace is kept ("" removed)
}

// Ending is how a recorded program ended, as the exit rule needs it: *record.Result (PM
// recording) and *strace.Recorded (file-system mode, package fs/strace) are Endings.
type Ending interface {
	// Failed: the program did not exit with status 0.
	Failed() bool
	// String says how it ended ("exited with status 1").
	String() string
}

func (e *ProgramFailed) Error() string {
	msg := fmt.Sprintf("%s %s; the results cover its run up to that point", e.Prog, e.Result)
	if e.Trace != "" {
		msg += "; its trace is in " + e.Trace
	}
	return msg
}

// Record runs the program of rc with its trace written to tracePath. A program that could not
// start, or wrote no trace, is an error; one that exits non-zero is not (see record.Result).
// SIGINT and SIGTERM reach the program, which writes its trace so far; a second one stops it at
// once (record.Run).
func Record(ctx context.Context, rc Recording, tracePath string) (*record.Result, error) {
	if len(rc.Args) == 0 {
		return nil, errors.New("no program given: put it after `--`, e.g. `scry check -- ./prog pool`")
	}
	stdin := rc.Stdin
	var client *exec.Client
	if rc.Client != "" {
		var err error
		if client, err = exec.ParseClient(rc.Client); err != nil {
			return nil, err
		}
	}
	if rc.Workload != "" {
		w, err := os.Open(rc.Workload)
		if err != nil {
			return nil, fmt.Errorf("workload: %w", err)
		}
		defer w.Close()
		stdin = w
	}
	return record.Run(ctx, record.Options{
		Trace: tracePath, PMGlobs: rc.PM, NoLoads: rc.NoLoads, NoForcePMEM: rc.NoForcePMEM,
		OpBegin: rc.OpBegin, OpEnd: rc.OpEnd, Args: rc.Args, Env: rc.Env, Stdin: stdin, Stdout: rc.Stdout, Stderr: rc.Stderr,
		Timeout: rc.Timeout, BlackBox: rc.BlackBox, Client: client,
	})
}

// Check is `scry check`: what to record, analyse and explore.
type Check struct {
	Recording Recording
	Analysis  Analysis
	// Explore configures crash exploration, which runs when the program's arguments have
	// {pool} (Recording.Args) and a crash kind is selected.
	Explore Exploration
	// Output is the report's path ("" standard output); with {pool} the trace is kept next to
	// it (Output.trace) unless Recording.Trace names it.
	Output string
	// JSON tells whether the report is written as JSON (its path then goes in the replay
	// commands of crash findings).
	JSON bool
	// Notes receives messages for the user (where a kept trace is).
	Notes io.Writer
	// Scope, when set (report.ChangedSince: --changed-since REV), scopes the check to the
	// change: the trace findings outside it are dropped and only the crash points in it are
	// explored (scopeReport; the report's Scope says what was left out).
	Scope *report.Scope
	// Minimize, with {pool}, searches a minimal reproducer for each crash finding once the
	// exploration ended (Minimize; --minimize), for MinimizeTime (--minimize-time; 0: a third
	// of the time the check took before it, a quarter of the whole run, at least
	// MinMinimizeTime; with --time-budget, at most a quarter of it, taken from the
	// exploration's). The reproducers are kept in Output.min (a new
	// directory beside it when that exists), else in a temporary directory, named in Notes.
	Minimize     bool
	MinimizeTime time.Duration
}

// HasPool reports whether a command line has the {pool} placeholder.
func HasPool(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, exec.PoolPlaceholder) })
}

// Run records, analyses and (with {pool}) explores, and returns the report with the error that
// decides the exit status, in this order: *exec.Interrupted when SIGINT or SIGTERM stopped the
// run (the report covers what ran, and says so); a configuration, trace or exploration error;
// nil when there are correctness findings (a program that also failed is a warning then);
// *ProgramFailed when the program did not exit 0. A nil report comes with an error only.
func (c *Check) Run(ctx context.Context) (*report.Report, error) {
	if err := c.Analysis.Check(); err != nil {
		return nil, err
	}
	if HasPool(c.Recording.Args) {
		return c.runCrash(ctx)
	}
	if c.Explore.Pool != "" {
		return nil, errors.New("--pool needs {pool} in the program's arguments")
	}
	tracePath := c.Recording.Trace
	if tracePath == "" {
		dir, err := os.MkdirTemp("", "scry-check-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		tracePath = filepath.Join(dir, "run.trace")
	}
	existed := existingPaths(c.Recording.Args)
	// The recording handles SIGINT and SIGTERM itself (record.Run).
	rc := c.Recording
	rc.Client = c.Explore.Client
	res, err := Record(context.WithoutCancel(ctx), rc, tracePath)
	if err != nil {
		return nil, err
	}
	tf, err := trace.OpenFile(tracePath)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	rep, p, aerr := analyzePass(tf, c.Analysis, nil, false, 0)
	if rep == nil {
		return nil, aerr
	}
	if c.Scope != nil {
		if _, err := scopeReport(tf, rep, c.Scope); err != nil {
			return nil, err
		}
	}
	rep.Check = c.record(c.Recording.Args, p.facts, nil, existed)
	return rep, verdict(rep, c.Recording.Args[0], res, aerr, nil, c.Recording.Trace)
}

// verdict adds the warnings of how the recorded program ended to rep and returns the error that
// decides the exit status (see Check.Run). aerr is the analysis error, xerr the exploration's,
// trace the path the trace is kept at ("" removed).
func verdict(rep *report.Report, prog string, res *record.Result, aerr, xerr error, trace string) error {
	return Verdict(rep, prog, res, res.Interrupted, aerr, xerr, trace)
}

// Verdict is the one exit rule of scry's checking commands (PM and file-system mode): it adds
// the warnings of how the recorded program ended to rep and returns the error that decides the
// exit status, in this order: *exec.Interrupted when the recording (interrupted, the signal
// that stopped it) or the exploration (xerr) was stopped by SIGINT or SIGTERM; the analysis
// error aerr; the exploration error xerr; nil when the program exited 0 or there are
// correctness findings (a failed program is then a warning); *ProgramFailed otherwise. trace is
// where the trace is kept ("" removed).
func Verdict(rep *report.Report, prog string, res Ending, interrupted syscall.Signal, aerr, xerr error, trace string) error {
	if interrupted != 0 {
		ie := &exec.Interrupted{Signal: interrupted}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%v: %s %s; the results cover its run up to that point", ie, prog, res))
		return ie
	}
	var ie *exec.Interrupted
	if errors.As(xerr, &ie) {
		return ie
	}
	switch {
	case aerr != nil:
		return aerr
	case xerr != nil:
		return xerr
	case !res.Failed():
		return nil
	case rep.HasCorrectness():
		// The findings decide the status; the report says how the program ended.
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s %s; the results cover its run up to that point", prog, res))
		return nil
	}
	return &ProgramFailed{Prog: prog, Result: res, Trace: trace}
}

// explored adds an exploration's statistics (PM or file-system mode) to rep with the warnings
// they call for: no crash state tested at the crash points, none judged, or a signal that
// stopped it (the report then covers the states tested before it). It sorts rep and returns
// the error that decides the exit status: the *exec.Interrupted, else xerr, wrapped.
func explored(ctx context.Context, rep *report.Report, st report.Stats, xerr error) error {
	rep.Stats = &st
	switch {
	case xerr == nil && st.StatesTested == 0 && st.CrashPoints > 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no crash state was tested at the %d crash points: nothing was judged", st.CrashPoints))
	case xerr == nil && st.StatesTested > 0 && st.Inconclusive == st.StatesTested:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("none of the %d crash states tested could be judged (no legal outcome ran to its end): nothing was judged", st.StatesTested))
	}
	rep.Sort()
	var ie *exec.Interrupted
	if xerr != nil && errors.As(context.Cause(ctx), &ie) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%v during crash exploration: %d crash states tested before it, of the %d crash points reached; the results cover those only",
			ie, st.StatesTested, st.CrashPoints))
		return ie
	}
	if xerr != nil {
		return fmt.Errorf("crash exploration: %w", xerr)
	}
	return nil
}

// runCrash is Run with {pool}: record on a fresh pool, analyse, explore, one report.
func (c *Check) runCrash(ctx context.Context) (*report.Report, error) {
	rc := c.Recording
	if rc.Workload == "" {
		if c.Explore.Client != "" {
			return nil, errors.New("crash exploration needs --workload FILE: its lines are the requests the client (--client) sends, fed to its standard input")
		}
		return nil, errors.New("crash exploration needs --workload FILE: its lines are the operations fed to the program's standard input")
	}
	if _, err := exec.ParseTarget(rc.Args); err != nil {
		return nil, err
	}
	if c.Explore.Start.IsZero() {
		c.Explore.Start = time.Now()
	}
	dir, err := os.MkdirTemp("", "scry-check-")
	if err != nil {
		return nil, err
	}
	keepDir := false
	defer func() {
		if !keepDir {
			os.RemoveAll(dir)
		}
	}()
	pool := filepath.Join(dir, "pool")
	if c.Explore.Pool != "" {
		if pool, err = filepath.Abs(c.Explore.Pool); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(pool); err == nil {
			return nil, fmt.Errorf("--pool %s exists: scry creates the pool itself and never touches an existing file; remove it or name another", pool)
		}
	}
	tracePath, tempTrace := rc.Trace, false
	switch {
	case tracePath != "":
	case c.Output != "":
		tracePath = c.Output + ".trace"
	default:
		tracePath, tempTrace = filepath.Join(dir, "run.trace"), true
	}
	if tracePath, err = filepath.Abs(tracePath); err != nil {
		return nil, err
	}
	minTime := c.MinimizeTime
	budgeted := c.Minimize && minTime == 0 && c.Explore.TimeBudget > 0
	if budgeted {
		minTime = c.Explore.TimeBudget / 4
		c.Explore.TimeBudget -= minTime
	}
	runs, err := c.runSchedules(ctx, dir, pool, tracePath)
	if err != nil {
		return nil, err
	}
	rep, aerr, xerr := mergeSchedules(runs)
	if c.Minimize && aerr == nil && xerr == nil && rep.Check != nil && slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Crash != nil }) {
		if minTime == 0 || budgeted {
			// A third of the time the check took, a quarter of the whole run; with a budget,
			// at most its quarter (the exploration may have ended before its share).
			minTime = minimizeShare(minTime, time.Since(c.Explore.Start))
		}
		xerr = c.minimize(ctx, rep, minTime)
	}
	var kept []string
	for _, r := range runs {
		kept = append(kept, r.trace)
	}
	if tempTrace {
		kept = nil
		// The traces are kept only when a crash finding can be replayed from them.
		if slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Crash != nil }) {
			keepDir = true
			for _, r := range runs {
				kept = append(kept, r.trace)
			}
			if c.Notes != nil {
				fmt.Fprintf(c.Notes, "scry: the trace is kept in %s (scry replay needs it; remove the directory when done)\n", strings.Join(kept, ", "))
			}
		}
	}
	return rep, verdict(rep, rc.Args[0], runs[0].res, aerr, xerr, strings.Join(kept, ", "))
}

// minimizeShare is the time `scry check --minimize` gives the search after a check that ran for
// took: a third of it, so that the search is a quarter of the whole run, at least
// MinMinimizeTime, and at most capped (the quarter of --time-budget kept for it; 0: no cap).
func minimizeShare(capped, took time.Duration) time.Duration {
	d := max(took/3, MinMinimizeTime)
	if capped > 0 {
		d = min(d, capped)
	}
	return d
}

// minimize is Minimize on the check's report for d, its reproducers kept beside the report
// (Check.Minimize).
func (c *Check) minimize(ctx context.Context, rep *report.Report, d time.Duration) error {
	var dir string
	var err error
	if c.Output != "" {
		dir, err = filepath.Abs(c.Output + ".min")
		if err == nil {
			if _, serr := os.Lstat(dir); serr == nil {
				dir, err = os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-*")
			}
		}
	} else {
		dir, err = os.MkdirTemp("", "scry-min-")
	}
	if err != nil {
		return err
	}
	m := Minimization{Time: d, Dir: dir, Notes: c.Notes}
	if c.Output != "" && c.JSON {
		m.Report, _ = filepath.Abs(c.Output)
	}
	if c.Notes != nil {
		fmt.Fprintf(c.Notes, "scry: minimising the workload of each crash finding for %s; the reproducers go to %s\n", d.Round(time.Second), dir)
	}
	if err := Minimize(ctx, rep, nil, m); err != nil {
		var ie *exec.Interrupted
		if errors.As(err, &ie) {
			return ie
		}
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	return nil
}

// scopeReport scopes rep, the analysis of the trace tf, to the change s describes: a copy of s
// resolved against the trace's sites (every module's, read to the end), set as rep.Scope, with
// the trace findings outside it dropped (report.Scope.Holds; counted in FindingsLeftOut). It
// returns the resolved scope, for the exploration (explore.Options.Scope), which fills in the
// crash points it leaves out. Errors: the trace cannot be read.
func scopeReport(tf *trace.File, rep *report.Report, s *report.Scope) (*report.Scope, error) {
	r, err := tf.Reader()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, trace.ErrTruncated) {
				break
			}
			return nil, err
		}
	}
	sc := *s
	sc.Resolve(r.Sites())
	if sc.Outside > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("--changed-since %s: %d of the %d changed hunks touch no function the run executed (declarations, types, macros, constants, or code the workload did not reach): their effects are checked only where they reach the touched functions; check without --changed-since to cover them", sc.Rev, sc.Outside, len(sc.Hunks)))
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if sc.Holds(&f) {
			kept = append(kept, f)
		} else {
			sc.FindingsLeftOut++
		}
	}
	rep.Findings, rep.Scope = kept, &sc
	return &sc, nil
}

// runSchedule records the check's program once under schedule spec (SCRY_SCHED; "" the
// operating system's) with its pool at pool (created by the run; dir is the check's scratch
// directory) and its trace at tracePath, then analyses the trace and explores its crash states.
// share is the part of the time budget this schedule's exploration may use up to (counted from
// the check's start), decided once the recording says how many schedules there are: decide gets
// the threads that stored to PM and returns the share. With windows > 0 the analysis also finds up
// to that many window candidates in the trace (scheduleRun.windows). The error is one that stops the check (a
// recording that could not run, a trace that cannot be read); the analysis and exploration
// errors are the run's (scheduleRun).
func (c *Check) runSchedule(ctx context.Context, spec string, windows int, dir, pool, tracePath string, decide func(storers int) time.Duration) (*scheduleRun, error) {
	rc := c.Recording
	target := rc.Args
	rc.Args = make([]string, len(target))
	for i, a := range target {
		rc.Args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, pool)
	}
	rc.PM = append(slices.Clone(rc.PM), pool)
	x := c.Explore
	x.Env = append(slices.Clone(rc.Env), x.Env...)
	if spec != "" {
		// The recorded run only: the runs on images are inert, and their runtime schedules
		// nothing (their threads run as the operating system runs them).
		rc.Env = append(slices.Clone(rc.Env), ScheduleEnv+"="+spec)
	}
	rc.Client = c.Explore.Client
	res, err := Record(context.WithoutCancel(ctx), rc, tracePath)
	if err != nil {
		return nil, err
	}
	run := &scheduleRun{spec: spec, trace: tracePath, res: res}
	x.opBegin, x.opEnd = rc.OpBegin, rc.OpEnd
	if c.Analysis.explores() && !res.Failed() && res.Interrupted == 0 && x.Runner == nil {
		if t, err := x.Target(target); err == nil {
			x.avoidTmpfs = AllocatesPool(ctx, t, pool, dir)
		}
	}
	if c.Explore.Pool == "" || spec != "" {
		os.Remove(pool) // the images come from the trace
	}
	x.confirm = !c.Analysis.NoInfer
	explores := c.Analysis.explores() && !res.Failed() && res.Interrupted == 0
	x.Progress.Phase("analysing the trace", "", 0)
	tf, err := trace.OpenFile(tracePath)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	var props *infer.Result
	var warning string
	if explores {
		if props, warning, err = Infer(tf, &x); err != nil {
			return nil, err
		}
	}
	rep, p, aerr := analyzePass(tf, c.Analysis, props, explores && !x.NoAssumeFixed, windows)
	if rep == nil {
		return nil, aerr
	}
	if c.Scope != nil {
		if x.Scope, err = scopeReport(tf, rep, c.Scope); err != nil {
			return nil, err
		}
	}
	run.rep, run.aerr, run.storers, run.points = rep, aerr, len(p.facts.storers), p.facts.points
	run.windows = p.windows
	if windows > 0 && aerr == nil && !c.Analysis.NoInfer {
		ws, warns, err := findWitnesses(ctx, tf, windows)
		if err != nil && ctx.Err() == nil {
			warns = append(warns, err.Error())
		}
		run.witnesses = ws
		rep.Warnings = append(rep.Warnings, warns...)
	}
	if p.facts.schedPoints > 0 {
		run.points = int(min(p.facts.schedPoints, 1<<40))
	}
	rep.Check = c.record(target, p.facts, &x, nil)
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	if x.TimeBudget > 0 {
		x.TimeBudget = decide(run.storers)
	}
	switch {
	case aerr != nil:
	case res.Interrupted != 0:
	case res.Failed():
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s %s: crash states not explored", target[0], res))
	case explores:
		for _, f := range rep.Findings {
			if f.Class == report.Unconfirmed {
				for _, id := range f.Properties {
					if !slices.Contains(x.confirmIDs, id) {
						x.confirmIDs = append(x.confirmIDs, id)
					}
				}
			}
		}
		x.Pool, x.pmGlobs = pool, rc.PM
		if c.Output != "" && c.JSON {
			x.Report, _ = filepath.Abs(c.Output)
		}
		run.xerr = exploreCrashes(ctx, rep, tf, rc.Workload, target, x, props, p)
		if x.Scope != nil && rep.Stats != nil {
			x.Scope.PointsLeftOut = rep.Stats.SkippedScope
		}
	}
	return run, nil
}

// ExploreTrace is `scry explore` without --dry-run: explore a recorded trace and return the
// report of its crash findings.
func ExploreTrace(ctx context.Context, path, workload string, target []string, x Exploration) (*report.Report, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	rep := &report.Report{Trace: abs}
	if x.Start.IsZero() {
		x.Start = time.Now()
	}
	x.Progress.Phase("analysing the trace", "", 0)
	tf, err := trace.OpenFile(abs)
	if err != nil {
		return rep, err
	}
	defer tf.Close()
	props, warning, err := Infer(tf, &x)
	if err != nil {
		return rep, err
	}
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	xerr := exploreCrashes(ctx, rep, tf, workload, target, x, props, nil)
	if spec := traceSchedule(tf); spec != "" {
		// A trace of a controlled schedule (scry record --schedules): its findings name it, and
		// a shard says it, so that scry merge merges the schedules' shards (docs/concurrency.md).
		for i := range rep.Findings {
			rep.Findings[i].Schedule = spec
		}
		if rep.Shard != nil {
			rep.Shard.Schedule = spec
		}
	}
	return rep, xerr
}

// traceSchedule returns the SCRY_SCHED spec a trace was recorded under, from its first SCHEDULE
// record, which follows the header: "" for the operating system's schedule or a trace that
// cannot be read.
func traceSchedule(tf *trace.File) string {
	r, err := tf.Reader()
	if err != nil {
		return ""
	}
	for range 16 {
		if s, ok := r.Schedule(); ok {
			return s.Spec
		}
		if _, err := r.Next(); err != nil {
			return ""
		}
	}
	return ""
}

// DryRun counts the crash points and the states each strategy would test on the trace at path
// (crash.Summarize), inferring the invariants first when a strategy needs them and, unless
// noAssumeFixed, with the stores never made durable assumed durable in later operations, as
// exploration does. warning is set when inference could not read the whole trace.
func DryRun(path string, strats []*crash.Strategy, opts crash.Options, noAssumeFixed bool) (sum *crash.Summary, warning string, err error) {
	if len(strats) == 0 {
		strats = crash.Strategies()
	}
	tf, err := trace.OpenFile(path)
	if err != nil {
		return nil, "", err
	}
	defer tf.Close()
	if explore.NeedInvariants(strats) {
		props, w, ierr := Infer(tf, &Exploration{Options: explore.Options{Strategies: []string{"invariants"}}})
		warning = w
		if ierr != nil {
			warning = ierr.Error() + ": the invariants strategy counts no state"
		} else {
			opts.Invariants = explore.Invariants(props)
		}
	}
	if !noAssumeFixed && opts.AssumeDurable == nil {
		// As the exploration walks (exploreCrashes): the never-durable stores, and those still
		// pending at an operation's start, assumed durable.
		stores, err := neverDurableFile(tf)
		_ = assumeFixed(&opts, stores, err) // an unreadable trace is reported below
	}
	r, err := tf.Reader()
	if err != nil {
		return nil, warning, err
	}
	sum, err = crash.Summarize(r, strats, opts)
	return sum, warning, err
}

// WriteReport writes rep in format ("text", "json", "sarif", "html") to the file path, or to w when path
// is "". An existing file at path is replaced only when it is a report of scry or force is set
// (report.Policy). With a format other than text, the warnings also go to warn (the user sees
// them on a terminal). Errors: an unknown format, a path that may not be replaced, the file
// cannot be created or written.
func WriteReport(rep *report.Report, format, path string, force bool, w, warn io.Writer) error {
	if err := report.CheckFormat(format); err != nil {
		return err
	}
	if path != "" {
		f, err := safefile.Create(path, report.Policy(force))
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := writeFormat(w, rep, format); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if format != "text" && warn != nil {
		for _, m := range rep.Warnings {
			fmt.Fprintln(warn, "scry: warning:", m)
		}
	}
	return nil
}

// InferTrace is `scry infer`: it infers the persistence properties of the trace at path
// (infer.Infer with opts) and writes them to w in format, "json" (infer.WriteJSON) or text,
// with the seconds inference took. A truncated trace gives the properties of its complete
// records, written, and an error wrapping trace.ErrTruncated (a warning for the caller). Errors,
// naming path: the trace cannot be opened, is not a trace, or is corrupt (the properties
// inferred before the corruption are written first when there are any); w cannot be written.
func InferTrace(path string, opts infer.Options, format string, w io.Writer) error {
	r, err := trace.Open(path)
	if err != nil {
		return err // names path
	}
	defer r.Close()
	start := time.Now()
	res, ierr := infer.Infer(r, opts)
	secs := time.Since(start).Seconds()
	if res == nil {
		return fmt.Errorf("%s: %w", path, ierr)
	}
	write := infer.WriteText
	if format == "json" {
		write = infer.WriteJSON
	}
	if err := write(w, res, secs); err != nil {
		return fmt.Errorf("writing the properties: %w", err)
	}
	if ierr != nil {
		return fmt.Errorf("%s: %w", path, ierr)
	}
	return nil
}
