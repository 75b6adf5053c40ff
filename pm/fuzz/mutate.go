package fuzz

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scry-pm/scry/workload"
)

// Ops makes new operations for the mutator: each call returns one or more workload lines
// (without their newlines). values are the numbers the workload being mutated holds, for keys
// drawn from the workload's own values.
type Ops func(r *rand.Rand, values []uint64) []string

// KVOps returns the operations of `scry workload kv` (workload.KV's mix: InsertPercent inserts,
// CheckPercent checks, RemovePercent removes, in mapcli's language), with keys drawn, for
// ReusePercent of them, from the workload's values, else uniformly from 1..keys.
func KVOps(keys uint64) Ops {
	if keys == 0 {
		keys = workload.DefaultKeys
	}
	return func(r *rand.Rand, values []uint64) []string {
		key := 1 + r.Uint64N(keys)
		if len(values) > 0 && r.IntN(100) < workload.ReusePercent {
			key = values[r.IntN(len(values))]
		}
		op := "i"
		switch p := r.IntN(100); {
		case p < workload.InsertPercent:
		case p < workload.InsertPercent+workload.CheckPercent:
			op = "c"
		default:
			op = "r"
		}
		return []string{fmt.Sprintf("%s %d", op, key)}
	}
}

// GrammarOps returns the operations of a grammar fuzzer (workload.PrepareGrammar): one
// expansion of its start symbol, a chain of one or more commands. The fuzzer draws from its own
// random source, seeded by its options; then, as KVOps does, each command's first number is
// replaced, for ReusePercent of the commands, by one of the workload's values, so that removes
// and lookups find what inserts wrote.
func GrammarOps(f *workload.GrammarFuzzer) Ops {
	return func(r *rand.Rand, values []uint64) []string {
		_, lines, err := f.Next()
		if err != nil {
			return nil
		}
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.TrimSuffix(l, "\n")
			if len(values) > 0 && r.IntN(100) < workload.ReusePercent {
				out[i] = replaceFirstNumber(out[i], values[r.IntN(len(values))])
			}
		}
		return out
	}
}

// Mutation names, as Mutate applies them.
const (
	MutInsert  = "insert"  // insert new operations at a random place
	MutDelete  = "delete"  // delete a run of operations
	MutRepeat  = "repeat"  // repeat a run of operations (with their keys)
	MutSplice  = "splice"  // replace the tail with the tail of another corpus workload
	MutKey     = "key"     // change a number to one of the workload's values or a neighbour
	MutCollide = "collide" // change a number to one that collides with another modulo 2^k
	MutFill    = "fill"    // insert a run of operations on colliding or consecutive keys
	MutThin    = "thin"    // a fill, then another operation on a selection of its keys (Thin)
)

var mutations = []string{MutInsert, MutDelete, MutRepeat, MutSplice, MutKey, MutCollide, MutFill, MutThin}

// Mutator changes workloads (lists of lines) by the mutations above.
type Mutator struct {
	R   *rand.Rand
	Ops Ops
	// MaxOps bounds the lines of a mutated workload (the tail is cut).
	MaxOps int
}

// Mutate returns a mutant of w made by 1 to 4 random mutations; other is a second workload for
// splicing (nil: no splice). w is not changed. The names of the mutations applied are returned
// for statistics.
func (m *Mutator) Mutate(w, other []string) ([]string, []string) {
	out := slices.Clone(w)
	var applied []string
	for range 1 + m.R.IntN(4) {
		name := mutations[m.R.IntN(len(mutations))]
		out = m.apply(name, out, other)
		applied = append(applied, name)
	}
	if m.MaxOps > 0 && len(out) > m.MaxOps {
		out = out[:m.MaxOps]
	}
	return out, applied
}

