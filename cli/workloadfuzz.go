package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	pmfuzz "github.com/scry-pm/scry/pm/fuzz"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// fuzzTarget is what `workload fuzz` and `workload cover` share: the program, --pm, --timeout.
type fuzzTarget struct {
	pm, env []string
	timeout time.Duration
}

func (t *fuzzTarget) add(c *cobra.Command, timeout time.Duration, why string) {
	c.Flags().StringArrayVar(&t.pm, "pm", nil, "treat MAP_SHARED mappings of files matching `GLOB` as PM (repeatable; default: the pool)")
	c.Flags().StringArrayVar(&t.env, "env", nil, "add `NAME=VALUE` to the program's environment (repeatable)")
	c.Flags().DurationVar(&t.timeout, "timeout", timeout, "time limit of one run (`DURATION`)"+why)
}

// runner makes the runner of args in a scratch directory of scry's; done removes it.
func (t *fuzzTarget) runner(args []string) (r *pmfuzz.Runner, done func(), err error) {
	if err := exec.CheckEnv(t.env); err != nil {
		return nil, nil, err
	}
	scratch, err := os.MkdirTemp("", "scry-fuzz-*")
	if err != nil {
		return nil, nil, err
	}
	r, err = pmfuzz.NewRunner(args, t.pm, t.timeout, scratch)
	if err != nil {
		os.RemoveAll(scratch)
		return nil, nil, err
	}
	r.Env = t.env
	return r, func() { os.RemoveAll(scratch) }, nil
}

