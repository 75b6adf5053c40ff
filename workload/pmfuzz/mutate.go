package pmfuzz

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
)

var mutations = []string{MutInsert, MutDelete, MutRepeat, MutSplice, MutKey, MutCollide, MutFill}

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
		return m.fill(w)
	}
	panic("pmfuzz: unknown mutation " + name)
}

// fill inserts a run of new operations whose numbers all collide (modulo the same 2^k) with, or
// follow, one value of the workload: the pattern that fills one bucket of a hashed structure or
// one node of a tree. Half of the time a second run follows, another operation (a remove, when
// the first was an insert) on some of the same keys, in the same or the reverse order: a
// fill-then-delete sequence, which underflows the node it filled.
func (m *Mutator) fill(w []string) []string {
	r := m.R
	vals := Values(w)
	base := 1 + r.Uint64N(1024)
	if len(vals) > 0 {
		base = vals[r.IntN(len(vals))]
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
	if then := m.Ops(r, vals); len(then) > 0 && r.IntN(2) == 0 {
		keys = keys[:1+r.IntN(len(keys))]
		if r.IntN(2) == 0 {
			slices.Reverse(keys)
		}
		for _, k := range keys {
			run = append(run, replaceFirstNumber(then[0], k))
		}
	}
	return slices.Insert(w, r.IntN(len(w)+1), run...)
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
