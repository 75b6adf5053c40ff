// Package report holds scry's findings and writes them as text, JSON, SARIF 2.1.0 and HTML.
//
// A Finding is one record per (kind, static location) as docs/findings-json.md describes: the
// analysis driver (package analysis) deduplicates dynamic occurrences, counts them and keeps the
// first one. This package only orders, filters (suppressions) and prints them. The JSON shape is
// documented in docs/findings-json.md; the kinds in docs/oracles.md. The HTML page of a workload
// search's coverage (WriteCoverageHTML, scry workload fuzz --html) shares the report's page
// head and style sheet.
package report

import (
	"cmp"
	"slices"
	"strings"
)

// Class is the class of a finding: a correctness bug (the program can lose or corrupt data at a
// crash), a performance bug (the program does work persistence does not need), or an unconfirmed
// one: a likely correctness bug that no crash image has shown (a breach of a persistence property
// inferred from the program's reads, or a store not durable in time that the crash states which
// lost it did not turn into a failure); it is reported as a warning and does not make the run
// fail.
type Class string

// Finding classes.
const (
	Correctness Class = "correctness"
	Performance Class = "performance"
	Unconfirmed Class = "unconfirmed"
)

// Location is a static source location: the site of a store, flush, fence or library call.
// Line and Column are 1-based; 0 means unknown. An empty File means the site is unknown.
type Location struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Function string `json:"function"`
}

// Frame is one frame of where an event happened, innermost first in Finding.Stack: the
// instruction, then each call it is in (FramesAt). Inlined marks a frame whose code the compiler
// inlined into the next frame's function.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Inlined  bool   `json:"inlined,omitempty"`
	// External says the frame is outside the program's own code as the trace names it: its
	// file is under none of the project roots of the compilation units scry cc built
	// (trace.SiteUnit; SiteFrame). Frame.System also counts system headers.
	External bool `json:"external,omitempty"`
}

