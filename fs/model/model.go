package model

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/trace"
)

// OpKind is a logical operation of the file system (ALICE, Pillai et al., OSDI'14, §4.1: the
// system calls of a trace become logical operations on inodes and directory entries).
type OpKind uint8

// Logical operations.
const (
	OpCreat   OpKind = iota + 1 // a new regular file's directory entry
	OpMkdir                     // a new directory's entry
	OpSymlink                   // a new symbolic link's entry
	OpLink                      // a new entry for an existing inode
	OpUnlink                    // an entry removed (the inode's data with its last link)
	OpRmdir                     // a directory's entry removed
	OpRename                    // an entry moved, replacing the destination's
	OpTrunc                     // a file's size changed (truncate, O_TRUNC, fallocate)
	OpWrite                     // bytes overwritten inside the file (fallocate's zeroing: zeros)
	OpAppend                    // bytes written at or past the end of the file
	OpFsync                     // fsync / fdatasync / msync / sync_file_range of one inode; the sync an O_DSYNC/O_SYNC write implies
	OpSync                      // sync / syncfs: everything
	OpOutput                    // the program wrote to its standard output or error
)

var opNames = [...]string{OpCreat: "creat", OpMkdir: "mkdir", OpSymlink: "symlink", OpLink: "link", OpUnlink: "unlink",
	OpRmdir: "rmdir", OpRename: "rename", OpTrunc: "trunc", OpWrite: "write", OpAppend: "append", OpFsync: "fsync",
	OpSync: "sync", OpOutput: "stdout"}

func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", int(k))
}

// entryKey names a directory entry: its parent directory's inode and its name.
type entryKey struct {
	Parent int
	Name   string
}

// Op is one logical operation with what the persistence models need to split it.
type Op struct {
	Index int
	Kind  OpKind
	// Inode is the file the operation acts on (for entries: the inode the entry names).
	Inode int
	// Entry is the entry created or removed; Entry2 the destination of a rename.
	Entry, Entry2 entryKey
	// Dest is the inode a rename or creation replaced (0: none); DestLast says the
	// destination lost its last link.
	Dest     int
	DestLast bool
	// Last: an unlink removed the inode's last link.
	Last bool
	// Offset, Data: a write or append. Size, NewSize: a truncation's sizes before and after;
	// for an append Size is the file's size before it.
	Offset        int64
	Data          []byte
	Size, NewSize int64
	// Range of a sync (0, 0: the whole file); Datasync: fdatasync, which the models treat as
	// fsync (a file's size changes and a directory's entries are their data).
	SyncOff, SyncLen int64
	Datasync         bool
	// DataOnly: sync_file_range(SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER), which writes
	// out the range's dirty pages and no metadata (sync_file_range(2)): it persists overwrites
	// of the range only (not appends, whose size is metadata), and commits no journal.
	DataOnly bool
	// WriteSync names the flag that made the write just before this sync durable when it
	// returned ("O_DSYNC", "O_SYNC"; pwritev2's RWF_DSYNC and RWF_SYNC are named as their
	// open(2) equivalents): the sync
	// is implied by that write, over its range (SyncOff, SyncLen), not a call of its own.
	WriteSync string
	// Fd of an output (1 or 2).
	Fd int
	// Path is the operation's path relative to the workload directory ("" the directory
	// itself); Path2 a rename's or link's destination.
	Path, Path2 string
	// Operation is the workload operation running (the last line the program began reading
	// from its standard input, OP_BEGIN), -1 before the first or without a workload.
	Operation int
	// Call is the system call's name; Event its trace record; Site and Stack its place.
	Call  string
	Event uint64
	Site  uint32
	Stack uint32
	PID   uint32
}

