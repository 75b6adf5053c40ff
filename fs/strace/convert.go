package strace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// stringLimit is the -s strace is run with: the bytes of one write it prints. A longer write is
// cut, and the conversion warns that its data is incomplete.
const stringLimit = 16 << 20

// tracedCalls are the system calls the recording asks strace for (-e trace=): every call that
// changes files or directories, the ones that move a descriptor's file offset, create or
// duplicate descriptors, change a process's working directory or create processes.
var tracedCalls = []string{
	"open", "openat", "openat2", "creat", "close", "close_range", "dup", "dup2", "dup3", "fcntl",
	"write", "pwrite64", "writev", "pwritev", "pwritev2", "read", "readv", "lseek",
	"truncate", "ftruncate", "fallocate", "rename", "renameat", "renameat2", "link", "linkat",
	"symlink", "symlinkat", "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat", "fsync", "fdatasync",
	"sync", "syncfs", "sync_file_range", "msync", "mmap", "munmap", "chdir", "fchdir", "clone",
	"clone3", "fork", "vfork", "execve", "execveat", "copy_file_range", "sendfile", "splice",
}

// rawCalls are printed undecoded (-e raw=): only their return value matters, and decoding
// would print every byte read.
var rawCalls = []string{"read", "readv"}

// openFile is an open file description: shared by duplicated descriptors and across fork.
type openFile struct {
	handle   uint64 // serial of the open, 0 for the inherited descriptors
	path     string
	offset   int64
	append   bool
	output   int  // 1 or 2: the program's standard output or error (inherited)
	input    bool // the program's standard input (inherited): the workload
	inDir    bool // path is under the workload directory
	writable bool
	// sync is trace.FSDataSync (O_DSYNC) or trace.FSFileSync (O_SYNC), set at open: every
	// write through it is durable when it returns (open(2)). fcntl(F_SETFL) cannot change it.
	sync uint32
}

// syncFlags returns the durability an open(2) flag set or a pwritev2(2) flag set asks of a
// write: trace.FSFileSync for O_SYNC (strace prints O_SYNC for __O_SYNC|O_DSYNC; O_RSYNC is
// O_SYNC on Linux) or RWF_SYNC, trace.FSDataSync for O_DSYNC or RWF_DSYNC, 0 otherwise.
func syncFlags(flags string) uint32 {
	switch {
	case hasFlag(flags, "O_SYNC") || hasFlag(flags, "O_RSYNC") || hasFlag(flags, "RWF_SYNC"):
		return trace.FSFileSync
	case hasFlag(flags, "O_DSYNC") || hasFlag(flags, "RWF_DSYNC"):
		return trace.FSDataSync
	}
	return 0
}

type fdEntry struct {
	of      *openFile
	cloexec bool
}

type fdTable struct{ fds map[int]fdEntry }

type mapping struct {
	addr, length uint64
	of           *openFile
	off          uint64
}

type proc struct {
	cwd  *string
	fds  *fdTable
	maps *[]mapping
	shim bool // scry's mapping shim is loaded (mmap.go)
}

// converter turns strace calls into FS_OP and OUTPUT records (docs/trace-format.md): it keeps
// each process's descriptor table, file offsets, working directory and shared mappings, made
// absolute and resolved to the open files they name.
type converter struct {
	root     string
	w        *trace.Writer
	sites    *siteTable
	procs    map[int]*proc
	first    int
	nextH    uint64
	warnings []string
	warned   map[string]bool
	// Records counts the FS_OP and OUTPUT records written.
	records int
	// input are the workload's lines fed to standard input, inputOff the bytes of it read so
	// far, nextOp the next line whose first byte has not been read.
	input    []string
	inputOff int64
	nextOp   int
	lineEnd  int64 // offset just past line nextOp-1 (its newline)
	// mapped binds the mapping shim's serials to the files mapped (mmap.go).
	mapped map[uint64]*openFile
}

func newConverter(root string, w *trace.Writer, sym *symbolizer) *converter {
	return &converter{root: root, w: w, sites: newSiteTable(sym), procs: map[int]*proc{}, warned: map[string]bool{}}
}

func (c *converter) warn(format string, args ...any) {
	m := fmt.Sprintf(format, args...)
	if !c.warned[m] {
		c.warned[m] = true
		c.warnings = append(c.warnings, m)
	}
}

