package strace

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scry-pm/scry/internal/toolchain"
	"github.com/scry-pm/scry/trace"
)

// Writes through shared writable mappings (docs/fs-mode.md, "Recording"). strace sees system
// calls, not stores to memory, so the recorded program runs with scry's mapping shim in
// LD_PRELOAD (native/fsshim: ShimName under the install's lib/scry). The shim keeps a shadow of
// each MAP_SHARED, PROT_WRITE mapping of a regular file and, where msync(2) and mmap(2) make the
// stores visible to the persistence model (msync, munmap, mremap, fsync and fdatasync of the
// file, sync, the process's end), reports the pages that changed since the shadow as markers:
// write(2) calls to descriptor -1 (EBADF, no effect) whose buffer strace prints. This file
// decodes them into ordinary FS_OP records: a write of the pages at their file offset, and for
// msync(MS_SYNC) an FSMsync of the range, so the model needs nothing new.

// ShimName is the file name of the mapping shim under the install's lib/scry.
const ShimName = "libscry_fsshim.so"

// markerMagic begins every marker; markerHeader is the header's size in bytes.
const (
	markerMagic  = "SCRYMAP1"
	markerHeader = 40
)

// Marker kinds (native/fsshim/fsshim.c).
const (
	markHello = 1 // the shim is loaded in this process
	markMap   = 2 // Serial names the mapping at address A, B bytes long
	markData  = 3 // Data, B bytes, were written to the mapped file at offset A
	markSync  = 4 // the file's bytes [A, A+B) are durable (msync MS_SYNC)
)

// marker is one decoded shim marker: a 40-byte little-endian header (magic, kind, pid, serial,
// a, b) and, for markData, b bytes of data.
type marker struct {
	Kind   uint32
	PID    uint32
	Serial uint64
	A, B   uint64
	Data   []byte
}

// decodeMarker decodes the buffer of a marker write. ok is false when b is not a marker (no
// magic); errors: a marker of an unknown kind, a short header, a data length that differs from
// the header's.
func decodeMarker(b []byte) (m marker, ok bool, err error) {
	if !strings.HasPrefix(string(b), markerMagic) {
		return m, false, nil
	}
	if len(b) < markerHeader {
		return m, true, fmt.Errorf("mapping marker of %d bytes, shorter than its %d-byte header", len(b), markerHeader)
	}
	le := binary.LittleEndian
	m = marker{Kind: le.Uint32(b[8:]), PID: le.Uint32(b[12:]), Serial: le.Uint64(b[16:]), A: le.Uint64(b[24:]), B: le.Uint64(b[32:])}
	rest := b[markerHeader:]
	switch m.Kind {
	case markHello, markMap, markSync:
		if len(rest) != 0 {
			return m, true, fmt.Errorf("mapping marker of kind %d with %d bytes of data", m.Kind, len(rest))
		}
	case markData:
		if uint64(len(rest)) != m.B {
			return m, true, fmt.Errorf("mapping marker of %d data bytes holds %d", m.B, len(rest))
		}
		if m.A+m.B < m.A {
			return m, true, fmt.Errorf("mapping marker's range overflows: offset %d, %d bytes", m.A, m.B)
		}
		m.Data = rest
	default:
		return m, true, fmt.Errorf("mapping marker of unknown kind %d", m.Kind)
	}
	return m, true, nil
}

// shimEnv returns the LD_PRELOAD setting that loads the mapping shim into the recorded program
// (ahead of an LD_PRELOAD env already has), or nil when scry's install has no shim: then a
// program that maps a file shared and writable gets the warning that its stores are not seen.
func shimEnv(env []string) []string {
	in, err := toolchain.FindInstall()
	if err != nil {
		return nil
	}
	shim := filepath.Join(in.Root, "lib", "scry", ShimName)
	if _, err := os.Stat(shim); err != nil {
		return nil
	}
	v := shim
	for _, e := range env {
		if prev, ok := strings.CutPrefix(e, "LD_PRELOAD="); ok && prev != "" {
			v = shim + ":" + prev
		}
	}
	return []string{"LD_PRELOAD=" + v}
}

