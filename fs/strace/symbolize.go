package strace

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// symbolizer turns strace -k frames into source locations: file, line and function from the
// binary's DWARF line table when it has one (Go's debug/dwarf); otherwise (a stripped binary or
// library, a deleted mapping) the binary's path as file and the demangled symbol and offset
// strace printed ("leveldb::DB::Open(...)+0x5c") as function, or the frame's file offset when
// strace found no symbol. It reads each binary once. Not safe for concurrent use.
type symbolizer struct {
	bins map[string]*binInfo
}

type binInfo struct {
	err   error
	loads []elf.ProgHeader
	lines []lineRow // sorted by address
}

type lineRow struct {
	addr   uint64
	file   string
	line   int
	endSeq bool
}

// newSymbolizer returns an empty symbolizer.
func newSymbolizer() *symbolizer { return &symbolizer{bins: map[string]*binInfo{}} }

// location is a symbolized frame: Function, File and Line (0 when unknown).
type location struct {
	Function string
	File     string
	Line     int
}

// system reports whether a frame belongs to the C library or the dynamic loader, frames a
// static vulnerability is never placed at (ALICE, Pillai et al., OSDI'14, §4: the source line
// of a vulnerability is the application's call, not libc's).
func (f rawFrame) system() bool {
	b := filepath.Base(f.Binary)
	if f.Binary == "" || !strings.HasPrefix(f.Binary, "/") {
		return true // "unexpected_backtracing_error" and the like
	}
	for _, p := range []string{"libc.so", "libc-", "ld-linux", "ld-2.", "libpthread", "vdso"} {
		if strings.HasPrefix(b, p) {
			return true
		}
	}
	return false
}

// locate symbolizes one frame. ret says the frame's address is a return address (every frame
// but the innermost): the call's line is looked up one byte before it.
func (s *symbolizer) locate(f rawFrame, ret bool) location {
	fn := f.Symbol
	if fn != "" && f.SymOff != 0 {
		fn = fmt.Sprintf("%s+%#x", f.Symbol, f.SymOff)
	}
	if fn == "" {
		fn = fmt.Sprintf("%#x", f.Addr)
	}
	loc := location{Function: fn, File: f.Binary}
	bi := s.load(f.Binary)
	if bi.err != nil || len(bi.lines) == 0 {
		return loc
	}
	pc, ok := bi.vaddr(f.Addr)
	if !ok {
		return loc
	}
	if ret && pc > 0 {
		pc--
	}
	i := sort.Search(len(bi.lines), func(i int) bool { return bi.lines[i].addr > pc }) - 1
	if i < 0 || bi.lines[i].endSeq {
		return loc
	}
	r := bi.lines[i]
	if f.Symbol != "" {
		loc.Function = f.Symbol
	}
	loc.File, loc.Line = r.file, r.line
	return loc
}

// vaddr converts a file offset of the binary to the virtual address its ELF headers give it.
func (b *binInfo) vaddr(off uint64) (uint64, bool) {
	for _, p := range b.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

func (s *symbolizer) load(path string) *binInfo {
	if bi, ok := s.bins[path]; ok {
		return bi
	}
	bi := &binInfo{}
	s.bins[path] = bi
	if strings.HasSuffix(path, deletedSuffix) {
		// The mapped file is gone; a file now at its path may be another one.
		bi.err = fmt.Errorf("%s: mapping of a deleted file", path)
		return bi
	}
	f, err := elf.Open(path)
	if err != nil {
		bi.err = err
		return bi
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			bi.loads = append(bi.loads, p.ProgHeader)
		}
	}
	d, err := f.DWARF()
	if err != nil {
		bi.err = err
		return bi
	}
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			rd.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		rd.SkipChildren()
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			name := ""
			if le.File != nil {
				name = le.File.Name
			}
			bi.lines = append(bi.lines, lineRow{addr: le.Address, file: name, line: le.Line, endSeq: le.EndSequence})
		}
	}
	sort.SliceStable(bi.lines, func(i, j int) bool { return bi.lines[i].addr < bi.lines[j].addr })
	return bi
}

// siteTable interns symbolized frames as trace sites and call stacks as STACK nodes, and
// writes the SITES and STACK records a new event needs before it.
type siteTable struct {
	sym    *symbolizer
	sites  map[location]uint32
	nodes  map[[2]uint32]uint32 // (parent, site) -> node
	frames map[rawFrame]location
}

func newSiteTable(sym *symbolizer) *siteTable {
	return &siteTable{sym: sym, sites: map[location]uint32{}, nodes: map[[2]uint32]uint32{}, frames: map[rawFrame]location{}}
}

// place returns the site of a call (its innermost frame outside libc) and the STACK node of its
// callers, writing the records that define new ones to w.
func (t *siteTable) place(w *trace.Writer, frames []rawFrame) (site, stack uint32, err error) {
	var locs []location
	for i, f := range frames {
		if f.system() {
			continue
		}
		key := f
		loc, ok := t.frames[key]
		if !ok {
			loc = t.sym.locate(f, i > 0)
			t.frames[key] = loc
		}
		locs = append(locs, loc)
	}
	if len(locs) == 0 {
		return 0, 0, nil
	}
	ids := make([]uint32, len(locs))
	var newSites []trace.Site
	for i, l := range locs {
		id, ok := t.sites[l]
		if !ok {
			id = uint32(len(t.sites) + 1)
			t.sites[l] = id
			newSites = append(newSites, trace.Site{ID: id, Kind: trace.SiteCall, Function: l.Function, File: l.File, Line: uint32(l.Line)})
		}
		ids[i] = id
	}
	if len(newSites) > 0 {
		if err := w.Write(&trace.Event{Kind: trace.KindSites, Sites: newSites}); err != nil {
			return 0, 0, err
		}
	}
	// Callers, outermost first, make the stack.
	var node uint32
	for i := len(ids) - 1; i >= 1; i-- {
		k := [2]uint32{node, ids[i]}
		n, ok := t.nodes[k]
		if !ok {
			n = uint32(len(t.nodes) + 1)
			t.nodes[k] = n
			if err := w.Write(&trace.Event{Kind: trace.KindStack, Stack: n, Parent: node, Site: ids[i]}); err != nil {
				return 0, 0, err
			}
		}
		node = n
	}
	return ids[0], node, nil
}