func (c *converter) proc(pid int) *proc {
	if p, ok := c.procs[pid]; ok {
		return p
	}
	if c.first == 0 {
		c.first = pid
		cwd := c.root
		out1 := &openFile{output: 1, writable: true}
		out2 := &openFile{output: 2, writable: true}
		p := &proc{cwd: &cwd, fds: &fdTable{fds: map[int]fdEntry{0: {of: &openFile{input: true}}, 1: {of: out1}, 2: {of: out2}}}, maps: &[]mapping{}}
		c.procs[pid] = p
		return p
	}
	// A process whose creation was not seen (its parent's clone had not returned yet): it
	// starts like the first process's current state, the best guess; pending clones fix it.
	base := c.procs[c.first]
	p := base.fork(false, false)
	c.procs[pid] = p
	return p
}

func (p *proc) fork(shareFiles, shareFS bool) *proc {
	q := &proc{shim: p.shim}
	if shareFS {
		q.cwd = p.cwd
	} else {
		cwd := *p.cwd
		q.cwd = &cwd
	}
	if shareFiles {
		q.fds, q.maps = p.fds, p.maps
	} else {
		t := &fdTable{fds: make(map[int]fdEntry, len(p.fds.fds))}
		for k, v := range p.fds.fds {
			t.fds[k] = v
		}
		q.fds = t
		m := append([]mapping(nil), (*p.maps)...)
		q.maps = &m
	}
	return q
}

func (c *converter) inDir(path string) bool {
	return path == c.root || strings.HasPrefix(path, c.root+"/")
}

// fdArg reads a descriptor argument "3<path>" (or "3", "AT_FDCWD<path>").
func fdArg(a string) (fd int, tag string, ok bool) {
	num := a
	if i := strings.IndexByte(a, '<'); i >= 0 {
		num = a[:i]
		t, _, tok := cutTag(a[i:])
		if tok {
			tag = t
		}
	}
	if num == "AT_FDCWD" {
		return -100, tag, true
	}
	v, err := strconv.ParseInt(num, 0, 64)
	if err != nil {
		return 0, tag, false
	}
	return int(v), tag, true
}

func numArg(a string) (int64, bool) {
	if i := strings.IndexByte(a, '<'); i >= 0 {
		a = a[:i]
	}
	if strings.HasPrefix(a, "[") && strings.HasSuffix(a, "]") { // [offset] of lseek-like outputs
		a = a[1 : len(a)-1]
	}
	v, err := strconv.ParseInt(a, 0, 64)
	if err != nil {
		u, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			return 0, false
		}
		return int64(u), true
	}
	return v, true
}

func hasFlag(a, name string) bool {
	for _, f := range strings.Split(a, "|") {
		if strings.TrimSpace(f) == name {
			return true
		}
	}
	return false
}

// resolve makes a path argument absolute: against the directory descriptor's path (its -y
// decoration), or the process's working directory.
func (c *converter) resolve(p *proc, dirArg string, pathArg string) (string, error) {
	path, _, err := unquote(pathArg)
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	base := *p.cwd
	if dirArg != "" {
		fd, tag, ok := fdArg(dirArg)
		switch {
		case tag != "":
			base = tag
		case ok && fd != -100:
			if e, ok := p.fds.fds[fd]; ok && e.of.path != "" {
				base = e.of.path
			}
		}
	}
	return filepath.Join(base, path), nil
}

func (c *converter) file(p *proc, a string) (*openFile, int) {
	fd, tag, ok := fdArg(a)
	if !ok {
		return nil, -1
	}
	e, ok := p.fds.fds[fd]
	if !ok {
		return nil, fd
	}
	if e.of.output == 0 && filepath.IsAbs(tag) && !strings.HasSuffix(tag, " (deleted)") {
		e.of.path = tag // renamed since it was opened
	}
	return e.of, fd
}

// emit writes an FS_OP or OUTPUT record for call cl, after the SITES and STACK records its call
// stack needs.
func (c *converter) emit(cl *straceCall, ev *trace.Event) error {
	site, stack, err := c.sites.place(c.w, cl.Frames)
	if err != nil {
		return err
	}
	ev.Thread, ev.Site, ev.Context = uint32(cl.PID), site, stack
	c.records++
	return c.w.Write(ev)
}

