package repair

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// A problem is one repair to compute: the findings of one window, what each demands of the
// stores it names (obligations), the instructions of the window as a symbolic trace
// (px86.SymInstr) whose presence and positions depend on choice variables (insert a flush, a
// fence, a library persist or a TX_ADD at a place of the source; move or delete a statement),
// and the constraints a repair must meet besides the obligations: it must not make a flush or
// fence redundant, nor a store durable later than it was (Hippocrates' "do no harm"; Neal et
// al., ASPLOS'21, §4). Positions are integers: the k-th record of the window is at
// (k+1)*posScale, and what a choice puts at a gap goes between its neighbours.

const (
	posScale = 10000
	// Slots order what one gap receives: TX_ADDs, moved store statements, inserted flushes,
	// moved flush statements, inserted persists, other moved statements, inserted fences.
	slotTx, slotStore, slotFlush, slotMovedFlush, slotPersist, slotMovedOther, slotFence = 1, 2, 3, 4, 5, 6, 7
)

// oblKind is what an obligation demands.
type oblKind uint8

const (
	// oDurable: the store is durable by position by (strictly before it with strict).
	oDurable oblKind = iota + 1
	// oBefore: every part of store a persists no later than every part of store b (a
	// must-persist-before property).
	oBefore
	// oAtomic: some store of us persists no later than some store of ps: the crash state in
	// which all of ps persisted and none of us did cannot happen.
	oAtomic
	// oTxAdd: the store's range is added to its transaction before it.
	oTxAdd
)

type obligation struct {
	kind   oblKind
	a, b   int   // window event indexes (stores); b unused for oDurable and oTxAdd
	by     int   // oDurable: window event index of the deadline record
	strict bool  // oDurable: strictly before by
	us, ps []int // oAtomic
	target int   // index in problem.targets
}

// target is one finding the problem repairs.
type target struct {
	n      int // 1-based number in the report
	f      *report.Finding
	anchor uint64 // the record the finding names
	// joined: the finding is repaired by another target's obligations (a durability
	// violation and its unpersisted-store).
	joined bool
}

// stmtRef is a source statement at the problem's level.
type stmtRef struct {
	file *srcFile
	s    *stmt
}

func (r *stmtRef) key() string { return fmt.Sprintf("%s:%d", r.file.path, r.s.first) }

// gap is a place in the source where a choice can put code: after (or before) a statement at
// the problem's level; occ are its dynamic occurrences in the window (base positions).
type gap struct {
	id    int
	st    *stmtRef
	after bool
	occ   []int64
	// occEv is the window event index each occurrence follows (after) or precedes (before).
	occEv []int
	line  int // source line, for the distance to the bug
}

// chKind is the kind of a choice.
type chKind uint8

const (
	cFlush chKind = iota + 1
	cFence
	cPersist
	cTxAdd
	cMove
	cDelete
)

func (k chKind) String() string {
	return [...]string{"", "insert flush", "insert fence", "insert persist", "insert TX_ADD", "move", "delete"}[k]
}

// choice is one Boolean variable of the repair.
type choice struct {
	name  string
	kind  chKind
	gap   *gap
	store int      // window event index of the store (cFlush, cPersist, cTxAdd)
	st    *stmtRef // cMove, cDelete: the statement
	runs  [][]int  // cMove, cDelete: the statement's occurrences (window event indexes)
	dist  int      // source lines from the bug, for ties
	slot  int
	sub   int // order among the choices of one gap and slot
}

// inserted reports whether the choice inserts an instruction.
func (c *choice) inserted() bool { return c.kind <= cTxAdd }

// pinstr is one instruction of the symbolic trace with how choices change it.
type pinstr struct {
	sym    px86.SymInstr
	ev     int   // window event index; -1 for initial and inserted instructions
	pos    int64 // position when no choice moves it
	moves  []pmove
	del    string // choice that deletes it ("" none)
	ins    string // choice that inserts it ("" an instruction of the trace)
	lines  []uint64
	kind   px86.SymKind
	flush  uint8
	thread uint32
	// harmFlush / harmFence: must stay non-redundant when present.
	harm bool
	// store: the window event index of the store an inserted flush or persist is for.
	store int
}