// Describe is the operation as ALICE prints it: `append("out", offset=0, count=5)`.
func (o *Op) Describe() string {
	switch o.Kind {
	case OpWrite, OpAppend:
		return fmt.Sprintf("%s(%q, offset=%d, count=%d)", o.Kind, o.Path, o.Offset, len(o.Data))
	case OpTrunc:
		return fmt.Sprintf("trunc(%q, from=%d, to=%d)", o.Path, o.Size, o.NewSize)
	case OpRename, OpLink:
		return fmt.Sprintf("%s(%q, %q)", o.Kind, o.Path, o.Path2)
	case OpFsync:
		if o.WriteSync != "" {
			return fmt.Sprintf("%s(%q, offset=%d, count=%d)", o.WriteSync, o.Path, o.SyncOff, o.SyncLen)
		}
		if o.Datasync {
			return fmt.Sprintf("fdatasync(%q)", o.Path)
		}
		return fmt.Sprintf("fsync(%q)", o.Path)
	case OpSync:
		return "sync()"
	case OpOutput:
		d := string(o.Data)
		if len(d) > 40 {
			d = d[:40] + "..."
		}
		if o.Fd == 2 {
			return fmt.Sprintf("stderr(%q)", d)
		}
		return fmt.Sprintf("stdout(%q)", d)
	}
	return fmt.Sprintf("%s(%q)", o.Kind, o.Path)
}

// InodeType is what an inode is.
type InodeType uint8

// Inode types.
const (
	TypeFile InodeType = iota
	TypeDir
	TypeSymlink
)

// Inode is a file, directory or symbolic link of the model. Initial is its path in the
// snapshot of the workload directory when it existed before the run ("" for one the program
// created).
type Inode struct {
	ID      int
	Type    InodeType
	Target  string // a symbolic link's text
	Initial string
	Mode    fs.FileMode
}

// Model is the recorded run as logical operations over the initial state of the workload
// directory (ALICE, Pillai et al., OSDI'14, §4.1).
type Model struct {
	// Base is the snapshot of the workload directory before the run.
	Base string
	// Inodes by id (index 0 unused; 1 is the workload directory).
	Inodes []Inode
	// Entries is the initial state's directory entries.
	Entries map[entryKey]int
	// Sizes is the initial size of every regular file, by inode.
	Sizes map[int]int64
	// Ops are the logical operations, in the order of the trace.
	Ops []Op
	// Operations counts the workload operations the program began (OP_BEGIN records).
	Operations int
	// Warnings say what could not be modeled.
	Warnings []string
}

// state is the model while the trace is replayed: entries and sizes now.
type state struct {
	m       *Model
	entries map[entryKey]int
	sizes   map[int]int64
	nlink   map[int]int
	handles map[uint64]int
	root    string
	op      int // the workload operation running
}

// Snapshot copies the workload directory dir into dst (which must not exist), keeping hard
// links, symbolic links and modes: the initial state crash directories are built from.
// Errors: a file that cannot be read, or a special file (device, socket, fifo).
func Snapshot(dir, dst string) error {
	err := exec.CopyTree(dst, dir, exec.TreeOptions{})
	if errors.Is(err, exec.ErrSpecialFile) {
		return fmt.Errorf("%w in the workload directory", err)
	}
	return err
}

// walkTree calls fn for every entry under dir (not dir itself), in lexical order, with its
// path, its path relative to dir and its information (not following symbolic links); fn may
// return filepath.SkipDir. Errors: the first of the walk's or fn's.
func walkTree(dir string, fn func(p, rel string, fi fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return fn(p, rel, fi)
	})
}

// BuildModel reads the snapshot base of the workload directory root (its path when the
// program ran) and the trace r of the run, and returns the logical operations. Errors: an
// unreadable snapshot, a trace error other than truncation (a truncated trace is modeled up to
// its cut, with a warning).
func BuildModel(base, root string, r *trace.Reader) (*Model, error) {
	m := &Model{Base: base, Inodes: []Inode{{}, {ID: 1, Type: TypeDir, Initial: "."}}, Entries: map[entryKey]int{}, Sizes: map[int]int64{}}
	ino := map[[2]uint64]int{}
	paths := map[string]int{".": 1}
	err := walkTree(base, func(p, rel string, fi fs.FileInfo) error {
		parent := paths[filepath.Dir(rel)]
		id := 0
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st != nil {
			id = ino[[2]uint64{uint64(st.Dev), st.Ino}]
		}
		if id == 0 {
			id = len(m.Inodes)
			in := Inode{ID: id, Initial: rel, Mode: fi.Mode().Perm()}
			switch {
			case fi.IsDir():
				in.Type = TypeDir
			case fi.Mode()&fs.ModeSymlink != 0:
				in.Type = TypeSymlink
				in.Target, _ = os.Readlink(p)
			default:
				m.Sizes[id] = fi.Size()
			}
			m.Inodes = append(m.Inodes, in)
			if st != nil {
				ino[[2]uint64{uint64(st.Dev), st.Ino}] = id
			}
		}
		paths[rel] = id
		m.Entries[entryKey{parent, filepath.Base(rel)}] = id
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	s := &state{m: m, entries: map[entryKey]int{}, sizes: map[int]int64{}, nlink: map[int]int{}, handles: map[uint64]int{}, root: root, op: -1}
	for k, v := range m.Entries {
		s.entries[k] = v
		s.nlink[v]++
	}
	for k, v := range m.Sizes {
		s.sizes[k] = v
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, trace.ErrTruncated) {
				m.Warnings = append(m.Warnings, "the trace was cut short: the run is modeled up to its last complete record")
				break
			}
			return m, err
		}
		switch ev.Kind {
		case trace.KindFSOp:
			s.fsop(ev)
		case trace.KindOutput:
			s.add(&Op{Kind: OpOutput, Fd: int(ev.Handle), Data: append([]byte(nil), ev.Data...)}, ev)
		case trace.KindOpBegin:
			s.op = int(ev.Op)
			m.Operations = max(m.Operations, s.op+1)
		case trace.KindWarning:
			m.Warnings = append(m.Warnings, ev.Text)
		}
	}
	return m, nil
}

