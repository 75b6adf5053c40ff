package model

import (
	"fmt"
	"slices"
	"strings"
)

// MicroKind is a disk-level operation: what a logical operation becomes under a persistence
// model (ALICE, Pillai et al., OSDI'14, §3.2 and §4.1: micro-operations).
type MicroKind uint8

// Micro-operations.
const (
	MWrite  MicroKind = iota + 1 // bytes (or zeros, or garbage) reach a file's blocks, extending it if past its end
	MTrunc                       // a file's size becomes Size
	MCreate                      // directory entry Entry names Inode
	MDelete                      // directory entry Entry is removed
	MRename                      // atomically: Entry removed, Entry2 names Inode
	MSync                        // a sync returned: a barrier
	MOutput                      // the program printed: a barrier the user saw
)

// Fill says what an MWrite writes.
type Fill uint8

// Fills.
const (
	FillData    Fill = iota // the operation's bytes
	FillZeros               // zeros (a size extension before its data)
	FillGarbage             // garbage (blocks allocated, data not yet written)
)

// Micro is one micro-operation with the micro-operations that must persist before it.
type Micro struct {
	Op     int // index of its logical operation in Model.Ops
	Kind   MicroKind
	Inode  int
	Entry  entryKey
	Entry2 entryKey
	Offset int64
	Data   []byte // MWrite with FillData
	Len    int64  // MWrite length
	Fill   Fill
	Size   int64 // MTrunc
	// Deps are the indexes of the micro-operations that persist before this one (the APM's
	// persist-before relation; not transitively closed).
	Deps []int
	// What describes a partial state of its operation that stops after this micro-operation
	// (ALICE's atomicity explanations), e.g. "garbage written".
	What string
}

// Split is how a model cuts writes, appends and truncations into micro-operations that persist
// independently: Count pieces of equal size, or pieces ending at multiples of Aligned bytes
// (ALICE, OSDI'14 §4.2: the default APM explores splits into 1 and 3 pieces and 4 KiB blocks).
type Split struct {
	Count   int
	Aligned int64
}

func (s Split) String() string {
	if s.Aligned > 0 {
		return fmt.Sprintf("%d-byte blocks", s.Aligned)
	}
	if s.Count <= 1 {
		return "whole"
	}
	return fmt.Sprintf("%d pieces", s.Count)
}

// maxPieces bounds the pieces of one operation under an aligned split: a longer range (a
// hole of terabytes before a write far past the end) is cut at multiples of a multiple of the
// alignment, so that a model stays as small as its trace.
const maxPieces = 1024

// pieces cuts [off, off+n) by s: at most maxPieces pieces for an aligned split.
func (s Split) pieces(off, n int64) [][2]int64 {
	var out [][2]int64
	if n <= 0 {
		return nil
	}
	if s.Aligned > 0 {
		a := s.Aligned
		if blocks := n / a; blocks >= maxPieces {
			a *= (blocks + maxPieces - 1) / (maxPieces - 1)
		}
		for n > 0 {
			c := min(a-off%a, n)
			out = append(out, [2]int64{off, c})
			off, n = off+c, n-c
		}
		return out
	}
	k := int64(max(s.Count, 1))
	per := (n + k - 1) / k
	for n > 0 {
		c := min(per, n)
		out = append(out, [2]int64{off, c})
		off, n = off+c, n-c
	}
	return out
}

// APM is an abstract persistence model (ALICE, Pillai et al., OSDI'14, §3.2, §4.2): how each
// logical operation splits into micro-operations and which micro-operations must persist
// before which. A crash state is a set of micro-operations closed under that relation.
type APM struct {
	Name string
	Doc  string
	// Base is the split of ordering and prefix exploration; Splits those the atomicity
	// exploration ("split" strategy) also tries.
	Base   Split
	Splits []Split
	build  func(m *Model, sp Split) []Micro
}

// Build returns the micro-operations of m's logical operations under split sp, in program
// order, with their dependencies.
func (a *APM) Build(m *Model, sp Split) []Micro { return a.build(m, sp) }

// APMs returns the persistence models scry knows, default first.
func APMs() []*APM { return []*APM{apmDefault, apmExt4Ordered, apmExt4Journal} }

