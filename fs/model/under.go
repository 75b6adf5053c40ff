package model

import (
	"slices"
	"sort"
)

// LegalUnder reports whether crash state st of build from (the micro-operations of m under
// some APM and split, a crash after logical operation point) has an equivalent state that apm
// allows: one that leaves the same directory and output (the same entries; every file the same
// size, with the same operation's data, zeros or garbage in each byte range: what Materialize
// builds, compared without building it) and is legal under one of apm's splits: closed under its
// persist-before relation, every barrier issued before the crash kept, nothing issued after it
// (ALICE, OSDI'14, §3.2: the states an APM allows). It is how a finding found under one model
// says whether the others have it too; it costs a pass over the micro-operations per split.
//
// The candidates, per split of apm: every micro-operation of a logical operation st persisted
// whole, none of one st lost, and of one st persisted in part the data pieces inside the bytes
// st holds its data in and the micro-operations identical to st's (so an effect apm cannot
// produce, zeros or garbage an ext4 append never shows, an unlinked file partly truncated, a
// write torn inside a 4 KiB block, has no equivalent); operations on files no name reaches in
// st persist as far as the rest needs. Then that state closed under apm's dependencies, and
// pruned to them (operations whose effect a later one hides). Other equivalent states are not
// searched: LegalUnder can miss one (a directory apm allows, reached through other hidden
// effects), never accepts a state whose directory apm does not allow. builds caches apm's
// builds of m by split (nil: no cache).
func LegalUnder(m *Model, from []Micro, st State, point int, apm *APM, builds map[Split][]Micro) bool {
	effects := opEffects(m, from, st, point)
	want := newView(m, from, st, point)
	seen := map[Split]bool{}
	for _, sp := range append([]Split{apm.Base}, apm.Splits...) {
		if seen[sp] {
			continue
		}
		seen[sp] = true
		ms, ok := builds[sp]
		if !ok {
			ms = apm.Build(m, sp)
			if builds != nil {
				builds[sp] = ms
			}
		}
		cand := candidate(ms, effects, point)
		if legalAt(ms, cand, point) && want.equal(newView(m, ms, cand, point)) {
			return true
		}
		// Operations whose effect a later one hides (an entry created then renamed, bytes
		// truncated then rewritten, an unlink of a name that never persisted) may persist, or
		// not, as apm's order requires.
		up, down := State{Persisted: slices.Clone(cand.Persisted)}, cand
		closeUnder(ms, up)
		pruneUnder(ms, down)
		for _, c := range []State{up, down} {
			if legalAt(ms, c, point) && want.equal(newView(m, ms, c, point)) {
				return true
			}
		}
	}
	return false
}

// effect is what a state persisted of one logical operation.
type effect struct {
	any, whole bool
	// free: the operation changed a file no name reaches in the state, so its effect is not
	// visible: an equivalent state may persist any of it.
	free    bool
	bytes   []paint // the operation's persisted write micro-operations, painted in order
	written []Micro // those write micro-operations
	other   []Micro // its persisted micro-operations that are not writes
}

// paint is a byte range [Off, End) last written with Fill.
type paint struct {
	Off, End int64
	Fill     Fill
}

// addPaint paints p over ps (sorted, disjoint), merging neighbours of the same fill.
func addPaint(ps []paint, p paint) []paint {
	var out []paint
	for _, q := range ps {
		if q.End <= p.Off || q.Off >= p.End {
			out = append(out, q)
			continue
		}
		if q.Off < p.Off {
			out = append(out, paint{q.Off, p.Off, q.Fill})
		}
		if q.End > p.End {
			out = append(out, paint{p.End, q.End, q.Fill})
		}
	}
	out = append(out, p)
	sort.Slice(out, func(i, j int) bool { return out[i].Off < out[j].Off })
	merged := out[:0]
	for _, q := range out {
		if n := len(merged); n > 0 && merged[n-1].End == q.Off && merged[n-1].Fill == q.Fill {
			merged[n-1].End = q.End
			continue
		}
		merged = append(merged, q)
	}
	return merged
}

// opEffects returns the effect of every logical operation up to point in state st of ms.
func opEffects(m *Model, ms []Micro, st State, point int) []effect {
	eff := make([]effect, point+1)
	for j := range ms {
		op := ms[j].Op
		if op > point || !st.Persisted[j] {
			continue
		}
		e := &eff[op]
		e.any = true
		if ms[j].Kind == MWrite {
			e.bytes = addPaint(e.bytes, paint{ms[j].Offset, ms[j].Offset + ms[j].Len, ms[j].Fill})
			e.written = append(e.written, ms[j])
		} else {
			e.other = append(e.other, ms[j])
		}
	}
	visible := visibleInodes(m, ms, st, point)
	for i := range eff {
		o := &m.Ops[i]
		if (o.Kind == OpWrite || o.Kind == OpAppend || o.Kind == OpTrunc) && !visible[o.Inode] {
			eff[i] = effect{free: true} // what happened to a file no name reaches is not part of the state
		}
		eff[i].whole = eff[i].any && wholeEffect(o, &eff[i])
	}
	return eff
}

