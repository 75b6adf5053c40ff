package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/fs/strace"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// Record once, explore anywhere in file-system mode (docs/distributed.md): `scry fs record`
// writes a recording directory holding everything the exploration needs, `scry fs explore`
// explores it (whole, or one shard of it on each machine that has a copy), `scry merge`
// combines the shards' reports.

// Files of a recording directory.
const (
	fsManifestName = "recording.json"
	fsTraceName    = "run.trace"
	fsSnapshotName = "initial"
	fsWorkloadName = "workload.txt"
)

// fsManifest is a recording directory's recording.json.
type fsManifest struct {
	// Format is 1.
	Format int `json:"scry_fs_recording"`
	// Dir is the workload directory's absolute path at the recording (the trace names files
	// under it); Args the program (its absolute path) and its arguments; Env the variables
	// added to its environment.
	Dir  string   `json:"dir"`
	Args []string `json:"args"`
	Env  []string `json:"env,omitempty"`
	// Workload is the workload's file name in the directory ("" none), WorkloadFrom the path
	// it was copied from.
	Workload     string `json:"workload,omitempty"`
	WorkloadFrom string `json:"workload_from,omitempty"`
	// Verify holds, per persistence model, the differences between the directory the run left
	// and the model's rebuild of it (model.Verify), checked at the recording: the directory
	// left is not in the recording.
	Verify map[string][]string `json:"verify"`
}

// FSRecord is `scry fs record`: it records a program's file-system calls in a workload
// directory once, into a new recording directory Out (its trace, the snapshot of the directory
// before the run, the workload, recording.json), for `scry fs explore` to explore anywhere.
type FSRecord struct {
	// Dir, Args, Env, Workload, RecordTimeout, NoStack and Stack are FSCheck's.
	Dir            string
	Args           []string
	Env            []string
	Workload       string
	RecordTimeout  time.Duration
	NoStack, Stack bool
	// Out is the recording directory to create (it must not exist).
	Out string
	// Stdout and Stderr receive the program's output, Notes messages for the user.
	Stdout, Stderr, Notes io.Writer
}

// Run records into Out and returns the report of the recording (the model's warnings; no
// finding). Errors: Out exists; those of FSCheck's recording; a program that did not exit 0, was
// stopped or interrupted (*exec.Interrupted), as a recording to explore needs a whole run; Out
// is removed on every error.
func (c *FSRecord) Run(ctx context.Context) (rep *report.Report, err error) {
	if c.Out == "" {
		return nil, errors.New("no recording directory given (--out DIR)")
	}
	in, err := fsInputs(c.Dir, c.Args, c.Workload)
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(c.Out)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("--out %s exists: give a new directory for the recording", c.Out)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(out) // created above
		}
	}()
	o := fsRecordOptions{env: c.Env, noStack: c.NoStack, stack: c.Stack, timeout: c.RecordTimeout, stdout: c.Stdout, stderr: c.Stderr, notes: c.Notes}
	rec, res, err := o.record(ctx, in, filepath.Join(out, fsSnapshotName), filepath.Join(out, fsTraceName))
	if rec != nil {
		defer rec.r.Close()
	}
	switch {
	case res != nil && res.Interrupted != 0:
		return nil, &exec.Interrupted{Signal: res.Interrupted}
	case err != nil:
		return nil, err
	case res.Failed():
		return nil, fmt.Errorf("%s %s: a recording to explore needs a run that ends normally (scry fs check records and explores a failed run in one command)", in.args[0], res)
	}
	man := fsManifest{Format: 1, Dir: in.root, Args: in.args, Env: c.Env, Verify: map[string][]string{}}
	if in.wl != nil {
		man.Workload, man.WorkloadFrom = fsWorkloadName, c.Workload
		if err := exec.CopyFile(filepath.Join(out, fsWorkloadName), c.Workload); err != nil {
			return nil, err
		}
	}
	for _, a := range model.APMs() {
		diffs, err := model.Verify(rec.m, a, in.root, filepath.Join(out, "verify"))
		if err != nil {
			return nil, err
		}
		man.Verify[a.Name] = verifyWarning(diffs)
	}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, fsManifestName), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	rep = &report.Report{Trace: rec.trace, Events: uint64(len(rec.m.Ops)), Warnings: rec.m.Warnings}
	if c.Notes != nil {
		fmt.Fprintf(c.Notes, "scry: recorded %d file-system operations of %s into %s: explore it with scry fs explore %s --checker CMD (or --shard I/N on each machine, then scry merge)\n",
			len(rec.m.Ops), in.args[0], out, exec.ShellQuote(out))
	}
	return rep, nil
}

