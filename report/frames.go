package report

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// FramesAt returns the frames of an event at site in call-stack node stack, innermost first: the
// site itself, the calls its code was inlined at (the site's inlined-at chain, each of those
// frames but the last marked Inlined), then every call site of the stack with its own inlined-at
// chain. A frame that repeats an earlier one (recursion) is left out, so a recursive call at any
// depth has the same frames. Site 0 gives no frame of its own. This is how every report shows
// where an event happened; Primary picks the frame a finding is reported at.
func FramesAt(t SiteTable, site, stack uint32) []Frame {
	var frames []Frame
	seen := map[Frame]bool{}
	add := func(id uint32) {
		for n := 0; id != 0 && n < trace.MaxDepth; n++ {
			s, ok := t.Site(id)
			if !ok {
				return
			}
			f := SiteFrame(t, s)
			if k := f.key(); !seen[k] {
				seen[k] = true
				frames = append(frames, f)
			}
			id = s.InlinedAt
		}
	}
	add(site)
	if stack != 0 {
		ids := t.StackOf(stack) // outermost first
		for i := len(ids) - 1; i >= 0; i-- {
			add(ids[i])
		}
	}
	return frames
}

// SiteFrame returns site s of t as a frame: its location, marked Inlined when s was inlined at a
// call and External when t names the project roots (SiteTable.ProjectRoots) and s's file, an
// absolute path, is under none of them. This is the one rule of what is the program's own code;
// a site with a relative or unknown file is never External (Frame.System judges an unknown one).
func SiteFrame(t SiteTable, s trace.Site) Frame {
	f := Loc(s).Frame()
	f.Inlined = s.InlinedAt != 0
	f.External = outside(f.File, t.ProjectRoots())
	return f
}

// outside reports whether file, an absolute path, is under none of roots (false without roots).
func outside(file string, roots []string) bool {
	if len(roots) == 0 || !filepath.IsAbs(file) {
		return false
	}
	for _, r := range roots {
		if r == "/" || strings.HasPrefix(file, r) && len(file) > len(r) && file[len(r)] == '/' {
			return false
		}
	}
	return true
}

// key is the frame without its Inlined and External marks: what identifies a position in the
// source.
func (f Frame) key() Frame { f.Inlined, f.External = false, false; return f }

// Location returns the frame as a location.
func (f Frame) Location() Location {
	return Location{File: f.File, Line: f.Line, Column: f.Column, Function: f.Function}
}

// System reports whether the frame is in code the user did not write: a file outside the project
// roots the trace names (External: a library's headers installed under any prefix, a vendored
// copy outside the source tree), a file under /usr/include or /usr/lib (inline functions of
// libc, libpmem, libpmemobj headers; libstdc++'s and clang's headers, once their paths are
// cleaned: Loc), under /usr/local/include (the headers of a library installed from source, such
// as libpmemobj-cpp's default install), or an unknown file. The path rule alone judges traces
// without project roots (older traces, black-box mode).
func (f Frame) System() bool {
	return f.External || f.File == "" || strings.HasPrefix(f.File, "/usr/include/") || strings.HasPrefix(f.File, "/usr/lib/") ||
		strings.HasPrefix(f.File, "/usr/local/include/")
}

// Context is one calling context in which an event happened: its site and call-stack node.
type Context struct{ Site, Stack uint32 }

// Contexts records the calling contexts in which sites executed, for Primary. The zero value is
// ready to use. Add costs a slice index and a scan of the site's few contexts.
type Contexts struct {
	bySite [][]uint32 // stacks seen per site id, for sites with few
	many   map[Context]bool
}

// maxScan bounds the contexts kept per site in a slice; more go to a map.
const maxScan = 16

// Add records that site executed in stack (site 0 is ignored).
func (c *Contexts) Add(site, stack uint32) {
	if site == 0 {
		return
	}
	if int(site) >= len(c.bySite) {
		if site >= trace.MaxSites {
			return
		}
		c.bySite = slices.Grow(c.bySite, int(site)+1-len(c.bySite))[:site+1]
	}
	s := c.bySite[site]
	if len(s) > 0 && s[0] == stack {
		return
	}
	if slices.Contains(s, stack) {
		return
	}
	if len(s) < maxScan {
		c.bySite[site] = append(s, stack)
		return
	}
	if c.many == nil {
		c.many = map[Context]bool{}
	}
	c.many[Context{site, stack}] = true
}

