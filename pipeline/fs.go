package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/fs/strace"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// FSCheck is `scry fs check`: record a program's file-system calls in a workload directory,
// build the crash states a persistence model allows, and judge them with a checker
// (docs/fs-mode.md).
type FSCheck struct {
	// Options are the exploration's, as the user chose them (explore.Options: the checker and
	// its timeout, the persistence model, the strategies, the bounds, the time budget, the
	// progress of the phases after the recording). Their TimeBudget bounds the whole command,
	// counted from their Start (zero: when Run begins), so that the recording and the modelling
	// are inside it. Their Shard must be unset: a shard explores a recording (FSRecord,
	// FSExplore).
	explore.Options
	// Dir is the workload directory; Args the program and its arguments, run in Dir.
	Dir  string
	Args []string
	Env  []string
	// RecordTimeout bounds the recorded run (strace.RecordOptions.Timeout; 0: none). A run
	// stopped there is modeled but not explored: *ProgramFailed says so.
	RecordTimeout time.Duration
	// NoStack turns off strace -k (no source lines: static vulnerabilities are not placed).
	// Stack turns it on for a program an interpreter runs, which is recorded without stacks
	// otherwise (strace.Interpreter: its frames are the interpreter's, at about 90 times the
	// run's cost).
	NoStack, Stack bool
	// Workload, if set, is fed to the program's standard input one line (operation) at a time
	// and judges crash states by output equivalence (explore.Equivalence).
	Workload string
	// Trace keeps the recorded trace at this path ("" a temporary file).
	Trace string
	// Report is the absolute path of the JSON report, for the replay commands of the findings
	// ("" REPORT.json).
	Report string
	// KeepDir is where the directory keeping the trace and the snapshot of Dir for `scry
	// replay` is created when there are findings ("" the temporary directory, $TMPDIR).
	KeepDir string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// Notes receives messages for the user.
	Notes io.Writer
}

// FSRecording is the recording of an FSCheck (for benchmarks).
type FSRecording = strace.Recorded

