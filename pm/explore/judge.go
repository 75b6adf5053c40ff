package explore

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

// clusters are the findings made so far, by cluster key, with what judging and sampling more
// states needs.
type clusters struct {
	// index is each cluster key's finding (an index into Result.Findings), variants the
	// variant keys seen of it, failures its failing states judged.
	index    map[string]int
	variants map[string]map[string]bool
	failures map[string]int
	// points are each finding's first crash point context, msgs its message given where that
	// point is, and windows its first failing state's window and path (pointKey, pathKey), by
	// finding index (findings are placed when the exploration ends).
	points  []report.Context
	msgs    []func(where string) string
	windows []string
	// prefixWindows maps a window of a path in which a program-order state failed to the
	// atomicity violation it fell in (foldOrdering).
	prefixWindows map[string]int
	// opPaths is each ended operation's persistent path (pathKey); windowFailures the failing
	// states per window and kind, for sampling; windowStates the states built per operation,
	// window and kind (Options.WindowStates); storeStates the durability states judged per
	// sampling key of their store (judged, failed: sampledOut).
	opPaths        map[int]string
	windowFailures map[string]int
	windowStates   map[string]int
	storeStates    map[string][2]int
	// sampleAfter is the failures after which a cluster is sampled (Options.ClusterFailures
	// with its default; -1: never), windowCap the states of an operation in one window and kind
	// after which they are (Options.WindowStates with its default).
	sampleAfter, windowCap int
	// invText is each invariant's text, by ID; twins counts the repaired twins made per pair;
	// shard logs a shard's failing states (shard.go).
	invText map[int]string
	twins   map[Pair]int
	shard   *shardLog
	// focusHit: a state failed in the finding Options.Focus seeks (the walk stops).
	focusHit bool
}

func newClusters(o *Options) *clusters {
	return &clusters{sampleAfter: o.clusterFailures(), windowCap: o.windowStates(),
		index: map[string]int{}, variants: map[string]map[string]bool{}, failures: map[string]int{},
		prefixWindows: map[string]int{}, opPaths: map[int]string{}, windowFailures: map[string]int{},
		windowStates: map[string]int{}, storeStates: map[string][2]int{}, invText: map[int]string{}, twins: map[Pair]int{},
	}
}

// Kinds returns the kinds of crash findings with their one doc text, for the catalogue of
// package pipeline.
func Kinds() []report.Rule {
	return []report.Rule{
		{Kind: report.OrderingViolation, Class: report.Correctness, Doc: "a crash state that persists a store while an earlier one is not persisted makes re-execution diverge from both legal outcomes"},
		{Kind: report.AtomicityViolation, Class: report.Correctness, Doc: "a crash inside an operation, with its stores persisted in program order, makes re-execution diverge from both legal outcomes: the operation is not failure-atomic"},
		{Kind: report.DurabilityViolation, Class: report.Correctness, Doc: "a crash that loses only stores never made durable (reported as unpersisted-store) makes re-execution diverge: the missing persist matters"},
		{Kind: report.PersistencyRace, Class: report.Correctness, Doc: "a plain (non-atomic) store of 2 to 8 bytes, persisted in part by a crash before it was durable (a compiler may split it: --strategy torn), makes re-execution diverge while the states with all and none of it recover (Yashme)"},
		{Kind: report.CrossFailureRead, Class: report.Correctness, Doc: "recovery, before the first operation, reads bytes a crash left undetermined (stores not durable at the crash) and then behaves differently than on the image where they are durable, and re-execution fails: a durability-violation whose lost bytes recovery trusted, reported at the recovery's load (XFDetector); package pipeline's recovery loads tell"},
	}
}

// legalKilled is the key in explorer.warned of the warning about a legal outcome killed by a
// signal, given once.
const legalKilled = "\x00legal-killed"

