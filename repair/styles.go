package repair

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// A repair is written the way the program already persists: with its own flush statement
// (an intrinsic, a macro, pmem_flush), its own fence, its own library persist call
// (pmem_persist, pmemobj_persist) and its own way of adding ranges to a transaction
// (TX_ADD_FIELD, TX_ADD_DIRECT, pmemobj_tx_add_range_direct). A template is one such call found
// in the trace, with the argument that takes the address (and the size) to replace. Without
// one, scry writes compiler built-ins that need no header (__builtin_ia32_clflush,
// __builtin_ia32_sfence) and libpmemobj's pmemobj_tx_add_range_direct.

// tmpl is a call statement of the program to write again with another address.
type tmpl struct {
	name       string
	args       []string
	addr, size int    // argument indexes (-1: none)
	cast       string // the cast the address argument starts with, kept
	kind       uint8  // flush kind of a flush template (trace.FlushKind: 1 clflush, 2 clflushopt, 3 clwb, 4 dc-cvap)
	asm        string // an inline-assembly template (one "r" operand, the address) in place of a call
	file, fn   string
	line       int
}

// render writes the call with addr and size in place of the template's (for an asm template,
// the asm statement with addr as its operand).
func (t *tmpl) render(addr, size string) string {
	args := make([]string, len(t.args))
	copy(args, t.args)
	if t.addr >= 0 {
		a := addr
		if t.cast != "" {
			if !simpleOperand(a) {
				a = "(" + a + ")"
			}
			a = t.cast + a
		}
		args[t.addr] = a
	}
	if t.size >= 0 {
		args[t.size] = size
	}
	if t.asm != "" {
		return fmt.Sprintf("__asm__ volatile(%q : : \"r\"(%s) : \"memory\");", t.asm, args[t.addr])
	}
	return t.name + "(" + strings.Join(args, ", ") + ");"
}

var operandRe = regexp.MustCompile(`^&?[A-Za-z_][A-Za-z0-9_]*(\s*(->|\.)\s*[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\]|\([^()]*\))*$`)

// simpleOperand reports whether e can follow a cast without parentheses.
func simpleOperand(e string) bool { return operandRe.MatchString(e) }

var castRe = regexp.MustCompile(`^\(\s*(const\s+)?(volatile\s+)?(void|char|uint8_t|unsigned char)\s*\*\s*\)\s*`)

// libTemplates are the library calls that flush or persist a range: whether they persist
// (write back and fence), the indexes of their address and size arguments, and their number
// of arguments.
var libTemplates = map[string]struct {
	persist           bool
	addr, size, nargs int
}{
	"pmem_flush": {false, 0, 1, 2}, "pmem_deep_flush": {false, 0, 1, 2}, "pmemobj_flush": {false, 1, 2, 3},
	"pmem_persist": {true, 0, 1, 2}, "pmem_deep_persist": {true, 0, 1, 2}, "pmemobj_persist": {true, 1, 2, 3},
}

// styles are the templates of one program.
type styles struct {
	flush   *tmpl
	fence   string
	persist *tmpl
	txadd   *tmpl
}

// styleSite is a site the trace shows persisting, adding to a transaction or fencing, with the
// record kind and flush kind of its first occurrence.
type styleSite struct {
	site, stack uint32
	kind        trace.Kind
	flush       trace.FlushKind
	fence       trace.FenceKind
}