// mappingCall handles the calls about shared mappings: the shim's markers, mmap, munmap and
// msync; execve drops the process's shim (the new image loads its own, or none). It reports
// whether the call is fully handled. A process without the shim (a static or setuid binary)
// gets the warning that stores through its mappings are missing, and its msync(MS_SYNC) is
// modeled as a sync of the range, as msync(2) says.
func (c *converter) mappingCall(p *proc, cl *straceCall) (bool, error) {
	a := cl.Args
	arg := func(i int) string {
		if i < len(a) {
			return a[i]
		}
		return ""
	}
	cl.Frames = dropShimFrames(cl.Frames)
	switch cl.Name {
	case "write":
		if arg(0) != "-1" {
			return false, nil
		}
		data, cut, err := unquote(arg(1))
		if err != nil {
			return false, nil
		}
		m, ok, err := decodeMarker([]byte(data))
		if !ok {
			return false, nil
		}
		if cut {
			return true, fmt.Errorf("a mapping marker was cut by strace (over %d bytes)", stringLimit)
		}
		if err != nil {
			return true, err
		}
		return true, c.marker(p, cl, m)
	case "execve", "execveat":
		if !cl.Failed && !cl.NoReturn {
			p.shim = false
		}
		return false, nil
	case "mmap", "munmap", "msync":
	default:
		return false, nil
	}
	if cl.Failed || cl.NoReturn {
		return true, nil
	}
	switch cl.Name {
	case "mmap":
		if !(hasFlag(arg(3), "MAP_SHARED") || hasFlag(arg(3), "MAP_SHARED_VALIDATE")) || !hasFlag(arg(2), "PROT_WRITE") {
			return true, nil
		}
		of, _ := c.file(p, arg(4))
		if of == nil || !of.inDir {
			return true, nil
		}
		n, _ := numArg(arg(1))
		off, _ := numArg(arg(5))
		*p.maps = append(*p.maps, mapping{addr: uint64(cl.Ret), length: uint64(n), of: of, off: uint64(off)})
		if !p.shim {
			c.warn("%s is mapped shared and writable by a process without scry's mapping shim (a static or setuid binary, or %s missing from scry's lib/scry): stores through the mapping are not visible to strace, so the crash states miss them (msync MS_SYNC is modeled as a sync of the range)", of.path, ShimName)
		}
		return true, c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSMmap, Handle: of.handle, Path: of.path, FileOffset: uint64(off), Size: uint64(n)})
	case "munmap":
		addr, _ := numArg(arg(0))
		m := *p.maps
		for i := range m {
			if m[i].addr == uint64(addr) {
				*p.maps = append(m[:i:i], m[i+1:]...)
				break
			}
		}
	case "msync":
		if p.shim || !hasFlag(arg(2), "MS_SYNC") { // the shim's markers did it; MS_ASYNC persists nothing
			return true, nil
		}
		addr, _ := numArg(arg(0))
		n, _ := numArg(arg(1))
		for _, m := range *p.maps {
			if uint64(addr) >= m.addr && uint64(addr) < m.addr+m.length {
				return true, c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSMsync, Handle: m.of.handle, Path: m.of.path,
					FileOffset: m.off + uint64(addr) - m.addr, Size: uint64(n)})
			}
		}
	}
	return true, nil
}

// marker turns one shim marker of process p into records. A mapping's serial is bound to its
// open file at the MAP marker that follows its mmap; markers of mappings outside the workload
// directory (never bound) are dropped.
func (c *converter) marker(p *proc, cl *straceCall, m marker) error {
	if c.mapped == nil {
		c.mapped = map[uint64]*openFile{}
	}
	switch m.Kind {
	case markHello:
		p.shim = true
	case markMap:
		p.shim = true
		delete(c.mapped, m.Serial)
		ms := *p.maps
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].addr == m.A {
				c.mapped[m.Serial] = ms[i].of
				break
			}
		}
	case markData:
		of := c.mapped[m.Serial]
		if of == nil {
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSWrite, Handle: of.handle, Path: of.path, FileOffset: m.A,
			Size: m.B, Result: int64(m.B), Data: m.Data})
	case markSync:
		of := c.mapped[m.Serial]
		if of == nil {
			return nil
		}
		return c.emit(cl, &trace.Event{Kind: trace.KindFSOp, FS: trace.FSMsync, Handle: of.handle, Path: of.path, FileOffset: m.A, Size: m.B})
	}
	return nil
}

// dropShimFrames removes the shim's own frames from a call's stack: the location of a marker,
// or of a call the shim makes for the program (mmap, msync, fsync), is the program's call.
func dropShimFrames(fs []rawFrame) []rawFrame {
	shim := func(f rawFrame) bool { return filepath.Base(f.Binary) == ShimName }
	if !slices.ContainsFunc(fs, shim) {
		return fs
	}
	return slices.DeleteFunc(slices.Clone(fs), shim)
}
