package fuzz

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// CorpusMarker is the file that marks a directory as a corpus of `scry workload fuzz`: a
// directory without it that holds anything is never written to.
const CorpusMarker = ".scry-workload-corpus"

const markerText = "scry workload fuzz corpus: one workload per .txt file; scry may add, rewrite and remove its .txt files\n"

// DefaultMaxOps bounds a generated workload's operations (lines).
const DefaultMaxOps = 2000

// Options configure Fuzz.
type Options struct {
	// Runner runs the program and measures a workload's coverage.
	Runner *Runner
	// Ops makes new operations (KVOps, GrammarOps).
	Ops Ops
	// Corpus is the corpus directory: created when missing; an existing one must be empty or
	// a corpus (CorpusMarker), whose workloads the search starts from.
	Corpus string
	// Seeds are workloads to start from besides the corpus (a user's files; read, never
	// written).
	Seeds [][]string
	// InitOps is the length of the random workload the search starts from when there is no
	// seed and the corpus is empty (0: 100).
	InitOps int
	// MaxOps bounds a workload's operations (0: DefaultMaxOps).
	MaxOps int
	// Budget is the search's time budget (0: until ctx is cancelled).
	Budget time.Duration
	// Runs bounds the number of runs (0: no bound): for tests, which must not depend on time.
	Runs int
	// Seed seeds the mutator.
	Seed uint64
	// TrimRuns bounds the runs spent, after the search, on deleting operations of the best
	// workload that reach no PM store site it would not reach without them (0: no trimming).
	// They are not counted in Budget.
	TrimRuns int
	// Progress, if non-nil, receives a line of coverage figures at every sample.
	Progress io.Writer
	// Sample is the interval of the coverage samples (0: 10 s).
	Sample time.Duration
	// ReadBack, if non-nil, gives the reads appended to the best workload at the end (KVReadBack,
	// TemplateReadBack): a crash that loses data shows only if the data is read back.
	ReadBack ReadBack
}

// Sample is the coverage of the corpus at one moment of the search.
type Sample struct {
	Elapsed    time.Duration
	Runs       int
	Corpus     int // workloads in the corpus
	StoreSites int // PM store sites reached by some workload
	Features   int
}

// Entry is one workload of the corpus.
type Entry struct {
	Lines []string
	Name  string // file name in the corpus directory
	Cov   *Coverage
}

// Result is what a search found.
type Result struct {
	// Best is the workload that covers most PM store sites (ties: fewer operations), or the
	// concatenation of the minimised corpus when that covers more and is short enough.
	Best    []string
	BestCov *Coverage
	// Corpus is the minimised corpus: the fewest workloads (greedy set cover) that together
	// cover every feature the search reached.
	Corpus []*Entry
	// Samples is the coverage over time.
	Samples []Sample
	// StoreSites is the union of the store sites the corpus reached; Sites the program's
	// static site table.
	StoreSites map[uint32]struct{}
	Sites      []trace.Site
	Runs       int
	// ReadBack is the number of reads Options.ReadBack appended to Best (its last lines).
	ReadBack int
	// Slow counts the runs stopped at the run time limit (never kept in the corpus).
	Slow int
	// Stopped is the cause when ctx was cancelled (a signal), nil when the budget ran out.
	Stopped error
}