// judge compares a crash image's run with the legal outcomes and records a failure.
func (e *explorer) judge(it *item, got outcome, ls legalSet) {
	if f := e.cfg.Judged; f != nil {
		js := JudgedState{Point: it.point, State: it.state, Strategy: it.strategy, Outcome: got.target}
		if lp, ch := it.leafOf, it.choices; lp != nil {
			js.Covers = func(k []int) bool { return lp.covers(ch, k) }
		}
		defer func() {
			js.Failed = it.judged && it.failed
			f(js)
		}()
	}
	// Only a crash-free run that ended by itself is a legal outcome: one killed by a signal
	// (a target that crashes without a crash, or lacks the environment it needs) would make
	// every crash image that dies the same way look legal.
	all := ls.all()
	legal := slices.DeleteFunc(slices.Clone(all), func(o exec.Outcome) bool { return !o.Completed() })
	for i, o := range all {
		if o.Err == nil && !o.TimedOut && o.Signal != 0 && !e.warned[legalKilled] {
			// Once, naming the first: the same cause usually kills many.
			e.warned[legalKilled] = true
			e.warn(fmt.Sprintf("a legal outcome (%s: a run without a crash) was %s: it is no legal outcome, and crash images are judged against the others (this is the first such outcome; others are not listed). Either the program crashes on a consistent pool (its recovery or its reopening fails there: a bug scry's crash states may show too), or it needs an environment it lacks (--env)",
				ls.name(i, it.op), o.Describe()))
		}
	}
	rb := ls.rolledBack
	anyUsable := len(legal) > 0
	t := got.target
	symptom, detail := "", ""
	switch {
	case got.checker != nil && got.checker.Err != nil:
		e.res.Stats.Inconclusive++
		e.warn("checker could not run: " + got.checker.Err.Error())
		return
	case got.checker != nil && got.checker.Failed():
		symptom, detail = exec.SymptomChecker, "checker "+got.checker.Describe()+exec.FirstLine(got.checker.Stdout, got.checker.Stderr)
	case t.Err != nil:
		e.res.Stats.Inconclusive++
		e.warn("a run could not start: " + t.Err.Error())
		return
	case !anyUsable && ls.general:
		e.res.Stats.Inconclusive++
		e.warn(fmt.Sprintf("operations %s in flight: none of the %d legal outcomes ran to its end (%s): these crash states are not judged", intsText(it.inflight), len(all), rb.Describe()))
		return
	case !anyUsable:
		e.res.Stats.Inconclusive++
		e.warn(fmt.Sprintf("operation %d: both legal outcomes hung, could not run or were killed by a signal (%s): its crash states are not judged", it.op, rb.Describe()))
		return
	default:
		if symptom = exec.Mismatch(t, legal...); symptom == "" {
			e.verdict(it, false)
			return
		}
		if len(legal) < len(all) {
			// A legal outcome that did not run to its end might have been the one this run
			// matches (a program whose recovery crashes on a consistent image crashes on the
			// crash image too): no verdict.
			e.res.Stats.Inconclusive++
			e.warn(fmt.Sprintf("some crash states match none of the legal outcomes that ran to their end, while %d of the %d did not (%s): those states are not judged", len(all)-len(legal), len(all), firstIncomplete(all).Describe()))
			return
		}
	}
	if it.twin != nil && it.twin.role == twinRepeat {
		// A state run again to see that it fails again: not a failing state of its own.
		e.verdict(it, true)
		return
	}
	if detail == "" {
		detail = "the run on the crash image " + t.Describe() + exec.FirstLine(nil, t.Stderr)
	}
	e.res.Stats.Failures++
	e.verdict(it, true)
	if it.torn != nil && it.torn.explained() {
		// A whole state next to it fails too (or was not judged): tearing is not what breaks
		// the recovery, and the whole state's finding says what does.
		return
	}
	if e.res.Stats.FirstFailureSeconds == 0 {
		e.res.Stats.FirstFailureSeconds = time.Since(e.start).Seconds()
	}
	e.record(it, symptom, detail, t, ls)
}

// firstIncomplete is the first outcome of all that did not run to its end.
func firstIncomplete(all []exec.Outcome) exec.Outcome {
	for _, o := range all {
		if !o.Completed() {
			return o
		}
	}
	return exec.Outcome{}
}

// verdict records what a judged state showed, beyond its finding: against the invariants it
// breaks (Result.Invariants), the pairs of inferred properties it breaks or repairs
// (Result.Pairs), the store a durability state is about (Result.Durability).
func (e *explorer) verdict(it *item, failed bool) {
	it.judged, it.failed = true, failed
	e.invariantOutcome(it, failed)
	e.pairJudged(it, failed)
	if it.durability && it.smp.store != nil {
		c := e.found.storeStates[it.smp.key]
		c[0]++
		if failed {
			c[1]++
		}
		e.found.storeStates[it.smp.key] = c
	}
	if it.durability {
		// Under every frame of the lost store's context (report.FramesAt), the store itself first.
		for _, f := range report.FramesAt(e.places.r, it.site, it.stack) {
			k := StoreAt{it.durable, f.Location()}
			o := e.res.Durability[k]
			o.Tested++
			if failed {
				o.Failed++
			}
			e.res.Durability[k] = o
		}
	}
}