// Run snapshots the workload directory into a temporary directory (on the tmpfs /dev/shm when
// it has room: exec.ScratchParent; Stats.Images says where), records the program with
// strace, models its calls, checks that the model rebuilds the directory the run left, explores
// the crash states in crash directories under the same temporary directory (removed at the end,
// also on Ctrl-C and SIGTERM), and returns the report with the error that decides the exit
// status (Verdict): *exec.Interrupted, a configuration or recording error, explore's
// ErrCheckerFails, nil with correctness findings, *ProgramFailed when the program failed. When
// there are findings, the snapshot and the trace are first moved to a directory of their own
// (keep) so that `scry replay` can rebuild the findings' crash directories.
func (c *FSCheck) Run(ctx context.Context) (*report.Report, error) {
	o := c.Options
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	if o.Shard.Active() {
		return nil, errors.New("scry fs check explores no shard: record the run once (scry fs record), then explore a shard of it on each machine (scry fs explore --shard I/N)")
	}
	apm, err := fsExploreChecks(o, c.Workload != "")
	if err != nil {
		return nil, err
	}
	in, err := fsInputs(c.Dir, c.Args, c.Workload)
	if err != nil {
		return nil, err
	}
	// The snapshot and the crash directories live together, on the tmpfs when it has room for
	// the directory and as much again for what the run writes.
	parent, where := exec.ScratchParent("", 2*dirBytes(in.root), "")
	tmp, err := os.MkdirTemp(parent, "scry-fs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tracePath := c.Trace
	if tracePath == "" {
		tracePath = filepath.Join(tmp, "run.trace")
	} else if tracePath, err = filepath.Abs(tracePath); err != nil {
		return nil, err
	}
	rec, res, err := c.fsRecordOptions().record(ctx, in, filepath.Join(tmp, "initial"), tracePath)
	if rec == nil {
		return nil, err
	}
	defer rec.r.Close()
	rep := &report.Report{Trace: c.Trace, Rules: explore.Kinds(), Events: uint64(len(rec.m.Ops))}
	rep.Warnings = append(rep.Warnings, rec.m.Warnings...)
	if res.Interrupted != 0 || res.TimedOut > 0 {
		return rep, Verdict(rep, in.args[0], res, res.Interrupted, nil, nil, c.Trace)
	}
	diffs, err := model.Verify(rec.m, apm, in.root, filepath.Join(tmp, "verify"))
	if err != nil {
		return rep, err
	}
	rep.Warnings = append(rep.Warnings, verifyWarning(diffs)...)
	if len(rec.m.Ops) == 0 {
		rep.Warnings = append(rep.Warnings, noFSOpWarning)
		return rep, Verdict(rep, in.args[0], res, 0, nil, nil, c.Trace)
	}
	rs, st, xerr := fsExplore(ctx, o, apm, tmp, where, rep, rec)
	if len(rep.Findings) > 0 {
		c.keep(rep, rs, rec.base, tracePath)
	}
	xerr = explored(ctx, rep, st, xerr)
	return rep, Verdict(rep, in.args[0], res, 0, nil, xerr, c.Trace)
}

// noFSOpWarning is the warning of a run that changed and printed nothing.
const noFSOpWarning = "the program changed nothing in the workload directory and printed nothing: no crash state to test"

// verifyWarning is the warning of model.Verify's differences (none without).
func verifyWarning(diffs []string) []string {
	if len(diffs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the model of the run does not rebuild the directory it left (%s): crash states may be wrong", model.Summarize(diffs, 3))}
}

// fsExploreChecks checks what a file-system exploration needs before anything runs and returns
// the persistence model o names; workload says whether the program has a workload. Errors: an
// unknown model or strategy, no oracle.
func fsExploreChecks(o explore.Options, workload bool) (*model.APM, error) {
	apm, err := o.Resolve()
	if err != nil {
		return nil, err
	}
	if o.Checker == "" && !workload {
		return nil, errors.New("scry fs check needs an oracle: --checker CMD (a shell command run inside each crash directory, exiting 0 when the state is consistent), --workload FILE (output equivalence), or both")
	}
	return apm, nil
}

// fsInput is what a recording runs: the workload directory's absolute path (symbolic links
// resolved), the program (its absolute path) with its arguments, and the workload.
type fsInput struct {
	root string
	args []string
	wl   *workload.Workload
}

// fsInputs checks and resolves the directory, the program and the workload of a recording.
// Errors: no program, a program or directory that is not there, a workload that cannot be read,
// is empty or names the directory by its absolute path.
func fsInputs(dir string, args []string, workloadPath string) (fsInput, error) {
	if len(args) == 0 {
		return fsInput{}, errors.New("no program given: put it after `--`, e.g. `scry fs check --dir DIR --checker CMD -- ./prog`")
	}
	prog, err := exec.ResolveProgram(args[0])
	if err != nil {
		return fsInput{}, err
	}
	in := fsInput{args: append([]string{prog}, args[1:]...)}
	fi, err := os.Stat(dir)
	if err != nil {
		return fsInput{}, fmt.Errorf("--dir: %w", err)
	}
	if !fi.IsDir() {
		return fsInput{}, fmt.Errorf("--dir %s is not a directory", dir)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fsInput{}, err
	}
	if in.root, err = filepath.Abs(root); err != nil {
		return fsInput{}, err
	}
	if workloadPath == "" {
		return in, nil
	}
	w, err := workload.Read(workloadPath)
	if err != nil {
		return fsInput{}, err
	}
	if len(w.Ops) == 0 {
		return fsInput{}, fmt.Errorf("workload %s has no operation (no line)", workloadPath)
	}
	// Re-executions run the workload's lines in crash directories: a line naming the
	// workload directory by its absolute path would change the user's directory.
	for i, line := range w.Ops {
		for _, d := range []string{in.root, dir} {
			if filepath.IsAbs(d) && strings.Contains(line, d) {
				return fsInput{}, fmt.Errorf("workload %s line %d names the workload directory by its absolute path (%s): the re-executions in crash directories would change it; name its files relative to it (scry workload grammar --relative)", workloadPath, i+1, d)
			}
		}
	}
	in.wl = &w
	return in, nil
}

// fsRecordOptions are the options of a recording.
type fsRecordOptions struct {
	env            []string
	noStack, stack bool
	timeout        time.Duration
	stdout, stderr io.Writer
	notes          io.Writer
}

func (c *FSCheck) fsRecordOptions() fsRecordOptions {
	return fsRecordOptions{env: c.Env, noStack: c.NoStack, stack: c.Stack, timeout: c.RecordTimeout, stdout: c.Stdout, stderr: c.Stderr, notes: c.Notes}
}

// fsRecorded is a recorded run with its model: what its exploration needs. r is the trace,
// open (the caller closes it): the findings' sites and stacks.
type fsRecorded struct {
	in          fsInput
	env         []string
	base, trace string
	m           *model.Model
	r           *trace.Reader
}

// record snapshots in.root into base, records the program with strace into tracePath and
// models the run. It returns the recording (nil on an error before the model) and how the
// program ended. Errors: the snapshot, the recording or the model failed.
func (o fsRecordOptions) record(ctx context.Context, in fsInput, base, tracePath string) (*fsRecorded, *strace.Recorded, error) {
	if err := model.Snapshot(in.root, base); err != nil {
		return nil, nil, fmt.Errorf("snapshotting the workload directory: %w", err)
	}
	stack := !o.noStack
	if stack && !o.stack {
		if it := strace.Interpreter(in.args[0]); it != "" {
			stack = false
			if o.notes != nil {
				fmt.Fprintf(o.notes, "scry: %s runs under %s: recorded without call stacks (their frames would be %s's own, not the script's lines, at about 90 times the run's cost; --stack records them)\n", in.args[0], it, it)
			}
		}
	}
	res, err := strace.Record(ctx, strace.RecordOptions{Dir: in.root, Args: in.args, Env: o.env, Stack: stack,
		Workload: in.wl, Stdout: o.stdout, Stderr: o.stderr, Trace: tracePath, Timeout: o.timeout})
	if res == nil || err != nil {
		return nil, res, err
	}
	rec, err := modelRun(in, o.env, base, tracePath)
	return rec, res, err
}

// modelRun models the recorded run of in (the snapshot base, the trace at tracePath). Errors:
// the trace cannot be read or modelled.
func modelRun(in fsInput, env []string, base, tracePath string) (*fsRecorded, error) {
	r, err := trace.Open(tracePath)
	if err != nil {
		return nil, err
	}
	m, err := model.BuildModel(base, in.root, r)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("modeling the trace: %w", err)
	}
	return &fsRecorded{in: in, env: env, base: base, trace: tracePath, m: m, r: r}, nil
}

// fsExplore explores rec's crash states under the options o and the persistence model apm, in
// crash directories under scratch (where says where it is: Stats.Images), into rep (its findings
// and warnings), and returns the replay setup, the statistics and the exploration's error.
func fsExplore(ctx context.Context, o explore.Options, apm *model.APM, scratch, where string, rep *report.Report, rec *fsRecorded) (replaySetup, report.Stats, error) {
	s := explore.Setup{APM: apm, Sites: rec.r, Dir: scratch}
	if o.Checker != "" {
		s.Checker = exec.Checker{Args: []string{"/bin/sh", "-c", resolveChecker(o.Checker)}, Timeout: o.CheckerTimeout}
	}
	rs := replaySetup{dir: rec.in.root, checker: s.Checker}
	if wl := rec.in.wl; wl != nil {
		if rec.m.Operations == 0 {
			rep.Warnings = append(rep.Warnings, "the program never read its standard input: the workload's operations have no boundaries in the trace, and every crash state is judged as one of operation -1 (before the first)")
		} else if rec.m.Operations < len(wl.Ops) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the program read %d of the workload's %d lines", rec.m.Operations, len(wl.Ops)))
		}
		s.Oracle = &explore.Equivalence{Target: exec.Target{Args: rec.in.args, Env: rec.env, Timeout: o.CheckerTimeout}, Workload: *wl}
		rs.oracle = s.Oracle
	}
	res, xerr := explore.Explore(ctx, rec.m, o, s)
	var st report.Stats
	if res != nil {
		rep.Findings = res.Findings
		rep.Warnings = append(rep.Warnings, res.Warnings...)
		rep.Shard = res.Shard
		st = res.Stats
		st.Images = "crash directories " + where
	}
	return rs, st, xerr
}