// APMByName returns the model called name. Errors: an unknown name (the error lists them).
func APMByName(name string) (*APM, error) {
	var names []string
	for _, a := range APMs() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return nil, fmt.Errorf("unknown persistence model %q (known: %s)", name, strings.Join(names, ", "))
}

// apmDefault is ALICE's default APM (Pillai et al., OSDI'14, §4.2): any reordering between
// syncs; writes, appends and truncations split into pieces that persist independently; an
// append may expose zeros or garbage before its data; a rename is atomic (as POSIX promises; ALICE's
// code could also split it); an fsync of a file does
// not persist its directory entry (an fsync of the directory does).
var apmDefault = &APM{
	Name:   "default",
	Doc:    "ALICE's default: any reordering between syncs, writes split into blocks that persist independently, appends may expose zeros or garbage, a file's fsync does not persist its directory entry",
	Base:   Split{Count: 1},
	Splits: []Split{{Count: 1}, {Count: 3}, {Aligned: 4096}},
	build: func(m *Model, sp Split) []Micro {
		ms := splitOps(m, sp, false)
		barrierDeps(ms, m, false)
		return ms
	},
}

// apmExt4Ordered models ext4 with data=ordered and delayed allocation, its default mount
// options (ALICE, OSDI'14, Table 1, the persistence properties of ext4-ordered; ext4Deps gives
// the rules): directory operations and truncations are journaled, so atomic and persisted in
// program order; an append's data and the size that exposes it persist together, 4 KiB block by
// block, in the file's order, after the journal operations issued before it but not before later
// ones; overwrites persist in any order, block by block; fsync commits the journal and the
// file's data; a rename over an existing file first persists the source's data
// (auto_da_alloc).
var apmExt4Ordered = &APM{
	Name:   "ext4-ordered",
	Doc:    "ext4 data=ordered with delayed allocation: directory operations and truncations atomic and in program order, appends without garbage but after them (not before later ones), overwrites reordered, 4 KiB blocks atomic, a rename over a file after its data, fsync commits the journal",
	Base:   Split{Aligned: 4096},
	Splits: []Split{{Aligned: 4096}},
	build: func(m *Model, sp Split) []Micro {
		ms := splitOps(m, sp, true)
		ext4Deps(ms, m, false)
		return ms
	},
}

// apmExt4Journal models ext4 with data=journal: every operation, data included, goes through
// the journal, so micro-operations persist in program order; a write larger than a block may
// be cut at block boundaries by a transaction commit.
var apmExt4Journal = &APM{
	Name:   "ext4-journal",
	Doc:    "ext4 data=journal: everything persists in program order, writes cut only at 4 KiB block boundaries",
	Base:   Split{Aligned: 4096},
	Splits: []Split{{Aligned: 4096}},
	build: func(m *Model, sp Split) []Micro {
		ms := splitOps(m, sp, true)
		ext4Deps(ms, m, true)
		return ms
	},
}

// splitOps turns logical operations into micro-operations. atomicMeta (the ext4 models) keeps
// directory operations and truncations whole and appends without zeros or garbage.
func splitOps(m *Model, sp Split, atomicMeta bool) []Micro {
	var ms []Micro
	add := func(mi Micro) { ms = append(ms, mi) }
	for i := range m.Ops {
		o := &m.Ops[i]
		switch o.Kind {
		case OpCreat, OpMkdir, OpSymlink, OpLink:
			add(Micro{Op: i, Kind: MCreate, Inode: o.Inode, Entry: o.Entry})
		case OpUnlink, OpRmdir:
			if o.Last && o.Size > 0 && !atomicMeta {
				truncDown(&ms, i, o.Inode, o.Size, 0, sp, "unlinked file partly truncated")
			}
			add(Micro{Op: i, Kind: MDelete, Inode: o.Inode, Entry: o.Entry})
		case OpRename:
			// Atomic in every model: POSIX promises it, and the update protocols that are
			// correct on every file system (write a copy, fsync it, rename it over the
			// original) rely on it. ALICE's code could also split it; scry does not.
			add(Micro{Op: i, Kind: MRename, Inode: o.Inode, Entry: o.Entry, Entry2: o.Entry2})
		case OpTrunc:
			switch {
			case atomicMeta:
				add(Micro{Op: i, Kind: MTrunc, Inode: o.Inode, Size: o.NewSize})
			case o.NewSize < o.Size:
				truncDown(&ms, i, o.Inode, o.Size, o.NewSize, sp, "partly truncated")
			default:
				for _, p := range sp.pieces(o.Size, o.NewSize-o.Size) {
					add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Fill: FillGarbage, What: "extended with garbage"})
					add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Fill: FillZeros, What: "partly extended"})
				}
			}
		case OpAppend:
			for _, p := range sp.pieces(o.Offset, int64(len(o.Data))) {
				d := o.Data[p[0]-o.Offset : p[0]-o.Offset+p[1]]
				if !atomicMeta {
					add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Fill: FillZeros, What: "appended zeros"})
					add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Fill: FillGarbage, What: "appended garbage"})
				}
				add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Data: d, What: "partly appended"})
			}
		case OpWrite:
			for _, p := range sp.pieces(o.Offset, int64(len(o.Data))) {
				d := o.Data[p[0]-o.Offset : p[0]-o.Offset+p[1]]
				add(Micro{Op: i, Kind: MWrite, Inode: o.Inode, Offset: p[0], Len: p[1], Data: d, What: "partly overwritten"})
			}
		case OpFsync, OpSync:
			add(Micro{Op: i, Kind: MSync, Inode: o.Inode})
		case OpOutput:
			add(Micro{Op: i, Kind: MOutput})
		}
	}
	return ms
}

