package pipeline

import (
	"fmt"
	"slices"
	"strings"

	fsexplore "github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// Replayed is what `scry replay` rebuilt: the notes for the user (one line each, on standard
// error) and the shell command that reproduces the failure ("" when the finding names no checker
// or program to reproduce it with). The command of a PM crash image runs the program on a fresh
// copy of the image each time (repeatable), and Debug is the same run under gdb ("" in
// file-system mode).
type Replayed struct {
	Notes   []string
	Command string
	Debug   string
}

// Replay rebuilds the crash image (PM) or crash directory (file-system mode) of the crash finding
// id (its number, crash id or variant id: report.CrashFinding) of the JSON report at reportPath,
// at out. A PM image is written from the trace the report names (explore.Rebuild; with force an
// existing regular file at out is replaced), with the stores the exploration assumed durable
// found again (NeverDurable) when it assumed them; a file-system crash directory is rebuilt from
// the snapshot and trace the check kept (fsexplore.Replay; out must not exist, force does not
// apply). Errors: the report cannot be read or has no such crash finding; out may not be written;
// the trace, snapshot or workload are gone or changed since the report was written.
func Replay(reportPath, id, out string, force bool) (*Replayed, error) {
	b, err := report.ReadFile(reportPath, "a JSON report")
	if err != nil {
		return nil, err
	}
	f, err := report.CrashFinding(b, reportPath, id)
	if err != nil {
		return nil, err
	}
	if f.FS != nil {
		return replayFS(f, out)
	}
	return replayCrash(f, out, force)
}

// replayCrash rebuilds the crash image of PM crash finding f at out.
func replayCrash(f *report.Finding, out string, force bool) (*Replayed, error) {
	c := f.Crash
	var assume []px86.StoreState
	if c.AssumeFixed {
		// The exploration's crash points were placed with these stores assumed durable.
		var err error
		if assume, err = NeverDurable(c.Trace); err != nil {
			return nil, fmt.Errorf("the stores the exploration assumed durable: %w", err)
		}
	}
	if err := explore.Rebuild(c, out, force, assume); err != nil {
		return nil, err
	}
	nops := c.Input // best effort when the workload is gone: keep the tail command
	if w, err := workload.Read(c.Workload); err == nil {
		nops = len(w.Ops)
	}
	var r Replayed
	for _, iv := range c.Invariants {
		r.Notes = append(r.Notes, "the crash state violates "+iv)
	}
	if len(c.InFlight) > 0 {
		var ops []string
		for _, o := range c.InFlight {
			ops = append(ops, fmt.Sprintf("%d %q", o.Index, o.Text))
		}
		r.Notes = append(r.Notes, fmt.Sprintf("operations in flight at the crash: %s; the rerun applies the operations not begun", strings.Join(ops, ", ")))
	}
	op := c.Input - 2
	if f.Operation != nil {
		op = int(f.Operation.Index)
	}
	env := c.Env
	if env == nil { // a report written before reports carried it
		env = exec.Target{}.ReproduceEnv()
	}
	run := out + ".run"
	r.Command, r.Debug = reproduceCopy(c.Target, env, c.Client, c.Workload, c.Input-2, nops, out, run)
	r.Notes = append(r.Notes, fmt.Sprintf("crash image of %s (%s, operation %d) written to %s", c.ID, f.Kind, op, out),
		"under gdb: "+r.Debug)
	if f.Schedule != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("recorded under the thread schedule %s=%s; the runs on the crash image above run as the operating system schedules them (the image holds what the schedule did). The recorded run up to the crash point, under that schedule (the runtime active: its scheduler switches at loads too), creating the pool %s (remove it before each run: the program creates it), stopped at the crash point under gdb: %s",
			ScheduleEnv, f.Schedule, out+".pre.pool", recordedRun(c.Target, scheduledEnv(env, f.Schedule), c.Workload, out+".pre.pool", f.Location)))
	}
	r.Notes = append(r.Notes, fmt.Sprintf("reproduce with the command below: the program changes the image it runs on, so the command runs it on a fresh copy, %s, each time", run))
	return &r, nil
}

// scheduledEnv returns env, the environment of the runs on crash images, made that of a run under
// the runtime's scheduler with spec: without SCRY_INERT and SCRY_NO_LOADS (an inert runtime
// schedules nothing, and loads are scheduling points), with SCRY_SCHED=spec.
func scheduledEnv(env []string, spec string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "SCRY_INERT=") || strings.HasPrefix(kv, "SCRY_NO_LOADS=") || strings.HasPrefix(kv, ScheduleEnv+"=")
	})
	return append(out, ScheduleEnv+"="+spec)
}