// replaySetup is what the replay of a finding needs from the check: the workload directory's
// path and the oracles as they ran.
type replaySetup struct {
	dir     string
	checker exec.Checker
	oracle  *explore.Equivalence
}

// keep moves the snapshot base and the trace (when it is scry's temporary one) into a new
// directory under KeepDir, says so on Notes, and fills in each finding what `scry replay` needs
// (report.FSCrash: the kept paths, the oracles' commands, the replay and reproduce commands).
// What cannot be kept is a warning: the findings stand, without replay.
func (c *FSCheck) keep(rep *report.Report, rs replaySetup, base, tracePath string) {
	dir, err := os.MkdirTemp(c.KeepDir, "scry-fs-replay-")
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the snapshot and the trace could not be kept for scry replay: %v", err))
		return
	}
	snapshot := filepath.Join(dir, "initial")
	if err := moveTree(base, snapshot); err != nil {
		os.RemoveAll(dir) // created just now
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the snapshot of the workload directory could not be kept for scry replay: %v", err))
		return
	}
	notes := c.Notes
	if notes == nil {
		notes = io.Discard
	}
	kept := tracePath
	if c.Trace == "" {
		kept = filepath.Join(dir, "run.trace")
		if err := os.Rename(tracePath, kept); err != nil {
			if err := exec.CopyFile(kept, tracePath); err != nil {
				os.RemoveAll(dir)
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("the trace could not be kept for scry replay: %v", err))
				return
			}
		}
		fmt.Fprintf(notes, "scry: the trace and the snapshot of %s are kept in %s (scry replay needs them; remove the directory when done)\n", c.Dir, dir)
	} else {
		fmt.Fprintf(notes, "scry: the snapshot of %s is kept in %s (scry replay needs it and the trace %s; remove the directory when done)\n", c.Dir, dir, kept)
	}
	fillReplay(rep, rs, snapshot, kept, c.Report)
}