// truncDown shrinks a file from size to to in pieces, the end first.
func truncDown(ms *[]Micro, op, inode int, size, to int64, sp Split, what string) {
	ps := sp.pieces(to, size-to)
	for j := len(ps) - 1; j >= 0; j-- {
		*ms = append(*ms, Micro{Op: op, Kind: MTrunc, Inode: inode, Size: ps[j][0], What: what})
	}
}

// Barrier reports whether a micro-operation is a sync or an output.
func (mi *Micro) Barrier() bool { return mi.Kind == MSync || mi.Kind == MOutput }

// entryParents returns the directories whose entries a micro-operation changes.
func (mi *Micro) entryParents() []int {
	switch mi.Kind {
	case MCreate, MDelete:
		return []int{mi.Entry.Parent}
	case MRename:
		return []int{mi.Entry.Parent, mi.Entry2.Parent}
	}
	return nil
}

// covers reports whether sync op s (a logical fsync or sync) persists micro-operation mi under
// ALICE's default rules: a file's writes in the synced range and its truncations; a directory's
// entries (with fdatasync too: they are the directory's data); sync_file_range its range's
// overwrites only (sync_file_range(2): "none of these operations writes out the file's
// metadata", so an append's bytes, which need the size, are not guaranteed); sync() everything.
func covers(m *Model, s *Op, mi *Micro) bool {
	if s.Kind == OpSync {
		return true
	}
	if s.DataOnly && (mi.Kind != MWrite || m.Ops[mi.Op].Kind != OpWrite) {
		return false
	}
	switch mi.Kind {
	case MWrite:
		if mi.Inode != s.Inode {
			return false
		}
		if s.SyncLen == 0 { // the whole file, or from SyncOff to its end
			return mi.Offset+mi.Len > s.SyncOff
		}
		return mi.Offset < s.SyncOff+s.SyncLen && mi.Offset+mi.Len > s.SyncOff
	case MTrunc:
		return mi.Inode == s.Inode
	case MCreate, MDelete, MRename:
		// A directory's entries are its data: fdatasync persists them as fsync does.
		return slices.Contains(mi.entryParents(), s.Inode)
	}
	return false
}

// deps builds the persist-before relation of a build, micro-operation by micro-operation in
// program order (every dependency points to an earlier micro-operation). It keeps the set of
// micro-operations guaranteed durable at the current point (the transitive dependencies of the
// last barrier: since each barrier depends on the one before, the set only grows), so that a sync
// depends only on what it covers and is not durable yet, which keeps the relation small.
type deps struct {
	ms      []Micro
	durable []bool
	last    int // the last barrier (sync or output), -1 before the first
}

func newDeps(ms []Micro) *deps { return &deps{ms: ms, durable: make([]bool, len(ms)), last: -1} }

// add makes micro-operation i depend on j (j < i), once.
func (d *deps) add(i, j int) {
	if j < 0 || slices.Contains(d.ms[i].Deps, j) {
		return
	}
	d.ms[i].Deps = append(d.ms[i].Deps, j)
}

