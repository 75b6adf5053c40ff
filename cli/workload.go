package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/workload"
)

func newWorkloadCommand() *cobra.Command {
	var opts workload.KVOptions
	var out string
	var force bool
	kv := &cobra.Command{
		Use:   "kv [--ops N] [--seed S] [-o FILE]",
		Short: "a seeded sequence of key-value commands for PMDK's mapcli (insert, remove, check)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := workload.CheckCount("--ops", opts.Ops); err != nil {
				return err // before -o is created
			}
			w, closeOut, err := createOutput(cmd, out, force)
			if err != nil {
				return err
			}
			return errors.Join(workload.KV(w, opts), closeOut())
		},
	}
	kv.Flags().IntVar(&opts.Ops, "ops", 1000, fmt.Sprintf("number of operations `N` (at most %d)", workload.MaxOps))
	kv.Flags().BoolVar(&force, "force", false, "let -o replace an existing file")
	kv.Flags().Uint64Var(&opts.Seed, "seed", 1, "random seed (same seed, same workload)")
	kv.Flags().Uint64Var(&opts.Keys, "keys", 0, "size of the key space (0: scales with --ops)")
	kv.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	return groupCommand("workload", "generate workloads: one operation per line (key-value commands, commands drawn from usage strings, or a coverage-guided search)", kv, newGrammarCommand(), newWorkloadFuzzCommand(), newWorkloadCoverCommand())
}

