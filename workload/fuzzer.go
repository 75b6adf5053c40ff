package workload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// The grammar-based workload fuzzer of Barowsky et al., Improving Application Crash Consistency
// with Symbolic Execution and Fuzzing (2021) §5.2: usage strings become a BNF grammar
// (BuildGrammar), whose random expansions are chained commands with their placeholders filled
// from the directory the commands will run in (Env). The report's other source of workloads,
// KLEE's symbolic execution (§3.4, §8.1), is not part of scry (KLEE is not packaged by Debian);
// the fuzzer's enumerable forms (Grammar.Forms) make sure every combination of options a usage
// allows can be produced instead.

// GrammarOptions configures PrepareGrammar.
type GrammarOptions struct {
	// Usages are the parsed usage strings (ParseUsage, UsagesFromHelp); at least one.
	Usages []*Usage
	// Seed seeds the generator: the same options and the same directory contents give the
	// same files and byte-identical commands.
	Seed uint64
	// MaxDepth bounds the derivation depth before expansion takes the cheapest alternatives
	// (0: DefaultMaxDepth).
	MaxDepth int
	// Dir is the directory the commands will run in ("" the current one): files are created
	// and found there, paths are relative to it or absolute, <commit> reads its repository.
	Dir string
	// Files is how many new files to create in Dir (CreateFiles); 0 creates none.
	Files int
	// MaxFileSize bounds a created file's size in bytes (0: DefaultMaxFileSize).
	MaxFileSize int64
	// Values are the user's values for placeholders (ParseValues).
	Values UserValues
	// Shell: the workload is run by sh (names may hold shell characters; each command reads
	// /dev/null).
	Shell bool
	// Relative: every path the fuzzer writes is relative to Dir (Env.Relative), never absolute
	// and never climbing out of it, so that the workload runs the same in a copy of Dir (`scry
	// fs check --workload` re-executes it in crash directories).
	Relative bool
}

// GrammarFuzzer expands a grammar built from usages (PrepareGrammar).
type GrammarFuzzer struct {
	Grammar *Grammar
	// Env holds the values the placeholders are filled with, the files created and the notes
	// for the user.
	Env *Env
	exp *Expander
}

// grammarStream is the second word of the PCG state, so that grammar workloads and kv workloads
// of the same seed differ.
const grammarStream = 0x6772_616d_6d61_7201

// PrepareGrammar builds the grammar of opts.Usages and what its placeholders need: it scans
// opts.Dir when a placeholder takes files, names or directories (or files are to be created),
// creates opts.Files files there, and reads the commits of its repository when a placeholder
// takes commits. Errors: no usage, a negative count, the directory cannot be read, a file
// cannot be created (see CreateFiles).
func PrepareGrammar(ctx context.Context, opts GrammarOptions) (*GrammarFuzzer, error) {
	if len(opts.Usages) == 0 {
		return nil, errors.New("no usage: give at least one --usage 'PROG [-q] <file>' or --usage-from 'PROG --help'")
	}
	if opts.Files < 0 {
		return nil, fmt.Errorf("--files %d: negative", opts.Files)
	}
	if opts.MaxFileSize < 0 {
		return nil, fmt.Errorf("--max-file-size %d: negative", opts.MaxFileSize)
	}
	if opts.MaxDepth < 0 {
		return nil, fmt.Errorf("--max-depth %d: negative", opts.MaxDepth)
	}
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^grammarStream))
	env := &Env{Values: opts.Values, Shell: opts.Shell, Relative: opts.Relative}
	// Which classes the usages need, from the grammar built without values.
	probe, err := BuildGrammar(opts.Usages, &Env{Values: opts.Values, Shell: opts.Shell})
	if err != nil {
		return nil, err
	}
	if opts.Files > 0 || probe.Has(ClassFile) || probe.Has(ClassName) || probe.Has(ClassDirectory) {
		dir := opts.Dir
		if dir == "" {
			dir = "."
		}
		if err := env.ScanDir(dir); err != nil {
			return nil, err
		}
		if err := env.CreateFiles(ctx, opts.Files, opts.MaxFileSize, r); err != nil {
			return nil, err
		}
	}
	if probe.Has(ClassCommit) && opts.Values[ClassCommit] == nil {
		if env.Dir == "" {
			dir := opts.Dir
			if dir == "" {
				dir = "."
			}
			if err := env.ScanDir(dir); err != nil {
				return nil, err
			}
		}
		env.ReadCommits(ctx, r)
	}
	g, err := BuildGrammar(opts.Usages, env)
	if err != nil {
		return nil, err
	}
	exp, err := NewExpander(g, r, opts.MaxDepth)
	if err != nil {
		return nil, err
	}
	return &GrammarFuzzer{Grammar: g, Env: env, exp: exp}, nil
}

// Next expands the start symbol once: a chain of one or more commands, each with the line the
// workload holds for it (the command and what ends it: a newline, or " </dev/null" and a
// newline for a shell workload).
func (f *GrammarFuzzer) Next() (cmds []Command, lines []string, err error) {
	d := f.exp.Expand()
	cmds = d.Commands()
	lines = strings.SplitAfter(d.text(), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) != len(cmds) {
		return nil, nil, fmt.Errorf("workload: internal error: %d commands expanded into %d lines", len(cmds), len(lines))
	}
	return cmds, lines, nil
}

// Generate writes count commands to w, one per line: expansions of the start symbol (each a
// chain of commands, <program>) one after the other, the last one cut at count. Errors: a
// negative count, the first error writing to w, or ctx cancelled (its cause, after writing the
// commands generated so far).
func (f *GrammarFuzzer) Generate(ctx context.Context, w io.Writer, count int) error {
	if count < 0 {
		return fmt.Errorf("--count %d: negative", count)
	}
	bw := bufio.NewWriter(w)
	for n := 0; n < count; {
		if err := context.Cause(ctx); err != nil {
			if ferr := bw.Flush(); ferr != nil {
				return fmt.Errorf("workload: writing: %w", ferr)
			}
			return fmt.Errorf("workload: %d of %d commands written: %w", n, count, err)
		}
		_, lines, err := f.Next()
		if err != nil {
			return err
		}
		for _, l := range lines {
			if n == count {
				break
			}
			if _, err := bw.WriteString(l); err != nil {
				return fmt.Errorf("workload: writing: %w", err)
			}
			n++
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("workload: writing: %w", err)
	}
	return nil
}

// WriteForms writes every form of each usage (Grammar.Forms: each optional part present or
// not, each alternative, each repetition once or twice, placeholders unexpanded), at most max
// per usage (max <= 0: all), under a comment line naming the usage and, when max cut the list,
// a comment saying so. Errors: writing to w.
func WriteForms(w io.Writer, usages []*Usage, max int) error {
	g, err := BuildGrammar(usages, &Env{})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for i, u := range usages {
		var forms []string
		cut := false
		err := g.Forms(fmt.Sprintf("cmd%d", i+1), func(form string) bool {
			if max > 0 && len(forms) == max {
				cut = true
				return false
			}
			forms = append(forms, form)
			return true
		})
		if err != nil {
			return err
		}
		more := ""
		if cut {
			more = fmt.Sprintf(" (the first %d; there are more: raise --max-forms)", max)
		}
		fmt.Fprintf(bw, "# %s: %d forms%s\n", u.Text, len(forms), more)
		for _, f := range forms {
			fmt.Fprintln(bw, f)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("workload: writing: %w", err)
	}
	return nil
}
