package report

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
)

// FSCrash describes a file-system crash finding (fs-ordering-violation,
// fs-atomicity-violation, fs-durability-violation; docs/fs-mode.md): the persistence model, the
// crash state that failed, the checker's verdict, and every dynamic vulnerability (pair of
// system calls) of the cluster, after ALICE (Pillai et al., OSDI'14, §4.3). Finding.FS is nil
// for every other finding.
type FSCrash struct {
	// FailingState: the id (the cluster key is the kind and the two calls' frames), the index
	// of the last logical operation issued before the crash, the strategy that built the first
	// failing state ("prefix", "omit-one", "split", "exhaustive"), the symptom ("checker", or
	// with a workload, output equivalence's), and the commands that rebuild the crash
	// directory (`scry replay REPORT ID --out crash`) and run the checker in it, or the program
	// on the rest of the workload, as the exploration did (relative to where the replay ran;
	// `scry replay` prints it with absolute paths), with Env (absent without a workload).
	FailingState
	// APM is the abstract persistence model ("default", "ext4-ordered", "ext4-journal"); Split
	// how writes were cut into blocks for the first failing state.
	APM string `json:"apm"`
	// Models are the persistence models under which the first failing state, or one that leaves
	// the same directory, is legal: APM and each other model that allows it, in the order
	// default, ext4-ordered, ext4-journal (a finding of ALICE's default model alone, such as an
	// unlink landing as a truncation, is ["default"]). Absent from reports of scry versions
	// before it.
	Models []string `json:"models,omitempty"`
	Split  string   `json:"split,omitempty"`
	// Dynamic lists the cluster's dynamic vulnerabilities (at most MaxFSDynamic), the first
	// one first; Count is how many there were.
	Dynamic []FSVulnerability `json:"dynamic"`
	Count   int               `json:"count"`
	// Persisted and Lost describe the first failing state: the logical operations (ALICE's
	// notation) persisted whole or in part, and those issued before the crash but lost.
	Persisted []string `json:"persisted"`
	Lost      []string `json:"lost"`
	// What says what a partial operation left (an atomicity violation): "appended garbage",
	// "source and destination unlinked", ...
	What string `json:"what,omitempty"`
	// Stdout is what the program had printed at the crash (the checker's $SCRY_STDOUT), cut
	// to 1 KiB.
	Stdout string `json:"stdout"`
	// Checker says how the checker or the re-execution ended, with the end of its output.
	Checker string `json:"checker"`
	// DiffCommitted and DiffRolledBack (output equivalence) are unified diffs of the
	// re-execution's standard output against the legal outcomes', as in Crash.
	DiffCommitted  string `json:"diff_committed,omitempty"`
	DiffRolledBack string `json:"diff_rolled_back,omitempty"`

	// What `scry replay REPORT ID --out DIR` needs to rebuild the crash directory
	// (docs/fs-mode.md, "Replaying a finding"); absent from reports of scry versions before it.
	//
	// State is the first failing state, exactly (Dynamic's further entries hold their own).
	State *FSState `json:"state,omitempty"`
	// Dir is the workload directory's absolute path when the program ran (the trace names
	// files under it); Snapshot the absolute path of the copy of its initial state scry kept;
	// Trace the absolute path of the trace. Snapshot and Trace are "" when nothing was kept.
	Dir      string `json:"dir,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	Trace    string `json:"trace,omitempty"`
	// CheckerCommand is the checker as it ran (`/bin/sh -c CheckerCommand` inside the crash
	// directory), CheckerEnv the variables it had that a shell must set (NAME=VALUE, as
	// Crash.Env; the replay adds SCRY_STDOUT, SCRY_STDERR and SCRY_CRASH_DIR); "" and nil
	// without a checker.
	CheckerCommand string   `json:"checker_command,omitempty"`
	CheckerEnv     []string `json:"checker_env,omitempty"`
	// Target is the program and its arguments as the re-executions of output equivalence ran
	// them (the program's absolute path), Workload the workload's absolute path; absent without
	// a workload.
	Target   []string `json:"target,omitempty"`
	Workload string   `json:"workload,omitempty"`
}

// FSVulnerability is one dynamic vulnerability: logical operation A must persist before B
// (ordering, durability), or A (through B, for a run of operations) must persist atomically.
// Every one but the first (whose state is FSCrash.State) has its failing state and an id
// (FSCrash.ID, "-", its 1-based position: "c0123456789ab-2") that `scry replay` accepts.
type FSVulnerability struct {
	A     int      `json:"a"`
	B     int      `json:"b"`
	CallA string   `json:"call_a"`
	CallB string   `json:"call_b"`
	ID    string   `json:"id,omitempty"`
	State *FSState `json:"state,omitempty"`
}

// FSState is one crash state of file-system mode, exactly (ALICE, Pillai et al., OSDI'14, §3.2:
// a set of micro-operations closed under the persistence model's persist-before relation): the
// model's micro-operations of the run, built with Split, and which of them persisted.
// Package fs/explore's Replay rebuilds its crash directory from the kept snapshot and trace.
type FSState struct {
	// Strategy chose the state; Split is how the model cut writes into micro-operations for it
	// (one of the model's splits); Micro is how many micro-operations that gives for the whole
	// run (a check that the trace is the one the report was made from).
	Strategy string  `json:"strategy"`
	Split    FSSplit `json:"split"`
	Micro    int     `json:"micro"`
	// Persisted lists the persisted micro-operations as ascending, disjoint ranges [first,
	// last] of their 0-based indexes (inclusive).
	Persisted [][2]int `json:"persisted"`
	// CrashPoint is the last logical operation issued before the crash; Operation the workload
	// operation it belongs to (-1: before the first, or no workload): a re-execution reads
	// the workload's lines after it.
	CrashPoint int `json:"crash_point"`
	Operation  int `json:"operation"`
	// Symptom is how the state failed (FSCrash.Symptom's values): "checker" when the checker
	// rejected it, else the re-execution's difference.
	Symptom string `json:"symptom"`
	// Digest is "sha256:" and the hex SHA-256 of the crash directory as judged (names, file
	// types, contents, symbolic link targets, hard links; not modes or times) and of the
	// output printed before the crash (fs/model's Digest): the replay checks it rebuilt the same.
	Digest string `json:"digest,omitempty"`
}

// FSSplit is how a persistence model cut writes into micro-operations (fs/model's Split): Count
// pieces of equal size, or pieces ending at multiples of Aligned bytes.
type FSSplit struct {
	Count   int   `json:"count,omitempty"`
	Aligned int64 `json:"aligned,omitempty"`
}

// MaxFSMicro bounds FSState.Micro when a state is read back (a larger number is no report of
// scry's: the micro-operations of a run are held in memory).
const MaxFSMicro = 1 << 26

// FSRanges encodes a set of persisted micro-operations as FSState.Persisted.
func FSRanges(persisted []bool) [][2]int {
	out := [][2]int{}
	for i := 0; i < len(persisted); i++ {
		if !persisted[i] {
			continue
		}
		j := i
		for j+1 < len(persisted) && persisted[j+1] {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// PersistedSet decodes Persisted into one flag per micro-operation (Micro of them). Errors: a
// negative or too large Micro, a range out of [0, Micro), reversed, or not after the one
// before it.
func (s *FSState) PersistedSet() ([]bool, error) {
	if s.Micro < 0 || s.Micro > MaxFSMicro {
		return nil, fmt.Errorf("micro-operation count %d is out of range", s.Micro)
	}
	set := make([]bool, s.Micro)
	next := 0
	for _, r := range s.Persisted {
		switch {
		case r[0] < next:
			return nil, fmt.Errorf("persisted range [%d, %d] overlaps or precedes the one before it", r[0], r[1])
		case r[1] < r[0]:
			return nil, fmt.Errorf("persisted range [%d, %d] is reversed", r[0], r[1])
		case r[1] >= s.Micro:
			return nil, fmt.Errorf("persisted range [%d, %d] is past the %d micro-operations", r[0], r[1], s.Micro)
		}
		for i := r[0]; i <= r[1]; i++ {
			set[i] = true
		}
		next = r[1] + 1
	}
	return set, nil
}

// ErrNoFSState is returned for a file-system finding whose report has no crash state (written
// by a scry without replay for them).
var ErrNoFSState = errors.New("the finding has no crash state (fs.state): its report was written by a scry that could not replay file-system findings; run scry fs check again")

// MaxFSDynamic bounds FSCrash.Dynamic.
const MaxFSDynamic = 8

// writeFSText prints the file-system part of finding number n (1-based, the number `scry
// replay` takes).
func writeFSText(bw *bufio.Writer, n int, c *FSCrash) {
	fmt.Fprintf(bw, "    model %s, strategy %s", c.APM, c.Strategy)
	if c.Split != "" {
		fmt.Fprintf(bw, " (%s)", c.Split)
	}
	fmt.Fprintf(bw, ", crash after operation %d\n", c.CrashPoint)
	if len(c.Models) > 0 {
		fmt.Fprintf(bw, "    legal under: %s\n", strings.Join(c.Models, ", "))
	}
	for i, d := range c.Dynamic {
		if d.A == d.B {
			fmt.Fprintf(bw, "    dynamic: %d %s\n", d.A, d.CallA)
		} else {
			fmt.Fprintf(bw, "    dynamic: %d %s -> %d %s\n", d.A, d.CallA, d.B, d.CallB)
		}
		if i == len(c.Dynamic)-1 && c.Count > len(c.Dynamic) {
			fmt.Fprintf(bw, "    ... %d dynamic vulnerabilities in all\n", c.Count)
		}
	}
	if c.What != "" {
		fmt.Fprintf(bw, "    partial state: %s\n", c.What)
	}
	for _, l := range c.Lost {
		fmt.Fprintf(bw, "    lost: %s\n", l)
	}
	if c.Stdout != "" {
		fmt.Fprintf(bw, "    printed before the crash: %q\n", c.Stdout)
	}
	if c.Checker != "" {
		fmt.Fprintf(bw, "    %s: %s\n", map[bool]string{true: "checker", false: "re-execution"}[c.Symptom == "checker" || c.Symptom == ""], c.Checker)
	}
	writeDiffs(bw, []namedDiff{{"committed", c.DiffCommitted}, {"rolled back", c.DiffRolledBack}})
	if c.ImageCommand == "" {
		fmt.Fprintf(bw, "    id %s\n", c.ID)
		return
	}
	fmt.Fprintf(bw, "    replay: %s   (finding %d, id %s)\n", c.ImageCommand, n, c.ID)
	if c.Reproduce != "" {
		fmt.Fprintf(bw, "    then:   %s\n", c.Reproduce)
	}
	fmt.Fprintf(bw, "    kept: snapshot %s, trace %s\n", c.Snapshot, c.Trace)
}