// Related is another location a finding names, with its role: for example the earlier store a
// store overwrote (RoleUnpersistedStore) or the last flush of a cache line (RoleFlush).
type Related struct {
	Role     Role   `json:"role"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Function string `json:"function"`
}

// Role says what a related location (Related) is to its finding, in kebab case or a few words.
// The constants below are the roles scry's own analyses name; a custom analyzer (package
// pm/analysis, RelatedSite) names its own, so any string is a role, and a reader of a saved
// report keeps a role it does not know as it is.
type Role string

// The roles of scry's own findings' related locations, by the analyses that name them.
const (
	// Trace oracles (package pm/oracle).
	RoleFlush            Role = "flush"             // the last flush of the store's cache line, or the earlier flush a redundant one repeats
	RoleUnpersistedStore Role = "unpersisted-store" // the earlier store, not yet persisted, whose bytes the finding's store overwrites
	RoleEarlierAdd       Role = "earlier-add"       // the latest earlier TX_ADD of the transaction overlapping the redundant one's range
	RoleAllocation       Role = "allocation"        // the allocation in the transaction holding the redundant TX_ADD's range (when it came last)
	RoleTransaction      Role = "transaction"       // the outermost TX_BEGIN of the transaction the store or TX_ADD is in
	RoleRelease          Role = "release"           // pm-lock-word: the store that gives the lock word back
	RoleCaller           Role = "caller"            // one of the callers through which the finding's instruction showed it, when several did (the finding is then reported at the instruction)
	// Checks of inferred persistence properties (package pm/infer).
	RoleEarlierStore  Role = "earlier-store"  // the store that must persist before the finding's (mpb-violation: the property's Before)
	RoleOtherStore    Role = "other-store"    // the earlier store that must persist atomically with the finding's (mpa-violation)
	RoleGuardLoad     Role = "guard-load"     // the property's evidence: the load that read the later store's data
	RoleBranch        Role = "branch"         // the property's evidence: the branch on that load, when there is one
	RoleDependentLoad Role = "dependent-load" // the property's evidence: the load it guards, which read the earlier store's data
	// Checks of concurrent programs (package pm/infer).
	RoleOtherThreadStore Role = "other-thread-store" // inter-thread-inconsistency: the other thread's store, not yet durable, whose value the finding's store derives from
	RoleReaderLoad       Role = "reader-load"        // inter-thread-inconsistency: the finding's thread's load that read that store's value
	// Crash findings of PM crash exploration (package pm/explore).
	RoleCrashPoint   Role = "crash-point"   // the crash point: the record before which (a store: after which) the crash was simulated
	RolePersisted    Role = "persisted"     // a store site the failing state persisted while it lost an earlier one (program order)
	RoleUnpersisted  Role = "unpersisted"   // a store site the failing state did not persist
	RoleRecoveryLoad Role = "recovery-load" // persistency-race: the re-execution's first load of the torn bytes (a traced run on the crash image)
	// Crash findings of file-system mode (package fs/explore): the later operation of the pair.
	RolePersistedBefore Role = "persisted before it" // fs-ordering-violation: the operation a crash keeps while it loses the finding's
	RoleOutput          Role = "output"              // fs-durability-violation: the output the finding's operation is not durable at
	RoleEndOfRun        Role = "end of the run"      // fs-atomicity-violation: the last of the operations that must persist atomically
)

// Operation is the workload operation that was running at a finding's first occurrence
// (the trace's OP_BEGIN record: 0-based index and the text of the operation).
type Operation struct {
	Index uint64 `json:"index"`
	Text  string `json:"text"`
}

// Finding is one deduplicated bug report: every dynamic occurrence of Kind at Location.
type Finding struct {
	Kind     Kind      `json:"kind"`    // stable kebab-case name, see docs/oracles.md
	Class    Class     `json:"class"`   // correctness or performance
	Message  string    `json:"message"` // of the first occurrence
	Location Location  `json:"location"`
	Stack    []Frame   `json:"stack"`   // frames of the first occurrence, innermost first; Location is one of them
	Related  []Related `json:"related"` // other locations named by the first occurrence
	// Count is the number of dynamic occurrences (at least 1).
	Count int `json:"count"`
	// FirstEvent is the trace event index (trace.Event.Index) of the first occurrence.
	FirstEvent uint64 `json:"first_event"`
	// Operation is the workload operation of the first occurrence, nil when none was running.
	Operation *Operation `json:"operation,omitempty"`
	// Crash is set for crash-based findings (re-execution on crash images); see Crash.
	Crash *Crash `json:"crash,omitempty"`
	// FS is set for file-system crash findings (scry fs check); see FSCrash.
	FS *FSCrash `json:"fs,omitempty"`
	// Properties are the IDs (as `scry infer` numbers them) of the inferred properties the
	// finding breaks, sorted: mpb-violation and mpa-violation only.
	Properties []int `json:"properties,omitempty"`
	// Evidence says what backs a trace oracle's correctness finding: EvidenceCrash, a crash
	// image on which the program failed (with a workload, scry check tests the claim), or
	// EvidenceTrace, the persistency fact the trace proves, not confirmed by a crash (no
	// workload: nothing was re-executed). Empty for the other findings: a crash finding is its
	// own crash image, a performance finding needs none.
	Evidence string `json:"evidence,omitempty"`
	// Schedule is the thread schedule of the recorded run that showed the finding first: the
	// value of SCRY_SCHED the program ran with (a controlled schedule of the runtime, e.g.
	// "pct:1:3"), "" for the operating system's (every single-threaded program's). Running the
	// program with SCRY_SCHED set to it, on the same input, runs that schedule again.
	Schedule string `json:"schedule,omitempty"`
	// Profiles are the persistency profiles (px86.Profile names: "adr", "eadr") under which the
	// finding occurs, in the order Report.Profiles lists them: for a trace finding, the profiles
	// whose model reports it; for a crash finding, those that allow one of its failing crash
	// states. Empty when the check ran under the default profile alone (no --persistency).
	Profiles []string `json:"profiles,omitempty"`
}

// Evidence of a finding (Finding.Evidence).
const (
	EvidenceCrash = "crash"
	EvidenceTrace = "trace"
)

// Rule describes one kind of finding, for the SARIF rule table and for listings.
type Rule struct {
	Kind  Kind
	Class Class
	Doc   string // one line
	// Custom marks a kind a checker's custom analyzer added (cli.Main with analyzers): its Doc
	// is all its documentation (scry's own kinds have a section in docs/oracles.md).
	Custom bool
}

// Report is the result of analysing one trace.
type Report struct {
	Findings []Finding
	Warnings []string
	Events   uint64 // events (trace records) read
	Trace    string // path of the trace, "" when read from a stream
	// Rules lists the kinds that were checked (for SARIF and the summary), in catalogue order.
	Rules []Rule
	// Suppressed counts the findings removed by suppressions, by kind.
	Suppressed map[Kind]int
	// Stats is set when crash states were explored (the JSON "stats" object).
	Stats *Stats
	// Check is how the check ran (`scry check`; the JSON "check" object), nil otherwise.
	Check *Check
	// Shard is set in the report of one shard of a sharded exploration (`scry explore --shard`;
	// the JSON "shard" object), for `scry merge`.
	Shard *Shard
	// Profiles are the persistency profiles the trace was checked under (--persistency; the JSON
	// "profiles" array), in order; nil: the default (adr) alone, findings unlabelled.
	Profiles []string
	// Scope is set in a run scoped to a change (--changed-since; the JSON "scope" object): what
	// it covered and what it left out.
	Scope *Scope
	// Witnesses are the schedule witnesses a check ran among its thread schedules (Huang's
	// dissertation, ch. 6; docs/concurrency.md, "Schedule witnesses"; the JSON "witnesses"
	// array), in the order run.
	Witnesses []Witness
}

// UnionProfiles returns the profile names of a and b, each once, in the order profiles are
// listed ("adr" before "eadr": alphabetical).
func UnionProfiles(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// ProfilesText says under which of the report's profiles finding f occurs ("adr, eadr", "adr;
// not under eadr"), "" when the report was not checked under named profiles or f has none.
func (r *Report) ProfilesText(f *Finding) string {
	if len(r.Profiles) == 0 || len(f.Profiles) == 0 {
		return ""
	}
	var not []string
	for _, p := range r.Profiles {
		if !slices.Contains(f.Profiles, p) {
			not = append(not, p)
		}
	}
	s := strings.Join(f.Profiles, ", ")
	if len(not) > 0 {
		s += "; not under " + strings.Join(not, ", ")
	}
	return s
}

// HasCorrectness reports whether any finding is of class correctness.
func (r *Report) HasCorrectness() bool {
	for i := range r.Findings {
		if r.Findings[i].Class == Correctness {
			return true
		}
	}
	return false
}

// Count returns the number of findings of class c.
func (r *Report) Count(c Class) int {
	n := 0
	for i := range r.Findings {
		if r.Findings[i].Class == c {
			n++
		}
	}
	return n
}

// SuppressedTotal is the number of findings removed by suppressions.
func (r *Report) SuppressedTotal() int {
	n := 0
	for _, c := range r.Suppressed {
		n += c
	}
	return n
}

func classRank(c Class) int {
	switch c {
	case Correctness:
		return 0
	case Unconfirmed:
		return 1
	}
	return 2
}

// Sort puts the findings in the report's deterministic order: correctness first, then by file,
// line, column, kind, function and first event.
func (r *Report) Sort() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(classRank(a.Class), classRank(b.Class)),
			cmp.Compare(a.Location.File, b.Location.File),
			cmp.Compare(a.Location.Line, b.Location.Line),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Location.Column, b.Location.Column),
			cmp.Compare(a.Location.Function, b.Location.Function),
			cmp.Compare(a.FirstEvent, b.FirstEvent),
		)
	})
}

// Witness is a schedule witness: a controlled schedule, consistent with the synchronization a
// recorded schedule showed, under which a store that depends on another thread's store may
// persist before it (their must-persist-before relation broken), found by an SMT query over
// the recorded trace and then run.
type Witness struct {
	// Schedule is the witness's SCRY_SCHED spec (a window schedule: POLICY:SEED...@THREAD.STORE).
	Schedule string `json:"schedule"`
	// Store is the other thread's store; Load the load that read its value; Dependent the store
	// that depends on that load.
	Store     Location `json:"store"`
	Load      Location `json:"load"`
	Dependent Location `json:"dependent"`
	// Findings counts the findings the witness's run showed first (0: none: the program took
	// another path under it, or no crash state failed).
	Findings int `json:"findings"`
}