// Fuzz searches for workloads that cover the most PM coverage features: it keeps a workload
// when it reaches a feature no kept workload reached (PMFuzz §4), mutates kept workloads
// (Mutator), and stops at opts.Budget, opts.Runs or when ctx is cancelled (Result.Stopped says
// so: the corpus is kept). Each kept workload is written to opts.Corpus at once; at the end the
// corpus is minimised on disk (only .txt files of a directory that carries CorpusMarker are
// removed). Errors: the corpus directory is not a corpus, the program wrote no trace on the
// first workload (not built with `scry cc`), a file cannot be written.
func Fuzz(ctx context.Context, opts Options) (*Result, error) {
	if opts.MaxOps <= 0 {
		opts.MaxOps = DefaultMaxOps
	}
	if opts.InitOps <= 0 {
		opts.InitOps = 100
	}
	if opts.Sample <= 0 {
		opts.Sample = 10 * time.Second
	}
	stored, err := OpenCorpus(opts.Corpus)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x706d_6675_7a7a_0001))
	mut := &Mutator{R: r, Ops: opts.Ops, MaxOps: opts.MaxOps}
	f := &fuzzer{opts: opts, seen: map[Feature]struct{}{}, freq: map[Feature]uint32{}, sites: map[uint32]struct{}{}, start: time.Now()}
	parent := ctx // the signals' context, without the budget
	if opts.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Budget, errBudget)
		defer cancel()
	}

	inputs := append(slices.Clone(opts.Seeds), stored...)
	if len(inputs) == 0 {
		var w []string
		for len(w) < opts.InitOps {
			w = append(w, opts.Ops(r, Values(w))...)
		}
		inputs = append(inputs, w[:min(len(w), opts.MaxOps)])
	}
	for _, w := range inputs {
		if len(w) > opts.MaxOps {
			w = w[:opts.MaxOps]
		}
		if err := f.try(ctx, w, true); err != nil {
			if f.stopped(ctx) {
				break
			}
			return nil, err
		}
	}
	if len(f.corpus) == 0 && !f.stopped(ctx) {
		return nil, fmt.Errorf("every starting workload ran longer than the run time limit (%v, --timeout): give a shorter --seed-workload or --init-ops, or raise --timeout", opts.Runner.Timeout)
	}
	f.sample()
	next := f.start.Add(opts.Sample)
	for !f.stopped(ctx) && (opts.Runs == 0 || f.runs < opts.Runs) && len(f.corpus) > 0 {
		parent := f.pick(r)
		var other []string
		if len(f.corpus) > 1 {
			other = f.corpus[r.IntN(len(f.corpus))].Lines
		}
		w, _ := mut.Mutate(parent.Lines, other)
		if len(w) == 0 {
			continue
		}
		if err := f.try(ctx, w, false); err != nil && !f.stopped(ctx) {
			// A mutant the program wrote no readable trace for is skipped; a program that
			// never does any more is an error.
			if f.failed++; f.failed > maxFailed && f.failed > f.runs {
				return nil, fmt.Errorf("%d runs of mutated workloads failed, more than succeeded; the last: %w", f.failed, err)
			}
		}
		if time.Now().After(next) {
			f.sample()
			next = time.Now().Add(opts.Sample)
		}
	}
	f.sample()
	res := &Result{Samples: f.samples, Runs: f.runs, Slow: f.slow, StoreSites: f.sites, Sites: f.static}
	if c := context.Cause(ctx); c != nil && !errors.Is(c, errBudget) {
		res.Stopped = c
	}
	res.Corpus = f.minimise()
	if err := f.prune(res.Corpus); err != nil {
		return res, err
	}
	res.Best, res.BestCov = f.best(res.Corpus)
	if res.Stopped == nil && opts.TrimRuns > 0 {
		res.Best, res.BestCov = f.trim(parent, res.Best, res.BestCov, opts.TrimRuns)
	}
	if res.Stopped == nil {
		// One more run: the minimised corpus as one workload, when it fits MaxOps.
		var all []string
		for _, e := range res.Corpus {
			all = append(all, e.Lines...)
		}
		if len(all) <= opts.MaxOps && len(res.Corpus) > 1 {
			if cov, err := opts.Runner.Run(context.WithoutCancel(ctx), []byte(Join(all))); err == nil &&
				len(cov.StoreSites) > len(res.BestCov.StoreSites) {
				res.Best, res.BestCov = all, cov
			}
		}
	}
	if opts.ReadBack != nil && len(res.Best) > 0 {
		reads := opts.ReadBack(res.Best)
		res.Best = append(slices.Clone(res.Best), reads...)
		res.ReadBack = len(reads)
	}
	return res, nil
}

var errBudget = errors.New("time budget spent")

// maxFailed is how many runs of mutants may fail (no trace, an unreadable one) before the search
// gives up, when they are more than the runs that succeeded.
const maxFailed = 100

type fuzzer struct {
	opts   Options
	corpus []*Entry
	seen   map[Feature]struct{}
	// freq counts, per feature, the runs that reached it (AFLFast's path frequencies).
	freq    map[Feature]uint32
	sites   map[uint32]struct{}
	static  []trace.Site
	runs    int
	slow    int // runs stopped at the run time limit
	failed  int // runs that gave no readable trace
	start   time.Time
	samples []Sample
}

func (f *fuzzer) stopped(ctx context.Context) bool { return ctx.Err() != nil }

// try runs w and keeps it when it reaches a new feature (always when keep).
func (f *fuzzer) try(ctx context.Context, w []string, keep bool) error {
	cov, err := f.opts.Runner.Run(ctx, []byte(Join(w)))
	if err != nil {
		return err
	}
	f.runs++
	if cov.Result != nil && cov.Result.TimedOut > 0 {
		f.slow++ // a hang, or a workload too slow to search with: never kept
		return nil
	}
	if len(cov.Sites) > len(f.static) {
		f.static = cov.Sites
	}
	fresh := 0
	for ft := range cov.Features {
		f.freq[ft]++
		if _, ok := f.seen[ft]; !ok {
			fresh++
			f.seen[ft] = struct{}{}
		}
	}
	for s := range cov.StoreSites {
		f.sites[s] = struct{}{}
	}
	if fresh == 0 && !keep {
		return nil
	}
	// The static site table is the program's, kept once (f.static), not per workload.
	kept := *cov
	kept.Sites = nil
	e := &Entry{Lines: w, Cov: &kept, Name: entryName(w)}
	f.corpus = append(f.corpus, e)
	return writeEntry(f.opts.Corpus, e)
}

