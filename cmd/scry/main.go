// Command scry finds crash-consistency bugs in programs that persist data to persistent memory.
// It holds flags, help texts and the mapping of results to exit statuses; package pipeline
// does the work.
//
// Exit status: 0 when no correctness finding, 1 when there is one (or `trace verify` finds a
// mismatch), 2 on error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
)

// statusError ends a command with an exit status other than 2: 1 for correctness findings or a
// trace that does not match its pool files. msg, if any, is printed.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// errFindings is returned by commands that found correctness bugs: exit 1, nothing printed.
var errFindings = &statusError{code: 1}

// exitStatus maps a command's error to its exit status and the message to print ("" none):
// nil is 0, a statusError its code, a run stopped by a signal 128 + the signal's number (130
// for Ctrl-C, 143 for SIGTERM), anything else 2.
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.code, se.msg
	}
	var ie *exec.Interrupted
	if errors.As(err, &ie) {
		return 128 + int(ie.Signal), err.Error()
	}
	var st *record.Stopped
	if errors.As(err, &st) {
		return 128 + int(st.Signal), err.Error()
	}
	return 2, err.Error()
}

// findings returns errFindings when the report has a correctness finding.
func findings(rep *report.Report) error {
	if rep != nil && rep.HasCorrectness() {
		return errFindings
	}
	return nil
}

// needSubcommand is the RunE of a command that only groups subcommands: called with an unknown
// subcommand, or none, it is an error (exit 2), not help and success.
func needSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q for %q (known: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
	}
	return fmt.Errorf("%s needs a command: %s (see `%s --help`)", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath())
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + bi.GoVersion
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:     "scry",
		Version: version(),
		Short:   "scry finds crash-consistency bugs in persistent-memory programs",
		Long: `scry finds crash-consistency bugs in C/C++ programs that persist data to persistent memory,
and in programs that persist through files.

  scry cc -O2 -o prog prog.c -lpmemobj     build with instrumentation (also: scry c++)
  scry check -- ./prog args                 record a run and report PM misuse
  scry check --workload ops -- ./prog {pool}   also crash it inside every operation
  scry record --trace t.trace -- ./prog     record only; then: scry analyze t.trace
  scry fix --build 'make' report.json       validated repairs of a JSON report, as a patch
  scry fs check --dir DIR --checker CMD -- PROG ARGS   file-system mode (ALICE-style)

Exit status: 0 no correctness finding, 1 correctness findings, 2 error, 130/143 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCCCommand("cc", false), newCCCommand("c++", true), newRecordCommand(),
		newAnalyzeCommand(), newCheckCommand(), newTraceCommand(), newWorkloadCommand(), newExploreCommand(), newReplayCommand(), newInferCommand(), newFixCommand(), newFSCommand())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())
	})
	return root
}

// execute runs the command line args and returns the exit status, printing errors to stderr.
func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	code, msg := exitStatus(root.Execute())
	if msg != "" {
		fmt.Fprintln(stderr, "scry:", msg)
	}
	return code
}

func main() {
	os.Exit(execute(newRoot(), os.Args[1:], os.Stderr))
}