// invariantOutcome counts a judged state against the invariants it breaks (Result.Invariants).
func (e *explorer) invariantOutcome(it *item, failed bool) {
	for _, id := range it.state.Invariants {
		if e.res.Invariants == nil {
			e.res.Invariants = map[int]InvariantOutcome{}
		}
		o := e.res.Invariants[id]
		o.Tested++
		if failed {
			o.Failed++
		}
		e.res.Invariants[id] = o
	}
}

// intsText joins operation indices: "0, 1".
func intsText(ops []int) string {
	var parts []string
	for _, o := range ops {
		parts = append(parts, fmt.Sprint(o))
	}
	return strings.Join(parts, ", ")
}

// uniqueSites returns the units' distinct sites (by source position and inlined-at chain) in
// program order, as related entries, and their chain keys (explorer.siteChain).
func (e *explorer) uniqueSites(us []unitRef, role report.Role, limit int) (rel []report.Related, sites []string) {
	seen := map[string]bool{}
	for _, u := range us {
		key := e.places.siteChain(u.Site)
		if seen[key] {
			continue
		}
		seen[key] = true
		sites = append(sites, key)
		if len(rel) < limit {
			rel = append(rel, e.places.location(u.Site, u.Stack).Related(role))
		}
	}
	return rel, sites
}

func relText(rs []report.Related) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.Location().String())
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("%d more", len(parts)-3))
	}
	return strings.Join(parts, ", ")
}

// sampling is how cluster sampling applies to a crash state: key is the sampling key whose
// failures (and, for a durability state, passes) decide whether it is sampled ("" when it never
// is: it breaks inferred invariants, is a twin, or sampling is off), store the lost store of a
// durability state, capped whether its operation had Options.WindowStates states in its window
// before it, selected whether it is the one in ClusterSampleEvery kept once sampling applies.
// Everything but the counts the key refers to is a function of the state itself, the same in
// every run (sharded or not): the choice is a hash of the state, not a per-run counter, so
// that `scry merge` can apply the rule again in the unsharded order (shard.go).
type sampling struct {
	key              string
	store            *report.Location
	capped, selected bool
}

// windowSampling returns the sampling of state st at cp, of operation op (culprit): the finding it would fall in (its
// kind follows from the state: a program-order prefix is an atomicity violation, anything else
// an ordering violation) is sampled by the window of its crash point (an operation's path is
// known only once it ended), and its operation's states in that window are counted (the cap).
// Such a state, once sampled, cannot add a finding, only a count or a variant (AGAMOTTO's and
// WITCHER's point: spend runs where new bugs can be); states that break inferred invariants are
// never left out.
func (c *clusters) windowSampling(cp *crash.CrashPoint, op int, st crash.State, window string) sampling {
	if c.sampleAfter < 0 || len(st.Invariants) > 0 {
		return sampling{}
	}
	kind := report.OrderingViolation
	if st.Prefix {
		kind = report.AtomicityViolation
	}
	key := string(kind) + "|" + window
	opKey := fmt.Sprintf("%d|%s", op, key)
	pos := c.windowStates[opKey]
	c.windowStates[opKey]++
	return sampling{key: key, capped: pos >= c.windowCap, selected: chosen(cp.Event, fmt.Sprint(st.K))}
}

// storeSampling returns the sampling of the durability state at OP_BEGIN event that loses the
// stores at loc: each store is tested until its states failed, or passed, often enough (its own
// counts, not its finding's: every store is settled on its own).
func (c *clusters) storeSampling(event uint64, loc report.Location) sampling {
	if c.sampleAfter < 0 {
		return sampling{}
	}
	return sampling{key: "store=" + loc.Key(), store: &loc, selected: chosen(event, loc.Key())}
}

// chosen is the one-in-ClusterSampleEvery choice of the state at trace event event named id:
// a hash (FNV-1a) of both.
func chosen(event uint64, id string) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s", event, id)
	return h.Sum64()%ClusterSampleEvery == 0
}