// add appends o, issued by record ev during the running workload operation.
func (s *state) add(o *Op, ev *trace.Event) {
	o.Operation = s.op
	s.m.add(o, ev)
}

func (m *Model) add(o *Op, ev *trace.Event) {
	o.Index = len(m.Ops)
	o.Event, o.Site, o.Stack, o.PID = ev.Index, ev.Site, ev.Context, ev.Thread
	if ev.Kind == trace.KindFSOp {
		o.Call = ev.FS.String()
	} else {
		o.Call = "write"
	}
	m.Ops = append(m.Ops, *o)
}

func (s *state) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, w := range s.m.Warnings {
		if w == msg {
			return
		}
	}
	s.m.Warnings = append(s.m.Warnings, msg)
}

// rel returns an absolute path relative to the workload directory ("" for the directory).
func (s *state) rel(p string) (string, bool) {
	if p == s.root {
		return "", true
	}
	if !strings.HasPrefix(p, s.root+"/") {
		return "", false
	}
	return p[len(s.root)+1:], true
}

// lookup resolves a relative path to (parent inode, name, inode or 0).
func (s *state) lookup(rel string) (parent int, name string, id int, ok bool) {
	if rel == "" {
		return 0, "", 1, true
	}
	parts := strings.Split(rel, "/")
	dir := 1
	for _, p := range parts[:len(parts)-1] {
		next, ok := s.entries[entryKey{dir, p}]
		if !ok || s.m.Inodes[next].Type != TypeDir {
			return 0, "", 0, false
		}
		dir = next
	}
	name = parts[len(parts)-1]
	return dir, name, s.entries[entryKey{dir, name}], true
}

func (s *state) newInode(t InodeType) int {
	id := len(s.m.Inodes)
	s.m.Inodes = append(s.m.Inodes, Inode{ID: id, Type: t, Mode: 0o644})
	if t == TypeDir {
		s.m.Inodes[id].Mode = 0o755
	}
	return id
}

func (s *state) inodeOf(ev *trace.Event) (int, string) {
	if ev.Handle != 0 {
		if id, ok := s.handles[ev.Handle]; ok {
			r, _ := s.rel(ev.Path)
			return id, r
		}
	}
	r, ok := s.rel(ev.Path)
	if !ok {
		return 0, ""
	}
	_, _, id, _ := s.lookup(r)
	return id, r
}

// truncTo records a size change of inode id.
func (s *state) truncTo(id int, size int64, path string, ev *trace.Event) {
	old := s.sizes[id]
	if old == size {
		return
	}
	s.add(&Op{Kind: OpTrunc, Inode: id, Size: old, NewSize: size, Path: path}, ev)
	s.sizes[id] = size
}