type pmove struct {
	choice string
	pos    int64
}

// problem is one repair problem.
type problem struct {
	w        *window
	lineSize uint64
	tbl      report.SiteTable
	// arm: the trace is an aarch64 program's (trace.HeaderAArch64): its DMBs order cleans
	// without completing them and its atomics are no barriers, which the encoding does not
	// model (it takes neither as a fence: sound, a repair may then use a DSB where a DMB would
	// order enough), and the templates' fallbacks are Arm's instructions.
	arm     bool
	fn      string // the function edits go in
	depth   int
	serial  uint64
	sources *sources
	styles  *styles
	targets []*target
	// derived
	frames  [][]aframe // per window event of the problem's thread in the window proper
	stmtAt  []*stmtRef // per window event: its statement at the problem's level
	obls    []obligation
	lines   map[uint64]bool
	gaps    []*gap
	choices []*choice
	byName  map[string]*choice
	instrs  []pinstr
	never   int64
	// notes explains what could not be offered (no lvalue, no template...).
	notes []string
}

func (p *problem) ev(k int) *tevent { return &p.w.events[k] }

func (p *problem) linesOf(k int) []uint64 { return p.ev(k).lines(p.lineSize) }

// find returns the window event index of record idx, -1 when the window does not hold it.
func (p *problem) find(idx uint64) int {
	i := sort.Search(len(p.w.events), func(i int) bool { return p.w.events[i].idx >= idx })
	if i < len(p.w.events) && p.w.events[i].idx == idx {
		return i
	}
	return -1
}

func isStore(k trace.Kind) bool {
	return k == trace.KindStore || k == trace.KindNTStore || k == trace.KindExternalWrite
}

// siteLoc is the source position of a site.
func (p *problem) siteLoc(site uint32) report.Location { return report.At(p.tbl, site) }

func sameLoc(a report.Location, r report.Related) bool {
	return a.File == r.File && a.Line == r.Line && a.Column == r.Column
}

// latestStore returns the latest store event before window event k (of thread t when t != 0)
// whose site is at the related location r, -1 when none.
func (p *problem) latestStore(k int, t uint32, r report.Related, overlap *tevent) int {
	for j := k - 1; j >= 0; j-- {
		e := p.ev(j)
		if !isStore(e.kind) || e.tail || (t != 0 && e.thread != t) || !sameLoc(p.siteLoc(e.site), r) {
			continue
		}
		if overlap != nil && (e.addr+e.size <= overlap.addr || overlap.addr+overlap.size <= e.addr) {
			continue
		}
		return j
	}
	return -1
}

