package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/scry-pm/scry/internal/exec"
)

// ClusterID is the stable id of a crash finding: "c" and 12 hex digits of the SHA-256 of its
// cluster key (the kind and what the finding's states share: Crash.ID, FSCrash.ID).
func ClusterID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "c" + hex.EncodeToString(sum[:6])
}

// FailingState is what a crash finding of either mode (Crash: PM's ordering-, atomicity- and
// durability-violation; FSCrash: file-system mode's fs-*-violation) says of its first failing
// crash state: the finding's id, where the crash was, the strategy that chose the state, how the
// state failed, and how to rebuild it and judge it again. Crash and FSCrash embed it first, so
// its keys lead their JSON objects: "id", "crash_point", "strategy", "symptom",
// "image_command", "reproduce", "env".
type FailingState struct {
	// ID is the finding's stable id: "c" and 12 hex digits, ClusterID of the cluster key (the
	// kind and the root cause: PM's package pm/explore's cause.go; file-system mode's two calls'
	// frames). `scry replay` accepts it like the finding's 1-based index, and the ids of its
	// further variants built from it (Crash.VariantImages, FSCrash.Dynamic).
	ID string `json:"id"`
	// CrashPoint is where the crash was: in PM, the crash point's index among the walk's crash
	// points (Crash.PointKind says what it precedes); in file-system mode, the index of the last
	// logical operation issued before the crash.
	CrashPoint int `json:"crash_point"`
	// Strategy is the strategy that chose the failing state.
	Strategy string `json:"strategy"`
	// Symptom is how the state failed: "output" (standard output matches neither legal outcome),
	// "exit" (an exit status no legal outcome has), "signal", "hang", "checker" (the checker
	// rejected it; file-system mode without a workload has only this one).
	Symptom string `json:"symptom"`
	// ImageCommand rebuilds the crash image or directory (`scry replay REPORT ID --out FILE`);
	// Reproduce judges it again as the exploration did: the target on the rest of the workload,
	// or file-system mode's checker. PM always sets both; file-system mode's are "" in reports
	// of scry versions before its replay, or when nothing was kept to replay from.
	ImageCommand string `json:"image_command,omitempty"`
	Reproduce    string `json:"reproduce,omitempty"`
	// Env are the variables the re-executions had that a shell reproducing one must set
	// (NAME=VALUE; exec.Target.ReproduceEnv); the rest of the environment was inherited. In
	// file-system mode, those of output equivalence's re-executions (nil without a workload).
	Env []string `json:"env,omitempty"`
}

// NoLegalOutcome is how a finding's message names what a failing run on a crash image or
// directory did that no legal outcome does, for the two symptoms (Crash.Symptom,
// FSCrash.Symptom) that compare the run with them: the outcomes its output matches none of
// (exec.SymptomOutput) and the exit status it had (exec.SymptomExit). It is "" for the other
// symptoms (a signal, a hang, the checker), which each mode words in a sentence of its own, as
// it does the verbs around this phrase.
func NoLegalOutcome(symptom string) string {
	switch symptom {
	case exec.SymptomOutput:
		return "neither the committed nor the rolled-back outcome"
	case exec.SymptomExit:
		return "a status neither legal outcome has"
	}
	return ""
}