// visibleInodes returns the inodes a name reaches in state st: the initial entries with the
// persisted entry micro-operations applied in order (Materialize's rule).
func visibleInodes(m *Model, ms []Micro, st State, point int) map[int]bool {
	entries := make(map[entryKey]int, len(m.Entries))
	for k, v := range m.Entries {
		entries[k] = v
	}
	for j := range ms {
		if ms[j].Op > point || !st.Persisted[j] {
			continue
		}
		switch mi := &ms[j]; mi.Kind {
		case MCreate:
			entries[mi.Entry] = mi.Inode
		case MDelete:
			delete(entries, mi.Entry)
		case MRename:
			delete(entries, mi.Entry)
			entries[mi.Entry2] = mi.Inode
		}
	}
	visible := map[int]bool{}
	for _, v := range entries {
		visible[v] = true
	}
	return visible
}

// wholeEffect reports whether effect e leaves what operation o does when it persists entirely.
func wholeEffect(o *Op, e *effect) bool {
	switch o.Kind {
	case OpWrite, OpAppend:
		return len(e.bytes) == 1 && e.bytes[0] == paint{o.Offset, o.Offset + int64(len(o.Data)), FillData}
	case OpTrunc:
		if o.NewSize > o.Size {
			// ext4: one size change; ALICE's default: zeros (after garbage) over the new bytes
			return len(e.other) == 1 || (len(e.bytes) == 1 && e.bytes[0] == paint{o.Size, o.NewSize, FillZeros})
		}
		for _, mi := range e.other {
			if mi.Kind == MTrunc && mi.Size == o.NewSize {
				return true
			}
		}
		return false
	case OpUnlink, OpRmdir:
		for _, mi := range e.other {
			if mi.Kind == MDelete {
				return true
			}
		}
		return false
	}
	return true // one micro-operation: creat, link, rename, sync, output
}

// candidate builds the state of ms with effects eff (see LegalUnder).
func candidate(ms []Micro, eff []effect, point int) State {
	st := State{Persisted: make([]bool, len(ms))}
	for j := range ms {
		op := ms[j].Op
		if op > point {
			continue
		}
		e := &eff[op]
		switch {
		case !e.any:
		case e.whole:
			st.Persisted[j] = true
		default:
			mi := &ms[j]
			same := func(x Micro) bool { return sameMicro(&x, mi) }
			if mi.Kind == MWrite {
				st.Persisted[j] = (mi.Fill == FillData && inData(e.bytes, mi.Offset, mi.Offset+mi.Len)) || slices.ContainsFunc(e.written, same)
			} else {
				st.Persisted[j] = slices.ContainsFunc(e.other, same)
			}
		}
	}
	// What a file no name reaches holds is not visible: persist what the state holds needs.
	for j := len(ms) - 1; j >= 0; j-- {
		if !st.Persisted[j] {
			continue
		}
		for _, d := range ms[j].Deps {
			if eff[ms[d].Op].free {
				st.Persisted[d] = true
			}
		}
	}
	return st
}

// inData reports whether [off, end) lies inside ranges painted with data.
func inData(ps []paint, off, end int64) bool {
	for _, p := range ps {
		if p.Fill == FillData && p.Off <= off && end <= p.End {
			return true
		}
	}
	return false
}

// sameMicro reports whether two micro-operations of the same logical operation have the same
// effect.
func sameMicro(a, b *Micro) bool {
	return a.Kind == b.Kind && a.Inode == b.Inode && a.Entry == b.Entry && a.Entry2 == b.Entry2 &&
		a.Offset == b.Offset && a.Len == b.Len && a.Fill == b.Fill && a.Size == b.Size
}

// legalAt reports whether st is a legal crash state of ms at a crash after logical operation
// point: closed under the dependencies, holding every barrier issued up to point and nothing
// issued later.
func legalAt(ms []Micro, st State, point int) bool {
	for j := range ms {
		if ms[j].Op > point {
			if st.Persisted[j] {
				return false
			}
			continue
		}
		if ms[j].Barrier() && !st.Persisted[j] {
			return false
		}
	}
	return Legal(ms, st)
}

