package strace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// The system calls converter.call interprets, one handler each or one for a family that shares
// its logic. A handler sees only calls that returned (call passes failed and unfinished ones
// by, and gives the mapping calls to mappingCall, mmap.go).

// A syscallHandler interprets one call cl of process p: it keeps p's descriptors, file offsets
// and working directory up to date and writes the records the call means for the workload
// directory.
type syscallHandler func(c *converter, p *proc, cl *straceCall) error

// syscalls holds the handler of each system call converter.call interprets, by name. A call
// not named here records nothing and changes no state.
var syscalls = map[string]syscallHandler{
	"open": (*converter).open, "creat": (*converter).open, "openat": (*converter).open, "openat2": (*converter).open,

	"close": (*converter).close, "close_range": (*converter).closeRange,

	"dup": (*converter).dup, "dup2": (*converter).dup, "dup3": (*converter).dup,

	"fcntl": (*converter).fcntl,

	"lseek": (*converter).lseek,

	"read": (*converter).read, "readv": (*converter).read,

	"write": (*converter).write, "pwrite64": (*converter).write, "writev": (*converter).write,
	"pwritev": (*converter).write, "pwritev2": (*converter).write,

	"truncate": (*converter).truncate, "ftruncate": (*converter).ftruncate,

	"fallocate": (*converter).fallocate,

	// rename(oldpath, newpath), renameat(olddirfd, oldpath, newdirfd, newpath),
	// renameat2(..., flags), link(oldpath, newpath), linkat(..., flags).
	"rename":    renameOrLink(trace.FSRename, pathAt{-1, 0}, pathAt{-1, 1}, -1),
	"renameat":  renameOrLink(trace.FSRename, pathAt{0, 1}, pathAt{2, 3}, -1),
	"renameat2": renameOrLink(trace.FSRename, pathAt{0, 1}, pathAt{2, 3}, 4),
	"link":      renameOrLink(trace.FSLink, pathAt{-1, 0}, pathAt{-1, 1}, -1),
	"linkat":    (*converter).linkat,

	// symlink(target, linkpath), symlinkat(target, newdirfd, linkpath).
	"symlink":   symlinkAt(pathAt{-1, 1}),
	"symlinkat": symlinkAt(pathAt{1, 2}),

	// unlink(path), rmdir(path), mkdir(path, mode), mkdirat(dirfd, path, mode),
	// unlinkat(dirfd, path, flags).
	"unlink":   nameOp(trace.FSUnlink, pathAt{-1, 0}),
	"rmdir":    nameOp(trace.FSRmdir, pathAt{-1, 0}),
	"mkdir":    nameOp(trace.FSMkdir, pathAt{-1, 0}),
	"mkdirat":  nameOp(trace.FSMkdir, pathAt{0, 1}),
	"unlinkat": (*converter).unlinkat,

	"fsync": fileSync(trace.FSFsync), "fdatasync": fileSync(trace.FSFdatasync), "syncfs": fileSync(trace.FSSyncfs),

	"sync_file_range": (*converter).syncFileRange,

	"sync": (*converter).sync,

	"chdir": (*converter).chdir, "fchdir": (*converter).fchdir,

	"clone": (*converter).clone, "clone3": (*converter).clone, "fork": (*converter).clone, "vfork": (*converter).clone,

	"execve": (*converter).execve, "execveat": (*converter).execve,

	"copy_file_range": (*converter).copyFileRange,

	// sendfile(out_fd, in_fd, offset, count), splice(fd_in, off_in, fd_out, off_out, len, flags).
	"sendfile": unseenWrite(0), "splice": unseenWrite(2),
}

// arg returns the call's argument i as printed, "" when it has none at i (or i is negative).
func (cl *straceCall) arg(i int) string {
	if i >= 0 && i < len(cl.Args) {
		return cl.Args[i]
	}
	return ""
}

// pathAt says where a call's path argument is: its position, and that of the directory
// descriptor a relative path is resolved against (-1: none, the process's working directory).
type pathAt struct{ dir, path int }

// path resolves the call's path argument at a (resolve).
func (c *converter) path(p *proc, cl *straceCall, a pathAt) (string, error) {
	return c.resolve(p, cl.arg(a.dir), cl.arg(a.path))
}