// Crash describes how a crash-based finding (ordering-, atomicity-, durability-violation) was
// found and how to rebuild it: the crash point, the crash state, the symptom on re-execution
// and the two legal outcomes it was compared with (WITCHER, SOSP'21,
// §4.4-4.6; docs/crash-exploration.md). Finding.Crash is nil for trace-oracle findings.
type Crash struct {
	// FailingState: the id, the crash point's index among the walk's crash points, the
	// strategy, the symptom, and the commands that rebuild the crash image (`scry replay REPORT
	// ID --out crash.img`) and run the target on it with the rest of the workload (both always
	// set), with Env.
	FailingState
	// Variants is the number of distinct (crash point stack, persisted and unpersisted store
	// sites) among the cluster's failing states (the finding shows the first).
	Variants int `json:"variants"`
	// VariantImages name a replayable crash state for each further variant (the first failing
	// state of each, at most MaxVariantImages), in the order found.
	VariantImages []CrashVariant `json:"variant_images,omitempty"`
	// Operations are the indexes of the first operations (at most MaxCrashOperations) whose
	// crash states fell in the cluster, in the order they were found.
	Operations []uint64 `json:"operations"`
	// PointKind is what the crash point precedes (fence, library, unmap, end, store); Event the
	// trace event index of that record.
	PointKind string `json:"point_kind"`
	Event     uint64 `json:"event"`
	// State is the crash state: per cache line with unpersisted units (in address order), the
	// number of units persisted (a prefix of the line's program order). Lines gives each line's
	// address and unit count, so the vector can be read.
	State []int       `json:"state"`
	Lines []CrashLine `json:"lines"`
	// Tear, on a persistency-race, says which bytes of one more unit the state persists.
	Tear *CrashTear `json:"tear,omitempty"`
	// Prefix: the state persists a program-order prefix (no reordering).
	Prefix bool `json:"prefix"`
	// Invariants states the likely invariants the state violates (Invariant.Text), when the
	// invariants strategy chose it (WITCHER §4.3-4.4: the states tested are those violating an
	// inferred invariant).
	Invariants []string `json:"invariants,omitempty"`
	// Detail says how the run on the crash image ended, or the checker's message.
	Detail string `json:"detail"`
	// DiffCommitted and DiffRolledBack are unified diffs (exec.Diff) of the run's normalized
	// standard output against the outcome with the operation committed and rolled back; ""
	// when equal.
	DiffCommitted  string `json:"diff_committed"`
	DiffRolledBack string `json:"diff_rolled_back"`
	// InFlight lists the operations in flight at the crash point (begun, not ended), set when
	// the crash point's operation overlapped others (threads running operations concurrently).
	// Then the legal outcomes are those of durable linearizability (Izraelevitz et al., DISC'16):
	// the orders consistent with real time of the period's ended operations and of every subset
	// of those in flight: "committed" applies them all (the ended ones in the order they ended,
	// then the others in the order they began), "rolled back" only the ended ones. Oracles counts
	// the legal outcomes when there are more than those two: with operations in flight, or an
	// operation made of several transactions, whose state after each transaction committed
	// before the crash is legal too ("operation 3 applied up to its 2nd transaction"). Closest
	// names the legal outcome whose output is nearest the run's when it is neither committed
	// nor rolled back, and DiffClosest is the diff against it.
	InFlight    []Operation `json:"in_flight,omitempty"`
	Oracles     int         `json:"oracles,omitempty"`
	Closest     string      `json:"closest,omitempty"`
	DiffClosest string      `json:"diff_closest,omitempty"`
	// Trace is the absolute path of the trace the image is rebuilt from; Region the trace's
	// region id of the pool and Pool its path at recording; AfterStores the walk option the
	// crash point indices depend on.
	Trace       string `json:"trace"`
	Region      uint32 `json:"region"`
	Pool        string `json:"pool"`
	AfterStores bool   `json:"after_stores,omitempty"`
	// AssumeFixed: the exploration assumed the stores the trace oracles report as never made
	// durable durable in later operations (crash.Options.AssumeDurable); replaying a crash
	// point needs the same set, which is recomputed from the trace.
	AssumeFixed bool `json:"assume_fixed,omitempty"`
	// AssumeLate: the exploration also assumed durable, from each operation on, the stores of
	// earlier operations still not durable there (made durable late: crash.Options.AssumeLate);
	// replaying a crash point needs the same walk.
	AssumeLate bool `json:"assume_late,omitempty"`
	// Workload is the absolute path of the workload file; Target the command line with {pool}.
	Workload string   `json:"workload"`
	Target   []string `json:"target"`
	// Client is the client's command when the target is a server driven by one (--client; ""
	// none): the runs on the image are sessions of both (docs/servers.md).
	Client string `json:"client,omitempty"`
	// Input is the 1-based line of the workload the re-execution starts at (operation k+1).
	Input int `json:"input_line"`
	// DivergedLine is the 1-based line of the re-execution's standard output (as compared:
	// filtered and normalized) at which it first differs from every legal outcome it was
	// compared with: one past its last line when what it printed is the beginning of a legal
	// outcome's output and it then died, hung or exited otherwise; 0 when unknown. LegalLines
	// is the number of lines of the legal outcome it matched longest, so that the lines from
	// the diverging one to that outcome's end are what the operations from the revealing one
	// on printed: the minimiser maps them to that operation (docs/crash-exploration.md,
	// "Minimal reproducers") whatever the program printed when it opened the pool.
	DivergedLine int `json:"diverged_line,omitempty"`
	LegalLines   int `json:"legal_lines,omitempty"`
	// Minimal is the finding's minimal reproducer (scry check --minimize, scry minimize), nil
	// when none was computed.
	Minimal *Minimal `json:"minimal,omitempty"`
}