// each calls fn for every recorded context.
func (c *Contexts) each(fn func(Context)) {
	for site, stacks := range c.bySite {
		for _, st := range stacks {
			fn(Context{uint32(site), st})
		}
	}
	for k := range c.many {
		fn(k)
	}
}

// Placed is where one finding context is reported: the index of its primary frame in Frames and
// the key that groups it with the other contexts reported as the same finding.
type Placed struct {
	Frames  []Frame
	Primary int    // index in Frames of the frame the finding is reported at
	Key     string // the frames up to and including Primary: the contexts placed alike
}

// Location returns the primary frame as a location (the zero Location when there is no frame).
func (p Placed) Location() Location {
	if len(p.Frames) == 0 {
		return Location{}
	}
	return p.Frames[p.Primary].Location()
}

// OwnKey returns the key of the instruction as the program sees it, and the index of the frame
// that stands for it: the instruction's own source position (frame 0) and the innermost frame
// outside system headers and code outside the program's own (Frame.System), the program's line
// that made a library's code store. One finding per instruction groups by it, however many
// callers showed it and whatever path inside a library led there ("?" and 0 with no frame). The
// copies of a helper inlined at several callers, and the instantiations of one template, have
// one OwnKey: positions are compared without their function's name.
func (p Placed) OwnKey() (string, int) {
	if len(p.Frames) == 0 {
		return "?", 0
	}
	pos := func(f Frame) string { return f.File + ":" + strconv.Itoa(f.Line) + ":" + strconv.Itoa(f.Column) }
	u := UserFrame(p.Frames, nil)
	if u == 0 {
		return pos(p.Frames[0]), 0
	}
	return pos(p.Frames[0]) + "|" + pos(p.Frames[u]), u
}

// Place decides where the findings of one kind, observed in the contexts buggy, are reported,
// given every context ran recorded (a context in buggy counts as run). It returns one Placed per
// element of buggy, in order.
//
// The rule: a finding is reported at the innermost frame that every execution through it shows.
// Frame 0 (the instruction) when every context that executed the instruction has the finding;
// otherwise the first caller (inlined or called) below which all executions have it. So a
// persistence helper used wrongly by one of three callers gives one finding at that caller's
// line, and a helper wrong for all its callers one finding at the helper. A frame in system
// headers is never the primary frame when a user frame is further out. Frames are compared by
// file, line, column and function, so one helper inlined at -O2 and called at -O0 is placed
// alike.
func Place(t SiteTable, buggy []Context, ran *Contexts) []Placed {
	out := make([]Placed, len(buggy))
	isBuggy := map[Context]bool{}
	inner := map[Frame]bool{} // frame 0 of a buggy context
	for i, b := range buggy {
		isBuggy[b] = true
		out[i].Frames = FramesAt(t, b.Site, b.Stack)
		if len(out[i].Frames) > 0 {
			inner[out[i].Frames[0].key()] = true
		}
	}
	// The executed contexts whose instruction is at one of those frames, with their frames.
	byInner := map[Frame][][]Frame{}
	visit := func(c Context) {
		if isBuggy[c] {
			return
		}
		s, ok := t.Site(c.Site)
		if !ok || !inner[Loc(s).Frame()] {
			return
		}
		fr := FramesAt(t, c.Site, c.Stack)
		byInner[fr[0].key()] = append(byInner[fr[0].key()], fr)
	}
	if ran != nil {
		ran.each(visit)
	}
	for i := range out {
		p := &out[i]
		if len(p.Frames) == 0 {
			p.Key = "?"
			continue
		}
		clean := byInner[p.Frames[0].key()] // contexts without the finding
		// The innermost frame that separates this context from every clean one; frame 0 when
		// none does (a clean context with the same frames: an unrolled copy, a deeper recursion).
		k := 0
		for j := range p.Frames {
			if !slices.ContainsFunc(clean, func(fr []Frame) bool { return samePrefix(fr, p.Frames, j) }) {
				k = j
				break
			}
		}
		for k < len(p.Frames)-1 && p.Frames[k].System() {
			k++
		}
		p.Primary = k
		p.Key = FramesKey(p.Frames[:k+1])
	}
	return out
}