// fillReplay fills in each finding of rep what `scry replay` needs (report.FSCrash: the
// snapshot and the trace it was kept at, the oracles' commands, the replay command naming the
// report at reportPath ("" REPORT.json), the reproduce command) and sets rep.Trace to trace.
func fillReplay(rep *report.Report, rs replaySetup, snapshot, kept, reportPath string) {
	rep.Trace = kept
	reportPath = cmpOr(reportPath, "REPORT.json")
	for i := range rep.Findings {
		fc := rep.Findings[i].FS
		if fc == nil {
			continue
		}
		fc.Dir, fc.Snapshot, fc.Trace = rs.dir, snapshot, kept
		if len(rs.checker.Args) > 0 {
			fc.CheckerCommand = rs.checker.Args[len(rs.checker.Args)-1]
			fc.CheckerEnv = exec.Target{}.ReproduceEnv()
		}
		if o := rs.oracle; o != nil {
			fc.Target, fc.Env, fc.Workload = o.Target.Args, o.Target.ReproduceEnv(), o.Workload.Path
		}
		fc.ImageCommand = fmt.Sprintf("scry replay %s %s --out crash", exec.ShellQuote(reportPath), fc.ID)
		if fc.State != nil {
			fc.Reproduce = explore.ReproduceCommand(fc, fc.State, explore.ForDir("crash"))
		}
	}
}

// moveTree moves directory src to dst (which must not exist): a rename on the same file system,
// else a copy (model.Snapshot: links, hard links and modes kept) and the removal of src.
func moveTree(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	if err := model.Snapshot(src, dst); err != nil {
		os.RemoveAll(dst) // created by the copy
		return err
	}
	return os.RemoveAll(src)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dirBytes returns the bytes of the regular files under dir (what cannot be read is left out).
func dirBytes(dir string) uint64 {
	var n uint64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += uint64(fi.Size())
			}
		}
		return nil
	})
	return n
}

// resolveChecker makes the program of a checker command named by a relative path (./check.sh,
// tools/check) absolute, against scry's working directory, since the checker runs inside each
// crash directory (/bin/sh -c CMD there): as the user typed it, it names their file. The program
// is the command's first shell word (POSIX, Shell Command Language §2.3, token recognition):
// after leading blanks, the characters up to the first blank, newline or operator character
// (; & | < > ( )), so that in `./check.sh; exit 1` or `./check.sh>log` it is ./check.sh. It is
// replaced by its absolute path, quoted for the shell, when it contains a slash, is not
// absolute, names an existing file (not a directory), and has no character the shell would expand or unquote
// (quotes, backslash, $, backquote, glob and brace characters, ~) nor an = (an assignment
// such as `A=./x ./check.sh`); anything else (a name looked up in $PATH, a shell keyword, an
// absolute path) is left as is, and so is the rest of the command.
func resolveChecker(cmd string) string {
	lead := len(cmd) - len(strings.TrimLeft(cmd, " \t"))
	word := cmd[lead:]
	if i := strings.IndexAny(word, " \t\n;&|<>()"); i >= 0 {
		word = word[:i]
	}
	rest := cmd[lead+len(word):]
	if !strings.Contains(word, "/") || filepath.IsAbs(word) || strings.ContainsAny(word, "'\"\\$`*?[]{}~=") {
		return cmd
	}
	abs, err := filepath.Abs(word)
	if err != nil {
		return cmd
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
		return cmd
	}
	return cmd[:lead] + exec.ShellQuote(abs) + rest
}