// deriveStyles picks the templates from sites, preferring those in function fn, then those in
// the file file, then any. For an aarch64 program (arm) a fence template must be a DSB (a DMB
// does not complete a clean), and without a template the instructions are written as inline
// assembly: DC CVAP and DSB ISH.
func deriveStyles(tbl report.SiteTable, sites []styleSite, src *sources, fn, file string, arm bool) *styles {
	st := &styles{}
	rank := func(t *tmpl) int {
		switch {
		case t.fn == fn:
			return 0
		case t.file == file:
			return 1
		}
		return 2
	}
	better := func(old, t *tmpl) bool { return old == nil || rank(t) < rank(old) }
	fenceRank := 3
	for _, ss := range sites {
		s, ok := tbl.Site(ss.site)
		if !ok || ss.kind == trace.KindFence && ss.fence == trace.FenceDMB {
			continue
		}
		fr := framesOf(tbl, ss.site, ss.stack, nil)
		if len(fr) == 0 {
			continue
		}
		// The program's own way of writing it: the instruction's own statement, or the
		// outermost call of a persistence helper of the program around it (pflush(p) rather
		// than the _mm_clflush(p) in it; persist(p), a flush and a fence, as a persist); for a
		// library call, the call itself.
		var f report.Frame
		var name string
		var args []string
		persistHelper := false
		for i, x := range fr {
			if x.System() {
				continue
			}
			sf := src.get(x.File)
			if sf == nil {
				break
			}
			n, a, ok := sf.callArgs(x.Line, x.Column)
			if st := sf.stmtAt(x.Line, x.Column); st != nil && sf.toks[st.first].kind == tIdent &&
				(sf.toks[st.first].text == "asm" || sf.toks[st.first].text == "__asm__" || sf.toks[st.first].text == "__asm") {
				n, ok = "asm", true
			}
			if !ok {
				break
			}
			if name != "" {
				if s.Kind == trace.SiteLibCall || ss.kind == trace.KindTxAdd {
					break
				}
				hf := src.get(fr[i-1].File)
				if hf == nil {
					break
				}
				flush, fence, ok := hf.helperKind(fr[i-1].Function, 3)
				switch {
				case !ok:
				case ss.kind == trace.KindFlush && flush && !fence && len(a) == 1:
					f, name, args = x.Frame, n, a
					continue
				case ss.kind == trace.KindFence && fence && !flush && len(a) == 0:
					f, name, args = x.Frame, n, a
					continue
				case ss.kind == trace.KindFlush && flush && fence && len(a) == 1:
					f, name, args, persistHelper = x.Frame, n, a, true
				}
				break
			}
			if n == "asm" {
				// An asm statement is not written again; the call of its helper may be.
				f, args, name = x.Frame, nil, "\x00asm"
				continue
			}
			f, name, args = x.Frame, n, a
		}
		if name == "" || name == "\x00asm" {
			continue
		}
		if persistHelper {
			t := &tmpl{name: name, args: args, addr: 0, size: -1, file: f.File, fn: f.Function, line: f.Line}
			if better(st.persist, t) {
				st.persist = t
			}
			continue
		}
		t := &tmpl{name: name, args: args, addr: -1, size: -1, kind: uint8(ss.flush), file: f.File, fn: f.Function, line: f.Line}
		callee := s.Callee
		switch {
		case ss.kind == trace.KindFlush && s.Kind == trace.SiteFlush && len(args) == 1:
			t.addr = 0
			if better(st.flush, t) {
				st.flush = t
			}
		case ss.kind == trace.KindFlush && s.Kind == trace.SiteLibCall && name == callee:
			lt, ok := libTemplates[callee]
			if !ok || len(args) != lt.nargs {
				break
			}
			t.addr, t.size = lt.addr, lt.size
			dst := &st.flush
			if lt.persist {
				dst = &st.persist
			}
			if better(*dst, t) {
				*dst = t
			}
		case ss.kind == trace.KindFence && (s.Kind == trace.SiteFence && len(args) == 0 || s.Kind == trace.SiteLibCall && name == callee && (callee == "pmem_drain" || callee == "pmemobj_drain")):
			if r := rank(t); r < fenceRank {
				st.fence, fenceRank = name+"("+strings.Join(args, ", ")+");", r
			}
		case ss.kind == trace.KindTxAdd && s.Kind == trace.SiteLibCall && strings.HasPrefix(callee, "pmemobj_tx_"):
			if better(st.txadd, t) {
				st.txadd = t
			}
		}
	}
	for _, t := range []*tmpl{st.flush, st.persist} {
		if t != nil && t.addr >= 0 && t.addr < len(t.args) {
			t.cast = castRe.FindString(t.args[t.addr])
		}
	}
	// Without a template: the intrinsics when the file includes their header, else the
	// compiler's built-ins (clflush and sfence need no target option on x86-64).
	intrinsics := false
	if sf := src.get(file); sf != nil {
		intrinsics = includesRe.Match(sf.text)
	}
	if arm {
		if st.flush == nil && st.persist == nil {
			st.flush = &tmpl{asm: "dc cvap, %0", args: []string{""}, addr: 0, size: -1, kind: uint8(trace.FlushDCCVAP)}
		}
		if st.fence == "" {
			st.fence = `__asm__ volatile("dsb ish" : : : "memory");`
		}
	}
	if st.flush == nil && st.persist == nil {
		st.flush = &tmpl{name: "__builtin_ia32_clflush", args: []string{""}, addr: 0, size: -1, cast: "(const void *)", kind: uint8(trace.FlushCLFLUSH)}
		if intrinsics {
			st.flush.name, st.flush.cast = "_mm_clflush", "(const void *)"
		}
	}
	if st.fence == "" {
		st.fence = "__builtin_ia32_sfence();"
		if intrinsics {
			st.fence = "_mm_sfence();"
		}
	}
	return st
}

// includesRe finds an include of the x86 intrinsics headers that declare _mm_clflush and
// _mm_sfence.
var includesRe = regexp.MustCompile(`(?m)^\s*#\s*include\s*<(immintrin|x86intrin|emmintrin|xmmintrin)\.h>`)

// addrOf returns the address of lvalue lv: &lv, or p for *p.
func addrOf(lv string) string {
	if strings.HasPrefix(lv, "*") && !strings.HasPrefix(lv, "**") {
		return strings.TrimSpace(lv[1:])
	}
	return "&" + lv
}

// rangeCallee are the library copies whose first argument is the destination and third the size.
var rangeCallee = map[string]bool{"memcpy": true, "memmove": true, "memset": true, "strncpy": true, "pmem_memcpy": true,
	"pmem_memmove": true, "pmem_memset": true, "pmem_memcpy_nodrain": true, "pmem_memset_nodrain": true, "pmem_memmove_nodrain": true}