func (s *state) fsop(ev *trace.Event) {
	switch ev.FS {
	case trace.FSOpen:
		rel, ok := s.rel(ev.Path)
		if !ok {
			return
		}
		if ev.FSFlags&trace.FSTmpfile != 0 {
			// open(2), O_TMPFILE: a new empty file without a name (nothing persists until
			// linkat names it).
			id := s.newInode(TypeFile)
			s.sizes[id] = 0
			s.handles[ev.Handle] = id
			return
		}
		parent, name, id, found := s.lookup(rel)
		if !found {
			s.warn("open of %s: its directory is not in the model", rel)
			return
		}
		if id == 0 {
			if ev.FSFlags&trace.FSCreate == 0 {
				s.warn("open of %s, which the model does not have", rel)
				return
			}
			id = s.newInode(TypeFile)
			s.entries[entryKey{parent, name}] = id
			s.nlink[id] = 1
			s.sizes[id] = 0
			s.add(&Op{Kind: OpCreat, Inode: id, Entry: entryKey{parent, name}, Path: rel}, ev)
		} else if ev.FSFlags&trace.FSTrunc != 0 && s.m.Inodes[id].Type == TypeFile {
			s.truncTo(id, 0, rel, ev)
		}
		s.handles[ev.Handle] = id
	case trace.FSWrite:
		id, rel := s.inodeOf(ev)
		if id == 0 || s.m.Inodes[id].Type != TypeFile {
			return
		}
		s.write(id, rel, int64(ev.FileOffset), ev.FSFlags&trace.FSAppend != 0, ev.Data, ev)
	case trace.FSCopyFileRange:
		id, rel := s.inodeOf(ev)
		if id == 0 || s.m.Inodes[id].Type != TypeFile {
			return
		}
		data, err := s.bytesOf(ev.Path2, int64(ev.Size), ev.Result)
		if err != nil {
			s.warn("copy_file_range into %s: %v; the copy is missing from the crash states", rel, err)
			return
		}
		s.write(id, rel, int64(ev.FileOffset), false, data, ev)
	case trace.FSTruncate:
		id, rel := s.inodeOf(ev)
		if id != 0 && s.m.Inodes[id].Type == TypeFile {
			s.truncTo(id, int64(ev.Size), rel, ev)
		}
	case trace.FSFallocate:
		id, rel := s.inodeOf(ev)
		if id != 0 && s.m.Inodes[id].Type == TypeFile {
			s.fallocate(id, rel, ev)
		}
	case trace.FSMkdir, trace.FSSymlink:
		target := ev.Path
		if ev.FS == trace.FSSymlink {
			target = ev.Path2
		}
		rel, ok := s.rel(target)
		if !ok {
			return
		}
		parent, name, id, found := s.lookup(rel)
		if !found || id != 0 {
			s.warn("%s of %s does not fit the model", ev.FS, rel)
			return
		}
		kind, t := OpMkdir, TypeDir
		if ev.FS == trace.FSSymlink {
			kind, t = OpSymlink, TypeSymlink
		}
		id = s.newInode(t)
		if t == TypeSymlink {
			s.m.Inodes[id].Target = ev.Path
			s.m.Inodes[id].Mode = 0o777
		}
		s.entries[entryKey{parent, name}] = id
		s.nlink[id] = 1
		s.add(&Op{Kind: kind, Inode: id, Entry: entryKey{parent, name}, Path: rel}, ev)
	case trace.FSUnlink, trace.FSRmdir:
		rel, ok := s.rel(ev.Path)
		if !ok {
			return
		}
		parent, name, id, found := s.lookup(rel)
		if !found || id == 0 {
			s.warn("%s of %s, which the model does not have", ev.FS, rel)
			return
		}
		k := entryKey{parent, name}
		delete(s.entries, k)
		s.nlink[id]--
		kind := OpUnlink
		if ev.FS == trace.FSRmdir {
			kind = OpRmdir
		}
		s.add(&Op{Kind: kind, Inode: id, Entry: k, Path: rel, Last: s.nlink[id] == 0, Size: s.sizes[id]}, ev)
	case trace.FSLink:
		from, ok1 := s.rel(ev.Path)
		to, ok2 := s.rel(ev.Path2)
		if !ok1 || !ok2 {
			return
		}
		_, _, id, f1 := s.lookup(from)
		if h, ok := s.handles[ev.Handle]; ok && ev.Handle != 0 {
			id, f1 = h, true // linkat of an open file (AT_EMPTY_PATH, /proc/self/fd/N): O_TMPFILE's
		}
		parent, name, old, f2 := s.lookup(to)
		if !f1 || !f2 || id == 0 || old != 0 {
			s.warn("link %s -> %s does not fit the model", from, to)
			return
		}
		s.entries[entryKey{parent, name}] = id
		s.nlink[id]++
		s.add(&Op{Kind: OpLink, Inode: id, Entry: entryKey{parent, name}, Path: from, Path2: to}, ev)
	case trace.FSRename:
		from, ok1 := s.rel(ev.Path)
		to, ok2 := s.rel(ev.Path2)
		if !ok1 || !ok2 {
			return
		}
		p1, n1, id, f1 := s.lookup(from)
		p2, n2, dest, f2 := s.lookup(to)
		if !f1 || !f2 || id == 0 {
			s.warn("rename %s -> %s does not fit the model", from, to)
			return
		}
		if ev.FSFlags&trace.FSExchange != 0 {
			s.warn("rename with RENAME_EXCHANGE (%s, %s) is modeled as two renames", from, to)
		}
		if dest == id {
			return // renaming a name onto a link of the same inode does nothing
		}
		o := &Op{Kind: OpRename, Inode: id, Entry: entryKey{p1, n1}, Entry2: entryKey{p2, n2}, Dest: dest, Path: from, Path2: to}
		delete(s.entries, entryKey{p1, n1})
		if dest != 0 {
			s.nlink[dest]--
			o.DestLast = s.nlink[dest] == 0
			o.Size = s.sizes[dest]
		}
		s.entries[entryKey{p2, n2}] = id
		s.add(o, ev)
	case trace.FSFsync, trace.FSFdatasync, trace.FSSyncFileRange, trace.FSMsync:
		id, rel := s.inodeOf(ev)
		if id == 0 {
			return
		}
		o := &Op{Kind: OpFsync, Inode: id, Path: rel, Datasync: ev.FS != trace.FSFsync}
		if ev.FS == trace.FSSyncFileRange || ev.FS == trace.FSMsync {
			o.SyncOff, o.SyncLen = int64(ev.FileOffset), int64(ev.Size)
		}
		o.DataOnly = ev.FS == trace.FSSyncFileRange
		s.add(o, ev)
	case trace.FSSync, trace.FSSyncfs:
		s.add(&Op{Kind: OpSync}, ev)
	}
}