// Minimal is a crash finding's minimal reproducer: the shortest workload found, by delta
// debugging (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input", TSE
// 2002: ddmin over the operations, then over the values in them), on which a crash state of the
// same root cause (the finding's cluster key, its crash id) still fails. Crash is that state,
// found on a recording of the minimal workload (its own trace and workload file, kept beside the
// report): `scry replay REPORT ID-min` rebuilds it like any finding's.
type Minimal struct {
	// Operations is the minimal workload's number of operations, Of the original's.
	Operations int `json:"operations"`
	Of         int `json:"of"`
	// Ops are the minimal workload's lines when there are at most MaxInlineOps.
	Ops []string `json:"ops,omitempty"`
	// Complete: the search ran to its end, so removing any one operation, or renaming any
	// further value, makes the failure go away (1-minimal); false when its time share ended
	// first (the workload fails, and may not be minimal).
	Complete bool `json:"complete"`
	// Tests is the number of workloads checked (each recorded and explored for this crash id
	// alone), Seconds the time the search took.
	Tests   int     `json:"tests"`
	Seconds float64 `json:"seconds"`
	// Confirmed: the minimal workload, recorded and explored once more from scratch in its own
	// directory, failed again (Crash is from that run); false when only its search run failed
	// (Crash is from that run, and the note says why it was not confirmed).
	Confirmed bool   `json:"confirmed"`
	Note      string `json:"note,omitempty"`
	// Crash is the failing state on the minimal workload; its id is the finding's with the
	// suffix MinimalSuffix.
	Crash *Crash `json:"crash"`
}

// MaxInlineOps bounds the operations of a minimal workload the report shows inline.
const MaxInlineOps = 20

// MinimalSuffix ends the id of a finding's minimal reproducer (`scry replay REPORT ID-min`).
const MinimalSuffix = "-min"

// MaxCrashOperations bounds Crash.Operations.
const MaxCrashOperations = 8

// MaxVariantImages bounds Crash.VariantImages.
const MaxVariantImages = 4

// CrashVariant is a further variant of a crash finding, replayable like the finding itself
// (`scry replay REPORT ID`, ID the finding's id, "-", and the variant's number from 2): its crash
// point, state and the workload line its re-execution starts at, as in Crash.
type CrashVariant struct {
	ID         string `json:"id"`
	CrashPoint int    `json:"crash_point"`
	Event      uint64 `json:"event"`
	State      []int  `json:"state"`
	Operation  uint64 `json:"operation"`
	Input      int    `json:"input_line"`
	// Tear is the variant's tear (Crash.Tear), if any.
	Tear *CrashTear `json:"tear,omitempty"`
}

// CrashTear is the part of a crash state that persists some bytes of one unit (a plain store
// torn: crash.Tear): the unit is the first unpersisted one (index State[Line]) of line Line, and
// Bytes has bit b set when its byte b persisted.
type CrashTear struct {
	Line  int   `json:"line"`
	Bytes uint8 `json:"bytes"`
}

// CrashLine is one cache line of a crash state: its address and its unpersisted units.
type CrashLine struct {
	Addr  uint64 `json:"addr"`
	Units int    `json:"units"`
}