// FSExplore is `scry fs explore`: the exploration of a recording directory (FSRecord), whole
// or one shard of it (Shard), as `scry fs check` explores its own recording.
type FSExplore struct {
	// Options are the exploration's, as FSCheck's; with a Shard, the report carries what `scry
	// merge` needs.
	explore.Options
	// Recording is the recording directory.
	Recording string
	// Report is FSCheck's.
	Report string
}

// Run explores the recording and returns the report with the error that decides the exit
// status (as FSCheck.Run's). Its findings' replay commands use the recording's snapshot and
// trace, in place. Errors: not a recording directory (no or a malformed recording.json, a file
// of it missing); those of FSCheck's exploration; --max-states with a shard.
func (c *FSExplore) Run(ctx context.Context) (*report.Report, error) {
	o := c.Options
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	dir, err := filepath.Abs(c.Recording)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, fsManifestName))
	if err != nil {
		return nil, fmt.Errorf("%s is not a recording of scry fs record (%v)", c.Recording, err)
	}
	man, err := parseFSManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Recording, err)
	}
	apm, err := fsExploreChecks(o, man.Workload != "")
	if err != nil {
		return nil, err
	}
	in := fsInput{root: man.Dir, args: man.Args}
	if man.Workload != "" {
		w, err := workload.Read(filepath.Join(dir, man.Workload))
		if err != nil {
			return nil, fmt.Errorf("the recording's workload: %w", err)
		}
		in.wl = &w
	}
	base, tracePath := filepath.Join(dir, fsSnapshotName), filepath.Join(dir, fsTraceName)
	if _, err := os.Stat(base); err != nil {
		return nil, fmt.Errorf("the recording's snapshot of the workload directory: %w", err)
	}
	rec, err := modelRun(in, man.Env, base, tracePath)
	if err != nil {
		return nil, err
	}
	defer rec.r.Close()
	rep := &report.Report{Trace: tracePath, Rules: explore.Kinds(), Events: uint64(len(rec.m.Ops))}
	rep.Warnings = append(append(rep.Warnings, rec.m.Warnings...), man.Verify[apm.Name]...)
	ok := &strace.Recorded{}
	if len(rec.m.Ops) == 0 {
		rep.Warnings = append(rep.Warnings, noFSOpWarning)
		return rep, Verdict(rep, in.args[0], ok, 0, nil, nil, tracePath)
	}
	parent, where := exec.ScratchParent("", 2*dirBytes(base), "")
	tmp, err := os.MkdirTemp(parent, "scry-fs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	rs, st, xerr := fsExplore(ctx, o, apm, tmp, where, rep, rec)
	fillReplay(rep, rs, base, tracePath, c.Report)
	if rep.Shard != nil {
		tf, err := trace.OpenFile(tracePath)
		if err != nil {
			return rep, err
		}
		rep.Shard.TraceDigest, err = tf.Digest()
		tf.Close()
		if err != nil {
			return rep, err
		}
	}
	xerr = explored(ctx, rep, st, xerr)
	return rep, Verdict(rep, in.args[0], ok, 0, nil, xerr, tracePath)
}

// parseFSManifest parses a recording's recording.json. Errors: not JSON of the manifest's shape,
// another format version, or no directory or program.
func parseFSManifest(b []byte) (fsManifest, error) {
	var man fsManifest
	if err := json.Unmarshal(b, &man); err != nil || man.Format != 1 || man.Dir == "" || len(man.Args) == 0 {
		return fsManifest{}, fmt.Errorf("%s is not a recording's manifest of this scry version (scry fs record writes it)", fsManifestName)
	}
	return man, nil
}
