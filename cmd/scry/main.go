// Command scry finds crash-consistency bugs in programs that persist data to persistent memory.
//
// Exit status: 0 when no correctness finding, 1 when there is one, 2 on error.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries an exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// findingsExit is returned by commands that found correctness bugs: exit 1, nothing printed.
var findingsExit = &exitError{code: 1}

func main() {
	root := &cobra.Command{
		Use:   "scry",
		Short: "scry finds crash-consistency bugs in persistent-memory programs",
		Long: `scry finds crash-consistency bugs in C/C++ programs that persist data to persistent memory.

  scry cc -O2 -o prog prog.c -lpmemobj     build with instrumentation (also: scry c++)
  scry check -- ./prog args                 record a run and report PM misuse
  scry record --trace t.trace -- ./prog     record only; then: scry analyze t.trace

Exit status: 0 no correctness finding, 1 correctness findings, 2 error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCCCommand("cc", false), newCCCommand("c++", true), newRecordCommand(),
		newAnalyzeCommand(), newCheckCommand(), newTraceCommand(), newWorkloadCommand(), newExploreCommand(), newReplayCommand(), newInferCommand())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: 2, err: fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	if err := root.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil {
				fmt.Fprintln(os.Stderr, "scry:", ee.err)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "scry:", err)
		os.Exit(2)
	}
}