// recordedRun returns the shell command that runs target (with {pool}) under gdb as the check
// recorded it, with env set (a schedule's SCRY_SCHED among them), its pool created at pool (which
// must not exist), the whole workload on standard input, and a breakpoint at loc (the crash
// point): the run before the crash, for a debugger.
func recordedRun(target, env []string, workload, pool string, loc report.Location) string {
	vars, args := explore.ReproduceWords(target, env, pool)
	run := strings.Join(append(args[1:], "<", exec.ShellQuote(workload)), " ")
	gdb := append(vars, "gdb", "-ex", exec.ShellQuote(fmt.Sprintf("break %s:%d", loc.File, loc.Line)), "-ex", exec.ShellQuote("run "+run), args[0])
	return "env " + strings.Join(gdb, " ")
}

// reproduceCopy returns the shell command that reproduces a PM crash finding on a copy of its
// image (copied afresh from image to copyPath each time, so the command can be run again) with the
// rest of the workload from operation k+1 on (explore.ReproduceCommand), and the same run under
// gdb, whose standard input is that rest written to copyPath.stdin.
func reproduceCopy(target, env []string, client, workload string, k, nops int, image, copyPath string) (command, debug string) {
	cp := fmt.Sprintf("cp -f %s %s && ", exec.ShellQuote(image), exec.ShellQuote(copyPath))
	command = cp + explore.ReproduceSession(target, env, client, workload, k, nops, copyPath)
	if client != "" {
		target = exec.WithPort(target, explore.ReproducePort)
	}
	vars, args := explore.ReproduceWords(target, env, copyPath)
	stdin := "/dev/null"
	if k+1 < nops {
		stdin = copyPath + ".stdin"
		cp += fmt.Sprintf("tail -n +%d %s > %s && ", k+2, exec.ShellQuote(workload), exec.ShellQuote(stdin))
	}
	if client != "" {
		// The server under gdb; its client from another shell.
		gdb := append(vars, "gdb", "-ex", exec.ShellQuote("run "+strings.Join(args[1:], " ")), args[0])
		cli := strings.ReplaceAll(client, exec.PortPlaceholder, fmt.Sprint(explore.ReproducePort))
		return command, cp + "env " + strings.Join(gdb, " ") + fmt.Sprintf(", then from another shell: /bin/sh -c %s < %s", exec.ShellQuote(cli), exec.ShellQuote(stdin))
	}
	if pre, _ := exec.Emulator(target[0]); pre != nil {
		// An emulated program (an aarch64 one under qemu-aarch64): qemu waits for a debugger
		// on a port, and gdb-multiarch attaches to it from another shell.
		qemu := append([]string{args[0], "-g", fmt.Sprint(gdbPort)}, args[1:]...)
		return command, cp + "env " + strings.Join(append(vars, qemu...), " ") + " < " + exec.ShellQuote(stdin) +
			fmt.Sprintf(", then from another shell: gdb-multiarch -ex %s %s", exec.ShellQuote(fmt.Sprintf("target remote :%d", gdbPort)), exec.ShellQuote(target[0]))
	}
	// gdb's run takes the arguments and the redirection in one shell command line (arguments
	// given to run replace those of --args).
	run := strings.Join(append(args[1:], "<", exec.ShellQuote(stdin)), " ")
	gdb := append(vars, "gdb", "-ex", exec.ShellQuote("run "+run), args[0])
	return command, cp + "env " + strings.Join(gdb, " ")
}

// gdbPort is the port qemu-user waits for gdb on in the debug command of an emulated program.
const gdbPort = 1234

// replayFS rebuilds the crash directory of file-system finding f at out (fsexplore.Replay).
func replayFS(f *report.Finding, out string) (*Replayed, error) {
	fc := f.FS
	files, command, err := fsexplore.Replay(fc, fc.State, out)
	if err != nil {
		return nil, err
	}
	st := fc.State
	var b strings.Builder
	fmt.Fprintf(&b, "crash directory of %s (%s, model %s, %s, crash after logical operation %d", fc.ID, f.Kind, fc.APM, st.Strategy, st.CrashPoint)
	if st.Operation >= 0 && fc.Workload != "" {
		fmt.Fprintf(&b, ", during workload operation %d", st.Operation)
	}
	fmt.Fprintf(&b, ") written to %s; the output printed before the crash to %s and %s", files.Dir, files.Stdout, files.Stderr)
	if files.Stdin != "" {
		fmt.Fprintf(&b, "; the re-execution's standard input to %s", files.Stdin)
	}
	r := &Replayed{Command: command}
	if command == "" {
		b.WriteString("; the finding names no checker or program to reproduce it with")
		r.Notes = append(r.Notes, b.String())
		return r, nil
	}
	b.WriteString("; reproduce with:")
	r.Notes = append(r.Notes, b.String())
	if st.Symptom != "checker" {
		r.Notes = append(r.Notes, fmt.Sprintf("symptom %s: the re-execution ends as neither legal outcome does (the report's fs.diff_committed and fs.diff_rolled_back compare the finding's first state's output)", st.Symptom))
	}
	return r, nil
}