// writeSync adds the sync a write through an O_DSYNC or O_SYNC descriptor, or with RWF_DSYNC or
// RWF_SYNC, implies (open(2): "by the time write(2) returns, the output data has been
// transferred to the underlying hardware, along with any file metadata that would be required
// to retrieve that data"; O_SYNC adds the rest of the file's metadata; pwritev2(2): RWF_DSYNC
// and RWF_SYNC are their per-write equivalents): an fdatasync (fsync) of the write's byte range
// issued right after it. Neither persists the file's directory entry, as fdatasync and fsync
// do not. The models give a sync of a range exactly that: the range's data and the file's size
// changes, durable before anything issued later.
func (s *state) writeSync(id int, rel string, n int64, ev *trace.Event) {
	off := int64(ev.FileOffset)
	if ev.FSFlags&trace.FSAppend != 0 {
		off = s.sizes[id] - n
	}
	name := "O_DSYNC"
	if ev.FSFlags&trace.FSFileSync != 0 {
		name = "O_SYNC"
	}
	s.add(&Op{Kind: OpFsync, Inode: id, Path: rel, SyncOff: off, SyncLen: n,
		Datasync: ev.FSFlags&trace.FSFileSync == 0, WriteSync: name}, ev)
}

// fallocate models fallocate(2) on file id by its mode: plain allocation extends the size to
// the range's end when it is past it (the new bytes read as zeros); FALLOC_FL_KEEP_SIZE alone
// allocates without any visible change; FALLOC_FL_PUNCH_HOLE (always with KEEP_SIZE) zeros the
// range's bytes inside the file; FALLOC_FL_ZERO_RANGE zeros the range and, without KEEP_SIZE,
// extends the size to its end. Zeroing is an overwrite of zeros (OpWrite); an extension a size
// change (OpTrunc). The converter refuses COLLAPSE_RANGE and INSERT_RANGE.
func (s *state) fallocate(id int, rel string, ev *trace.Event) {
	off, end := int64(ev.FileOffset), int64(ev.FileOffset+ev.Size)
	if off < 0 || end < off { // past what a file can hold: no record of a real call
		s.warn("fallocate on %s at offset %d of %d bytes is out of range: not modeled", rel, ev.FileOffset, ev.Size)
		return
	}
	size := s.sizes[id]
	if ev.FSFlags&(trace.FSPunchHole|trace.FSZeroRange) != 0 {
		if zEnd := min(end, size); zEnd > off {
			if zEnd-off > maxZeroRange {
				s.warn("fallocate zeroing %d bytes of %s is modeled only up to %d bytes", zEnd-off, rel, maxZeroRange)
				zEnd = off + maxZeroRange
			}
			s.add(&Op{Kind: OpWrite, Inode: id, Offset: off, Data: make([]byte, zEnd-off), Path: rel}, ev)
		}
	}
	if ev.FSFlags&(trace.FSKeepSize|trace.FSPunchHole) == 0 && end > size {
		s.truncTo(id, end, rel, ev)
	}
}