func newWorkloadFuzzCommand() *cobra.Command {
	var (
		tgt             fuzzTarget
		corpus, out     string
		html            string
		force           bool
		budget          time.Duration
		maxOps, initOps int
		trimRuns        int
		seed, keys      uint64
		seedFiles       []string
		usages, values  []string
		kvForm          bool
		noReadBack      bool
	)
	c := &cobra.Command{
		Use:   "fuzz --corpus DIR [--time-budget D] [-o FILE] [flags] -- PROG [ARGS...] {pool}",
		Short: "a coverage-guided search for workloads that reach the most PM code (feedback: PM store sites, persistence, operation paths)",
		Long: `Searches for workloads of PROG (built with scry cc) that cover the most PM behaviour: it runs
PROG with the trace on, replays the trace through the px86 persistency model, and keeps a workload
when it reaches something no kept workload reached (PMFuzz, ASPLOS'21, §4): a PM store site; a
site whose stores were, or were not, persisted by the end of an operation; a site's number of
stores in one operation (AFL's hit-count buckets); a flush that wrote back a dirty line or not, a
fence that persisted something or not, a durable library call (the crash-point kinds); an
operation path (the set of store sites of one operation); a store-site edge (a store's site and
the site of the operation's store before it). Kept workloads are mutated (half of the time a
recent one, a quarter of the time the one of the rarest coverage among four drawn: AFLFast's
power schedule): operations
inserted, deleted, repeated, spliced from another workload; numbers (keys) changed to values
the workload holds, their neighbours, values that collide modulo 2^k, runs of colliding or
consecutive keys (a filled bucket or node), some from an aligned start, and such a run followed
or interleaved by another command on a prefix, every other key, a middle run or all of its keys
(fill-then-delete: underflow, rebalancing, shrinking).

New operations are key-value commands (mapcli's i K, r K, c K) by default; commands drawn from
--usage strings (scry workload grammar's usage language, --value to fill placeholders); or,
with --seed-workload FILE and no --usage (nor --kv), lines of the seed workloads taken as
templates whose numbers are replaced (a driver's own language: WITCHER's i;KEY;VALUE;0;).

--corpus DIR keeps every kept workload, one .txt file each; it must be new, empty or a corpus of
an earlier search (which then continues from it). At the end (the time budget, or Ctrl-C or
SIGTERM: the corpus is kept, exit 130 or 143) the corpus is minimised on disk (the fewest
workloads that cover every feature reached), -o FILE gets the workload that covers most PM store
sites (or the minimised corpus run as one workload when that covers more and has at most
--max-ops operations), for scry check --workload FILE; standard output gets the coverage over
time and the PM store sites no workload reached (file:line), and --html FILE the same report as
one self-contained HTML page, the coverage over time plotted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no program: give it after --, with {pool} where the pool goes (-- ./mapcli btree {pool})")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := workload.CheckCount("--max-ops", maxOps); err != nil {
				return err
			}
			if maxOps == 0 {
				return errors.New("--max-ops 0: a workload needs at least one operation")
			}
			if budget < 0 {
				return fmt.Errorf("--time-budget %v: negative", budget)
			}
			var seeds [][]string
			for _, f := range seedFiles {
				b, err := os.ReadFile(f)
				if err != nil {
					return fmt.Errorf("--seed-workload: %w", err)
				}
				seeds = append(seeds, pmfuzz.SplitLines(string(b)))
			}
			ctx, stop := exec.SignalContext(cmd.Context())
			defer stop()
			ops, back := pmfuzz.KVOps(keys), pmfuzz.ReadBack(pmfuzz.KVReadBack)
			if len(seeds) > 0 && len(usages) == 0 && !kvForm {
				var lines []string
				for _, sw := range seeds {
					lines = append(lines, sw...)
				}
				var err error
				if ops, err = pmfuzz.TemplateOps(lines); err != nil {
					return err
				}
				back = pmfuzz.TemplateReadBack(lines)
			}
			if len(usages) > 0 {
				var parsed []*workload.Usage
				for i, u := range usages {
					p, err := workload.ParseUsage(u)
					if err != nil {
						return fmt.Errorf("--usage %d: %w", i+1, err)
					}
					parsed = append(parsed, p)
				}
				vals, err := workload.ParseValues(values)
				if err != nil {
					return err
				}
				g, err := workload.PrepareGrammar(ctx, workload.GrammarOptions{Usages: parsed, Seed: seed, Values: vals})
				if err != nil {
					return err
				}
				ops, back = pmfuzz.GrammarOps(g), nil // a grammar names no read command
			}
			if noReadBack {
				back = nil
			}
			// -o and --html are checked before the search, not after minutes of it.
			if html != "" {
				if html == out {
					return fmt.Errorf("--html %s: -o names the same file (the workload)", html)
				}
				if err := safefile.Check(html, htmlPolicy(force)); err != nil {
					return err
				}
			}
			var w io.Writer
			closeOut := func() error { return nil }
			if out != "" {
				var err error
				if w, closeOut, err = createOutput(cmd, out, force); err != nil {
					return err
				}
			}
			r, done, err := tgt.runner(args)
			if err != nil {
				closeOut()
				return err
			}
			defer done()
			res, err := pmfuzz.Fuzz(ctx, pmfuzz.Options{
				Runner: r, Ops: ops, Corpus: corpus, Seeds: seeds, InitOps: initOps, MaxOps: maxOps,
				Budget: budget, Seed: seed, TrimRuns: trimRuns, Progress: cmd.ErrOrStderr(), ReadBack: back,
			})
			if err != nil {
				closeOut()
				return err
			}
			if w != nil {
				if _, err := io.WriteString(w, pmfuzz.Join(res.Best)); err != nil {
					closeOut()
					return err
				}
			}
			if err := closeOut(); err != nil {
				return err
			}
			pmfuzz.WriteReport(cmd.OutOrStdout(), res, out)
			if html != "" {
				if err := writeHTMLPage(html, force, func(w io.Writer) error {
					return pmfuzz.WriteHTML(w, res, commandLine(args), out)
				}); err != nil {
					return err
				}
			}
			return res.Stopped
		},
	}
	fl := c.Flags()
	fl.StringVar(&corpus, "corpus", "", "the corpus `DIR` (new, empty, or an earlier search's)")
	fl.StringVarP(&out, "output", "o", "", "write the workload that covers most to `FILE`")
	fl.StringVar(&html, "html", "", "also write the report as one self-contained HTML page to `FILE` (the coverage over time plotted)")
	fl.BoolVar(&force, "force", false, "let -o and --html replace an existing file")
	fl.DurationVar(&budget, "time-budget", 5*time.Minute, "stop the search after `DURATION` (0: at Ctrl-C)")
	fl.IntVar(&maxOps, "max-ops", pmfuzz.DefaultMaxOps, "at most `N` operations per workload")
	fl.IntVar(&initOps, "init-ops", 100, "operations of the random workload the search starts from without a corpus or --seed-workload")
	fl.IntVar(&trimRuns, "trim-runs", 300, "after the search, at most `N` runs deleting operations of the best workload that reach no new PM store site (0: no trimming)")
	fl.Uint64Var(&seed, "seed", 1, "random seed of the mutations")
	fl.BoolVar(&noReadBack, "no-read-back", false, "write the best workload as the search found it, without the reads of the keys it writes appended (key-value form: c K; template form: a copy of the seeds' read line)")
	fl.BoolVar(&kvForm, "kv", false, "new operations are key-value commands (mapcli's i K, r K, c K) even with --seed-workload")
	fl.Uint64Var(&keys, "keys", 0, "key-value form: new keys are drawn from 1..`N` (0: 1024)")
	fl.StringArrayVar(&seedFiles, "seed-workload", nil, "start from the workload in `FILE` (repeatable; read only)")
	fl.StringArrayVar(&usages, "usage", nil, "grammar form: a usage `USAGE` the operations are drawn from (repeatable; see scry workload grammar)")
	fl.StringArrayVar(&values, "value", nil, "grammar form: `NAME=V1,V2,LO..HI` values of a placeholder (repeatable)")
	tgt.add(c, 3*time.Second, ": a slower workload is not kept")
	_ = c.MarkFlagRequired("corpus")
	return c
}

// htmlPolicy is the rule for an existing file at --html: a page or report scry wrote is
// replaced, anything else only with force.
func htmlPolicy(force bool) safefile.Policy {
	return safefile.Policy{What: "--html", Ours: report.Recognize, Force: force}
}

// writeHTMLPage creates path under htmlPolicy and writes the page into it.
func writeHTMLPage(path string, force bool, write func(io.Writer) error) error {
	f, err := safefile.Create(path, htmlPolicy(force))
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	return nil
}

// commandLine writes a program's arguments as one shell command line, quoting the words that
// need it.
func commandLine(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a
		if a == "" || strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./{}=:,+-@%", r))
		}) >= 0 {
			words[i] = exec.ShellQuote(a)
		}
	}
	return strings.Join(words, " ")
}

func newWorkloadCoverCommand() *cobra.Command {
	var (
		tgt   fuzzTarget
		files []string
		html  string
		force bool
	)
	c := &cobra.Command{
		Use:   "cover --workload FILE... -- PROG [ARGS...] {pool}",
		Short: "the PM coverage of workloads: store sites reached, features, and the store sites never reached",
		Long: `Runs PROG (built with scry cc) on each workload with the trace on and prints the PM coverage
scry workload fuzz searches for: the PM store sites reached and the coverage features (see scry
workload fuzz), per workload and together, then the PM store sites no workload reached; --html
FILE writes the same as one self-contained HTML page.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no program: give it after --, with {pool} where the pool goes (-- ./mapcli btree {pool})")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) == 0 {
				return errors.New("no workload: give --workload FILE")
			}
			if html != "" {
				if slices.Contains(files, html) {
					return fmt.Errorf("--html %s: a --workload names the same file", html)
				}
				if err := safefile.Check(html, htmlPolicy(force)); err != nil {
					return err
				}
			}
			ctx, stop := exec.SignalContext(cmd.Context())
			defer stop()
			r, done, err := tgt.runner(args)
			if err != nil {
				return err
			}
			defer done()
			page, err := pmfuzz.Cover(ctx, cmd.OutOrStdout(), r, files, commandLine(args))
			if err != nil || html == "" {
				return err
			}
			return writeHTMLPage(html, force, func(w io.Writer) error { return report.WriteCoverageHTML(w, page) })
		},
	}
	c.Flags().StringArrayVar(&files, "workload", nil, "a workload `FILE` (repeatable)")
	c.Flags().StringVar(&html, "html", "", "also write the coverage as one self-contained HTML page to `FILE`")
	c.Flags().BoolVar(&force, "force", false, "let --html replace an existing file")
	tgt.add(c, exec.DefaultTimeout, "")
	return c
}
