package model

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/scry-pm/scry/internal/exec"
)

// State is a crash state: which micro-operations of a build persisted (Persisted[i] for
// micro-operation i). It is legal when closed under the dependencies (Legal).
type State struct {
	Persisted []bool
}

// LegalStates returns every legal crash state of the micro-operations ms at a crash after
// micro-operation end-1 (ALICE, OSDI'14, §3.2: the states an APM allows): the sets of
// micro-operations before end that hold every barrier before end (a sync that returned, an
// output the user saw) and are closed under the dependencies. States are enumerated in a fixed
// order (micro-operation 0 lost before persisted, then 1, ...). It returns nil and false when
// there are more than limit of them.
func LegalStates(ms []Micro, end, limit int) ([]State, bool) {
	var out []State
	cur := make([]bool, len(ms))
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == end {
			if len(out) >= limit {
				return false
			}
			out = append(out, State{Persisted: slices.Clone(cur)})
			return true
		}
		ok := true
		for _, d := range ms[i].Deps {
			if !cur[d] {
				ok = false
				break
			}
		}
		if !ms[i].Barrier() && !rec(i+1) {
			return false
		}
		if ok {
			cur[i] = true
			r := rec(i + 1)
			cur[i] = false
			return r
		}
		return true
	}
	if !rec(0) {
		return nil, false
	}
	return out, true
}

// Free returns the micro-operations before end that a crash after end-1 may lose: those no
// barrier before end guarantees (not among the transitive dependencies of a barrier).
func Free(ms []Micro, end int) []int {
	durable := make([]bool, end)
	for b := end - 1; b >= 0; b-- {
		if !ms[b].Barrier() {
			continue
		}
		stack := []int{b}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if durable[x] {
				continue
			}
			durable[x] = true
			stack = append(stack, ms[x].Deps...)
		}
		break // each barrier depends on the one before it
	}
	var free []int
	for j := 0; j < end; j++ {
		if !durable[j] {
			free = append(free, j)
		}
	}
	return free
}

// Legal reports whether every persisted micro-operation's dependencies persisted too.
func Legal(ms []Micro, st State) bool {
	for i, p := range st.Persisted {
		if !p {
			continue
		}
		for _, d := range ms[i].Deps {
			if !st.Persisted[d] {
				return false
			}
		}
	}
	return true
}

// fileImage is a regular file of a crash state: its initial content (a path in the snapshot,
// or none) and the micro-operations applied to it, in order.
type fileImage struct {
	base  string
	ops   []*Micro
	dirty bool
}

// Materialize builds crash state st of the micro-operations ms of model m in the directory dst
// (which must not exist): the snapshot's entries with the persisted directory operations
// applied, and every file with its persisted writes and truncations. A file no persisted
// micro-operation touched is cloned from the snapshot (copy-on-write, FICLONE) where the file
// system can, and copied otherwise, so the checker can modify the state freely without
// reaching the snapshot; a changed file is cloned or copied, then patched. An inode named by
// two entries becomes hard links. It returns the standard output and standard error printed by
// the persisted outputs. Errors: I/O errors creating the files.
func Materialize(m *Model, ms []Micro, st State, dst string) (stdout, stderr []byte, err error) {
	entries := make(map[entryKey]int, len(m.Entries))
	for k, v := range m.Entries {
		entries[k] = v
	}
	files := map[int]*fileImage{}
	img := func(id int) *fileImage {
		f, ok := files[id]
		if !ok {
			f = &fileImage{}
			if id < len(m.Inodes) && m.Inodes[id].Initial != "" {
				f.base = filepath.Join(m.Base, m.Inodes[id].Initial)
			}
			files[id] = f
		}
		return f
	}
	for i := range ms {
		if !st.Persisted[i] {
			continue
		}
		mi := &ms[i]
		switch mi.Kind {
		case MWrite, MTrunc:
			f := img(mi.Inode)
			f.ops = append(f.ops, mi)
			f.dirty = true
		case MCreate:
			entries[mi.Entry] = mi.Inode
		case MDelete:
			if entries[mi.Entry] == mi.Inode {
				delete(entries, mi.Entry)
			}
		case MRename:
			if entries[mi.Entry] == mi.Inode {
				delete(entries, mi.Entry)
			}
			entries[mi.Entry2] = mi.Inode
		case MOutput:
			if o := &m.Ops[mi.Op]; o.Fd == 2 {
				stderr = append(stderr, o.Data...)
			} else {
				stdout = append(stdout, o.Data...)
			}
		}
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return nil, nil, err
	}
	children := map[int][]entryKey{}
	for k := range entries {
		children[k.Parent] = append(children[k.Parent], k)
	}
	made := map[int]string{1: dst}
	var walk func(dir int, path string, depth int) error
	walk = func(dir int, path string, depth int) error {
		ks := children[dir]
		sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
		for _, k := range ks {
			id := entries[k]
			p := filepath.Join(path, k.Name)
			in := &m.Inodes[id]
			if first, ok := made[id]; ok {
				if in.Type == TypeDir {
					continue // a directory reached twice (an impossible reordering): keep the first
				}
				if err := os.Link(first, p); err != nil {
					return err
				}
				continue
			}
			made[id] = p
			switch in.Type {
			case TypeDir:
				if err := os.Mkdir(p, in.Mode|0o700); err != nil {
					return err
				}
				if depth < 256 {
					if err := walk(id, p, depth+1); err != nil {
						return err
					}
				}
			case TypeSymlink:
				if err := os.Symlink(in.Target, p); err != nil {
					return err
				}
			default:
				if err := writeImage(p, img(id), in.Mode); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return stdout, stderr, walk(1, dst, 0)
}

// writeImage creates a file of a crash state.
func writeImage(path string, f *fileImage, mode os.FileMode) error {
	if f.base != "" {
		if err := exec.CloneFile(path, f.base, mode|0o600); err != nil {
			return err
		}
	} else if err := os.WriteFile(path, nil, mode|0o600); err != nil {
		return err
	}
	if !f.dirty {
		return nil
	}
	out, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	for _, mi := range f.ops {
		switch mi.Kind {
		case MTrunc:
			if err := out.Truncate(mi.Size); err != nil {
				return err
			}
		case MWrite:
			var data []byte
			switch mi.Fill {
			case FillData:
				data = mi.Data
			case FillZeros:
				data = make([]byte, mi.Len)
			case FillGarbage:
				data = garbage(mi.Offset, mi.Len)
			}
			if _, err := out.WriteAt(data, mi.Offset); err != nil {
				return err
			}
		}
	}
	return out.Close()
}

// garbage returns n bytes standing for blocks whose data never reached the disk: pseudo-random
// (seeded by the offset, so a state is the same every time it is built) with the high bit set,
// so that they are never ASCII text and a checker cannot mistake them for text the program
// wrote.
func garbage(off, n int64) []byte {
	r := rand.New(rand.NewPCG(uint64(off), uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32()) | 0x80
	}
	return b
}