// maxZeroRange bounds the bytes one fallocate zeroing is modeled with (64 MiB): its zeros are
// held in memory as a write's data.
const maxZeroRange = 64 << 20

// write records data written to file id at off (at its end when atEnd): an overwrite of the
// bytes inside the file and an append of the rest, after a size change when off is past the
// end (a hole of zeros). With flag dsync or sync (an O_DSYNC or O_SYNC descriptor, RWF_DSYNC or
// RWF_SYNC) the sync the write implies follows (writeSync).
func (s *state) write(id int, rel string, off int64, atEnd bool, data []byte, ev *trace.Event) {
	if ev.FSFlags&(trace.FSDataSync|trace.FSFileSync) != 0 && len(data) > 0 {
		defer s.writeSync(id, rel, int64(len(data)), ev)
	}
	size := s.sizes[id]
	if atEnd {
		off = size
	}
	if off > size { // a write past the end leaves a hole of zeros: a size change first
		s.truncTo(id, off, rel, ev)
		size = off
	}
	if end := off + int64(len(data)); off < size && end > size {
		// Split: the part inside the file overwrites, the rest appends.
		n := size - off
		s.add(&Op{Kind: OpWrite, Inode: id, Offset: off, Data: append([]byte(nil), data[:n]...), Path: rel}, ev)
		off, data = size, data[n:]
	}
	if len(data) == 0 {
		return
	}
	if off >= size {
		s.add(&Op{Kind: OpAppend, Inode: id, Offset: off, Size: size, Data: append([]byte(nil), data...), Path: rel}, ev)
		s.sizes[id] = off + int64(len(data))
	} else {
		s.add(&Op{Kind: OpWrite, Inode: id, Offset: off, Data: append([]byte(nil), data...), Path: rel}, ev)
	}
}

// bytesOf returns n bytes at off of the file at path (absolute) as the run has left it so far:
// its snapshot's bytes with the logical operations on it applied (copy_file_range's source).
// Errors: a path outside the workload directory or not in the model, or a file shorter than
// off+n (the model and the run disagree).
func (s *state) bytesOf(path string, off, n int64) ([]byte, error) {
	rel, ok := s.rel(path)
	if !ok {
		return nil, fmt.Errorf("the source %s is outside the workload directory", path)
	}
	id, _ := s.inodeOf(&trace.Event{Path: path})
	if id == 0 || s.m.Inodes[id].Type != TypeFile {
		return nil, fmt.Errorf("the source %s is not a file of the model", rel)
	}
	var buf []byte
	if in := s.m.Inodes[id]; in.Initial != "" {
		b, err := os.ReadFile(filepath.Join(s.m.Base, in.Initial))
		if err != nil {
			return nil, fmt.Errorf("reading the snapshot of %s: %w", rel, err)
		}
		buf = b
	}
	resize := func(size int64) {
		if size <= int64(len(buf)) {
			buf = buf[:size]
			return
		}
		buf = append(buf, make([]byte, size-int64(len(buf)))...)
	}
	for i := range s.m.Ops {
		o := &s.m.Ops[i]
		if o.Inode != id {
			continue
		}
		switch o.Kind {
		case OpTrunc:
			resize(o.NewSize)
		case OpWrite, OpAppend:
			if end := o.Offset + int64(len(o.Data)); end > int64(len(buf)) {
				resize(end)
			}
			copy(buf[o.Offset:], o.Data)
		}
	}
	if off < 0 || n < 0 || off > int64(len(buf)) || n > int64(len(buf))-off {
		return nil, fmt.Errorf("the source %s holds %d bytes, not the %d at offset %d the call copied", rel, len(buf), n, off)
	}
	return buf[off : off+n], nil
}