// dirFile returns the open file of descriptor argument a when it lies in the workload
// directory, nil otherwise (an unknown descriptor, or a file outside).
func (c *converter) dirFile(p *proc, a string) *openFile {
	if of, _ := c.file(p, a); of != nil && of.inDir {
		return of
	}
	return nil
}

// open handles open, creat, openat and openat2, whose path and flags it reads by the call's
// name: the new descriptor gets a new open file description (its offset, O_APPEND, O_*SYNC
// durability, whether it may write), and one in the workload directory an FSOpen record with
// the flags the model acts on.
func (c *converter) open(p *proc, cl *straceCall) error {
	var dir, pathA, flags string
	switch cl.Name {
	case "open":
		pathA, flags = cl.arg(0), cl.arg(1)
	case "creat":
		pathA, flags = cl.arg(0), "O_CREAT|O_WRONLY|O_TRUNC"
	default:
		dir, pathA, flags = cl.arg(0), cl.arg(1), cl.arg(2)
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
}

// close drops the descriptor; closing one of a file in the workload directory is an FSClose
// record (the model's handle ends there).
func (c *converter) close(p *proc, cl *straceCall) error {
	of, fd := c.file(p, cl.arg(0))
	if of == nil {
		return nil
	}
	delete(p.fds.fds, fd)
	if of.inDir {
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSClose, Handle: of.handle, Path: of.path})
	}
	return nil
}

// closeRange drops the descriptors from close_range's first argument to its second, both
// included; unlike close it writes no FSClose records.
func (c *converter) closeRange(p *proc, cl *straceCall) error {
	lo, _ := numArg(cl.arg(0))
	hi, _ := numArg(cl.arg(1))
	for fd := range p.fds.fds {
		if int64(fd) >= lo && int64(fd) <= hi {
			delete(p.fds.fds, fd)
		}
	}
	return nil
}

// dup handles dup, dup2 and dup3: the new descriptor shares the open file description (and its
// offset); only dup3 can set close-on-exec.
func (c *converter) dup(p *proc, cl *straceCall) error {
	if of, _ := c.file(p, cl.arg(0)); of != nil {
		p.fds.fds[int(cl.Ret)] = fdEntry{of: of, cloexec: cl.Name == "dup3" && hasFlag(cl.arg(2), "O_CLOEXEC")}
	}
	return nil
}

// fcntl follows what changes the descriptors or later writes: F_DUPFD and F_DUPFD_CLOEXEC
// duplicate, F_SETFL sets or clears O_APPEND, F_SETFD close-on-exec.
func (c *converter) fcntl(p *proc, cl *straceCall) error {
	of, fd := c.file(p, cl.arg(0))
	if of == nil {
		return nil
	}
	switch cmd := cl.arg(1); {
	case cmd == "F_DUPFD" || cmd == "F_DUPFD_CLOEXEC":
		p.fds.fds[int(cl.Ret)] = fdEntry{of: of, cloexec: cmd == "F_DUPFD_CLOEXEC"}
	case cmd == "F_SETFL":
		// fcntl(2): on Linux F_SETFL changes only O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME and
		// O_NONBLOCK; O_DSYNC and O_SYNC are silently ignored, so of.sync stays as opened.
		of.append = hasFlag(cl.arg(2), "O_APPEND")
	case cmd == "F_SETFD":
		e := p.fds.fds[fd]
		e.cloexec = hasFlag(cl.arg(2), "FD_CLOEXEC")
		p.fds.fds[fd] = e
	}
	return nil
}

// lseek sets the file offset to the one it returns, so that later writes land there.
func (c *converter) lseek(p *proc, cl *straceCall) error {
	if of, _ := c.file(p, cl.arg(0)); of != nil {
		of.offset = cl.Ret
	}
	return nil
}

// read handles read and readv: they move the file offset by the bytes read, and a read of the
// program's standard input may begin workload operations (readInput).
func (c *converter) read(p *proc, cl *straceCall) error {
	of, _ := c.file(p, cl.arg(0))
	if of == nil {
		return nil
	}
	of.offset += cl.Ret
	if of.input && cl.Ret > 0 {
		return c.readInput(cl, cl.Ret)
	}
	return nil
}