// obligations derives what each target demands, and reasons for the targets it cannot handle.
func (p *problem) obligations() map[int]string {
	why := map[int]string{}
	for ti, t := range p.targets {
		if t.joined {
			continue
		}
		f := t.f
		k := p.find(t.anchor)
		if k < 0 {
			why[ti] = fmt.Sprintf("its record %d is not in the part of the trace read", t.anchor)
			continue
		}
		e := p.ev(k)
		related := func(role report.Role) []report.Related {
			var out []report.Related
			for _, r := range f.Related {
				if r.Role == role {
					out = append(out, r)
				}
			}
			return out
		}
		switch f.Kind {
		case report.UnpersistedStore:
			// Durable before the next operation begins or its own ends (the crash point a
			// durability violation is found at: a store made durable later leaves the
			// operations in between with a state they cannot recover from), else before its
			// pool is closed or the program ends.
			by := -1
			for j := k + 1; j < len(p.w.events); j++ {
				u := p.ev(j)
				if u.unmaps && e.addr >= u.addr && e.addr < u.addr+u.size || u.kind == trace.KindEnd ||
					(u.kind == trace.KindOpBegin || u.kind == trace.KindOpEnd) && !u.tail {
					by = j
					break
				}
			}
			if by < 0 {
				why[ti] = "the point where the store must be durable is not in the trace read"
				continue
			}
			p.obls = append(p.obls, obligation{kind: oDurable, a: k, by: by, target: ti})
		case report.OverwrittenUnpersisted:
			rs := related(report.RoleUnpersistedStore)
			if len(rs) == 0 {
				why[ti] = "it names no earlier store"
				continue
			}
			a := p.latestStore(k, 0, rs[0], e)
			if a < 0 {
				why[ti] = "its earlier store is not in the operation of the trace read"
				continue
			}
			p.obls = append(p.obls, obligation{kind: oDurable, a: a, by: k, strict: true, target: ti})
		case report.TxUnloggedStore:
			p.obls = append(p.obls, obligation{kind: oTxAdd, a: k, target: ti})
		case report.MPBViolation:
			rs := related(report.RoleEarlierStore)
			if len(rs) == 0 {
				why[ti] = "it names no earlier store"
				continue
			}
			a := p.latestStore(k, e.thread, rs[0], nil)
			if a < 0 {
				why[ti] = "its earlier store is not in the operation of the trace read"
				continue
			}
			p.obls = append(p.obls, obligation{kind: oBefore, a: a, b: k, target: ti})
		case report.OrderingViolation:
			var n int
			for _, u := range related(report.RoleUnpersisted) {
				ui := p.latestStore(k, e.thread, u, nil)
				for _, pr := range related(report.RolePersisted) {
					pi := p.latestStore(k, e.thread, pr, nil)
					if ui >= 0 && pi > ui {
						p.obls = append(p.obls, obligation{kind: oBefore, a: ui, b: pi, target: ti})
						n++
					}
				}
			}
			if n == 0 {
				why[ti] = "the stores its crash state persisted and lost are not in the operation of the trace read"
			}
		case report.AtomicityViolation:
			if txs := p.unloggedInTx(k); txs != nil {
				for _, s := range txs {
					p.obls = append(p.obls, obligation{kind: oTxAdd, a: s, target: ti})
				}
				if len(txs) == 0 {
					why[ti] = inLoggedTx(f)
				}
				continue
			}
			var us, ps []int
			for _, u := range related(report.RoleUnpersisted) {
				if ui := p.latestStore(k, e.thread, u, nil); ui >= 0 {
					us = append(us, ui)
				}
			}
			// The stores the failing state persisted: the latest instance of each site of the
			// operation before the crash point, the nearest maxAtomic of them.
			seenSite := map[uint32]bool{}
			for _, u := range us {
				seenSite[p.ev(u).site] = true
			}
			for j := k - 1; j >= 0 && len(ps) < maxAtomic; j-- {
				s := p.ev(j)
				if isStore(s.kind) && !s.tail && s.thread == e.thread && !seenSite[s.site] && s.kind != trace.KindExternalWrite &&
					p.sameOp(j, k) {
					seenSite[s.site] = true
					ps = append(ps, j)
				}
			}
			if len(related(report.RoleUnpersisted)) == 0 {
				why[ti] = lostNothing(f)
				continue
			}
			if len(us) == 0 || len(ps) == 0 {
				why[ti] = "no placement of flushes and fences makes the operation failure-atomic (scry fix moves flushes, fences, persists and TX_ADDs, never stores): " + adviceFor(p.targets)
				continue
			}
			p.obls = append(p.obls, obligation{kind: oAtomic, us: us, ps: ps, target: ti})
		default:
			why[ti] = "scry fix does not repair " + string(f.Kind) + " findings"
		}
	}
	return why
}

// shown says how the re-execution on a crash finding's image failed (its Crash.Detail), for
// answers that say what the finding shows.
func shown(f *report.Finding) string {
	if c := f.Crash; c != nil && c.Detail != "" {
		return c.Detail
	}
	return "the run on the crash image failed"
}