// pick chooses the workload to mutate: half of the time one of the latest eight entries (the
// search's newest progress), a quarter of the time the entry of the rarest feature among four
// drawn at random (a tournament after AFLFast's power schedule, Böhme et al., CCS'16 §3: inputs
// that reach rarely reached coverage get the energy, since mutating them is likelier to reach
// coverage next to it), else any entry.
func (f *fuzzer) pick(r *rand.Rand) *Entry {
	n := len(f.corpus)
	switch r.IntN(4) {
	case 0, 1:
		return f.corpus[n-1-r.IntN(min(n, 8))]
	case 2:
		var best *Entry
		var bestFreq uint32
		for range 4 {
			e := f.corpus[r.IntN(n)]
			if q := f.rarest(e); best == nil || q < bestFreq {
				best, bestFreq = e, q
			}
		}
		return best
	}
	return f.corpus[r.IntN(n)]
}

// rarest is the number of runs that reached e's rarest feature.
func (f *fuzzer) rarest(e *Entry) uint32 {
	q := ^uint32(0)
	for ft := range e.Cov.Features {
		q = min(q, f.freq[ft])
	}
	return q
}

func (f *fuzzer) sample() {
	s := Sample{Elapsed: time.Since(f.start).Round(time.Second), Runs: f.runs, Corpus: len(f.corpus),
		StoreSites: len(f.sites), Features: len(f.seen)}
	f.samples = append(f.samples, s)
	if f.opts.Progress != nil {
		fmt.Fprintf(f.opts.Progress, "scry: fuzz: %6s  runs %6d  corpus %4d  PM store sites %5d  features %6d\n",
			s.Elapsed, s.Runs, s.Corpus, s.StoreSites, s.Features)
	}
}

// minimise returns the fewest corpus entries (greedy set cover: the entry adding most uncovered
// features first, fewer operations on ties) that cover every feature of the corpus. The greedy
// choice is evaluated lazily (Minoux's accelerated greedy): an entry's gain only shrinks as
// features are covered, so a stale gain is an upper bound, and an entry whose recomputed gain
// still tops every other bound is the greedy choice.
func (f *fuzzer) minimise() []*Entry {
	covered := map[Feature]struct{}{}
	gain := func(e *Entry) int {
		n := 0
		for ft := range e.Cov.Features {
			if _, ok := covered[ft]; !ok {
				n++
			}
		}
		return n
	}
	h := &gainHeap{}
	for _, e := range f.corpus {
		h.items = append(h.items, gainItem{e, len(e.Cov.Features)})
	}
	heap.Init(h)
	var out []*Entry
	for h.Len() > 0 {
		top := heap.Pop(h).(gainItem)
		top.gain = gain(top.e)
		if top.gain == 0 {
			continue
		}
		if h.Len() > 0 && h.less(h.items[0], top) {
			heap.Push(h, top)
			continue
		}
		out = append(out, top.e)
		for ft := range top.e.Cov.Features {
			covered[ft] = struct{}{}
		}
	}
	return out
}

type gainItem struct {
	e    *Entry
	gain int // the features it adds, or an upper bound of them
}

// gainHeap orders entries by gain, then fewer operations, then corpus order (stable results).
type gainHeap struct{ items []gainItem }

