package strace

import (
	"errors"
	"fmt"
	"io"
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

// call handles one system call: the calls about shared mappings go to mappingCall (mmap.go),
// and a call that returned to its handler in syscalls (syscalls.go). A failed or unfinished
// call, or one without a handler, records nothing.
func (c *converter) call(cl *straceCall) error {
	p := c.proc(cl.PID)
	if done, err := c.mappingCall(p, cl); done {
		return err
	}
	if cl.Failed || cl.NoReturn {
		return nil
	}
	if h := syscalls[cl.Name]; h != nil {
		return h(c, p, cl)
	}
	return nil
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