// call handles one system call.
func (c *converter) call(cl *straceCall) error {
	p := c.proc(cl.PID)
	if done, err := c.mappingCall(p, cl); done {
		return err
	}
	if cl.Failed || cl.NoReturn {
		return nil
	}
	a := cl.Args
	arg := func(i int) string {
		if i < len(a) {
			return a[i]
		}
		return ""
	}
	switch cl.Name {
	case "open", "creat", "openat", "openat2":
		var dir, pathA, flags string
		switch cl.Name {
		case "open":
			pathA, flags = arg(0), arg(1)
		case "creat":
			pathA, flags = arg(0), "O_CREAT|O_WRONLY|O_TRUNC"
		default:
			dir, pathA, flags = arg(0), arg(1), arg(2)
			if cl.Name == "openat2" {
				if i := strings.Index(flags, "flags="); i >= 0 {
					flags = flags[i+6:]
					if j := strings.IndexAny(flags, ",}"); j >= 0 {
						flags = flags[:j]
					}
				}
			}
		}
		path, err := c.resolve(p, dir, pathA)
		if err != nil {
			return err
		}
		// open(2): O_TMPFILE opens a new file without a name in directory path (strace shows
		// it as "path/#INODE (deleted)"); linkat can give it one later.
		tmpDir := ""
		if hasFlag(flags, "O_TMPFILE") {
			tmpDir = path
		}
		if cl.RetTag != "" && filepath.IsAbs(cl.RetTag) {
			path = strings.TrimSuffix(cl.RetTag, " (deleted)")
		}
		c.nextH++
		of := &openFile{handle: c.nextH, path: path, inDir: c.inDir(path), append: hasFlag(flags, "O_APPEND"),
			writable: hasFlag(flags, "O_WRONLY") || hasFlag(flags, "O_RDWR"), sync: syncFlags(flags)}
		p.fds.fds[int(cl.Ret)] = fdEntry{of: of, cloexec: hasFlag(flags, "O_CLOEXEC")}
		if !of.inDir {
			return nil
		}
		var fl uint32
		for _, f := range []struct {
			name string
			bit  uint32
		}{{"O_CREAT", trace.FSCreate}, {"O_TRUNC", trace.FSTrunc}, {"O_APPEND", trace.FSAppend}, {"O_EXCL", trace.FSExcl}, {"O_DIRECTORY", trace.FSDirectory}} {
			if hasFlag(flags, f.name) {
				fl |= f.bit
			}
		}
		if of.writable {
			fl |= trace.FSWriteOnly
		}
		fl |= of.sync
		if tmpDir != "" {
			fl |= trace.FSTmpfile
			path = tmpDir
			if !c.inDir(path) {
				return nil
			}
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSOpen, FSFlags: fl, Handle: of.handle, Path: path, Result: cl.Ret})
	case "close":
		of, fd := c.file(p, arg(0))
		if of == nil {
			return nil
		}
		delete(p.fds.fds, fd)
		if of.inDir {
			return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSClose, Handle: of.handle, Path: of.path})
		}
	case "close_range":
		lo, _ := numArg(arg(0))
		hi, _ := numArg(arg(1))
		for fd := range p.fds.fds {
			if int64(fd) >= lo && int64(fd) <= hi {
				delete(p.fds.fds, fd)
			}
		}
	case "dup", "dup2", "dup3":
		if of, _ := c.file(p, arg(0)); of != nil {
			p.fds.fds[int(cl.Ret)] = fdEntry{of: of, cloexec: cl.Name == "dup3" && hasFlag(arg(2), "O_CLOEXEC")}
		}
	case "fcntl":
		of, fd := c.file(p, arg(0))
		if of == nil {
			return nil
		}
		switch cmd := arg(1); {
		case cmd == "F_DUPFD" || cmd == "F_DUPFD_CLOEXEC":
			p.fds.fds[int(cl.Ret)] = fdEntry{of: of, cloexec: cmd == "F_DUPFD_CLOEXEC"}
		case cmd == "F_SETFL":
			// fcntl(2): on Linux F_SETFL changes only O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME and
			// O_NONBLOCK; O_DSYNC and O_SYNC are silently ignored, so of.sync stays as opened.
			of.append = hasFlag(arg(2), "O_APPEND")
		case cmd == "F_SETFD":
			e := p.fds.fds[fd]
			e.cloexec = hasFlag(arg(2), "FD_CLOEXEC")
			p.fds.fds[fd] = e
		}
	case "lseek":
		if of, _ := c.file(p, arg(0)); of != nil {
			of.offset = cl.Ret
		}
	case "read", "readv":
		of, _ := c.file(p, arg(0))
		if of == nil {
			return nil
		}
		of.offset += cl.Ret
		if of.input && cl.Ret > 0 {
			return c.readInput(cl, cl.Ret)
		}
	case "write", "pwrite64", "writev", "pwritev", "pwritev2":
		of, _ := c.file(p, arg(0))
		if of == nil || (of.output == 0 && !of.inDir) || cl.Ret <= 0 {
			if of != nil && cl.Name[0] == 'w' {
				of.offset += max(cl.Ret, 0)
			}
			return nil
		}
		var data string
		var cut bool
		var err error
		if strings.HasSuffix(cl.Name, "v") || strings.HasSuffix(cl.Name, "v2") {
			data, cut, err = iovData(arg(1))
		} else {
			data, cut, err = unquote(arg(1))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cl.Name, err)
		}
		if int64(len(data)) > cl.Ret {
			data = data[:cl.Ret]
		} else if int64(len(data)) < cl.Ret {
			cut = true
		}
		if cut {
			c.warn("a write of %d bytes to %s was cut by strace (over %d bytes): its data is incomplete", cl.Ret, of.path, stringLimit)
		}
		positional := strings.HasPrefix(cl.Name, "pwrite")
		off := of.offset
		appendWrite := of.append
		sync := of.sync
		if positional { // pwrite64(fd, buf, count, offset), pwritev(fd, iov, iovcnt, offset[, flags])
			v, _ := numArg(arg(3))
			off = v
		}
		if cl.Name == "pwritev2" {
			// pwritev2(2): offset -1 writes at (and moves) the file offset; RWF_APPEND writes
			// at the end of the file whatever the offset, leaving the file offset alone;
			// RWF_DSYNC and RWF_SYNC make this write durable as O_DSYNC and O_SYNC would.
			if off == -1 {
				positional, off = false, of.offset
			}
			if hasFlag(arg(4), "RWF_APPEND") {
				appendWrite, positional = true, false
			}
			if f := syncFlags(arg(4)); f > sync {
				sync = f
			}
		}
		if of.output != 0 {
			return c.emit(cl, &trace.Event{Kind: trace.KindOutput, Handle: uint64(of.output), Data: []byte(data)})
		}
		ev := &trace.Event{Kind: trace.KindFSOp, FS: trace.FSWrite, Handle: of.handle, Path: of.path, FileOffset: uint64(max(off, 0)),
			Size: uint64(len(data)), Result: cl.Ret, Data: []byte(data)}
		ev.FSFlags |= sync
		if appendWrite && !positional {
			ev.FSFlags |= trace.FSAppend
			ev.FileOffset = 0
		}
		if !positional && !(cl.Name == "pwritev2" && hasFlag(arg(4), "RWF_APPEND")) {
			of.offset += cl.Ret
		}
		return c.emit(cl, ev)
	case "truncate":
		path, err := c.resolve(p, "", arg(0))
		if err != nil || !c.inDir(path) {
			return err
		}
		n, _ := numArg(arg(1))
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSTruncate, Path: path, Size: uint64(max(n, 0))})
	case "ftruncate":
		of, _ := c.file(p, arg(0))
		if of == nil || !of.inDir {
			return nil
		}
		n, _ := numArg(arg(1))
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSTruncate, Handle: of.handle, Path: of.path, Size: uint64(max(n, 0))})
	case "fallocate":
		of, _ := c.file(p, arg(0))
		if of == nil || !of.inDir {
			return nil
		}
		var fl uint32
		if hasFlag(arg(1), "FALLOC_FL_KEEP_SIZE") {
			fl |= trace.FSKeepSize
		}
		if hasFlag(arg(1), "FALLOC_FL_PUNCH_HOLE") {
			fl |= trace.FSPunchHole
		}
		if hasFlag(arg(1), "FALLOC_FL_ZERO_RANGE") {
			fl |= trace.FSZeroRange
		}
		if hasFlag(arg(1), "FALLOC_FL_COLLAPSE_RANGE") || hasFlag(arg(1), "FALLOC_FL_INSERT_RANGE") {
			// fallocate(2): these shift the bytes after the range; scry's writes are at fixed
			// offsets, so what follows in the file would be modeled wrong: refused.
			c.warn("fallocate(%s) on %s shifts the file's bytes, which scry does not model: the crash states of %s after it are wrong", arg(1), of.path, of.path)
			return nil
		}
		off, _ := numArg(arg(2))
		n, _ := numArg(arg(3))
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSFallocate, Handle: of.handle, Path: of.path, FSFlags: fl,
			FileOffset: uint64(max(off, 0)), Size: uint64(max(n, 0))})
	case "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat":
		var from, to string
		var err error
		var fl uint32
		switch cl.Name {
		case "rename", "link":
			if from, err = c.resolve(p, "", arg(0)); err == nil {
				to, err = c.resolve(p, "", arg(1))
			}
		case "symlink":
			from, _, err = unquote(arg(0))
			if err == nil {
				to, err = c.resolve(p, "", arg(1))
			}
		case "symlinkat":
			from, _, err = unquote(arg(0))
			if err == nil {
				to, err = c.resolve(p, arg(1), arg(2))
			}
		default:
			if from, err = c.resolve(p, arg(0), arg(1)); err == nil {
				to, err = c.resolve(p, arg(2), arg(3))
			}
			if cl.Name == "linkat" && err == nil {
				if of := c.linkSource(p, arg(0), arg(1), arg(4)); of != nil {
					if !of.inDir || !c.inDir(to) {
						if of.inDir || c.inDir(to) {
							c.warn("linkat of %s to %s crosses the workload directory: not modeled", of.path, to)
						}
						return nil
					}
					return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSLink, Handle: of.handle, Path: of.path, Path2: to})
				}
			}
			if cl.Name == "renameat2" {
				if hasFlag(arg(4), "RENAME_NOREPLACE") {
					fl |= trace.FSNoReplace
				}
				if hasFlag(arg(4), "RENAME_EXCHANGE") {
					fl |= trace.FSExchange
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cl.Name, err)
		}
		op := trace.FSRename
		switch {
		case strings.HasPrefix(cl.Name, "link"):
			op = trace.FSLink
		case strings.HasPrefix(cl.Name, "symlink"):
			op = trace.FSSymlink
		}
		inFrom, inTo := c.inDir(from), c.inDir(to)
		if op == trace.FSSymlink {
			inFrom = inTo
		}
		if !inFrom && !inTo {
			return nil
		}
		if inFrom != inTo {
			c.warn("%s between %s and %s crosses the workload directory: only its side inside is modeled", cl.Name, from, to)
			if op == trace.FSRename && inFrom {
				return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSUnlink, Path: from})
			}
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: op, FSFlags: fl, Path: from, Path2: to})
	case "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat":
		var path string
		var err error
		op := trace.FSUnlink
		switch cl.Name {
		case "unlink":
			path, err = c.resolve(p, "", arg(0))
		case "rmdir":
			path, err = c.resolve(p, "", arg(0))
			op = trace.FSRmdir
		case "mkdir":
			path, err = c.resolve(p, "", arg(0))
			op = trace.FSMkdir
		case "mkdirat":
			path, err = c.resolve(p, arg(0), arg(1))
			op = trace.FSMkdir
		default:
			path, err = c.resolve(p, arg(0), arg(1))
			if hasFlag(arg(2), "AT_REMOVEDIR") {
				op = trace.FSRmdir
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cl.Name, err)
		}
		if !c.inDir(path) {
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: op, Path: path})
	case "fsync", "fdatasync", "syncfs", "sync_file_range":
		of, _ := c.file(p, arg(0))
		if of == nil || !of.inDir {
			return nil
		}
		op := map[string]trace.FSOpKind{"fsync": trace.FSFsync, "fdatasync": trace.FSFdatasync, "syncfs": trace.FSSyncfs, "sync_file_range": trace.FSSyncFileRange}[cl.Name]
		ev := &trace.Event{Kind: trace.KindFSOp, FS: op, Handle: of.handle, Path: of.path}
		if op == trace.FSSyncFileRange {
			off, _ := numArg(arg(1))
			n, _ := numArg(arg(2))
			ev.FileOffset, ev.Size = uint64(max(off, 0)), uint64(max(n, 0))
			// sync_file_range(2): only SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER waits
			// until the range's dirty pages are written out; without both the call returns with
			// nothing written, so it is no sync at all (and it never writes metadata: the model
			// makes it persist overwrites of the range only).
			if !hasFlag(arg(3), "SYNC_FILE_RANGE_WRITE") || !hasFlag(arg(3), "SYNC_FILE_RANGE_WAIT_AFTER") {
				c.warn("sync_file_range(%s) on %s waits for no write-out (it needs SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER): it persists nothing and is not modeled as a sync", arg(3), of.path)
				return nil
			}
		}
		return c.emit(cl, ev)
	case "sync":
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSSync})
	case "chdir":
		path, err := c.resolve(p, "", arg(0))
		if err != nil {
			return err
		}
		*p.cwd = path
	case "fchdir":
		if of, _ := c.file(p, arg(0)); of != nil && of.path != "" {
			*p.cwd = of.path
		}
	case "clone", "clone3", "fork", "vfork":
		if cl.Ret <= 0 {
			return nil
		}
		flags := strings.Join(a, ",")
		child := p.fork(strings.Contains(flags, "CLONE_FILES"), strings.Contains(flags, "CLONE_FS"))
		c.procs[int(cl.Ret)] = child
	case "execve", "execveat":
		for fd, e := range p.fds.fds {
			if e.cloexec {
				delete(p.fds.fds, fd)
			}
		}
		*p.maps = nil
	case "copy_file_range":
		return c.copyFileRange(cl, p)
	case "sendfile", "splice":
		idx := 2
		if cl.Name == "sendfile" {
			idx = 0
		}
		if of, _ := c.file(p, arg(idx)); of != nil && of.inDir && cl.Ret > 0 {
			c.warn("%s wrote %d bytes to %s that strace does not show: they are missing from the crash states", cl.Name, cl.Ret, of.path)
		}
	}
	return nil
}