// lostNothing is the answer for an atomicity violation whose crash state lost no store: every
// store the operation issued before the crash point persisted, so it stopped between two durable
// steps. No flush, fence or TX_ADD changes what such a state holds: what fails is either the
// operation's design (it must not be interruptible there) or the code run after the crash,
// which must handle what the operation leaves there; a signal or a hang points at the latter.
func lostNothing(f *report.Finding) string {
	s := "its crash state lost nothing: every store the operation issued before the crash point was persisted (it stopped between two durable steps), and the finding shows " + shown(f) + ". No flush, fence, persist or TX_ADD, the edits scry fix makes, changes what such a state holds, so no repair was computed. "
	if c := f.Crash; c != nil && (c.Symptom == "signal" || c.Symptom == "hang") {
		s += "A recovery that crashes or hangs on a state the operation legitimately passes through usually mishandles what an interrupted operation leaves behind (a half-done insert, a lock, a log of its own): fix the recovery, or make the operation not interruptible there (a transaction or a log)"
	} else {
		s += "Either make the operation not interruptible there (a transaction or a log; or, when one store publishes the others, store and persist the others before it), or make the recovery handle the state it leaves"
	}
	if c := f.Crash; c != nil && c.ImageCommand != "" && c.Reproduce != "" {
		s += "; to see it, rebuild the image (" + c.ImageCommand + ") and run the reproduce command (" + c.Reproduce + ") under a debugger"
	}
	return s
}

// inLoggedTx is the answer for an atomicity violation whose crash is inside a transaction that
// logs every store it issued: libpmemobj's recovery rolls them all back, so the failure comes
// from what the transaction does not hold.
func inLoggedTx(f *report.Finding) string {
	return "the crash is inside a transaction that logs every store it issued before the crash point, so the transaction's recovery rolls them back, and yet the finding shows " + shown(f) + ": no TX_ADD is missing and no flush or fence would change this, so no repair was computed. The failure comes from what the transaction does not hold: data the program keeps outside it (stores outside the pool, made by code scry did not instrument, or state rebuilt at open from what the transaction rolled back) or steps of the program's own recovery in the wrong order"
}

// adviceFor is atomicAdvice for the findings of targets, with what a concurrent one also needs:
// a crash with other threads' operations in flight may lose a store another thread has already
// read (or copied and persisted), which no transaction of the storing operation alone prevents.
func adviceFor(targets []*target) string {
	for _, t := range targets {
		if c := t.f.Crash; c != nil && (len(c.InFlight) > 1 || t.f.Schedule != "") {
			return atomicAdvice + "; with other threads' operations in flight, also make each store durable before another thread can read it (persist it before the unlock or the flag that publishes it)"
		}
	}
	return atomicAdvice
}

// maxAtomic bounds the persisted stores an atomicity obligation names.
const maxAtomic = 16

// atomicAdvice is what an atomicity violation that no reordering fixes needs.
const atomicAdvice = "make the operation a transaction (libpmemobj's TX_BEGIN / TX_ADD / TX_END, or pmemobj_tx_begin, pmemobj_tx_add_range and pmemobj_tx_commit) or give it a redo or undo log; or, when one store publishes the others (a flag, a token, a pointer), store and persist the others before it"

// sameOp reports whether window events j and k belong to one operation, as the replay decided
// (tevent.op; false outside operations).
func (p *problem) sameOp(j, k int) bool {
	o := p.ev(k).op
	return o != 0 && p.ev(j).op == o
}

// unloggedInTx returns, when window event k is inside a transaction of its thread, the stores
// of its thread in the transaction's level holding k (from its TX_BEGIN, or from the window's
// start when that is earlier) before k that the transaction does not log (pmdk.Tx.Covers, as the
// replay recorded it when the store ran); nil when k is in no transaction.
func (p *problem) unloggedInTx(k int) []int {
	e := p.ev(k)
	if e.tx == 0 {
		return nil
	}
	out := []int{}
	for i := max(p.txBegin(k), 0); i < k; i++ {
		s := p.ev(i)
		if s.thread == e.thread && (s.kind == trace.KindStore || s.kind == trace.KindNTStore) && !s.logged {
			out = append(out, i)
		}
	}
	return out
}

