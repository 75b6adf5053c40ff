// Package fuzz is `scry workload fuzz`: a coverage-guided search for workloads of a program
// built with `scry cc`, whose feedback is PM coverage read from the program's trace. It follows
// PMFuzz (Liu et al., ASPLOS'21) §4: an input is kept when it reaches PM paths no earlier input
// reached, and the feedback is what the persistency model makes of the program's PM operations,
// not branch coverage. Inputs are workloads (one operation per line) in the key-value form of
// package workload (mapcli's `i K`, `r K`, `c K`) or drawn from usage strings (workload's
// grammar fuzzer); they are mutated by inserting, deleting, repeating and splicing operations and
// by changing the numbers (keys) in them to values the workload already holds, their neighbours,
// or values that collide with them modulo a power of two (the bucket of a hashed structure).
//
// Coverage (Features) is, per run, the set of
//   - PM store sites reached (stores, non-temporal stores, range stores such as memcpy);
//   - store sites × whether the stores of the site in an operation were persisted (px86: no entry
//     of the site left unpersisted) when the operation ended;
//   - store sites × the number of its stores in one operation, in AFL's hit-count buckets (1, 2,
//     3, 4–7, 8–15, 16–31, 32–127, 128+), which gives the search a gradient towards fuller
//     structures (longer shifts, more slots written);
//   - crash-point kinds: flush sites × whether the flush wrote back a dirty line, fence sites ×
//     whether the fence persisted something, durable library calls (an outermost transaction's
//     commit, a library write made durable) by site;
//   - operation paths: the set of store sites of one operation, with the operation's first word;
//   - store-site edges: the pairs (previous store site, store site) of the stores of one
//     operation (the store-level analogue of AFL's branch edges, which reward a new way through
//     code already reached, a step towards its unreached stores; without the operation's word,
//     which the path has, so that they stay few: at most the square of the sites).
package fuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// Feature is one unit of PM coverage (see the package doc), a 64-bit hash of its parts.
type Feature uint64

// Feature tags: the first part of every feature's hash.
const (
	tagSite uint64 = iota + 1
	tagPersisted
	tagHits
	tagFlush
	tagFence
	tagDurable
	tagPath
	tagEdge
)

// Coverage is what one run of a workload covered.
type Coverage struct {
	// Features is the set of features (see the package doc).
	Features map[Feature]struct{}
	// StoreSites is the set of PM store sites reached (site ids of the trace's SITES table).
	StoreSites map[uint32]struct{}
	// Ops is the number of workload operations the trace has.
	Ops int
	// Sites is the trace's static site table (every instrumented site, reached or not),
	// shared by the coverages of one Runner: read only.
	Sites []trace.Site
	// Result tells how the program ended.
	Result *record.Result
}

// Runner records runs of a program on workloads and replays their traces into Coverage.
type Runner struct {
	// Args is the program and its arguments, with {pool} where the pool file goes.
	Args []string
	// PMGlobs are --pm patterns (record.Options.PMGlobs).
	PMGlobs []string
	// Env is added to the program's environment (NAME=VALUE).
	Env []string
	// Timeout bounds one run (0: exec.DefaultTimeout).
	Timeout time.Duration
	// Scratch is a directory of scry's for the pool and the trace of each run.
	Scratch string
	seed    maphash.Seed
	n       int
	sites   []trace.Site // the latest run's site table
}

// NewRunner checks args (a program and {pool} in an argument) and returns a runner working in
// scratch. Errors: no program, no {pool}, a program that cannot be found.
func NewRunner(args, pmGlobs []string, timeout time.Duration, scratch string) (*Runner, error) {
	t, err := exec.ParseTarget(args)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = exec.DefaultTimeout
	}
	return &Runner{Args: t.Args, PMGlobs: pmGlobs, Timeout: timeout, Scratch: scratch, seed: maphash.MakeSeed()}, nil
}

// Run records one run of the program on a fresh pool with w on standard input and returns its
// coverage. Errors: the program wrote no trace (not built with `scry cc`: record.ErrNoTrace),
// the trace cannot be read, ctx was cancelled (its cause). A program that exits non-zero or is
// killed is not an error: Coverage.Result says so, and its trace still counts.
func (r *Runner) Run(ctx context.Context, w []byte) (*Coverage, error) {
	r.n++
	dir := filepath.Join(r.Scratch, fmt.Sprintf("run%d", r.n%2))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	pool := filepath.Join(dir, "pool")
	args := make([]string, len(r.Args))
	for i, a := range r.Args {
		args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, pool)
	}
	globs := r.PMGlobs
	if len(globs) == 0 {
		globs = []string{pool + "*"}
	}
	tr := filepath.Join(dir, "scry.trace")
	res, err := record.Run(ctx, record.Options{
		Trace: tr, PMGlobs: globs, NoLoads: true, Args: args,
		Stdin: bytes.NewReader(w), Stdout: io.Discard, Stderr: io.Discard, Timeout: r.Timeout, Env: r.Env,
	})
	if cause := context.Cause(ctx); cause != nil {
		return nil, cause
	}
	if err != nil {
		return nil, err
	}
	cov, err := r.replay(tr)
	if err != nil {
		return nil, err
	}
	cov.Result = res
	return cov, nil
}