// addressOf returns the source expressions of the address and size the store at window event
// k writes, and its lvalue ("" for a library copy), seen from its own statement in file sf at
// frame fr.
func (p *problem) addressOf(k int, sf *srcFile, fr report.Frame) (addr, size, lv string, ok bool) {
	s, found := p.tbl.Site(p.ev(k).site)
	if !found {
		return "", "", "", false
	}
	if s.Kind == trace.SiteRange || s.Kind == trace.SiteLibCall {
		name, args, ok := sf.callArgs(fr.Line, fr.Column)
		if !ok || !rangeCallee[name] || len(args) < 3 {
			return "", "", "", false
		}
		return args[0], args[2], "", true
	}
	lv, ok = sf.lvalueAt(fr.Line, fr.Column)
	if !ok {
		return "", "", "", false
	}
	return addrOf(lv), "sizeof(" + lv + ")", lv, true
}

// storeAddress returns the address, size and lvalue of the store at window event k as code
// at the problem's level can write them: from the store's own statement, or, for a store in
// a function the problem's function calls directly, from the callee's statement with its
// parameters replaced by the call's arguments (Hippocrates, Neal et al., ASPLOS'21, §4: a
// fix placed at the call site of the helper that needs it there only), or, for a callee in a
// system header called by an operator (std::atomic's ++), from the operator's operand: a fix
// is never placed in a system header.
func (p *problem) storeAddress(k int) (addr, size, lv string, ok bool) {
	st := p.stmtAt[k]
	if st == nil {
		return "", "", "", false
	}
	if fr, own := p.ownFrame(k); own {
		return p.addressOf(k, st.file, fr)
	}
	fr := p.frames[k]
	if len(fr) < 2 || fr[1].Function != p.fn {
		return "", "", "", false
	}
	if fr[0].System() {
		// A store a system header's function makes for an operator of the caller's statement
		// (++, --, = or a compound assignment on a std::atomic: libstdc++'s <atomic> writes
		// the object the operator applies to): the operand is the address, as for a store of
		// the program's own.
		lv, ok := st.file.lvalueAt(fr[1].Line, fr[1].Column)
		if !ok {
			return "", "", "", false
		}
		return addrOf(lv), "sizeof(" + lv + ")", lv, true
	}
	hf := p.sources.get(fr[0].File)
	if hf == nil {
		return "", "", "", false
	}
	params := hf.params(fr[0].Function)
	name, args, ok := st.file.callArgs(fr[1].Line, fr[1].Column)
	if !ok || name != fr[0].Function || len(args) != len(params) || len(params) == 0 {
		return "", "", "", false
	}
	addr, size, lv, ok = p.addressOf(k, hf, fr[0].Frame)
	if !ok {
		return "", "", "", false
	}
	subst := func(e string) string {
		return identRe.ReplaceAllStringFunc(e, func(id string) string {
			for i, pn := range params {
				if pn == id {
					if simpleOperand(args[i]) {
						return args[i]
					}
					return "(" + args[i] + ")"
				}
			}
			return id
		})
	}
	addr, size, lv = subst(addr), subst(size), subst(lv)
	// &*(x) written by substitution reads better as x.
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "&*"), "&(*")
	return addr, size, lv, true
}

var identRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

var fieldRe = regexp.MustCompile(`^D_R[WO]\s*\((.+)\)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)$`)
var directFieldRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)$`)

// txAddText writes the statement adding the store's range (lvalue lv, address addr, size size)
// to its transaction, in the program's style.
func (st *styles) txAddText(lv, addr, size string) string {
	name := ""
	if st.txadd != nil {
		name = st.txadd.name
	}
	switch name {
	case "TX_ADD_FIELD", "TX_ADD":
		if m := fieldRe.FindStringSubmatch(lv); m != nil {
			return "TX_ADD_FIELD(" + m[1] + ", " + m[2] + ");"
		}
	case "TX_ADD_FIELD_DIRECT":
		if m := directFieldRe.FindStringSubmatch(lv); m != nil {
			return "TX_ADD_FIELD_DIRECT(" + m[1] + ", " + m[2] + ");"
		}
	case "TX_ADD_DIRECT":
		return "TX_ADD_DIRECT(" + addr + ");"
	}
	return "pmemobj_tx_add_range_direct(" + addr + ", " + size + ");"
}

// sources reads and caches the program's source files. A file named by a relative path is
// looked for under dirs in order.
type sources struct {
	dirs  []string
	files map[string]*srcFile
}

func newSources(dirs ...string) *sources {
	return &sources{dirs: dirs, files: map[string]*srcFile{}}
}

// get returns the parsed file, nil when it cannot be read.
func (s *sources) get(name string) *srcFile {
	if name == "" {
		return nil
	}
	if f, ok := s.files[name]; ok {
		return f
	}
	var f *srcFile
	cands := []string{name}
	if !filepath.IsAbs(name) {
		cands = nil
		for _, d := range s.dirs {
			cands = append(cands, filepath.Join(d, name))
		}
	}
	for _, c := range cands {
		if sf, err := readSource(c); err == nil {
			f = sf
			f.name = name
			break
		}
	}
	s.files[name] = f
	return f
}