// write handles write, pwrite64, writev, pwritev and pwritev2, whose buffers, offsets and flags
// it reads by the call's name: a write to the standard output or error is an OUTPUT record, one
// to a file in the workload directory an FSWrite record of the bytes written at the offset they
// went to (or appended), durable on return when the descriptor or pwritev2's flags say so. A
// write moves the file offset unless it is positional.
func (c *converter) write(p *proc, cl *straceCall) error {
	of, _ := c.file(p, cl.arg(0))
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
		data, cut, err = iovData(cl.arg(1))
	} else {
		data, cut, err = unquote(cl.arg(1))
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
		v, _ := numArg(cl.arg(3))
		off = v
	}
	if cl.Name == "pwritev2" {
		// pwritev2(2): offset -1 writes at (and moves) the file offset; RWF_APPEND writes
		// at the end of the file whatever the offset, leaving the file offset alone;
		// RWF_DSYNC and RWF_SYNC make this write durable as O_DSYNC and O_SYNC would.
		if off == -1 {
			positional, off = false, of.offset
		}
		if hasFlag(cl.arg(4), "RWF_APPEND") {
			appendWrite, positional = true, false
		}
		if f := syncFlags(cl.arg(4)); f > sync {
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
	if !positional && !(cl.Name == "pwritev2" && hasFlag(cl.arg(4), "RWF_APPEND")) {
		of.offset += cl.Ret
	}
	return c.emit(cl, ev)
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

// truncate handles truncate(path, length): of a file in the workload directory, an FSTruncate
// record of its path and new size in bytes.
func (c *converter) truncate(p *proc, cl *straceCall) error {
	path, err := c.resolve(p, "", cl.arg(0))
	if err != nil || !c.inDir(path) {
		return err
	}
	n, _ := numArg(cl.arg(1))
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSTruncate, Path: path, Size: uint64(max(n, 0))})
}

// ftruncate handles ftruncate(fd, length) as truncate, through a descriptor whose handle the
// record names too.
func (c *converter) ftruncate(p *proc, cl *straceCall) error {
	of := c.dirFile(p, cl.arg(0))
	if of == nil {
		return nil
	}
	n, _ := numArg(cl.arg(1))
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSTruncate, Handle: of.handle, Path: of.path, Size: uint64(max(n, 0))})
}

// fallocate handles fallocate(fd, mode, offset, len): of a file in the workload directory, an
// FSFallocate record of the range with the mode's KEEP_SIZE, PUNCH_HOLE and ZERO_RANGE flags;
// COLLAPSE_RANGE and INSERT_RANGE are only warned about.
func (c *converter) fallocate(p *proc, cl *straceCall) error {
	of := c.dirFile(p, cl.arg(0))
	if of == nil {
		return nil
	}
	mode := cl.arg(1)
	var fl uint32
	if hasFlag(mode, "FALLOC_FL_KEEP_SIZE") {
		fl |= trace.FSKeepSize
	}
	if hasFlag(mode, "FALLOC_FL_PUNCH_HOLE") {
		fl |= trace.FSPunchHole
	}
	if hasFlag(mode, "FALLOC_FL_ZERO_RANGE") {
		fl |= trace.FSZeroRange
	}
	if hasFlag(mode, "FALLOC_FL_COLLAPSE_RANGE") || hasFlag(mode, "FALLOC_FL_INSERT_RANGE") {
		// fallocate(2): these shift the bytes after the range; scry's writes are at fixed
		// offsets, so what follows in the file would be modeled wrong: refused.
		c.warn("fallocate(%s) on %s shifts the file's bytes, which scry does not model: the crash states of %s after it are wrong", mode, of.path, of.path)
		return nil
	}
	off, _ := numArg(cl.arg(2))
	n, _ := numArg(cl.arg(3))
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSFallocate, Handle: of.handle, Path: of.path, FSFlags: fl,
		FileOffset: uint64(max(off, 0)), Size: uint64(max(n, 0))})
}