// level computes the frames of the problem thread's events and the statement of each at the
// problem's level. It returns an error when the anchor's frames do not hold the location.
func (p *problem) level() error {
	t := p.targets[0]
	k := p.find(t.anchor)
	if k < 0 {
		return fmt.Errorf("record %d is not in the trace read", t.anchor)
	}
	a := p.ev(k)
	fr := framesOf(p.tbl, a.site, a.stack, a.serials)
	found := false
	for _, f := range fr {
		if f.File == t.f.Location.File && f.Line == t.f.Location.Line && f.Function == t.f.Location.Function {
			p.fn, p.depth, p.serial, found = f.Function, f.depth, f.serial, true
			break
		}
	}
	if !found {
		return fmt.Errorf("the frames of record %d do not include %s", t.anchor, t.f.Location)
	}
	p.frames = make([][]aframe, len(p.w.events))
	p.stmtAt = make([]*stmtRef, len(p.w.events))
	for i := range p.w.events {
		e := p.ev(i)
		if e.thread != p.w.thread || e.tail {
			continue
		}
		p.frames[i] = framesOf(p.tbl, e.site, e.stack, e.serials)
		if e.kind == trace.KindOpBegin || e.kind == trace.KindOpEnd || e.kind == trace.KindEnd {
			continue // markers of the workload, not code of a statement
		}
		for _, f := range p.frames[i] {
			// Every activation of the function: a statement inserted in it runs in each.
			if f.Function == p.fn {
				if sf := p.sources.get(f.File); sf != nil {
					if s := sf.stmtAt(f.Line, f.Column); s != nil {
						p.stmtAt[i] = &stmtRef{file: sf, s: s}
					}
				}
				break
			}
		}
	}
	return nil
}

// isOwn reports whether window event k is an instruction of the problem's function itself (a
// repeated site of a call statement is the callee's loop, not the statement running again).
func (p *problem) isOwn(k int) bool {
	_, own := p.ownFrame(k)
	return own
}

// ownFrame reports whether window event k is written by a statement of the problem's
// function itself (not by a function it calls, nor one inlined into it; its own code inlined
// into a caller is still its own): its lvalue is then in scope.
func (p *problem) ownFrame(k int) (report.Frame, bool) {
	fr := p.frames[k]
	if len(fr) == 0 || fr[0].Function != p.fn {
		return report.Frame{}, false
	}
	return fr[0].Frame, true
}

// descendant reports whether statement s is inside statement anc (or is it).
func descendant(s, anc *stmt) bool {
	for ; s != nil; s = s.parent {
		if s == anc {
			return true
		}
	}
	return false
}