// sampledOut reports whether a state of sampling s is left out with what this run has judged
// so far: its key has failed Options.ClusterFailures times (a durability store: failed or passed
// that often), or its operation's window is capped, and it is not the one in
// ClusterSampleEvery kept. The walk asks with the batches judged so far (a batch is planned
// while the one before runs), the judgement again with every state judged before it
// (explorer.finish): a state the walk keeps may still be left out there, so that what counts
// is the same whatever the batches.
func (c *clusters) sampledOut(s sampling) bool {
	if s.key == "" || s.selected {
		return false
	}
	if s.capped {
		return true
	}
	k := c.sampleAfter
	if s.store != nil {
		n := c.storeStates[s.key]
		return n[1] >= k || n[0]-n[1] >= k
	}
	return c.windowFailures[s.key] >= k
}

// record turns a failure into a finding, or counts it in the cluster of an earlier one. A state
// that no persistency profile checked allows (a comparison twin under --persistency eadr) makes
// no finding.
func (e *explorer) record(it *item, symptom, detail string, t exec.Outcome, ls legalSet) {
	if it.profiles == 0 {
		return
	}
	const maxRelated = 16
	persRel, persSites := e.uniqueSites(it.persisted, report.RolePersisted, maxRelated)
	unpRel, unpSites := e.uniqueSites(it.unpersist, report.RoleUnpersisted, maxRelated)
	// One finding per root cause (cause.go): the kind, the crash point's innermost user frame
	// and what the state did wrong; the stores of the state and the crash point's dynamic stack
	// make variants.
	kind, key := e.itemKey(it)
	if e.cfg.Focus != "" && report.ClusterID(key) == e.cfg.Focus {
		e.found.focusHit = true
	}
	e.found.failures[key]++
	if kind != report.DurabilityViolation {
		e.found.windowFailures[string(kind)+"|"+it.pointKey]++
	}
	if kind == report.AtomicityViolation {
		defer func() { e.found.prefixWindows[it.pointKey+"|"+e.pathKey(it.op, it.pointKey)] = e.found.index[key] }()
	}
	variant := fmt.Sprintf("%s|%d|P=%s|U=%s", e.places.siteChain(it.site), it.stack, strings.Join(persSites, ","), strings.Join(unpSites, ","))
	if e.cfg.Shard.Active() {
		defer e.logFailure(kind, key, variant, it, func() (report.Finding, func(string) string) {
			return e.newFinding(it, kind, key, symptom, detail, t, ls, persRel, unpRel)
		})
	}
	if i, ok := e.found.index[key]; ok {
		f := &e.res.Findings[i]
		f.Count++
		f.Profiles = e.cfg.unionProfiles(f.Profiles, it.profiles)
		if !e.found.variants[key][variant] {
			e.found.variants[key][variant] = true
			f.Crash.Variants++
			if c := f.Crash; len(c.VariantImages) < report.MaxVariantImages && it.point >= 0 {
				v := image(it)
				v.ID = fmt.Sprintf("%s-%d", c.ID, c.Variants)
				c.VariantImages = append(c.VariantImages, *v)
			}
		}
		if len(f.Crash.Operations) < report.MaxCrashOperations && !slices.Contains(f.Crash.Operations, uint64(it.op)) {
			f.Crash.Operations = append(f.Crash.Operations, uint64(it.op))
		}
		return
	}
	e.found.variants[key] = map[string]bool{variant: true}
	e.found.index[key] = len(e.res.Findings)
	f, message := e.newFinding(it, kind, key, symptom, detail, t, ls, persRel, unpRel)
	f.Profiles = e.cfg.profileNames(it.profiles)
	e.found.msgs = append(e.found.msgs, message)
	e.found.points = append(e.found.points, report.Context{Site: it.site, Stack: it.stack})
	e.found.windows = append(e.found.windows, it.pointKey+"|"+e.pathKey(it.op, it.pointKey))
	e.res.Findings = append(e.res.Findings, f)
}

// itemKey returns the kind of finding a failure of it makes and the key of its cluster
// (clusterKey): known before it runs once its operation has ended (opEnd), so that a walk with
// Options.Focus runs only the states that can fail in the finding it seeks.
func (e *explorer) itemKey(it *item) (report.Kind, string) {
	kind := report.OrderingViolation
	switch {
	case it.durability:
		kind = report.DurabilityViolation
	case it.torn != nil:
		kind = report.PersistencyRace
	case it.state.Prefix:
		kind = report.AtomicityViolation
	}
	return kind, clusterKey(kind, it.pointKey, e.pathKey(it.op, it.pointKey), it.cause)
}