// replay reads the trace at path into Coverage.
func (r *Runner) replay(path string) (*Coverage, error) {
	rd, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	m, err := replay.New[struct{}](rd, replay.Options[struct{}]{Model: true})
	if err != nil {
		return nil, err
	}
	h := &collector{m: m, seed: r.seed, cov: &Coverage{Features: map[Feature]struct{}{}, StoreSites: map[uint32]struct{}{}},
		hits: map[uint32]int{}, edges: map[[2]uint32]struct{}{}}
	if err := m.Run(h); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	h.endOp("")
	// One program, one site table: it is copied again only when a run registered more sites
	// (a module loaded with dlopen).
	if len(rd.Sites()) != len(r.sites) {
		r.sites = slices.Clone(rd.Sites())
	}
	h.cov.Sites = r.sites
	return h.cov, nil
}

// collector is the replay handler that gathers a run's features.
type collector struct {
	replay.Nop
	m    *replay.Machine[struct{}]
	seed maphash.Seed
	cov  *Coverage
	// hits counts the stores of each site in the current operation.
	hits map[uint32]int
	// edges are the (previous store site, store site) pairs of the current operation; prev is
	// its latest store site (0: none yet).
	edges  map[[2]uint32]struct{}
	prev   uint32
	unp    map[uint32]bool
	opWord uint64
}

func (c *collector) add(parts ...uint64) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var b [8]byte
	for _, p := range parts {
		for i := range b {
			b[i] = byte(p >> (8 * i))
		}
		h.Write(b[:])
	}
	c.cov.Features[Feature(h.Sum64())] = struct{}{}
}

func (c *collector) Wrote(w *replay.Write) {
	if w.Kind != replay.Store && w.Kind != replay.NTStore {
		return
	}
	s := w.Origin.Site
	if _, ok := c.cov.StoreSites[s]; !ok {
		c.cov.StoreSites[s] = struct{}{}
		c.add(tagSite, uint64(s))
	}
	c.hits[s]++
	if s != c.prev {
		c.edges[[2]uint32{c.prev, s}] = struct{}{}
		c.prev = s
	}
}

func (c *collector) Flushed(ev *trace.Event, eff px86.FlushEffect) {
	c.add(tagFlush, uint64(ev.Site), boolBit(eff.Dirty > 0))
}

func (c *collector) Fenced(ev *trace.Event, eff px86.FenceEffect) {
	c.add(tagFence, uint64(ev.Site), boolBit(eff.Persisted > 0))
}

func (c *collector) BeforeDurable(ev *trace.Event, newCall bool) {
	if newCall {
		c.add(tagDurable, uint64(ev.Site))
	}
}

func (c *collector) OpBegan(ev *trace.Event, op replay.Op) {
	c.endOp("")
	c.cov.Ops++
	c.opWord = firstWord(op.Text)
}

func (c *collector) OpEnded(ev *trace.Event, op replay.Op) { c.endOp(op.Text) }

// endOp turns the current operation's stores into features: per-site persistence at its end,
// hit-count buckets, the operation's path and its store-site edges.
func (c *collector) endOp(string) {
	if len(c.hits) == 0 {
		return
	}
	if c.unp == nil {
		c.unp = map[uint32]bool{}
	}
	clear(c.unp)
	if c.m.Model != nil {
		c.m.Model.ForEachUnpersisted(func(s px86.StoreState) bool {
			c.unp[s.Origin.Site] = true
			return true
		})
	}
	sites := make([]uint32, 0, len(c.hits))
	for s, n := range c.hits {
		sites = append(sites, s)
		c.add(tagPersisted, uint64(s), boolBit(!c.unp[s]))
		c.add(tagHits, uint64(s), uint64(bucket(n)))
	}
	slices.Sort(sites)
	path := []uint64{tagPath, c.opWord}
	for _, s := range sites {
		path = append(path, uint64(s))
	}
	c.add(path...)
	for e := range c.edges {
		c.add(tagEdge, uint64(e[0]), uint64(e[1]))
	}
	clear(c.hits)
	clear(c.edges)
	c.prev = 0
}

// bucket is AFL's hit-count bucket of n > 0 hits.
func bucket(n int) int {
	switch {
	case n <= 3:
		return n
	case n <= 7:
		return 4
	case n <= 15:
		return 5
	case n <= 31:
		return 6
	case n <= 127:
		return 7
	}
	return 8
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// firstWord hashes the first word of an operation's text (its command: `i` of `i 42` and of
// WITCHER's `i;42;7;0;`, `set`, `git`: firstField), so that operation paths of different commands
// differ and those of one command on other keys do not.
func firstWord(text string) uint64 {
	w := firstField(text)
	var h uint64 = 14695981039346656037
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * 1099511628211
	}
	return h
}
