package report

import (
	"bufio"
	"fmt"
)

// FSCrash describes a file-system crash finding (fs-ordering-violation,
// fs-atomicity-violation, fs-durability-violation; docs/fs-mode.md): the persistence model, the
// crash state that failed, the checker's verdict, and every dynamic vulnerability (pair of
// system calls) of the cluster, after ALICE (Pillai et al., OSDI'14, §4.3). Finding.FS is nil
// for every other finding.
type FSCrash struct {
	// ID is the finding's stable id (ClusterID of its cluster key: kind and the two calls'
	// frames), like Crash.ID.
	ID string `json:"id"`
	// APM is the abstract persistence model ("default", "ext4-ordered", "ext4-journal");
	// Strategy the strategy that built the first failing state ("prefix", "omit-one",
	// "split", "exhaustive"); Split how writes were cut into blocks for it.
	APM      string `json:"apm"`
	Strategy string `json:"strategy"`
	Split    string `json:"split,omitempty"`
	// Dynamic lists the cluster's dynamic vulnerabilities (at most MaxFSDynamic), the first
	// one first; Count is how many there were.
	Dynamic []FSVulnerability `json:"dynamic"`
	Count   int               `json:"count"`
	// CrashPoint is the index of the last logical operation issued before the crash; Persisted
	// and Lost describe the first failing state: the logical operations (ALICE's notation)
	// persisted whole or in part, and those issued before the crash but lost.
	CrashPoint int      `json:"crash_point"`
	Persisted  []string `json:"persisted"`
	Lost       []string `json:"lost"`
	// What says what a partial operation left (an atomicity violation): "appended garbage",
	// "source and destination unlinked", ...
	What string `json:"what,omitempty"`
	// Stdout is what the program had printed at the crash (the checker's $SCRY_STDOUT), cut
	// to 1 KiB.
	Stdout string `json:"stdout"`
	// Symptom is how the state failed, as Crash.Symptom: "checker", or with a workload
	// (output equivalence) "output", "exit", "signal", "hang". Checker says how the checker
	// or the re-execution ended, with the end of its output.
	Symptom string `json:"symptom"`
	Checker string `json:"checker"`
	// DiffCommitted and DiffRolledBack (output equivalence) are unified diffs of the
	// re-execution's standard output against the legal outcomes', as in Crash.
	DiffCommitted  string `json:"diff_committed,omitempty"`
	DiffRolledBack string `json:"diff_rolled_back,omitempty"`
}

// FSVulnerability is one dynamic vulnerability: logical operation A must persist before B
// (ordering, durability), or A (through B, for a run of operations) must persist atomically.
type FSVulnerability struct {
	A     int    `json:"a"`
	B     int    `json:"b"`
	CallA string `json:"call_a"`
	CallB string `json:"call_b"`
}

// MaxFSDynamic bounds FSCrash.Dynamic.
const MaxFSDynamic = 8

func writeFSText(bw *bufio.Writer, c *FSCrash) {
	fmt.Fprintf(bw, "    model %s, strategy %s", c.APM, c.Strategy)
	if c.Split != "" {
		fmt.Fprintf(bw, " (%s)", c.Split)
	}
	fmt.Fprintf(bw, ", crash after operation %d\n", c.CrashPoint)
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
	fmt.Fprintf(bw, "    id %s\n", c.ID)
}