// createOutput opens -o FILE (safefile: never over a file scry did not write unless --force), or
// returns standard output; close is a no-op for standard output.
func createOutput(cmd *cobra.Command, out string, force bool) (io.Writer, func() error, error) {
	if out == "" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	f, err := safefile.Create(out, safefile.Policy{What: "-o", Force: force})
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

func newGrammarCommand() *cobra.Command {
	var (
		usages, helps, values []string
		opts                  workload.GrammarOptions
		count, maxForms       int
		out                   string
		force, printGrammar   bool
		forms                 bool
	)
	c := &cobra.Command{
		Use:   "grammar (--usage USAGE | --usage-from 'PROG --help')... [--count N] [--seed S] [--dir DIR] [--files N] [-o FILE]",
		Short: "a grammar-based workload fuzzer: commands drawn from usage strings (git reset [-q] [<commit>] [--] <name>)",
		Long: `Generates a workload of commands, one per line, from usage strings such as the synopses
programs print for --help (Barowsky et al., Improving Application Crash Consistency with Symbolic
Execution and Fuzzing, 2021, §5.2). The usages become a BNF grammar (--print-grammar) whose
random expansions are chains of commands; the placeholders are filled with files, names,
numbers and commits. Every line is a valid sh command line, so the workload drives a shell
(scry fs check --workload cmds.txt -- sh, with --shell) or a program reading one command per
line (scry check --workload ops.txt -- ./mapcli btree {pool}).

Usage language (docs/workloads.md):
  word, -q, --amend      literal         <name>, FILE, --key=KEYDEF   placeholder
  [ ... ]                optional        ( ... ), { ... }             required group
  a | b  (in a group)    alternatives    a|b (no spaces)              choice of the words beside it
  x..., [x]...           repeated        -u<mode>, --[no-]status      glued (no space produced)
  'text', "text"         literal with spaces or brackets
The first word is the program. Malformed usage is an error naming the column.

Placeholders, by name (--value NAME=V1,V2,LO..HI overrides any of them):
  <file>  (file, path, pathspec, source, ...)  a file under --dir, relative or absolute path
                                                (relative only, with --relative)
  <name>  (name, dest, output, target, ...)    a new random name, or an existing file (in place)
  <number> (n, count, size, key, ...)          0, 1-100, or any size up to 2^64-1
  <commit> (rev, tree-ish, branch, ...)        commits of the repository at --dir, HEAD~n, HEAD^
  <directory> (dir, ...)                        ., a subdirectory (relative or absolute), or a new name
  <option> (OPTION, options, ...)               an option of the program's --help option table
  anything else                                 a random word

--files N CREATES N new files in --dir (random names, random contents of varied sizes up to
--max-file-size, unusual bytes), with O_EXCL: existing files are never modified or removed.
The same seed and the same directory contents give the same files and commands.

--relative writes every path relative to --dir, never absolute and never climbing out of it
with ..: the workload then runs the same in a copy of --dir, as scry fs check --workload needs
(it re-runs the workload in crash directories and refuses one naming --dir by absolute path).
Values given with --value are written as given.`,
		Args: exactArgs(0, "no arguments: give usages with --usage or --usage-from"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Ctrl-C or SIGTERM stops between two created files or commands; what was written
			// stays (exit 130 / 143).
			ctx, stop := exec.SignalContext(cmd.Context())
			defer stop()
			var parsed []*workload.Usage
			for i, u := range usages {
				p, err := workload.ParseUsage(u)
				if err != nil {
					return fmt.Errorf("--usage %d: %w", i+1, err)
				}
				p.Source = fmt.Sprintf("--usage %d", i+1)
				parsed = append(parsed, p)
			}
			for _, h := range helps {
				ps, notes, err := workload.UsagesFromHelp(ctx, h)
				for _, n := range notes {
					fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s\n", n)
				}
				if err != nil {
					return err
				}
				parsed = append(parsed, ps...)
			}
			if len(parsed) == 0 {
				return errors.New("no usage: give at least one --usage 'PROG [-q] <file>' or --usage-from 'PROG --help'")
			}
			if count < 0 { // no upper bound: the fuzzer streams, and stops cleanly on Ctrl-C
				return fmt.Errorf("--count %d: negative", count)
			}
			if forms {
				w, closeOut, err := createOutput(cmd, out, force)
				if err != nil {
					return err
				}
				return errors.Join(workload.WriteForms(w, parsed, maxForms), closeOut())
			}
			vals, err := workload.ParseValues(values)
			if err != nil {
				return err
			}
			opts.Usages, opts.Values = parsed, vals
			if out != "" {
				// Refuse a bad -o before creating any file.
				if err := safefile.Check(out, safefile.Policy{What: "-o", Force: force}); err != nil {
					return err
				}
			}
			f, err := workload.PrepareGrammar(ctx, opts)
			if err != nil {
				return err
			}
			if n := len(f.Env.Created); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: created %d files in %s\n", n, f.Env.Dir)
			}
			for _, n := range f.Env.Notes {
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: note: %s\n", n)
			}
			w, closeOut, err := createOutput(cmd, out, force)
			if err != nil {
				return err
			}
			if printGrammar {
				return errors.Join(f.Grammar.WriteBNF(w), closeOut())
			}
			return errors.Join(f.Generate(ctx, w, count), closeOut())
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&usages, "usage", nil, "a usage `STRING` such as 'git reset [-q] [<commit>] [--] <name>' (repeatable)")
	fl.StringArrayVar(&helps, "usage-from", nil, "run `COMMAND` (e.g. 'git reset -h', not through a shell) and take the usages and options it prints (repeatable)")
	fl.IntVar(&count, "count", 100, "number of commands (lines) to write: expansions of <program> (chains of commands) until there are N")
	fl.Uint64Var(&opts.Seed, "seed", 1, "random seed (same seed and directory contents, same workload)")
	fl.IntVar(&opts.MaxDepth, "max-depth", workload.DefaultMaxDepth, "derivation depth after which expansion takes the cheapest alternatives")
	fl.StringVar(&opts.Dir, "dir", ".", "`DIR` the commands will run in: files are found and created there, <commit> reads its repository")
	fl.IntVar(&opts.Files, "files", 0, "create `N` new files in --dir with random names and contents (O_EXCL: existing files are never touched)")
	fl.Int64Var(&opts.MaxFileSize, "max-file-size", workload.DefaultMaxFileSize, "largest size of a created file, in `BYTES`")
	fl.StringArrayVar(&values, "value", nil, "values of a placeholder: `NAME=V1,V2,LO..HI` (repeatable; LO..HI is a random integer)")
	fl.BoolVar(&opts.Relative, "relative", false, "name every file and directory relative to --dir, never by absolute path (for scry fs check --workload)")
	fl.BoolVar(&opts.Shell, "shell", false, "the workload is run by sh: names may hold shell characters (quoted) and each command reads /dev/null, so that it cannot consume the later lines")
	fl.BoolVar(&printGrammar, "print-grammar", false, "print the BNF grammar (after creating --files) instead of commands")
	fl.BoolVar(&forms, "forms", false, "list every form each usage allows (optional parts, alternatives, repetitions once or twice) instead of commands")
	fl.IntVar(&maxForms, "max-forms", 1000, "with --forms, at most `N` forms per usage (0: all)")
	fl.StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	fl.BoolVar(&force, "force", false, "let -o replace an existing file")
	c.MarkFlagsMutuallyExclusive("forms", "print-grammar")
	return c
}
