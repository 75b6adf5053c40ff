package report

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Check records how the check that made a report ran (`scry check`): the program's command
// line, how it found its pools and its workload, and the options of the analysis and of crash
// exploration. `scry fix --build` re-runs it on the rebuilt program to validate a repair. It is
// the JSON report's "check" object (docs/findings-json.md); nil for reports of `scry analyze`
// and `scry explore`, which ran no program.
type Check struct {
	// Dir is the working directory the program ran in (absolute).
	Dir string `json:"dir"`
	// Args is the program and its arguments as given, with {pool} in crash mode.
	Args []string `json:"args"`
	// Program is the absolute path of the program that ran ("" when it could not be found).
	Program string `json:"program"`
	// Workload is the absolute path of the file fed to the program's standard input; "" when
	// the program read scry's own standard input (Stdin) or nothing.
	Workload string `json:"workload,omitempty"`
	// Stdin: the program's standard input was scry's, which the report does not keep.
	Stdin bool `json:"stdin,omitempty"`
	// PM, NoLoads, NoPMEMForce, OpBegin, OpEnd and Env are the recording's options (--pm,
	// --no-loads, --no-pmem-force, --op-begin, --op-end, --env).
	PM          []string `json:"pm,omitempty"`
	NoLoads     bool     `json:"no_loads,omitempty"`
	NoPMEMForce bool     `json:"no_pmem_force,omitempty"`
	OpBegin     string   `json:"op_begin,omitempty"`
	OpEnd       string   `json:"op_end,omitempty"`
	Env         []string `json:"env,omitempty"`
	// BlackBox: the program was recorded under scry's Valgrind tool (--black-box,
	// docs/black-box.md).
	BlackBox bool `json:"black_box,omitempty"`
	// Schedules is --schedules: the thread schedules a program with several threads storing to
	// PM is recorded and explored under (0: the operating system's alone, as before it existed).
	Schedules int `json:"schedules,omitempty"`
	// Oracles, NoInfer and Suppressions are the analysis options (--oracles, --no-infer, the
	// absolute path of --suppressions).
	Oracles      []string `json:"oracles,omitempty"`
	NoInfer      bool     `json:"no_infer,omitempty"`
	Suppressions string   `json:"suppressions,omitempty"`
	// Persistency is --persistency: the profiles the check ran under (docs/persistency-profiles.md).
	Persistency []string `json:"persistency,omitempty"`
	// Pools are the PM files the recorded run mapped (REGION_MAP records), in the order first
	// mapped: Created says the run created the file (it did not exist before), so a re-run
	// needs a path that does not exist either.
	Pools []Pool `json:"pools"`
	// Crash is set in crash mode ({pool} in Args): the exploration's options.
	Crash *CheckCrash `json:"crash,omitempty"`
}

// Pool is one PM file a recorded run mapped.
type Pool struct {
	Path    string `json:"path"`
	Created bool   `json:"created"`
}

// CheckCrash records the crash-exploration options of a check (the flags of docs/crash-exploration.md).
type CheckCrash struct {
	Strategies     []string `json:"strategies,omitempty"` // --strategy; empty: the default
	MaxStates      int      `json:"max_states"`
	Seed           uint64   `json:"seed"`
	Samples        int      `json:"samples"`
	AfterStores    bool     `json:"after_stores,omitempty"`
	Jobs           int      `json:"jobs"`
	TimeoutSeconds float64  `json:"timeout_seconds"`
	Checker        string   `json:"checker,omitempty"`
	OutputFilter   string   `json:"output_filter,omitempty"`
	// Client is --client: the program is a server driven by this client command (docs/servers.md).
	Client            string  `json:"client,omitempty"`
	MaxInFlight       int     `json:"max_in_flight"`
	ClusterFailures   int     `json:"cluster_failures"`
	TimeBudgetSeconds float64 `json:"time_budget_seconds,omitempty"`
	NoAssumeFixed     bool    `json:"no_assume_fixed,omitempty"`
	// Pool is --pool: the path scry created the pool at ("" a temporary directory).
	Pool string `json:"pool,omitempty"`
}

// ReadJSON reads a report written by WriteJSON (docs/findings-json.md; name is its path, for
// messages): its findings, warnings, trace, events, statistics, check, shard, scope and schedule
// witnesses. Rules and suppression
// counts are not read. Errors: data is not a JSON report of scry (an object with a "findings"
// array), or a finding has no kind.
func ReadJSON(data []byte, name string) (*Report, error) {
	var doc struct {
		Findings *[]Finding `json:"findings"`
		Warnings []string   `json:"warnings"`
		Summary  struct {
			Trace  string `json:"trace"`
			Events uint64 `json:"events"`
		} `json:"summary"`
		Stats     *Stats    `json:"stats"`
		Check     *Check    `json:"check"`
		Shard     *Shard    `json:"shard"`
		Profiles  []string  `json:"profiles"`
		Scope     *Scope    `json:"scope"`
		Witnesses []Witness `json:"witnesses"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, notReport(name, data, err)
	}
	if doc.Findings == nil {
		return nil, fmt.Errorf("%s is not a JSON report of scry: it has no \"findings\" array (write one with --format json)", name)
	}
	r := &Report{Findings: *doc.Findings, Warnings: doc.Warnings, Trace: doc.Summary.Trace, Events: doc.Summary.Events, Stats: doc.Stats, Check: doc.Check, Shard: doc.Shard, Profiles: doc.Profiles, Scope: doc.Scope, Witnesses: doc.Witnesses}
	for i, f := range r.Findings {
		if f.Kind == "" {
			return nil, fmt.Errorf("%s: finding %d has no kind", name, i+1)
		}
	}
	if c := r.Check; c != nil && len(c.Args) == 0 {
		return nil, errors.New(name + ": its check names no program (\"check\".\"args\" is empty)")
	}
	return r, nil
}
