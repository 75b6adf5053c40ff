// Package cli is scry's command line: every command and flag of `scry`, their help texts, and
// the mapping of results to exit statuses. It turns flags into calls of package pipeline (which
// composes the work) and results into exit statuses; cmd/scry is one call of Main, and a checker
// with custom analyzers is the same command line built with them (Main with analyzers).
//
// Exit status: 0 when no correctness finding, 1 when there is one (or `trace verify` finds a
// mismatch; `fix`: findings not repaired), 2 on error (or a warning under --strict), 128 + the
// signal's number when interrupted (130 Ctrl-C, 143 SIGTERM).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/toolchain"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
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

// programOutput is where the output of the program a command records and checks goes: standard
// error when the report is on standard output; nowhere with -o FILE (output, the report's path),
// which keeps the terminal to scry's own messages. The output is in the trace either way
// (OUTPUT records: `scry trace dump`), and crash findings show what it was.
func programOutput(cmd *cobra.Command, output string) io.Writer {
	if output != "" {
		return io.Discard
	}
	return cmd.ErrOrStderr()
}

// groupCommand returns a command that only groups the subcommands cmds (use, short: its Use and
// Short): run with an unknown subcommand, or none, it fails (needSubcommand).
func groupCommand(use, short string, cmds ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs, RunE: needSubcommand}
	c.AddCommand(cmds...)
	return c
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

// scryModule is the path of scry's module.
const scryModule = "github.com/scry-pm/scry"

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if bi.Main.Path != scryModule {
		// A checker built in another module (Main with analyzers): scry is one of its dependencies.
		for _, d := range bi.Deps {
			if d.Path == scryModule {
				v = fmt.Sprintf("%s %s, with scry %s", bi.Main.Path, bi.Main.Version, d.Version)
			}
		}
	}
	rev, modified := "", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		rev = " (no VCS revision recorded: built outside a git checkout, or with -buildvcs=false)"
	}
	return v + rev + modified + " " + bi.GoVersion
}

// versionText is what `scry version` and `scry --version` print (name: the command's name): the
// build (version), the trace format versions this scry writes and reads, and the LLVM major
// versions its install has pass plugins for (`scry cc` works with their clang).
func versionText(name string) string {
	plugins := "none installed"
	if in, err := toolchain.FindInstall(); err != nil {
		plugins += " (" + err.Error() + ")"
	} else if m := in.PluginMajors(); len(m) > 0 {
		var s []string
		for _, v := range m {
			s = append(s, strconv.Itoa(v))
		}
		plugins = "LLVM " + strings.Join(s, ", ") + " (" + filepath.Join(in.Root, "lib", "scry") + ")"
	}
	return fmt.Sprintf("%s version %s\ntrace format: writes version %d, reads versions %d to %d\npass plugins: %s\n",
		name, version(), trace.Version, trace.MinVersion, trace.Version, plugins)
}

// newVersionCommand is `scry version`: versionText.
func newVersionCommand(name string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print scry's version, the trace format versions it writes and reads, and the LLVM versions it has pass plugins for",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText(name))
			return err
		},
	}
}

// Config is what a command line is built from.
type Config struct {
	// Name is the command's name in its usage lines and help ("scry" when empty).
	Name string
	// Analyzers are custom analyzers added to scry's catalogue of finding kinds
	// (pipeline.NewCatalogue): `check` and `analyze` run them with scry's own analyses, --help and
	// --oracles list them, the reports carry their kinds with their Doc as the rule's text.
	Analyzers []*analysis.Analyzer
}

// New returns the root command of the command line cfg describes. Errors: the custom analyzers
// are not valid (pipeline.NewCatalogue).
func New(cfg Config) (*cobra.Command, error) {
	cat, err := pipeline.NewCatalogue(cfg.Analyzers...)
	if err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "scry"
	}
	long := `scry finds crash-consistency bugs in C/C++ programs that persist data to persistent memory,
and in programs that persist through files.

  scry cc -O2 -o prog prog.c -lpmemobj     build with instrumentation (also: scry c++)
  scry check -- ./prog args                 record a run and report PM misuse
  scry check --workload ops -- ./prog {pool}   also crash it inside every operation
  scry record --trace t.trace -- ./prog     record only; then: scry analyze t.trace
  scry fix --build 'make' report.json       validated repairs of a JSON report, as a patch
  scry fs check --dir DIR --checker CMD -- PROG ARGS   file-system mode (ALICE-style)

Exit status: 0 no correctness finding, 1 correctness findings, 2 error, 130/143 interrupted.`
	if custom := cat.Custom(); len(custom) > 0 {
		var names []string
		for _, a := range custom {
			names = append(names, a.Name)
		}
		long += fmt.Sprintf("\n\n%s is scry with custom oracles: %s (see `%s check --help`).", cfg.Name, strings.Join(names, ", "), cfg.Name)
	}
	root := &cobra.Command{
		Use:           cfg.Name,
		Version:       version(),
		Short:         "scry finds crash-consistency bugs in persistent-memory programs",
		Long:          long,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCCCommand("cc", false), newCCCommand("c++", true), newRecordCommand(),
		newAnalyzeCommand(cat), newCheckCommand(cat), newTraceCommand(), newWorkloadCommand(), newExploreCommand(), newReplayCommand(), newMinimizeCommand(), newInferCommand(), newFixCommand(), newFSCommand(),
		newReportCommand(), newMergeCommand(), newVersionCommand(cfg.Name))
	root.SetVersionTemplate(versionText(cfg.Name))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())
	})
	return root, nil
}

// Run runs the command line args (without the program's name) built from cfg, with standard
// input, output and error those of the process unless stdout and stderr are given (non-nil), and
// returns the exit status, the error printed to stderr.
func Run(cfg Config, args []string, stdout, stderr io.Writer) int {
	if stderr == nil {
		stderr = os.Stderr
	}
	root, err := New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "scry:", err)
		return 2
	}
	if stdout != nil {
		root.SetOut(stdout)
	}
	root.SetErr(stderr)
	root.SetArgs(args)
	code, msg := exitStatus(root.Execute())
	if msg != "" {
		fmt.Fprintln(stderr, "scry:", msg)
	}
	return code
}

// Main runs the process's command line as scry, with analyzers added to its catalogue of finding
// kinds, and exits with its status (0, 1 for correctness findings, 2 for an error, 128 + signal
// when interrupted). cmd/scry calls it with none; a checker, scry with oracles of one's own, calls
// it with its analyzers, the way golang.org/x/tools/go/analysis/multichecker builds a vet-like
// tool (see Config.Analyzers for the rules they must follow, and package analysis, pm/analysis,
// for how to write one). The command's name in its help is the program's (the base of os.Args[0]).
// A set of analyzers that breaks the rules is an error: Main prints it and exits 2 whatever the
// command line.
//
// A checker built in another module finds scry's native parts (pass plugin, runtime) for its `cc`
// and `c++` in the install root $SCRY_HOME (build/ of scry's source tree after `make`), since it
// does not live under it; or the program is built with scry's own `scry cc`: the trace is the
// same. `fix` repairs scry's own kinds only (it runs the report's check again with scry's own
// catalogue), so a custom finding is listed as not repaired.
func Main(analyzers ...*analysis.Analyzer) {
	os.Exit(Run(Config{Name: filepath.Base(os.Args[0]), Analyzers: analyzers}, os.Args[1:], nil, nil))
}