// runs returns the occurrences of statement r in the window: maximal runs of consecutive
// events of the problem's thread at its level whose statement is r or inside r.
func (p *problem) runs(r *stmtRef) [][]int {
	var out [][]int
	var cur []int
	for i := range p.w.events {
		st := p.stmtAt[i]
		if st == nil {
			continue
		}
		if st.file == r.file && descendant(st.s, r.s) {
			// A statement that runs again (a loop) starts a new occurrence when it repeats a
			// site of the current one.
			if len(cur) > 0 && p.stmtAt[cur[0]].s == r.s && st.s == r.s && p.instruction(i) && p.isOwn(i) && slices.ContainsFunc(cur, func(j int) bool {
				return p.ev(j).site == p.ev(i).site && p.ev(j).kind == p.ev(i).kind
			}) {
				out = append(out, cur)
				cur = nil
			}
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// instruction reports whether window event k is an instruction of the program (a store,
// flush or fence site), not one of the records a library call makes.
func (p *problem) instruction(k int) bool {
	s, ok := p.tbl.Site(p.ev(k).site)
	if !ok {
		return false
	}
	switch s.Kind {
	case trace.SiteStore, trace.SiteNTStore, trace.SiteRange, trace.SiteFlush, trace.SiteFence, trace.SiteRMW:
		return true
	}
	return false
}

// buildGaps makes the gaps: after and before each statement the window's events are in, each
// source position once.
func (p *problem) buildGaps() {
	seen := map[string]bool{}
	var stmts []*stmtRef
	for _, st := range p.stmtAt {
		if st != nil && !seen[st.key()] {
			seen[st.key()] = true
			stmts = append(stmts, st)
		}
	}
	inSet := func(s *stmt) bool {
		for _, r := range stmts {
			if r.s == s {
				return true
			}
		}
		return false
	}
	for _, st := range stmts {
		rs := p.runs(st)
		if len(rs) == 0 || st.s.kind == sLabel {
			continue
		}
		after := &gap{st: st, after: true, line: st.file.lastLine(st.s)}
		before := &gap{st: st, line: st.file.firstLine(st.s)}
		for _, r := range rs {
			last, first := r[len(r)-1], r[0]
			after.occ = append(after.occ, int64(last+1)*posScale)
			after.occEv = append(after.occEv, last)
			before.occ = append(before.occ, int64(first+1)*posScale-posScale/2)
			before.occEv = append(before.occEv, first)
		}
		after.id = len(p.gaps)
		p.gaps = append(p.gaps, after)
		// "Before S" is "after the statement before S" when that one is a gap too.
		if prev := prevSibling(st.s); prev == nil || !inSet(prev) {
			before.id = len(p.gaps)
			p.gaps = append(p.gaps, before)
		}
	}
}

// siblings returns the statements of s's block (or the bodies of its parent).
func siblings(s *stmt) []*stmt {
	if s.parent == nil {
		return nil
	}
	return s.parent.bodies
}

func prevSibling(s *stmt) *stmt {
	sib := siblings(s)
	i := slices.Index(sib, s)
	if i <= 0 || s.parent.kind != sCompound {
		return nil
	}
	return sib[i-1]
}

// inScope reports whether code at gap g can name what the statement st names: g is in st's
// block or a block inside it.
func inScope(g *gap, st *stmtRef) bool {
	if g.st.file != st.file || st.s.parent == nil {
		return false
	}
	return descendant(g.st.s, st.s.parent)
}

// modeled reports whether window event k takes part in the symbolic trace.
func (p *problem) modeled(k int) bool {
	e := p.ev(k)
	switch {
	case e.kind == trace.KindFence:
		return true
	case e.kind == trace.KindTxCommit:
		return true
	case isStore(e.kind), e.kind == trace.KindFlush:
		for _, l := range p.linesOf(k) {
			if p.lines[l] {
				return true
			}
		}
	}
	return false
}

// fenceNeededElsewhere reports whether fence k made durable stores of lines the problem does
// not model: it must then stay where it is.
func (p *problem) fenceNeededElsewhere(k int) bool {
	e := p.ev(k)
	if !e.persisted {
		return false
	}
	for _, l := range e.pendingLines {
		if !p.lines[l] {
			return true
		}
	}
	return false
}

// stmtClass tells what a statement's events are: only flushes of modeled lines and fences
// that can move (ordering statements), only stores of modeled lines (store statements), or
// something else.
func (p *problem) stmtClass(runs [][]int) (ordering, stores bool) {
	ordering, stores = true, true
	for _, r := range runs {
		if len(r) > 9 {
			return false, false
		}
		for _, k := range r {
			e := p.ev(k)
			switch {
			case e.kind == trace.KindFlush && p.modeled(k):
				stores = false
			case e.kind == trace.KindFence && !p.fenceNeededElsewhere(k) && e.fence != trace.FenceLocked:
				stores = false
			case (e.kind == trace.KindStore || e.kind == trace.KindNTStore) && p.modeled(k) && len(p.linesOf(k)) == 1:
				ordering = false
			default:
				return false, false
			}
		}
	}
	return ordering, stores
}

// crossable reports whether statement mv can move to gap g: same block, only simple
// statements in between that neither declare nor assign a name mv uses; a store statement
// may cross only statements whose events are flushes and fences.
func (p *problem) crossable(mv *stmtRef, g *gap, storeStmt bool) bool {
	if g.st.file != mv.file || g.st.s.parent != mv.s.parent || mv.s.parent == nil || mv.s.parent.kind != sCompound || mv.s.braceless || g.st.s.braceless {
		return false
	}
	sib := siblings(mv.s)
	i, j := slices.Index(sib, mv.s), slices.Index(sib, g.st.s)
	if i < 0 || j < 0 || g.st.s == mv.s {
		return false
	}
	var crossed []*stmt
	switch {
	case j > i: // moving down: crosses i+1..j (after) or i+1..j-1 (before)
		end := j
		if !g.after {
			end = j - 1
		}
		crossed = sib[i+1 : end+1]
	default: // moving up: crosses j..i-1 (before) or j+1..i-1 (after)
		start := j
		if g.after {
			start = j + 1
		}
		crossed = sib[start:i]
	}
	if len(crossed) == 0 {
		return false
	}
	uses := identsOf(mv.file, mv.s)
	for _, c := range crossed {
		if c.kind != sSimple {
			return false
		}
		for _, name := range assignedIn(mv.file, c) {
			if uses[name] {
				return false
			}
		}
		if storeStmt && !p.onlyOrdering(mv.file, c) {
			return false
		}
	}
	return true
}

// onlyOrdering reports whether every event of statement c in the window is a flush or fence.
func (p *problem) onlyOrdering(f *srcFile, c *stmt) bool {
	any := false
	for i, st := range p.stmtAt {
		if st == nil || st.file != f || st.s != c {
			continue
		}
		any = true
		if k := p.ev(i).kind; k != trace.KindFlush && k != trace.KindFence {
			return false
		}
	}
	return any
}

// identsOf returns the identifiers statement s names.
func identsOf(f *srcFile, s *stmt) map[string]bool {
	out := map[string]bool{}
	for i := s.first; i <= s.last; i++ {
		if f.toks[i].kind == tIdent {
			out[f.toks[i].text] = true
		}
	}
	return out
}

// declWords start a declaration.
var declWords = map[string]bool{"int": true, "char": true, "long": true, "short": true, "unsigned": true, "signed": true, "float": true,
	"double": true, "void": true, "struct": true, "union": true, "enum": true, "const": true, "volatile": true, "static": true,
	"size_t": true, "ssize_t": true, "bool": true, "_Bool": true, "auto": true, "register": true, "typedef": true}

// assignedIn returns the names statement s declares or assigns as a whole (x = ..., x++, a
// declaration's names, &x passed to a call).
func assignedIn(f *srcFile, s *stmt) []string {
	var out []string
	t := f.toks
	decl := t[s.first].kind == tIdent && (declWords[t[s.first].text] || strings.HasSuffix(t[s.first].text, "_t") ||
		s.first+1 <= s.last && t[s.first+1].kind == tIdent)
	for i := s.first; i <= s.last; i++ {
		if t[i].kind != tIdent {
			continue
		}
		if decl {
			out = append(out, t[i].text)
			continue
		}
		next := i + 1
		prev := i - 1
		if next <= s.last && (assignOps[t[next].text] || t[next].text == "++" || t[next].text == "--") && (prev < s.first || t[prev].text != "->" && t[prev].text != ".") {
			out = append(out, t[i].text)
		}
		if prev >= s.first && (t[prev].text == "++" || t[prev].text == "--") {
			out = append(out, t[i].text)
		}
		if prev >= s.first && t[prev].text == "&" && next <= s.last && (t[next].text == "," || t[next].text == ")") {
			out = append(out, t[i].text) // &x passed to a call, which may write x
		}
	}
	return out
}