// linkSource returns the open file linkat(2) gives a name to: its descriptor's with
// AT_EMPTY_PATH and an empty path, or the descriptor N of "/proc/self/fd/N" (or /proc/PID/fd/N)
// with AT_SYMLINK_FOLLOW (open(2), O_TMPFILE, and linkat(2): the two ways to link such a file);
// nil otherwise.
func (c *converter) linkSource(p *proc, dirArg, pathArg, flags string) *openFile {
	path, _, err := unquote(pathArg)
	if err != nil {
		return nil
	}
	if path == "" && hasFlag(flags, "AT_EMPTY_PATH") {
		of, _ := c.file(p, dirArg)
		return of
	}
	if !hasFlag(flags, "AT_SYMLINK_FOLLOW") || !strings.HasPrefix(path, "/proc/") {
		return nil
	}
	parts := strings.Split(path[len("/proc/"):], "/")
	if len(parts) != 3 || parts[1] != "fd" {
		return nil
	}
	q := p
	if parts[0] != "self" && parts[0] != "thread-self" {
		pid, err := strconv.Atoi(parts[0])
		if err != nil || c.procs[pid] == nil {
			return nil
		}
		q = c.procs[pid]
	}
	fd, err := strconv.Atoi(parts[2])
	if err != nil {
		return nil
	}
	if e, ok := q.fds.fds[fd]; ok {
		return e.of
	}
	return nil
}