// closeUnder adds to st every micro-operation a persisted one depends on, transitively.
func closeUnder(ms []Micro, st State) {
	for j := len(ms) - 1; j >= 0; j-- {
		if st.Persisted[j] {
			for _, d := range ms[j].Deps {
				st.Persisted[d] = true
			}
		}
	}
}

// pruneUnder removes from st every micro-operation whose dependencies did not all persist,
// transitively.
func pruneUnder(ms []Micro, st State) {
	for j := range ms {
		if !st.Persisted[j] {
			continue
		}
		for _, d := range ms[j].Deps {
			if !st.Persisted[d] {
				st.Persisted[j] = false
				break
			}
		}
	}
}

// view is what a crash state leaves, as Materialize builds it, without the bytes: the
// directory entries, and for each file its size and which operation's data, zeros or garbage
// each byte range holds (bytes no range covers are the snapshot's); and the output.
type view struct {
	entries map[entryKey]int
	files   map[int]*fileView
	output  int // persisted outputs
}

type fileView struct {
	size int64
	segs []vseg
}

// vseg is a byte range [off, end) holding fill, written by operation op (-1: the zeros of a
// size extension).
type vseg struct {
	off, end int64
	fill     Fill
	op       int
}

func newView(m *Model, ms []Micro, st State, point int) *view {
	v := &view{entries: make(map[entryKey]int, len(m.Entries)), files: map[int]*fileView{}}
	for k, id := range m.Entries {
		v.entries[k] = id
	}
	file := func(id int) *fileView {
		f, ok := v.files[id]
		if !ok {
			f = &fileView{size: m.Sizes[id]}
			v.files[id] = f
		}
		return f
	}
	for j := range ms {
		if ms[j].Op > point || !st.Persisted[j] {
			continue
		}
		switch mi := &ms[j]; mi.Kind {
		case MWrite:
			f := file(mi.Inode)
			if mi.Offset > f.size {
				f.paint(vseg{f.size, mi.Offset, FillZeros, -1})
			}
			op := mi.Op
			if mi.Fill == FillZeros {
				op = -1 // zeros are zeros, whichever operation exposed them
			}
			f.paint(vseg{mi.Offset, mi.Offset + mi.Len, mi.Fill, op})
			f.size = max(f.size, mi.Offset+mi.Len)
		case MTrunc:
			f := file(mi.Inode)
			if mi.Size > f.size {
				f.paint(vseg{f.size, mi.Size, FillZeros, -1})
			} else {
				f.paint(vseg{mi.Size, f.size, FillZeros, -2})
				f.segs = f.segs[:len(f.segs)-1] // cut: nothing past the new size
			}
			f.size = mi.Size
		case MCreate:
			v.entries[mi.Entry] = mi.Inode
		case MDelete:
			if v.entries[mi.Entry] == mi.Inode {
				delete(v.entries, mi.Entry)
			}
		case MRename:
			if v.entries[mi.Entry] == mi.Inode {
				delete(v.entries, mi.Entry)
			}
			v.entries[mi.Entry2] = mi.Inode
		case MOutput:
			v.output++
		}
	}
	return v
}

// paint writes s over f's ranges, merging neighbours that hold the same operation's fill.
func (f *fileView) paint(s vseg) {
	if s.end <= s.off {
		return
	}
	var out []vseg
	for _, q := range f.segs {
		if q.end <= s.off || q.off >= s.end {
			out = append(out, q)
			continue
		}
		if q.off < s.off {
			out = append(out, vseg{q.off, s.off, q.fill, q.op})
		}
		if q.end > s.end {
			out = append(out, vseg{s.end, q.end, q.fill, q.op})
		}
	}
	out = append(out, s)
	sort.Slice(out, func(i, j int) bool { return out[i].off < out[j].off })
	merged := out[:0]
	for _, q := range out {
		if n := len(merged); n > 0 && merged[n-1].end == q.off && merged[n-1].fill == q.fill && merged[n-1].op == q.op {
			merged[n-1].end = q.end
			continue
		}
		merged = append(merged, q)
	}
	f.segs = merged
}

// equal reports whether two views leave the same directory: the same entries, and the same
// size and ranges for every file an entry names.
func (v *view) equal(w *view) bool {
	if v.output != w.output || len(v.entries) != len(w.entries) {
		return false
	}
	for k, id := range v.entries {
		if w.entries[k] != id {
			return false
		}
	}
	for _, id := range v.entries {
		a, b := v.files[id], w.files[id]
		switch {
		case a == nil && b == nil:
		case a == nil || b == nil:
			return false
		case a.size != b.size || !slices.Equal(a.segs, b.segs):
			return false
		}
	}
	return true
}
