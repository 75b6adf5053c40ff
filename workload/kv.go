// Package workload generates the workloads scry feeds a target on standard input: one operation
// per line (the driver protocol of docs/architecture.md; docs/workloads.md). KV writes random
// key-value workloads for PMDK's mapcli and programs that speak its command language. The
// grammar-based fuzzer (Barowsky et al., Improving Application Crash Consistency with Symbolic
// Execution and Fuzzing (2021) §5.2) turns usage strings into a BNF grammar (ParseUsage,
// UsagesFromHelp, BuildGrammar) and expands it into chained commands with their placeholders
// filled (PrepareGrammar, GrammarFuzzer.Generate); WriteForms lists every form a usage allows.
package workload

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// Map styles: the command language of the generated lines.
const (
	// StyleMapcli is the language of PMDK's examples/libpmemobj/map/mapcli.c: "i KEY" inserts
	// KEY, "r KEY" removes it (printing "no such value" to stderr when absent), "c KEY" checks
	// it and prints 1 or 0 on standard output. Keys are unsigned 64-bit decimals; mapcli stores
	// no value (every key maps to OID_NULL).
	StyleMapcli = "mapcli"
)

// The operation mix of KV, in percent of all operations, and the share of lookups and removes
// that reuse a key inserted earlier. WITCHER (seed 000, §4.1) generates random operations and
// keys and gives "a higher probability to generate a key used before in earlier operations" so
// that dependent operations (get, delete, update) are meaningful; these are scry's numbers.
const (
	InsertPercent = 50 // "i KEY"
	CheckPercent  = 25 // "c KEY" (mapcli's lookup)
	RemovePercent = 25 // "r KEY"
	ReusePercent  = 80 // of checks and removes, the share that names a previously inserted key
)

// DefaultKeys is the key space when KVOptions.Keys is 0 and Ops is small.
const DefaultKeys = 1024

// MaxOps is the most operations (lines) a KV workload may have: about 10 MB of key-value
// commands. Crash exploration re-executes the program on crash states inside every operation,
// so workloads of thousands of operations are the practical size; the bound keeps a mistyped
// count from writing (and remembering keys) without end.
const MaxOps = 1_000_000

// KVOptions configures KV.
type KVOptions struct {
	// Ops is the number of operations (lines) to write: 0 to MaxOps.
	Ops int
	// Seed seeds the generator: equal options give byte-identical output.
	Seed uint64
	// Keys is the size of the key space: keys are drawn uniformly from 1..Keys (0 is avoided:
	// PMDK's ctree and rtree treat key 0 as an empty slot). 0 means max(DefaultKeys, 4*Ops).
	Keys uint64
	// MapStyle names the command language; "" means StyleMapcli, the only one so far.
	MapStyle string
}

// KV writes opts.Ops random key-value operations to w, one per line, in opts.MapStyle.
//
// The distribution (WITCHER, seed 000 §4.1, biased towards keys used before):
//   - InsertPercent (50%) inserts "i KEY" of a key drawn uniformly from 1..Keys (an insert of a
//     key already present is an update);
//   - CheckPercent (25%) checks "c KEY" and RemovePercent (25%) removes "r KEY". Each of these
//     names, with probability ReusePercent (80%), a key inserted earlier: one currently present
//     in the map if there is any (so that removes and checks hit), else one inserted and since
//     removed; otherwise (20%, or when nothing was inserted yet) a uniformly random key.
//
// Randomness is math/rand/v2's PCG seeded with (Seed, Seed^0x5c5279706b760001); the output
// depends only on opts. Errors: Ops negative or over MaxOps, an unknown MapStyle, or the first
// error writing to w.
func KV(w io.Writer, opts KVOptions) error {
	if err := CheckCount("--ops", opts.Ops); err != nil {
		return err
	}
	style := opts.MapStyle
	if style == "" {
		style = StyleMapcli
	}
	if style != StyleMapcli {
		return fmt.Errorf("workload: unknown map style %q (known: %s)", opts.MapStyle, StyleMapcli)
	}
	keys := opts.Keys
	if keys == 0 {
		keys = max(DefaultKeys, 4*uint64(opts.Ops))
	}

	g := newKVGen(opts.Seed, keys)
	bw := bufio.NewWriter(w)
	for range opts.Ops {
		op, key := g.next()
		if _, err := fmt.Fprintf(bw, "%c %d\n", op, key); err != nil {
			return fmt.Errorf("workload: writing: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("workload: writing: %w", err)
	}
	return nil
}

// CheckCount rejects a number of operations n (given with flag) that is negative or over MaxOps.
func CheckCount(flag string, n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("%s %d: negative operation count", flag, n)
	case n > MaxOps:
		return fmt.Errorf("%s %d: a workload has at most %d operations (crash exploration runs the program on crash states inside every one: thousands are the practical size)", flag, n, MaxOps)
	}
	return nil
}

// Operation letters of the mapcli language.
const (
	opInsert = 'i'
	opCheck  = 'c'
	opRemove = 'r'
)

// kvGen is KV's state: the random source and the keys inserted so far.
type kvGen struct {
	r    *rand.Rand
	keys uint64
	// present holds the keys currently in the map, in insertion order with swap-removal, and
	// where maps each present key to its index in present.
	present []uint64
	where   map[uint64]int
	// gone holds keys inserted and later removed (each once), for reuse when none is present.
	gone   []uint64
	isGone map[uint64]bool
}

func newKVGen(seed, keys uint64) *kvGen {
	return &kvGen{
		r:      rand.New(rand.NewPCG(seed, seed^0x5c52_7970_6b76_0001)),
		keys:   keys,
		where:  map[uint64]int{},
		isGone: map[uint64]bool{},
	}
}

// next draws one operation and applies it to the model of the map's contents.
func (g *kvGen) next() (op byte, key uint64) {
	p := g.r.IntN(100)
	switch {
	case p < InsertPercent:
		key = g.randomKey()
		g.insert(key)
		return opInsert, key
	case p < InsertPercent+CheckPercent:
		return opCheck, g.usedKey()
	default:
		key = g.usedKey()
		g.remove(key)
		return opRemove, key
	}
}

func (g *kvGen) randomKey() uint64 { return 1 + g.r.Uint64N(g.keys) }

// usedKey returns, with probability ReusePercent, a key inserted earlier (present if possible),
// and otherwise a random key.
func (g *kvGen) usedKey() uint64 {
	reuse := g.r.IntN(100) < ReusePercent
	switch {
	case reuse && len(g.present) > 0:
		return g.present[g.r.IntN(len(g.present))]
	case reuse && len(g.gone) > 0:
		return g.gone[g.r.IntN(len(g.gone))]
	default:
		return g.randomKey()
	}
}

func (g *kvGen) insert(key uint64) {
	if _, ok := g.where[key]; ok {
		return
	}
	g.where[key] = len(g.present)
	g.present = append(g.present, key)
}

func (g *kvGen) remove(key uint64) {
	i, ok := g.where[key]
	if !ok {
		return
	}
	last := len(g.present) - 1
	g.present[i] = g.present[last]
	g.where[g.present[i]] = i
	g.present = g.present[:last]
	delete(g.where, key)
	if !g.isGone[key] {
		g.isGone[key] = true
		g.gone = append(g.gone, key)
	}
}