// pending reports whether micro-operation j may still be lost at the current point.
func (d *deps) pending(j int) bool { return !d.durable[j] }

// barrier records micro-operation i, a barrier, as the last one and marks everything it
// depends on, transitively, durable.
func (d *deps) barrier(i int) {
	d.last = i
	stack := []int{i}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.durable[x] {
			continue
		}
		d.durable[x] = true
		stack = append(stack, d.ms[x].Deps...)
	}
}

// barrierDeps gives ALICE's default dependencies (OSDI'14 §4.2): every micro-operation persists
// after the last sync or output before it; a sync after every earlier micro-operation it covers
// (covers) that is not durable yet. Nothing else is ordered: between two barriers any subset of
// the micro-operations may persist, in any order.
func barrierDeps(ms []Micro, m *Model, _ bool) {
	d := newDeps(ms)
	for i := range ms {
		mi := &ms[i]
		d.add(i, d.last)
		if mi.Kind == MSync {
			s := &m.Ops[mi.Op]
			for j := 0; j < i; j++ {
				if d.pending(j) && !ms[j].Barrier() && covers(m, s, &ms[j]) {
					d.add(i, j)
				}
			}
		}
		if mi.Barrier() {
			d.barrier(i)
		}
	}
}

// ext4Deps gives the ext4 models' dependencies (ALICE, OSDI'14, §2.3 and Table 1, the
// persistence properties of ext4; the kernel's Documentation/admin-guide/ext4.rst):
//
//   - journaled micro-operations persist in program order (one journal, transactions committed
//     in order): directory operations and truncations, and with journalData (data=journal)
//     every write too;
//   - with data=ordered and delayed allocation (ext4's default), the data of an append reaches
//     the disk with the size change that exposes it (no zeros or garbage) when its blocks are
//     allocated, at writeback: after the journal operations issued before it, after the
//     file's earlier appends (the size grows in order), but not before later journal
//     operations ("Append -> any op" does not hold on ext4 with delalloc);
//   - an overwrite persists in any order, block by block, except that it cannot persist before
//     the not yet durable append that created the bytes it overwrites (same page);
//   - fsync and fdatasync commit the journal (every earlier journaled micro-operation) and
//     write the file's data; sync writes everything;
//   - a rename that replaces an existing file persists after the renamed file's data
//     (auto_da_alloc: ext4 allocates and writes it before committing the rename);
//   - every micro-operation persists after the last sync or output.
func ext4Deps(ms []Micro, m *Model, journalData bool) {
	d := newDeps(ms)
	lastMeta := -1
	lastAppend := map[int]int{}
	for i := range ms {
		mi := &ms[i]
		o := &m.Ops[mi.Op]
		d.add(i, d.last)
		appendData := mi.Kind == MWrite && o.Kind == OpAppend && !journalData
		// sync_file_range writes data only: it commits no journal transaction.
		journaled := mi.Kind != MOutput && (journalData || mi.Kind != MWrite) && !(mi.Kind == MSync && o.DataOnly)
		switch {
		case journaled:
			d.add(i, lastMeta)
		case appendData:
			d.add(i, lastMeta)
			if j, ok := lastAppend[mi.Inode]; ok {
				d.add(i, j)
			}
		case mi.Kind == MWrite && !journalData: // an overwrite
			for j := 0; j < i; j++ {
				mj := &ms[j]
				if d.pending(j) && mj.Kind == MWrite && mj.Inode == mi.Inode && m.Ops[mj.Op].Kind == OpAppend &&
					mj.Offset < mi.Offset+mi.Len && mi.Offset < mj.Offset+mj.Len {
					d.add(i, j)
				}
			}
		}
		if mi.Kind == MSync || (mi.Kind == MRename && o.Dest != 0 && !journalData) {
			for j := 0; j < i; j++ {
				if !d.pending(j) || ms[j].Kind != MWrite {
					continue
				}
				if (mi.Kind == MSync && covers(m, o, &ms[j])) || (mi.Kind == MRename && ms[j].Inode == mi.Inode) {
					d.add(i, j)
				}
			}
		}
		if journaled {
			lastMeta = i
		}
		if appendData {
			lastAppend[mi.Inode] = i
		}
		if mi.Barrier() {
			d.barrier(i)
		}
	}
}