// apply applies one mutation by name.
func (m *Mutator) apply(name string, w, other []string) []string {
	r := m.R
	switch name {
	case MutInsert:
		at := r.IntN(len(w) + 1)
		var ins []string
		for range 1 + r.IntN(8) {
			ins = append(ins, m.Ops(r, Values(w))...)
		}
		return slices.Insert(w, at, ins...)
	case MutDelete:
		if len(w) == 0 {
			return w
		}
		i := r.IntN(len(w))
		j := min(len(w), i+1+r.IntN(max(1, len(w)/8)))
		return slices.Delete(w, i, j)
	case MutRepeat:
		if len(w) == 0 {
			return w
		}
		i := r.IntN(len(w))
		j := min(len(w), i+1+r.IntN(16))
		run := slices.Clone(w[i:j])
		for range r.IntN(4) {
			run = append(run, w[i:j]...)
		}
		return slices.Insert(w, j, run...)
	case MutSplice:
		if len(other) == 0 {
			return m.apply(MutInsert, w, nil)
		}
		i := r.IntN(len(w) + 1)
		j := r.IntN(len(other))
		return append(w[:i:i], other[j:]...)
	case MutKey, MutCollide:
		vals := Values(w)
		if len(vals) == 0 || len(w) == 0 {
			return m.apply(MutInsert, w, nil)
		}
		i := r.IntN(len(w))
		v := vals[r.IntN(len(vals))]
		if name == MutKey {
			v = Neighbour(r, v)
		} else {
			v = Collide(r, v)
		}
		w[i] = replaceNumber(r, w[i], v)
		return w
	case MutFill:
		return m.fill(w, m.R.IntN(2) == 0)
	case MutThin:
		return m.fill(w, true)
	}
	panic("pmfuzz: unknown mutation " + name)
}

// fill inserts a run of new operations whose numbers all collide (modulo the same 2^k) with, or
// follow, one value of the workload: the pattern that fills one bucket of a hashed structure or
// one node of a tree. The run starts at the value itself, or, half of the time, at the value
// rounded down to a multiple of 2^j (j from 2 to 7: the first key of an aligned range, which a
// structure partitioned by ranges of keys keeps in one node). With thin, a second run follows:
// another command (a remove or a lookup, when the first was an insert) on a selection of the
// same keys (Thin), after the fill or woven into it: a fill-then-delete sequence, which
// underflows the node it filled, rebalances or shrinks it.
func (m *Mutator) fill(w []string, thin bool) []string {
	r := m.R
	vals := Values(w)
	base := 1 + r.Uint64N(1024)
	if len(vals) > 0 {
		base = vals[r.IntN(len(vals))]
	}
	if r.IntN(2) == 0 {
		if a := base &^ (uint64(1)<<(2+r.IntN(6)) - 1); a > 0 {
			base = a
		}
	}
	tmpl := m.Ops(r, vals)
	if len(tmpl) == 0 {
		return w
	}
	n := 2 + r.IntN(16)
	step := uint64(1)
	if r.IntN(2) == 0 {
		step = 1 << (2 + r.IntN(12))
	}
	run := make([]string, 0, 2*n)
	keys := make([]uint64, 0, n)
	for k := range uint64(n) {
		keys = append(keys, base+k*step)
		run = append(run, replaceFirstNumber(tmpl[0], base+k*step))
	}
	if then := m.other(vals, tmpl[0]); thin && then != "" {
		sel := Thin(r, keys)
		second := make([]string, len(sel))
		for i, k := range sel {
			second[i] = replaceFirstNumber(then, k)
		}
		if r.IntN(4) == 0 {
			run = interleave(r, run, second)
		} else {
			run = append(run, second...)
		}
	}
	return slices.Insert(w, r.IntN(len(w)+1), run...)
}

// other returns a new operation whose command (first word) differs from line's, when one of 8
// draws of Ops gives one, else the last drawn ("" when Ops gives none).
func (m *Mutator) other(vals []uint64, line string) string {
	cmd := firstField(line)
	var last string
	for range 8 {
		ops := m.Ops(m.R, vals)
		if len(ops) == 0 {
			continue
		}
		last = ops[0]
		if firstField(last) != cmd {
			break
		}
	}
	return last
}

// firstField is a line's first word, up to a blank or a semicolon (`i` of `i 42` and of
// `i;42;7;0;`).
func firstField(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.IndexAny(line, " \t;"); i >= 0 {
		return line[:i]
	}
	return line
}

// Thin patterns, as Thin draws them.
const (
	ThinPrefix = iota // the first keys
	ThinStride        // every other key (every second or third), from the first or the second
	ThinMiddle        // a contiguous run strictly inside the keys
	ThinAll           // every key
	thinPatterns
)

// Thin selects the keys of a second run after a fill of keys (in the fill's order): a prefix,
// every other key, a contiguous middle run or all of them, in the fill's or the reverse order.
// These are the structural patterns deletion code needs (B-tree rotation and merge after a
// node's every other key or its middle is deleted; a hash table's shrink once most of a filled
// level is deleted). The result is never empty when keys is not.
func Thin(r *rand.Rand, keys []uint64) []uint64 {
	return thin(r, keys, r.IntN(thinPatterns))
}

