package explore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// Replaying a file-system finding (docs/fs-mode.md, "Replaying a finding"): scry's design asks
// every crash finding for a command that rebuilds its crash image for a debugger. A finding
// records its crash state exactly (report.FSState: the persistence model's split and which
// micro-operations persisted, ALICE, Pillai et al., OSDI'14, §3.2), and the run keeps the
// trace and the snapshot of the workload directory; Replay builds the model again from them,
// materializes the state and checks it against the digest of the directory the exploration
// judged.

// state records failing state it (judged v) for the report: exactly, with the digest of its
// crash directory, built once more in a scratch directory under dir ("" the temporary
// directory). A directory that cannot be built leaves the digest out.
func (c *clusters) state(it item, v verdict, dir string) *report.FSState {
	sp := c.p.builds[it.build]
	st := &report.FSState{Strategy: it.strategy, Split: report.FSSplit{Count: sp.Count, Aligned: sp.Aligned},
		Micro: len(c.p.micro[it.build]), Persisted: report.FSRanges(it.st.Persisted), CrashPoint: it.point,
		Operation: c.p.m.Ops[it.point].Operation, Symptom: v.symptom}
	if st.Symptom == "" {
		st.Symptom = exec.SymptomChecker
	}
	tmp, err := os.MkdirTemp(dir, "digest-")
	if err != nil {
		return st
	}
	defer os.RemoveAll(tmp)
	crash := filepath.Join(tmp, "crash")
	stdout, stderr, err := model.Materialize(c.p.m, c.p.micro[it.build], it.st, crash)
	if err == nil {
		st.Digest, _ = model.Digest(crash, stdout, stderr)
	}
	return st
}

// ReplayFiles are the paths Replay writes: the crash directory and, beside it, the files of
// what the program had printed before the crash (the checker's $SCRY_STDOUT and $SCRY_STDERR)
// and of the standard input of a re-execution. ForDir names them for a crash directory.
type ReplayFiles struct {
	Dir, Stdout, Stderr, Stdin string
}

// ForDir returns the files of crash directory dir: dir.stdout, dir.stderr and dir.stdin.
func ForDir(dir string) ReplayFiles {
	return ReplayFiles{Dir: dir, Stdout: dir + ".stdout", Stderr: dir + ".stderr", Stdin: dir + ".stdin"}
}

// ReproduceCommand is the shell command that judges crash directory f.Dir as the exploration
// judged state st of finding fc: the checker run inside it (`/bin/sh -c`, no standard input)
// with $SCRY_STDOUT, $SCRY_STDERR and $SCRY_CRASH_DIR naming f's files, when the checker
// rejected the state; otherwise the program run inside it on f.Stdin (the workload's lines
// after the crash's operation), with the variables the runs had (report.FSCrash.CheckerEnv,
// Env). It runs in a subshell, so the caller's shell stays where it was. With a relative f.Dir
// (the report's template, "crash"), the other paths are written relative to it, as the
// commands see them from inside. "" when the finding names neither a checker nor a program.
func ReproduceCommand(fc *report.FSCrash, st *report.FSState, f ReplayFiles) string {
	inside := func(p string) string {
		if filepath.IsAbs(f.Dir) {
			return p
		}
		if r, err := filepath.Rel(f.Dir, p); err == nil {
			return r
		}
		return p
	}
	words := func(ws []string) string {
		q := make([]string, len(ws))
		for i, w := range ws {
			q[i] = exec.ShellQuote(w)
		}
		return strings.Join(q, " ")
	}
	cd := "cd " + exec.ShellQuote(f.Dir) + " && env "
	if st.Symptom == exec.SymptomChecker || st.Symptom == "" || len(fc.Target) == 0 {
		if fc.CheckerCommand == "" {
			return ""
		}
		env := append(append([]string(nil), fc.CheckerEnv...), "SCRY_STDOUT="+inside(f.Stdout), "SCRY_STDERR="+inside(f.Stderr), "SCRY_CRASH_DIR="+inside(f.Dir))
		return "(" + cd + words(env) + " " + words([]string{"/bin/sh", "-c", fc.CheckerCommand}) + " < /dev/null)"
	}
	return "(" + cd + words(append(append([]string(nil), fc.Env...), fc.Target...)) + " < " + exec.ShellQuote(inside(f.Stdin)) + ")"
}