func (h *gainHeap) less(a, b gainItem) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	return len(a.e.Lines) < len(b.e.Lines)
}
func (h *gainHeap) Len() int           { return len(h.items) }
func (h *gainHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *gainHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *gainHeap) Push(x any)         { h.items = append(h.items, x.(gainItem)) }
func (h *gainHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// prune removes from the corpus directory the .txt files of workloads the minimised corpus
// leaves out.
func (f *fuzzer) prune(keep []*Entry) error {
	names := map[string]bool{}
	for _, e := range keep {
		names[e.Name] = true
	}
	for _, e := range f.corpus {
		if !names[e.Name] {
			if err := os.Remove(filepath.Join(f.opts.Corpus, e.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// trim deletes runs of operations of w (halves, quarters, ... down to single operations, as
// AFL's trimmer does) while the PM store sites of the rest include those of w, in at most max
// runs. ctx is the search's context without its budget: a signal stops the trimming (w as
// trimmed so far is returned).
func (f *fuzzer) trim(ctx context.Context, w []string, cov *Coverage, max int) ([]string, *Coverage) {
	runs := 0
	for chunk := len(w) / 2; chunk >= 1 && runs < max; chunk /= 2 {
		for i := 0; i < len(w) && runs < max && ctx.Err() == nil; {
			cand := slices.Delete(slices.Clone(w), i, min(len(w), i+chunk))
			if len(cand) == 0 {
				i += chunk
				continue
			}
			c, err := f.opts.Runner.Run(ctx, []byte(Join(cand)))
			runs++
			if err != nil || c.Result.TimedOut > 0 || !covers(c.StoreSites, cov.StoreSites) {
				i += chunk
				continue
			}
			w, cov = cand, c
		}
	}
	return w, cov
}

// covers reports whether a holds every element of b.
func covers(a, b map[uint32]struct{}) bool {
	for s := range b {
		if _, ok := a[s]; !ok {
			return false
		}
	}
	return true
}

// best is the entry of most PM store sites (ties: fewest operations).
func (f *fuzzer) best(es []*Entry) ([]string, *Coverage) {
	var b *Entry
	for _, e := range es {
		if b == nil || len(e.Cov.StoreSites) > len(b.Cov.StoreSites) ||
			len(e.Cov.StoreSites) == len(b.Cov.StoreSites) && len(e.Lines) < len(b.Lines) {
			b = e
		}
	}
	if b == nil {
		return nil, &Coverage{}
	}
	return b.Lines, b.Cov
}

// Join writes a workload's lines as its file: one per line, each ended by a newline.
func Join(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return strings.Join(w, "\n") + "\n"
}

func entryName(w []string) string {
	h := sha256.Sum256([]byte(Join(w)))
	return hex.EncodeToString(h[:8]) + ".txt"
}

// OpenCorpus prepares dir as a corpus and returns the workloads it holds: a missing directory
// is created with CorpusMarker; an existing one must carry CorpusMarker or be empty (then it
// gets the marker). Errors: dir exists and is not a corpus (it holds other files: scry never
// writes into a directory of the user's), dir is not a directory, a file cannot be read.
func OpenCorpus(dir string) ([][]string, error) {
	if dir == "" {
		return nil, errors.New("no corpus directory: give --corpus DIR")
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", dir, err)
		}
		return nil, os.WriteFile(filepath.Join(dir, CorpusMarker), []byte(markerText), 0o644)
	case err != nil:
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("corpus %s: not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, CorpusMarker)); err != nil {
		if len(ents) > 0 {
			return nil, fmt.Errorf("corpus %s: the directory exists and is not a corpus of scry workload fuzz (no %s): scry writes no file into it; name a new or empty directory", dir, CorpusMarker)
		}
		return nil, os.WriteFile(filepath.Join(dir, CorpusMarker), []byte(markerText), 0o644)
	}
	var out [][]string
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".txt") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", dir, err)
		}
		out = append(out, SplitLines(string(b)))
	}
	return out, nil
}

// SplitLines splits a workload file into its lines (without newlines).
func SplitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func writeEntry(dir string, e *Entry) error {
	p := filepath.Join(dir, e.Name)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(Join(e.Lines)), 0o644); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return os.Rename(tmp, p)
}

// Unreached returns the PM store sites of the program's site table (stores, non-temporal and
// range stores) that no workload reached, in the source files where some workload reached a PM
// store (a program links code its workloads never call, such as mapcli's other maps), as
// locations by report.At (one per line), in file and line order. A line where some site was
// reached is left out: a function inlined in several places has a site per copy of its line,
// and the line was reached when one of them was.
func Unreached(sites []trace.Site, reached map[uint32]struct{}) []report.Location {
	t := siteTable{}
	for _, s := range sites {
		t[s.ID] = s
	}
	type fileLine struct {
		file string
		line int
	}
	files := map[string]bool{}
	reachedLines := map[fileLine]bool{}
	for s := range reached {
		loc := report.At(t, s)
		files[loc.File] = true
		reachedLines[fileLine{loc.File, loc.Line}] = true
	}
	var out []report.Location
	for _, s := range sites {
		if s.Kind != trace.SiteStore && s.Kind != trace.SiteNTStore && s.Kind != trace.SiteRange {
			continue
		}
		if _, ok := reached[s.ID]; ok {
			continue
		}
		loc := report.At(t, s.ID)
		if loc.File == "" || !files[loc.File] || reachedLines[fileLine{loc.File, loc.Line}] {
			continue
		}
		out = append(out, loc)
	}
	slices.SortFunc(out, func(a, b report.Location) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return int(a.Line) - int(b.Line)
	})
	return slices.CompactFunc(out, func(a, b report.Location) bool { return a.File == b.File && a.Line == b.Line })
}

// siteTable resolves the sites of a trace's SITES records after the trace was closed (report.At
// needs no call stacks for a site's own location).
type siteTable map[uint32]trace.Site

func (t siteTable) Site(id uint32) (trace.Site, bool) {
	s, ok := t[id]
	return s, ok
}

func (siteTable) StackOf(uint32) []uint32 { return nil }

func (siteTable) ProjectRoots() []string { return nil }