// Stats summarises a crash exploration (the JSON report's "stats" object).
type Stats struct {
	CrashPoints    int     `json:"crash_points"`    // crash points inside operations, explored
	Skipped        int     `json:"skipped_points"`  // crash points outside operations (setup, teardown)
	StatesTested   int     `json:"states_tested"`   // crash images run
	OracleRuns     int     `json:"oracle_runs"`     // runs giving legal outcomes (2 per operation with crash points, when operations do not overlap)
	Failures       int     `json:"failures"`        // crash images that failed (before clustering)
	Findings       int     `json:"findings"`        // clusters (crash findings)
	Inconclusive   int     `json:"inconclusive"`    // crash images not judged: no usable oracle
	Jobs           int     `json:"jobs"`            // workers
	ElapsedSeconds float64 `json:"elapsed_seconds"` // wall clock of the exploration
	// FirstFailureSeconds is the wall clock from the start of the exploration to the first
	// failing crash image (0 when none failed).
	FirstFailureSeconds float64 `json:"first_failure_seconds,omitempty"`
	// PrepRuns are the runs that prepared the consistent images of the legal outcomes of
	// overlapping operations (the ended and some in-flight operations applied, in some order);
	// SkippedConcurrent counts the crash points left out because more operations were in
	// flight than the cap (explore.Options.MaxInFlight), or their legal outcomes were more than
	// explore.MaxLegalOutcomes.
	PrepRuns          int `json:"prep_runs,omitempty"`
	SkippedConcurrent int `json:"skipped_concurrent,omitempty"`
	// SkippedScope counts the crash points a run scoped to a change left out (explore's
	// Options.Scope: none of their frames in a touched function, and no store of one pending).
	SkippedScope int `json:"skipped_scope,omitempty"`
	// Sampled counts the crash states not run because the finding they would fall in had
	// already failed often enough, or their operation had many states in the same window
	// already (explore's cluster sampling).
	Sampled int `json:"sampled,omitempty"`
	// SkippedBudget counts the crash points left out to keep to --time-budget (file-system
	// mode: the crash states).
	SkippedBudget int `json:"skipped_budget,omitempty"`
	// PartialBudget counts the crash points explored with only a share of their crash states to
	// keep to --time-budget (the program-order prefixes first, spread evenly over the rest).
	PartialBudget int `json:"partial_budget,omitempty"`
	// OperationPaths is the number of distinct persistent paths (the store, flush and fence
	// sites and call stacks an operation executes on PM; of the busy period, when operations
	// overlap) among the operations with crash points, and PathsExplored those of them with a
	// crash point explored (unset in a shard's report).
	OperationPaths int `json:"operation_paths,omitempty"`
	PathsExplored  int `json:"paths_explored,omitempty"`
	// SkippedMemory counts the crash points left out because the crash states of their
	// operation, built before any of them can run, held more than explore.MaxOperationBytes.
	SkippedMemory int `json:"skipped_memory,omitempty"`
	// Reused counts the crash states judged by another run: their image was byte-identical to
	// one already run in the batch with the same input, or to the consistent image before the
	// operation (judged by its rolled-back run). They count in StatesTested.
	Reused int `json:"reused,omitempty"`
	// Invariants is the number of likely invariants (ordering, atomicity) the invariants
	// strategy was given.
	Invariants int `json:"invariants,omitempty"`
	// AssumedDurable counts the stores not durable when their operation ended (never made
	// durable: unpersisted-store, overwritten-unpersisted; or made durable late) that later
	// operations' crash states treated as durable (crash.Options.AssumeDurable, AssumeLate).
	AssumedDurable int `json:"assumed_durable,omitempty"`
	// Twins counts the crash states run as the repaired twin of a state that broke a pair of an
	// inferred property (the same state with the pair in order), to confirm the property's
	// finding differentially; they count in StatesTested.
	Twins int `json:"twins,omitempty"`
	// StoppedEarly counts the runs on crash images stopped at their first output line that
	// matched no legal outcome (a decided mismatch: explore's early.go); StoppedEarlyLines the
	// output lines the longest legal outcome printed after those lines, and
	// StoppedEarlySeconds the wall time, in seconds, the longest legal outcome's run took beyond
	// theirs: about what stopping saved. StoppedAgain counts the runs stopped on a line that,
	// once what varies between identical runs was known, no longer decided a mismatch, and that
	// were run again in full.
	StoppedEarly        int     `json:"stopped_early,omitempty"`
	StoppedEarlyLines   int     `json:"stopped_early_lines,omitempty"`
	StoppedEarlySeconds float64 `json:"stopped_early_seconds,omitempty"`
	StoppedAgain        int     `json:"stopped_again,omitempty"`
	// Converged counts the runs on crash images stopped at their first read of an operation
	// because their pool then equalled a legal outcome's (explore's converge.go), judged as that
	// legal outcome; ConvergedSeconds is the wall time, in seconds, those legal outcomes' runs
	// took beyond theirs: about what stopping saved. ConvergedAgain counts the runs that
	// converged with a legal outcome whose output before that point differed from theirs, run
	// again in full.
	Converged        int     `json:"converged,omitempty"`
	ConvergedSeconds float64 `json:"converged_seconds,omitempty"`
	ConvergedAgain   int     `json:"converged_again,omitempty"`
	// RepeatRuns counts the legal outcomes run a second time, on the same consistent image with
	// the same input, because a crash state's run matched none of them: VaryingOutcomes of them
	// printed something else the second time, and the output lines that differed (at most
	// VaryingLines in one legal outcome) are compared without the fields, lines or block of
	// lines that varied (exec.Variance). Two runs without a crash never make a finding.
	RepeatRuns      int `json:"repeat_runs,omitempty"`
	VaryingOutcomes int `json:"varying_outcomes,omitempty"`
	VaryingLines    int `json:"varying_lines,omitempty"`
	// Images says where the crash images (file-system mode: crash directories) were built: on a
	// tmpfs (/dev/shm) when one is large enough, else in the temporary directory, and why
	// (exec.ScratchParent).
	Images string `json:"images,omitempty"`
	// Runs says how the program was run on the images: through fork servers (how many), or by
	// exec and why (exec.ForkServers).
	Runs string `json:"runs,omitempty"`
	// Schedules is the number of thread schedules the program was recorded and explored under
	// (the operating system's and the runtime's controlled ones: pipeline.Recording.Schedules);
	// 0 for one (a single-threaded program, or --schedules 1). The other figures add up over them.
	Schedules int `json:"schedules,omitempty"`
	// Lazy exploration (the lazy strategy; docs/lazy-exploration.md): LazyRuns counts the lazy
	// runs (one per crash point), LazyLeaves the leaves of their trees judged (each a crash
	// state, counted in StatesTested too), LazyStates the crash states they stand for (a
	// decimal: it passes 2^64), LazyFallbacks the crash points that fell back to eager
	// exploration, by reason (the runtime aborted branching, the tree ran past its bound, no
	// runtime with lazy support, a checker); those the time budget then left no time for count
	// in SkippedBudget.
	LazyRuns      int            `json:"lazy_runs,omitempty"`
	LazyLeaves    int            `json:"lazy_leaves,omitempty"`
	LazyStates    string         `json:"lazy_states_covered,omitempty"`
	LazyFallbacks map[string]int `json:"lazy_fallbacks,omitempty"`
}