// thin is Thin of one pattern.
func thin(r *rand.Rand, keys []uint64, pattern int) []uint64 {
	n := len(keys)
	if n == 0 {
		return nil
	}
	var out []uint64
	switch pattern {
	case ThinPrefix:
		out = slices.Clone(keys[:1+r.IntN(n)])
	case ThinStride:
		stride := 2 + r.IntN(2)
		for i := r.IntN(min(2, n)); i < n; i += stride {
			out = append(out, keys[i])
		}
	case ThinMiddle:
		i := r.IntN(n)
		j := i + 1 + r.IntN(n-i)
		if n > 2 {
			i = 1 + r.IntN(n-2)
			j = i + 1 + r.IntN(n-1-i)
		}
		out = slices.Clone(keys[i:j])
	default:
		out = slices.Clone(keys)
	}
	if r.IntN(2) == 0 {
		slices.Reverse(out)
	}
	return out
}

// interleave weaves the operations of second into first: each of second's operations follows
// the operation of first lag places after the one it pairs with (lag from 1 to 4), so that a
// structure is thinned while it is still being filled.
func interleave(r *rand.Rand, first, second []string) []string {
	lag := 1 + r.IntN(4)
	out := make([]string, 0, len(first)+len(second))
	j := 0
	for i, l := range first {
		out = append(out, l)
		if i >= lag && j < len(second) {
			out = append(out, second[j])
			j++
		}
	}
	return append(out, second[j:]...)
}

// number is a decimal number in a workload line: a maximal run of digits, whatever surrounds it
// (`i 42`, `i;42;7;0;`, `--size=42`).
var number = regexp.MustCompile(`[0-9]+`)

// Values returns the distinct numbers the workload's lines hold (maximal runs of decimal digits
// that fit 64 bits), in order of first appearance.
func Values(w []string) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, l := range w {
		for _, f := range number.FindAllString(l, -1) {
			if v, err := strconv.ParseUint(f, 10, 64); err == nil && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// Neighbour returns v itself or a value near it (v±1..v±16), never 0.
func Neighbour(r *rand.Rand, v uint64) uint64 {
	d := uint64(r.IntN(17))
	if r.IntN(2) == 0 && v > d {
		return v - d
	}
	if v+d == 0 {
		return 1
	}
	return v + d
}

// Collide returns a value that equals v modulo 2^k for a random k from 2 to 13 (v + m·2^k,
// m from 1 to 8): keys a program hashing by the low bits puts into v's bucket.
func Collide(r *rand.Rand, v uint64) uint64 {
	k := 2 + r.IntN(12)
	return v + uint64(1+r.IntN(8))<<k
}

// replaceNumber replaces one random number of line by v, leaving the rest of the line as it is
// (the line is unchanged when it has none).
func replaceNumber(r *rand.Rand, line string, v uint64) string {
	idx := number.FindAllStringIndex(line, -1)
	if len(idx) == 0 {
		return line
	}
	at := idx[r.IntN(len(idx))]
	return line[:at[0]] + strconv.FormatUint(v, 10) + line[at[1]:]
}

// replaceFirstNumber replaces the first number of line by v.
func replaceFirstNumber(line string, v uint64) string {
	at := number.FindStringIndex(line)
	if at == nil {
		return line
	}
	return line[:at[0]] + strconv.FormatUint(v, 10) + line[at[1]:]
}

// TemplateOps returns operations made from the lines of example workloads (a driver's own
// workload, such as WITCHER's `i;KEY;VALUE;0;`): a random line whose numbers are each replaced,
// for ReusePercent of them, by one of the workload's values, else by a random number with as
// many digits as the one it replaces. Lines without numbers are taken as they are. Errors: no
// template line.
func TemplateOps(templates []string) (Ops, error) {
	var ts []string
	for _, t := range templates {
		if strings.TrimSpace(t) != "" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, errors.New("no operation to take as a template: the seed workloads are empty")
	}
	return func(r *rand.Rand, values []uint64) []string {
		t := ts[r.IntN(len(ts))]
		return []string{number.ReplaceAllStringFunc(t, func(d string) string {
			if len(values) > 0 && r.IntN(100) < workload.ReusePercent {
				return strconv.FormatUint(values[r.IntN(len(values))], 10)
			}
			n := min(len(d), 19)
			lo := uint64(1)
			for range n - 1 {
				lo *= 10
			}
			return strconv.FormatUint(lo+r.Uint64N(lo*9), 10)
		})}
	}, nil
}