// renameOrLink returns the handler of a call that renames (op trace.FSRename) or links
// (trace.FSLink) the path at from to the path at to; flags is the position of renameat2's
// RENAME_NOREPLACE and RENAME_EXCHANGE flags, -1 for a call without them.
func renameOrLink(op trace.FSOpKind, from, to pathAt, flags int) syscallHandler {
	return func(c *converter, p *proc, cl *straceCall) error {
		src, dst, err := c.twoPaths(p, cl, from, to)
		if err != nil {
			return err
		}
		var fl uint32
		if hasFlag(cl.arg(flags), "RENAME_NOREPLACE") {
			fl |= trace.FSNoReplace
		}
		if hasFlag(cl.arg(flags), "RENAME_EXCHANGE") {
			fl |= trace.FSExchange
		}
		return c.recordNames(cl, op, fl, src, dst)
	}
}

// linkat handles linkat(olddirfd, oldpath, newdirfd, newpath, flags): it links a name as link
// does, or gives an open file its name (linkSource: an O_TMPFILE file). Then the FSLink record
// names the file's handle, and a file or name outside the workload directory is only warned
// about when the other is inside.
func (c *converter) linkat(p *proc, cl *straceCall) error {
	from, to, err := c.twoPaths(p, cl, pathAt{0, 1}, pathAt{2, 3})
	if err != nil {
		return err
	}
	if of := c.linkSource(p, cl.arg(0), cl.arg(1), cl.arg(4)); of != nil {
		if !of.inDir || !c.inDir(to) {
			if of.inDir || c.inDir(to) {
				c.warn("linkat of %s to %s crosses the workload directory: not modeled", of.path, to)
			}
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSLink, Handle: of.handle, Path: of.path, Path2: to})
	}
	return c.recordNames(cl, trace.FSLink, 0, from, to)
}

// twoPaths resolves a rename's or link's two path arguments, the error naming the call.
func (c *converter) twoPaths(p *proc, cl *straceCall, from, to pathAt) (string, string, error) {
	src, err := c.path(p, cl, from)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", cl.Name, err)
	}
	dst, err := c.path(p, cl, to)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", cl.Name, err)
	}
	return src, dst, nil
}

// symlinkAt returns the handler of a call that makes a symbolic link at the path at to. Its
// target, the first argument, is recorded as written, not resolved: only where the link is
// decides whether the call is in the workload directory.
func symlinkAt(to pathAt) syscallHandler {
	return func(c *converter, p *proc, cl *straceCall) error {
		target, _, err := unquote(cl.arg(0))
		var path string
		if err == nil {
			path, err = c.path(p, cl, to)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cl.Name, err)
		}
		return c.recordNames(cl, trace.FSSymlink, 0, target, path)
	}
}

// recordNames records op (trace.FSRename, FSLink or FSSymlink, with flags fl) of from to to when
// either lies in the workload directory (a symbolic link's target never counts: only where the
// link is). A call that crosses the directory is warned about and only its side inside
// recorded: a rename out of it is an FSUnlink of from; a rename or link into it, or a link out
// of it, records nothing.
func (c *converter) recordNames(cl *straceCall, op trace.FSOpKind, fl uint32, from, to string) error {
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

// nameOp returns the handler of a call that makes or removes the name at path (unlink, rmdir,
// mkdir, mkdirat): an op record of it when it lies in the workload directory.
func nameOp(op trace.FSOpKind, path pathAt) syscallHandler {
	return func(c *converter, p *proc, cl *straceCall) error {
		return c.recordName(p, cl, op, path)
	}
}

// unlinkat handles unlinkat(dirfd, path, flags): it removes a file, or with AT_REMOVEDIR a
// directory, as unlink and rmdir do.
func (c *converter) unlinkat(p *proc, cl *straceCall) error {
	op := trace.FSUnlink
	if hasFlag(cl.arg(2), "AT_REMOVEDIR") {
		op = trace.FSRmdir
	}
	return c.recordName(p, cl, op, pathAt{0, 1})
}

// recordName records op of the path at path when it lies in the workload directory.
func (c *converter) recordName(p *proc, cl *straceCall, op trace.FSOpKind, path pathAt) error {
	name, err := c.path(p, cl, path)
	if err != nil {
		return fmt.Errorf("%s: %w", cl.Name, err)
	}
	if !c.inDir(name) {
		return nil
	}
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: op, Path: name})
}