// CrashFinding reads a JSON report (docs/findings-json.md; name is its path, for messages) and
// returns the crash finding id names: its 1-based position ("finding N" of the text report), its
// crash id ("c" and 12 hex digits: Crash.ID or FSCrash.ID), or a variant's id (the crash id,
// "-", a number: CrashVariant.ID, FSVulnerability.ID), whose state then replaces the finding's
// (Crash.State and its crash point, FSCrash.State), or a kind ("atomicity-violation": the first
// crash finding of that kind, for scripts and docs whose ids change with the exploration), any
// of which followed by MinimalSuffix names the finding's minimal reproducer (Crash.Minimal), whose
// crash replaces the finding's. The finding has Crash (PM mode) or FS (file-system mode) set.
// Errors: data is not a JSON report, it has no crash finding at all, there is no such finding,
// it is not a crash finding (it has no crash image), it has no minimal reproducer when one is
// named, or a PM finding names no trace.
func CrashFinding(data []byte, name, id string) (*Finding, error) {
	if base, ok := strings.CutSuffix(id, MinimalSuffix); ok && base != "" {
		f, err := CrashFinding(data, name, base)
		if err != nil {
			return nil, err
		}
		if f.Crash == nil || f.Crash.Minimal == nil || f.Crash.Minimal.Crash == nil {
			return nil, fmt.Errorf("%s: finding %s has no minimal reproducer (find one with scry minimize, or scry check --minimize)", name, base)
		}
		// The minimal reproducer's state, on its own trace and workload.
		m := f.Crash.Minimal
		f.Crash = m.Crash
		if f.Operation != nil && m.Crash.Input >= 2 && m.Crash.Input-2 < len(m.Ops) {
			f.Operation = &Operation{Index: uint64(m.Crash.Input - 2), Text: m.Ops[m.Crash.Input-2]}
		}
		return f, nil
	}
	var doc struct {
		Findings []Finding `json:"findings"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, notReport(name, data, err)
	}
	crashes := 0
	for i := range doc.Findings {
		if doc.Findings[i].Crash != nil || doc.Findings[i].FS != nil {
			crashes++
		}
	}
	if crashes == 0 {
		return nil, fmt.Errorf("%s has no crash finding to replay (%d findings, none found on a crash image or crash directory)", name, len(doc.Findings))
	}
	var f *Finding
	if n, err := strconv.Atoi(id); err == nil {
		if n < 1 || n > len(doc.Findings) {
			return nil, fmt.Errorf("%s has %d findings: no finding %d", name, len(doc.Findings), n)
		}
		f = &doc.Findings[n-1]
	} else {
		for i := range doc.Findings {
			if c := doc.Findings[i].Crash; c != nil {
				if c.ID == id {
					f = &doc.Findings[i]
				}
				for _, v := range c.VariantImages {
					if v.ID == id {
						// The variant's state, replayed like the finding's.
						f = &doc.Findings[i]
						c.CrashPoint, c.Event, c.State, c.Input, c.Tear = v.CrashPoint, v.Event, v.State, v.Input, v.Tear
						op := v.Operation
						if f.Operation != nil {
							f.Operation = &Operation{Index: op, Text: f.Operation.Text}
						}
					}
				}
			}
			if c := doc.Findings[i].FS; c != nil {
				if c.ID == id {
					f = &doc.Findings[i]
				}
				for _, d := range c.Dynamic {
					if d.ID == id && d.State != nil {
						f = &doc.Findings[i]
						c.State = d.State
					}
				}
			}
		}
		if f == nil {
			// A kind: the first crash finding of that kind.
			for i := range doc.Findings {
				if string(doc.Findings[i].Kind) == id && (doc.Findings[i].Crash != nil || doc.Findings[i].FS != nil) {
					f = &doc.Findings[i]
					break
				}
			}
		}
		if f == nil {
			var kinds []string
			for _, g := range doc.Findings {
				if (g.Crash != nil || g.FS != nil) && !slices.Contains(kinds, string(g.Kind)) {
					kinds = append(kinds, string(g.Kind))
				}
			}
			return nil, fmt.Errorf("%s has no finding with id %q and no crash finding of that kind (its crash findings: %s)", name, id, strings.Join(kinds, ", "))
		}
	}
	if f.Crash == nil && f.FS == nil {
		return nil, fmt.Errorf("finding %s (%s) is not a crash finding: it has no crash image", id, f.Kind)
	}
	if f.Crash != nil && f.Crash.Trace == "" {
		return nil, fmt.Errorf("finding %s of %s names no trace to rebuild its crash image from", id, name)
	}
	return f, nil
}
