package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// opDeps is the reads-from relation between the operations of one recorded run, at the
// granularity of PM bytes (their offset in their pool file, so a pool mapped again at another
// address is the same memory; a word of four one-byte tokens leads to each slot's insert):
// from[k] holds the other operations whose store was the last one to a byte operation k loaded
// before the load, to[k] those that loaded a byte whose last store was operation k's. It is the
// dynamic data dependence of the program's own PM accesses (the same relation WITCHER (SOSP'21)
// §4.3.2 infers invariants from, here between operations): the minimiser's slices (slice) start
// from it. A load also depends on the operation that first stored the value its word holds when
// that got there by a copy (a whole aligned word stored with a distinctive value an earlier
// operation stored first): an item a resize moved still leads to the insert that wrote its key.
// Empty when the run recorded no loads (SCRY_NO_LOADS).
type opDeps struct {
	from, to map[int][]int
	// writes holds the operations that stored to PM (a recorded store, or bytes a library
	// call wrote and persisted).
	writes map[int]bool
	// lines holds the lines each operation printed on standard output (the trace's OUTPUT
	// records: their newlines; those printed after the last operation are its).
	lines map[int]int
}

// pmByte is a PM byte: its pool (an index into the paths seen) and its offset in it.
type pmByte struct {
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
	h := &depsHandler{m: m, last: map[pmByte]int{}, origin: map[pmByte]int{}, first: map[uint64]int{}, pools: map[string]int{}, from: map[int]map[int]bool{}, writes: map[int]bool{}, lines: map[int]int{}}
	if err := m.Run(h); err != nil && len(h.from) == 0 {
		return nil, fmt.Errorf("the finding's trace: %w", err)
	}
	d := &opDeps{from: map[int][]int{}, to: map[int][]int{}, writes: h.writes, lines: h.lines}
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

// depsHandler builds opDeps during one replay: last holds, per PM byte, the operation (index
// plus one) whose store wrote it last.
type depsHandler struct {
	replay.Nop
	m    *replay.Machine[px86.NoPayload]
	last map[pmByte]int
	// origin holds, per PM byte, the operation (plus one) that first stored the value of its
	// word, when that was copied there (Wrote), else the last writer; first, per distinctive
	// word value, the operation (plus one) that stored it first.
	origin map[pmByte]int
	first  map[uint64]int
	pools  map[string]int
	from   map[int]map[int]bool
	writes map[int]bool
	lines  map[int]int
	latest int // the operation begun last, plus one
}

func (h *depsHandler) OpBegan(ev *trace.Event, op replay.Op) { h.latest = int(op.Index) + 1 }

// Output counts the lines an operation printed: those printed after it ended, before the next
// began (a driver that prints an operation's result after its OP_END), are its too; those
// printed before the first operation began are no operation's.
func (h *depsHandler) Output(ev *trace.Event) {
	n := bytes.Count(ev.Data, []byte("\n"))
	if n == 0 || ev.Handle != 1 {
		return
	}
	if op, ok := h.m.OpOfRecord(ev); ok {
		h.lines[int(op.Index)] += n
	} else if h.latest > 0 {
		h.lines[h.latest-1] += n
	}
}

// revealing returns the operation that printed line `line` (1-based) of the output of a run
// from operation start of a workload of n operations, when a legal outcome's run from there
// printed `of` lines (report.Crash.DivergedLine, LegalLines): the operation whose output first
// showed the failure. The lines are counted back from the end, each operation printing what it
// printed in the recorded run, so what a run prints when it opens the pool (a new pool's
// banner in the recorded run, a recovery's in the other) does not matter. -1 when that line is
// past the legal outcome's end, or before the operation start.
func (d *opDeps) revealing(start, n, line, of int) int {
	tail := of - line + 1 // the legal outcome's lines from the diverging one on
	if d == nil || line <= 0 || tail <= 0 {
		return -1
	}
	at := 0
	for j := n - 1; j >= max(start, 0); j-- {
		at += d.lines[j]
		if at >= tail {
			return j
		}
	}
	return -1
}

// eachByte calls fn with each PM byte of [addr, addr+size) in region r.
func (h *depsHandler) eachByte(r *pmdk.Region, addr, size uint64, fn func(pmByte)) {
	pool, ok := h.pools[r.Path]
	if !ok {
		pool = len(h.pools)
		h.pools[r.Path] = pool
	}
	start := r.FileOffset + (addr - r.Base)
	for off := start; off < start+size; off++ {
		fn(pmByte{pool, off})
	}
}

func (h *depsHandler) Wrote(w *replay.Write) {
	if w.Origin.Op == 0 || w.Region == nil || !w.Recorded() && w.Kind != replay.LibraryPersisted {
		return // the pool's content at map time, or bytes outside any operation
	}
	op := int(w.Origin.Op)
	h.writes[op-1] = true
	h.eachByte(w.Region, w.Addr, w.Size, func(p pmByte) {
		h.last[p] = op
		h.origin[p] = op
	})
	// An aligned word written whole with a value an earlier operation stored first is a copy
	// of it (a resize moving an item keeps its key's words): its bytes' origin is that
	// operation.
	start := w.Region.FileOffset + (w.Addr - w.Region.Base)
	for off := (start + 7) &^ 7; off+8 <= start+uint64(len(w.Data)) && off+8 <= start+w.Size; off += 8 {
		v := binary.LittleEndian.Uint64(w.Data[off-start:])
		if !distinctive(v) {
			continue
		}
		if o, ok := h.first[v]; ok {
			for b := range uint64(8) {
				h.origin[pmByte{h.pools[w.Region.Path], off + b}] = o
			}
		} else {
			h.first[v] = op
		}
	}
}

// distinctive reports whether an 8-byte word's value is unlikely to be stored by two
// operations by chance: at least four of its bytes are not zero (a key's or a value's
// characters, an address), where counters, flags and small numbers are not.
func distinctive(v uint64) bool {
	n := 0
	for ; v != 0; v >>= 8 {
		if v&0xff != 0 {
			n++
		}
	}
	return n >= 4
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
	h.eachByte(r, ev.Addr, size, func(p pmByte) {
		for _, w := range []int{h.last[p], h.origin[p]} {
			if w > 0 && w-1 != k {
				if h.from[k] == nil {
					h.from[k] = map[int]bool{}
				}
				h.from[k][w-1] = true
			}
		}
	})
}

// slice returns the operations of a workload of n operations that the failure in operation
// first may need, at depth levels of the reads-from relation: first itself, the operations it
// read PM bytes from, and theirs, levels deep; with after (the operations after first are needed)
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