// newFinding is the finding of kind (cluster key) whose first failing state is it, with the
// message given where its crash point is (placed when the exploration ends).
func (e *explorer) newFinding(it *item, kind report.Kind, key, symptom, detail string, t exec.Outcome, ls legalSet, persRel, unpRel []report.Related) (report.Finding, func(string) string) {
	id := report.ClusterID(key)

	symText := symptomText(symptom)
	inflight := ""
	if ls.general {
		var ops []string
		for _, o := range it.inflight {
			ops = append(ops, fmt.Sprintf("%d (%q)", o, e.cfg.Workload.Ops[o]))
		}
		if len(ops) == 1 {
			inflight = ", with operation " + ops[0] + " in flight"
		} else {
			inflight = ", with operations " + strings.Join(ops, ", ") + " in flight"
		}
		if symptom == exec.SymptomOutput {
			symText = fmt.Sprintf("re-execution prints an output that %s (every order consistent with real time of the operations ended and of every subset of those in flight)", outcomesText(len(ls.all())))
			if ls.excluded > 0 {
				symText += fmt.Sprintf(", %d orders left out because a completed operation prints something else in them than it printed before the crash", ls.excluded)
			}
		}
	} else if len(ls.others) > 0 && symptom == exec.SymptomOutput {
		symText = fmt.Sprintf("re-execution prints an output that %s (rolled back, committed, or applied up to one of its transactions committed before the crash)", outcomesText(len(ls.all())))
	}
	pointKind, op, opText := it.pointKind.String(), it.op, it.opText
	thread := ""
	if it.pointOp != it.op && !it.durability {
		// The crash point is another operation's thread's: the state lost this operation's
		// stores (culprit).
		thread = fmt.Sprintf(" (in operation %d's thread)", it.pointOp)
	}
	message := func(at string) string {
		where := fmt.Sprintf("a crash %s at %s%s during operation %d (%q)%s", pointText(pointKind), at, thread, op, opText, inflight)
		switch {
		case kind == report.PersistencyRace:
			u := it.torn.unit
			where := fmt.Sprintf("a crash %s at %s%s during operation %d (%q)%s", pointText(pointKind), it.loc, thread, op, opText, inflight)
			return fmt.Sprintf("the plain %d-byte store at %s can be torn: C11 lets the compiler split a non-atomic store, and %s, with %s persisted and the rest of the store not (the stores before it persisted in program order), %s; the crash states with all and with none of the store persisted both recover (a persistency race: make the store atomic, or recovery not trust it)",
				u.Size, at, where, tornBytes(it.state.Tear.Keep, u.Size), symText)
		case kind == report.DurabilityViolation:
			return fmt.Sprintf("a crash right before operation %d (%q) that loses only %s, stores never made durable (unpersisted-store), with everything else persisted, %s; later operations are explored as if they were durable",
				op, opText, relText(unpRel), symText)
		case kind == report.OrderingViolation:
			return fmt.Sprintf("%s, with %s persisted while the earlier %s was not (a reordering), %s", where,
				relText(persRel), relText(unpRel), symText)
		case len(unpRel) == 0:
			return fmt.Sprintf("operation %d (%q) is not failure-atomic: %s, with every store issued so far persisted (the operation stopped between two durable steps), %s",
				op, opText, where, symText)
		}
		return fmt.Sprintf("operation %d (%q) is not failure-atomic: %s, with the stores issued so far persisted in program order up to %s, not persisted, %s",
			op, opText, where, relText(unpRel), symText)
	}
	msg := message(it.loc.String())
	if kind == report.PersistencyRace {
		msg = message(it.torn.loc.String())
	}
	related := []report.Related{it.loc.Related(report.RoleCrashPoint)}
	related = append(related, persRel...)
	related = append(related, unpRel...)
	c := &report.Crash{FailingState: report.FailingState{ID: id, CrashPoint: it.point, Strategy: it.strategy, Symptom: symptom},
		PointKind: it.pointKind.String(), Event: it.event, State: it.state.K, Lines: it.lines, Prefix: it.state.Prefix, Tear: crashTear(it.state),
		Variants: 1, Operations: []uint64{uint64(it.op)}, Detail: detail, Trace: e.cfg.Trace, Region: it.region, Pool: it.regionPath,
		AfterStores: e.cfg.Crash.AfterStores, AssumeFixed: len(e.cfg.Crash.AssumeDurable) > 0, AssumeLate: e.cfg.Crash.AssumeLate,
		Workload: e.cfg.Workload.Path, Target: e.target.Args,
		Input: it.next + 1,
	}
	for _, id := range it.state.Invariants {
		c.Invariants = append(c.Invariants, e.found.invText[id])
	}
	c.DivergedLine, c.LegalLines = exec.DivergedLine(t, ls.all()...)
	// With overlapping operations a legal outcome whose prep or oracle run failed has no
	// output to compare with.
	if ls.committed != nil && (!ls.general || ls.committed.Completed()) {
		c.DiffCommitted = exec.DiffOutcomes(t, *ls.committed)
	}
	others := ls.others
	if ls.rolledBackAs != "" {
		// No linearization without the in-flight operations is left (responses.go): what
		// stands in the rolled-back outcome's place is another.
		others = append([]namedOutcome{{name: ls.rolledBackAs, out: ls.rolledBack}}, others...)
	} else if !ls.general || ls.rolledBack.Completed() {
		c.DiffRolledBack = exec.DiffOutcomes(t, ls.rolledBack)
	}
	if ls.general {
		for _, o := range it.inflight {
			c.InFlight = append(c.InFlight, report.Operation{Index: uint64(o), Text: e.cfg.Workload.Ops[o]})
		}
	}
	if ls.general || len(ls.others) > 0 {
		c.Oracles = len(ls.all())
		// The closest legal outcome, when it is neither committed nor rolled back: the fewest
		// changed lines (a run that hung or could not start is no candidate).
		best := -1
		for _, d := range []struct {
			o    *exec.Outcome
			diff string
		}{{&ls.rolledBack, c.DiffRolledBack}, {ls.committed, c.DiffCommitted}} {
			if d.o != nil && d.o.Completed() && d.diff != "" && (best < 0 || diffSize(d.diff) < best) {
				best = diffSize(d.diff)
			}
		}
		for _, o := range others {
			if !o.out.Completed() {
				continue
			}
			if d := exec.DiffOutcomes(t, o.out); best < 0 || diffSize(d) < best {
				best, c.Closest, c.DiffClosest = diffSize(d), o.name, d
			}
		}
	}
	c.ImageCommand = ImageCommand(e.cfg.Report, id)
	c.Env = e.target.ReproduceEnv()
	if e.target.Client != nil {
		c.Client = e.target.Client.Command
	}
	c.Reproduce = ReproduceSession(e.target.Args, c.Env, c.Client, e.cfg.Workload.Path, it.next-1, len(e.cfg.Workload.Ops), "crash.img")
	loc := it.loc
	if kind == report.PersistencyRace {
		loc = it.torn.loc
	}
	return report.Finding{
		Kind: kind, Class: report.Correctness, Message: msg, Location: loc,
		Related: related, Count: 1, FirstEvent: it.event,
		Operation: &report.Operation{Index: uint64(it.op), Text: it.opText}, Crash: c,
	}, message
}