// FramesKey returns a key that identifies frames exactly (each frame's Location.Key, without the
// Inlined mark), for grouping.
func FramesKey(frames []Frame) string {
	var b strings.Builder
	for _, f := range frames {
		l := f.Location()
		b.WriteString(l.Key())
		b.WriteByte('|')
	}
	return b.String()
}

// samePrefix reports whether a and b agree on frames 0..k.
func samePrefix(a, b []Frame, k int) bool {
	if len(a) <= k || len(b) <= k {
		return false
	}
	for i := 0; i <= k; i++ {
		if a[i].key() != b[i].key() {
			return false
		}
	}
	return true
}

// persistCalls are the library calls that only make data durable (flush, fence or both): a
// function that writes nothing itself and persists through them is a persistence helper.
var persistCalls = map[string]bool{
	"pmem_persist": true, "pmem_flush": true, "pmem_drain": true, "pmem_msync": true, "pmem_deep_persist": true,
	"pmemobj_persist": true, "pmemobj_flush": true, "pmemobj_drain": true,
}

// Helpers is the set of persistence helpers of a trace: the functions, by name, that write
// nothing to memory the pass instruments (no store, non-temporal store, mem intrinsic or atomic
// read-modify-write of their own, no library call that writes) and whose code flushes, fences or
// calls a library function that only persists, directly or through other helpers they call or
// inline (`pflush(addr)`, `clflush(p, len)` with its fences, `persist(p)` around pmem_persist).
// A crash point inside one says where the program persists, not which of its callers persists
// too early or too late: crash findings are reported at the innermost frame outside them
// (UserFrame).
type Helpers map[string]bool

// PersistenceHelpers classifies the functions of sites (a trace's whole site table). The loads,
// branches and returns of a function do not matter; its calls (and the calls inlined into it)
// must all be to helpers: the largest set closed under that rule, so mutually recursive helpers
// stay helpers.
func PersistenceHelpers(sites []trace.Site) Helpers {
	type fn struct {
		persists, writes bool
		callees          []string
	}
	fns := map[string]*fn{}
	for _, s := range sites {
		if s.Function == "" {
			continue
		}
		f := fns[s.Function]
		if f == nil {
			f = &fn{}
			fns[s.Function] = f
		}
		switch s.Kind {
		case trace.SiteFlush, trace.SiteFence:
			f.persists = true
		case trace.SiteStore, trace.SiteNTStore, trace.SiteRange, trace.SiteRMW:
			f.writes = true
		case trace.SiteLibCall:
			if persistCalls[s.Callee] {
				f.persists = true
			} else {
				f.writes = true
			}
		case trace.SiteCall, trace.SiteInlined:
			if s.Callee == "" {
				f.writes = true // an indirect call: anything may happen there
			} else {
				f.callees = append(f.callees, s.Callee)
			}
		}
	}
	h := Helpers{}
	for name, f := range fns {
		if !f.writes {
			h[name] = true
		}
	}
	// Drop, until nothing changes, every candidate that calls a non-candidate (a function with
	// no site at all is none: it is not instrumented, or writes through code scry does not see).
	for changed := true; changed; {
		changed = false
		for name := range h {
			for _, c := range fns[name].callees {
				if !h[c] {
					delete(h, name)
					changed = true
					break
				}
			}
		}
	}
	// A helper must persist, itself or through a helper it calls.
	persists := map[string]bool{}
	for name := range h {
		persists[name] = fns[name].persists
	}
	for changed := true; changed; {
		changed = false
		for name := range h {
			if persists[name] {
				continue
			}
			for _, c := range fns[name].callees {
				if persists[c] {
					persists[name], changed = true, true
					break
				}
			}
		}
	}
	for name := range h {
		if !persists[name] {
			delete(h, name)
		}
	}
	return h
}

// UserFrame returns the index in frames (innermost first, FramesAt) of the innermost frame that
// is neither in a persistence helper (h) nor in system headers (Frame.System): where a crash
// point inside a helper is reported, so that a helper's flush or fence is attributed to the
// caller that persists through it, however the compiler inlined it. When every frame is a
// helper's or a system one, it returns 0.
func UserFrame(frames []Frame, h Helpers) int {
	for i, f := range frames {
		if !h[f.Function] && !f.System() {
			return i
		}
	}
	return 0
}
