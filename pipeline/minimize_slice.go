package pipeline

import (
	"fmt"
	"slices"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// opDeps is the reads-from relation between the operations of one recorded run, at the
// granularity of aligned 8-byte PM words (their offset in their pool file, so a pool mapped
// again at another address is the same memory): from[k] holds the other operations whose store
// was the last one to a word operation k loaded before the load, to[k] those that loaded a word
// whose last store was operation k's. It is the dynamic data dependence of the program's own
// PM accesses (the same relation WITCHER (SOSP'21) §4.3.2 infers invariants from, here between
// operations): the minimiser's slices (slice) start from it. Empty when the run recorded no
// loads (SCRY_NO_LOADS).
type opDeps struct {
	from, to map[int][]int
	// writes holds the operations that stored to PM (a recorded store, or bytes a library
	// call wrote and persisted).
	writes map[int]bool
}

// word is a PM word: its pool (an index into the paths seen) and its offset / 8.
type pmWord struct {
	pool int
	off  uint64
}

// depsOf reads the trace at path once and returns the reads-from relation of its operations.
// Errors: the trace cannot be opened or read (a truncated trace gives the relation of what it
// holds).
func depsOf(path string) (*opDeps, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := replay.New[px86.NoPayload](r, replay.Options[px86.NoPayload]{})
	if err != nil {
		return nil, err
	}
	h := &depsHandler{m: m, last: map[pmWord]int{}, pools: map[string]int{}, from: map[int]map[int]bool{}, writes: map[int]bool{}}
	if err := m.Run(h); err != nil && len(h.from) == 0 {
		return nil, fmt.Errorf("the finding's trace: %w", err)
	}
	d := &opDeps{from: map[int][]int{}, to: map[int][]int{}, writes: h.writes}
	for k, set := range h.from {
		for j := range set {
			d.from[k] = append(d.from[k], j)
			d.to[j] = append(d.to[j], k)
		}
	}
	for _, m := range []map[int][]int{d.from, d.to} {
		for k := range m {
			slices.Sort(m[k])
		}
	}
	return d, nil
}

// depsHandler builds opDeps during one replay: last holds, per PM word, the operation (index
// plus one) whose store wrote it last.
type depsHandler struct {
	replay.Nop
	m      *replay.Machine[px86.NoPayload]
	last   map[pmWord]int
	pools  map[string]int
	from   map[int]map[int]bool
	writes map[int]bool
}

// words calls fn with each PM word of [addr, addr+size) in region r.
func (h *depsHandler) words(r *pmdk.Region, addr, size uint64, fn func(pmWord)) {
	pool, ok := h.pools[r.Path]
	if !ok {
		pool = len(h.pools)
		h.pools[r.Path] = pool
	}
	start := r.FileOffset + (addr - r.Base)
	for off := start &^ 7; off < start+size; off += 8 {
		fn(pmWord{pool, off >> 3})
	}
}

func (h *depsHandler) Wrote(w *replay.Write) {
	if w.Origin.Op == 0 || w.Region == nil || !w.Recorded() && w.Kind != replay.LibraryPersisted {
		return // the pool's content at map time, or bytes outside any operation
	}
	op := int(w.Origin.Op)
	h.writes[op-1] = true
	h.words(w.Region, w.Addr, w.Size, func(p pmWord) { h.last[p] = op })
}

func (h *depsHandler) Load(ev *trace.Event) {
	r, ok := h.m.Regions.Find(ev.Addr)
	if !ok || ev.Size == 0 {
		return
	}
	op, ok := h.m.OpOfRecord(ev)
	if !ok {
		return
	}
	k := int(op.Index)
	size := min(ev.Size, r.Base+r.Len-ev.Addr)
	h.words(r, ev.Addr, size, func(p pmWord) {
		if w := h.last[p]; w > 0 && w-1 != k {
			if h.from[k] == nil {
				h.from[k] = map[int]bool{}
			}
			h.from[k][w-1] = true
		}
	})
}

// slice returns the operations of a workload of n operations that the failure in operation
// first may need, at depth levels of the reads-from relation: first itself, the operations it
// read PM words from, and theirs, levels deep; with after (the operations after first are needed)
// also the later operations that read what first wrote (lookups that see its effect). The result
// is sorted; it can be the whole workload.
func (d *opDeps) slice(first, n, levels int, after bool) []int {
	in := map[int]bool{first: true}
	frontier := []int{first}
	for l := 0; l < levels && len(frontier) > 0; l++ {
		var next []int
		for _, k := range frontier {
			for _, j := range d.from[k] {
				if j >= 0 && j < n && !in[j] {
					in[j] = true
					next = append(next, j)
				}
			}
		}
		frontier = next
	}
	if after {
		for _, j := range d.to[first] {
			if j > first && j < n {
				in[j] = true
			}
		}
	}
	out := make([]int, 0, len(in))
	for k := range in {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// keySlice returns the operations of ops, up to first (and after it when after is set), that
// share a key with operation first: a value word (any word after a line's first) of first's
// that at most a twentieth of the lines hold (at least 8), so that a flag or a constant column
// (WITCHER's op files end each line with one) is no key. The same key inserted, updated,
// removed and looked up. The result is sorted and holds first.
func keySlice(ops []string, first int, after bool) []int {
	vals := map[string]int{}
	for i, w := range lineWords(ops[first]) {
		if i > 0 {
			vals[w.text] = 0
		}
	}
	lines := make([][]word, len(ops))
	for k, op := range ops {
		lines[k] = lineWords(op)
		counted := map[string]bool{}
		for i, w := range lines[k] {
			if _, ok := vals[w.text]; ok && i > 0 && !counted[w.text] {
				counted[w.text] = true
				vals[w.text]++
			}
		}
	}
	most := max(8, len(ops)/20)
	var out []int
	for k := range ops {
		if k > first && !after {
			break
		}
		if k == first {
			out = append(out, k)
			continue
		}
		for i, w := range lines[k] {
			if n, ok := vals[w.text]; ok && i > 0 && n <= most {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// union merges sorted index lists into one sorted list without repeats.
func union(lists ...[]int) []int {
	var out []int
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pick returns the operations of ops at the sorted indices idx.
func pick(ops []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = ops[k]
	}
	return out
}