// ptrOffset reads an offset passed by pointer, as strace prints it: "NULL" (use the file
// offset), "[N]" or "[N => M]" (the value before the call).
func ptrOffset(a string) (off int64, null, ok bool) {
	if a == "NULL" {
		return 0, true, true
	}
	a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if i := strings.Index(a, " =>"); i >= 0 {
		a = a[:i]
	}
	v, err := strconv.ParseInt(strings.TrimSpace(a), 0, 64)
	return v, false, err == nil
}

// copyFileRange handles copy_file_range(fd_in, off_in, fd_out, off_out, len, flags)
// (copy_file_range(2)): a NULL offset is the descriptor's, which moves by the bytes copied. A
// copy into the workload directory from a file in it is an FSCopyFileRange record (the model
// knows the source's bytes at that point); from a file outside it, a write of the bytes that
// file holds now, when the trace is written (a warning says so: exact only if the run did not
// change them after the copy).
func (c *converter) copyFileRange(cl *straceCall, p *proc) error {
	arg := func(i int) string {
		if i < len(cl.Args) {
			return cl.Args[i]
		}
		return ""
	}
	src, _ := c.file(p, arg(0))
	dst, _ := c.file(p, arg(2))
	if src == nil || dst == nil {
		return nil
	}
	n := cl.Ret
	srcOff, srcNull, ok1 := ptrOffset(arg(1))
	dstOff, dstNull, ok2 := ptrOffset(arg(3))
	if !ok1 || !ok2 {
		return fmt.Errorf("copy_file_range: unreadable offsets %q, %q", arg(1), arg(3))
	}
	if srcNull {
		srcOff = src.offset
		src.offset += n
	}
	if dstNull {
		dstOff = dst.offset
		dst.offset += n
	}
	if !dst.inDir || n <= 0 {
		return nil
	}
	if src.inDir {
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSCopyFileRange, Handle: dst.handle, Path: dst.path,
			FileOffset: uint64(max(dstOff, 0)), Size: uint64(max(srcOff, 0)), Result: n, Path2: src.path})
	}
	data, err := readRange(src.path, srcOff, n)
	if err != nil {
		c.warn("copy_file_range wrote %d bytes of %s to %s that scry cannot read (%v): they are missing from the crash states", n, src.path, dst.path, err)
		return nil
	}
	c.warn("copy_file_range copied %s, outside the workload directory, into %s: its bytes are read when the trace is written, exact only if the file did not change since", src.path, dst.path)
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSWrite, Handle: dst.handle, Path: dst.path,
		FileOffset: uint64(max(dstOff, 0)), Size: uint64(len(data)), Result: n, Data: data})
}