// Replay rebuilds the crash directory of state st of file-system finding fc at out (a new
// directory: never an existing path), writes beside it what the program had printed before the
// crash (out.stdout, out.stderr: the checker's $SCRY_STDOUT and $SCRY_STDERR) and, when the
// state failed by output equivalence, the standard input its re-execution read (out.stdin: the
// workload's lines after the crash's operation), and returns those paths (absolute) and the
// command that reproduces the failure (ReproduceCommand). It builds the model again from the
// kept snapshot and trace (model.BuildModel), the persistence model's micro-operations under the
// state's split, materializes the state (model.Materialize) and checks the directory's digest
// (model.Digest) against the report's.
//
// Errors, with nothing left behind: a finding without a state (report.ErrNoFSState) or with a
// malformed one; out or one of its files exists; the snapshot, the trace or the workload named
// by the finding is gone (the message names the path); the trace, the model or the digest
// differ from the report's (the snapshot or the trace changed since); I/O errors.
func Replay(fc *report.FSCrash, st *report.FSState, out string) (ReplayFiles, string, error) {
	if st == nil {
		return ReplayFiles{}, "", report.ErrNoFSState
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return ReplayFiles{}, "", err
	}
	files := ForDir(abs)
	reexec := st.Symptom != exec.SymptomChecker && st.Symptom != "" && len(fc.Target) > 0
	if _, err := os.Lstat(abs); err == nil {
		return files, "", safefile.Exists("--out %s exists: scry writes the crash directory into a new directory only, never into or over an existing path; name another", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return files, "", fmt.Errorf("--out %s: %w", out, err)
	}
	side := []string{files.Stdout, files.Stderr}
	if reexec {
		side = append(side, files.Stdin)
	}
	for _, p := range side {
		if err := safefile.Check(p, safefile.Policy{What: "the crash's file", NoForce: true}); err != nil {
			return files, "", err
		}
	}
	if fc.Snapshot == "" || fc.Trace == "" {
		return files, "", errors.New("the finding names no kept snapshot or trace (scry fs check could not keep them, see the report's warnings)")
	}
	var stdin []byte
	if reexec {
		w, err := workload.Read(fc.Workload)
		if err != nil {
			return files, "", fmt.Errorf("the workload the re-execution read: %w", err)
		}
		stdin = w.Suffix(st.Operation)
	}
	apm, err := model.APMByName(fc.APM)
	if err != nil {
		return files, "", fmt.Errorf("the finding's persistence model: %w", err)
	}
	sp := model.Split{Count: st.Split.Count, Aligned: st.Split.Aligned}
	if sp != apm.Base && !slices.Contains(apm.Splits, sp) {
		return files, "", fmt.Errorf("the finding's split (%s) is not one of model %s's", sp, apm.Name)
	}
	persisted, err := st.PersistedSet()
	if err != nil {
		return files, "", fmt.Errorf("the finding's crash state: %w", err)
	}
	m, err := replayModel(fc)
	if err != nil {
		return files, "", err
	}
	ms := apm.Build(m, sp)
	state := model.State{Persisted: persisted}
	if len(ms) != st.Micro {
		return files, "", fmt.Errorf("the trace %s and the snapshot %s give %d micro-operations under model %s (%s), the report says %d: they are not the ones the report was made from",
			fc.Trace, fc.Snapshot, len(ms), apm.Name, sp, st.Micro)
	}
	if !model.Legal(ms, state) {
		return files, "", fmt.Errorf("the finding's crash state is not one model %s allows for the trace %s and the snapshot %s: they are not the ones the report was made from",
			apm.Name, fc.Trace, fc.Snapshot)
	}
	done := false
	var made []string
	defer func() {
		if !done {
			for _, p := range made {
				os.RemoveAll(p) // created by scry just now
			}
		}
	}()
	stdout, stderr, err := model.Materialize(m, ms, state, abs)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		made = append(made, abs)
	}
	if err != nil {
		return files, "", fmt.Errorf("building the crash directory: %w", err)
	}
	if st.Digest != "" {
		got, err := model.Digest(abs, stdout, stderr)
		if err != nil {
			return files, "", err
		}
		if got != st.Digest {
			return files, "", fmt.Errorf("the rebuilt crash directory differs from the one the exploration judged (digest %s, the report says %s): the snapshot %s or the trace %s changed since the report was written",
				got, st.Digest, fc.Snapshot, fc.Trace)
		}
	}
	write := func(p string, data []byte) error {
		f, err := safefile.Create(p, safefile.Policy{What: "the crash's file", NoForce: true})
		if err != nil {
			return err
		}
		made = append(made, p)
		_, werr := f.Write(data)
		return errors.Join(werr, f.Close())
	}
	if err := write(files.Stdout, stdout); err != nil {
		return files, "", err
	}
	if err := write(files.Stderr, stderr); err != nil {
		return files, "", err
	}
	if reexec {
		if err := write(files.Stdin, stdin); err != nil {
			return files, "", err
		}
	} else {
		files.Stdin = ""
	}
	done = true
	return files, ReproduceCommand(fc, st, files), nil
}

// replayModel builds the model of a finding's run again from the snapshot and the trace it
// names. Errors: either is gone (the message names the path), the trace cannot be read.
func replayModel(fc *report.FSCrash) (*model.Model, error) {
	for _, p := range []struct{ what, path string }{{"the snapshot of the workload directory", fc.Snapshot}, {"the trace", fc.Trace}} {
		if _, err := os.Stat(p.path); err != nil {
			return nil, fmt.Errorf("%s kept at %s is gone (%v): run scry fs check again to replay its findings", p.what, p.path, err)
		}
	}
	r, err := trace.Open(fc.Trace)
	if err != nil {
		return nil, fmt.Errorf("the finding's trace: %w", err)
	}
	defer r.Close()
	m, err := model.BuildModel(fc.Snapshot, fc.Dir, r)
	if err != nil {
		return nil, fmt.Errorf("modeling the trace %s: %w", fc.Trace, err)
	}
	return m, nil
}