// fileSync returns the handler of fsync, fdatasync or syncfs (op) of a descriptor: an op record
// when its file lies in the workload directory (syncfs's file only tells which file system).
func fileSync(op trace.FSOpKind) syscallHandler {
	return func(c *converter, p *proc, cl *straceCall) error {
		of := c.dirFile(p, cl.arg(0))
		if of == nil {
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: op, Handle: of.handle, Path: of.path})
	}
}

// syncFileRange handles sync_file_range(fd, offset, nbytes, flags): of a file in the workload
// directory, an FSSyncFileRange record of the range, when the flags make it wait for the
// write-out.
func (c *converter) syncFileRange(p *proc, cl *straceCall) error {
	of := c.dirFile(p, cl.arg(0))
	if of == nil {
		return nil
	}
	off, _ := numArg(cl.arg(1))
	n, _ := numArg(cl.arg(2))
	// sync_file_range(2): only SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER waits
	// until the range's dirty pages are written out; without both the call returns with
	// nothing written, so it is no sync at all (and it never writes metadata: the model
	// makes it persist overwrites of the range only).
	if flags := cl.arg(3); !hasFlag(flags, "SYNC_FILE_RANGE_WRITE") || !hasFlag(flags, "SYNC_FILE_RANGE_WAIT_AFTER") {
		c.warn("sync_file_range(%s) on %s waits for no write-out (it needs SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER): it persists nothing and is not modeled as a sync", flags, of.path)
		return nil
	}
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSSyncFileRange, Handle: of.handle, Path: of.path,
		FileOffset: uint64(max(off, 0)), Size: uint64(max(n, 0))})
}

// sync is an FSSync record: it makes every file durable, those in the workload directory too.
func (c *converter) sync(p *proc, cl *straceCall) error {
	return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSSync})
}

// chdir changes the directory the process's relative paths are resolved against.
func (c *converter) chdir(p *proc, cl *straceCall) error {
	path, err := c.resolve(p, "", cl.arg(0))
	if err != nil {
		return err
	}
	*p.cwd = path
	return nil
}

// fchdir does the same to the directory a descriptor names.
func (c *converter) fchdir(p *proc, cl *straceCall) error {
	if of, _ := c.file(p, cl.arg(0)); of != nil && of.path != "" {
		*p.cwd = of.path
	}
	return nil
}

// clone handles clone, clone3, fork and vfork: the child (the return value, in the parent)
// gets a copy of the parent's descriptors and mappings, or shares them with CLONE_FILES, and a
// copy of its working directory, or shares it with CLONE_FS.
func (c *converter) clone(p *proc, cl *straceCall) error {
	if cl.Ret <= 0 {
		return nil
	}
	flags := strings.Join(cl.Args, ",")
	child := p.fork(strings.Contains(flags, "CLONE_FILES"), strings.Contains(flags, "CLONE_FS"))
	c.procs[int(cl.Ret)] = child
	return nil
}

// execve handles execve and execveat: the new image loses the close-on-exec descriptors and
// every mapping.
func (c *converter) execve(p *proc, cl *straceCall) error {
	for fd, e := range p.fds.fds {
		if e.cloexec {
			delete(p.fds.fds, fd)
		}
	}
	*p.maps = nil
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
func (c *converter) copyFileRange(p *proc, cl *straceCall) error {
	src, _ := c.file(p, cl.arg(0))
	dst, _ := c.file(p, cl.arg(2))
	if src == nil || dst == nil {
		return nil
	}
	n := cl.Ret
	srcOff, srcNull, ok1 := ptrOffset(cl.arg(1))
	dstOff, dstNull, ok2 := ptrOffset(cl.arg(3))
	if !ok1 || !ok2 {
		return fmt.Errorf("copy_file_range: unreadable offsets %q, %q", cl.arg(1), cl.arg(3))
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

// unseenWrite returns the handler of sendfile and splice, whose output descriptor is the
// argument at fd: strace does not print the bytes they move, so a transfer into the workload
// directory is only warned about.
func unseenWrite(fd int) syscallHandler {
	return func(c *converter, p *proc, cl *straceCall) error {
		if of, _ := c.file(p, cl.arg(fd)); of != nil && of.inDir && cl.Ret > 0 {
			c.warn("%s wrote %d bytes to %s that strace does not show: they are missing from the crash states", cl.Name, cl.Ret, of.path)
		}
		return nil
	}
}