// readRange reads n bytes of file path at off. Errors: the file cannot be read, or holds
// fewer bytes.
func readRange(path string, off, n int64) ([]byte, error) {
	if n > stringLimit {
		return nil, fmt.Errorf("over %d bytes", stringLimit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readInput accounts for n bytes the program read from its standard input: each workload line
// whose first byte they include begins its operation (an OP_BEGIN record at the read).
func (c *converter) readInput(cl *straceCall, n int64) error {
	c.inputOff += n
	for c.nextOp < len(c.input) && c.lineEnd < c.inputOff {
		k := c.nextOp
		c.nextOp++
		c.lineEnd += int64(len(c.input[k])) + 1
		if err := c.emit(cl, &trace.Event{Kind: trace.KindOpBegin, Op: uint64(k), Text: c.input[k]}); err != nil {
			return err
		}
	}
	return nil
}

// iovData concatenates the iov_base strings of a writev iovec array.
func iovData(a string) (string, bool, error) {
	var b strings.Builder
	cut := false
	for {
		i := strings.Index(a, "iov_base=")
		if i < 0 {
			break
		}
		a = a[i+len("iov_base="):]
		if !strings.HasPrefix(a, `"`) {
			continue
		}
		j := 1
		for j < len(a) && a[j] != '"' {
			if a[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(a) {
			return "", false, fmt.Errorf("unterminated iov_base string")
		}
		q := a[:j+1]
		a = a[j+1:]
		if strings.HasPrefix(a, "...") {
			cut = true
		}
		s, err := unescape(q[1 : len(q)-1])
		if err != nil {
			return "", false, err
		}
		b.WriteString(s)
	}
	return b.String(), cut, nil
}

// convert reads strace output (parseStrace) and writes the trace of its file-system calls under
// root (an absolute path without symbolic links) to w: FS_OP and OUTPUT records with their
// call stacks, symbolized by sym, and, when input holds the lines fed to the program's standard
// input (feedLines), an OP_BEGIN record at the read that returns each line's first byte. It returns
// the number of FS_OP, OUTPUT and OP_BEGIN records and the warnings about what the trace cannot
// show (writes through shared mappings, cut writes, ...); the caller writes END. Errors:
// unreadable strace output (*ParseError) or a write error.
func convert(r io.Reader, root string, w *trace.Writer, sym *symbolizer, input []string) (records int, warnings []string, err error) {
	c := newConverter(root, w, sym)
	c.input = input
	err = parseStrace(r, func(cl *straceCall) error {
		if err := c.call(cl); err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return err
			}
			return &ParseError{Line: cl.Line, Text: cl.Name, Msg: err.Error()}
		}
		return nil
	})
	for _, m := range c.warnings {
		if werr := w.Write(&trace.Event{Kind: trace.KindWarning, Text: m}); werr != nil && err == nil {
			err = werr
		}
	}
	return c.records, c.warnings, err
}