// ImageCommand is the command that rebuilds the crash image of the crash finding (or variant,
// or minimal reproducer) id of the JSON report at rep ("" unknown: REPORT.json stands for it).
func ImageCommand(rep, id string) string {
	if rep == "" {
		rep = "REPORT.json"
	}
	return fmt.Sprintf("scry replay %s %s --out crash.img", exec.ShellQuote(rep), id)
}

// crashTear is the report's form of st's tear (nil without one).
func crashTear(st crash.State) *report.CrashTear {
	if st.Tear == nil {
		return nil
	}
	return &report.CrashTear{Line: st.Tear.Line, Bytes: st.Tear.Keep}
}

// outcomesText says that an output matches none of n legal outcomes.
func outcomesText(n int) string {
	if n == 1 {
		return "does not match the only legal outcome"
	}
	return fmt.Sprintf("matches none of the %d legal outcomes", n)
}

// pointText says where a crash point of kind k (crash.PointKind's names) lies.
func pointText(k string) string {
	switch k {
	case "library":
		return "before the library call"
	case "store":
		return "after the store"
	case "flush":
		return "before the clflush"
	case "end":
		return "at the end of the program"
	}
	return "before the " + k
}

// symptomText says how the re-execution on a failing crash image failed (symptom s), as a clause
// of the finding's message.
func symptomText(s string) string {
	switch s {
	case exec.SymptomOutput:
		return "re-execution prints an output that matches " + report.NoLegalOutcome(s)
	case exec.SymptomExit:
		return "re-execution exits with " + report.NoLegalOutcome(s)
	case exec.SymptomSignal:
		return "re-execution is killed by a signal"
	case exec.SymptomHang:
		return "re-execution hangs"
	case exec.SymptomChecker:
		return "the checker rejects the crash image"
	}
	return s
}
