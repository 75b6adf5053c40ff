package repair

import (
	"fmt"
	"slices"
	"sort"

	"github.com/scry-pm/scry/internal/smt"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// gapMargin bounds the gaps offered around the records the obligations name (window events).
const gapMargin = 64

// obligationStores returns the window event indexes of every store an obligation names.
func (p *problem) obligationStores() []int { return p.storesOf(true) }

// orderStores returns the stores of the obligations other than oTxAdd, each once.
func (p *problem) orderStores() []int { return p.storesOf(false) }

// storesOf returns the stores the obligations name (those of oTxAdd obligations with tx),
// sorted, each once.
func (p *problem) storesOf(tx bool) []int {
	var out []int
	for _, o := range p.obls {
		switch o.kind {
		case oDurable:
			out = append(out, o.a)
		case oTxAdd:
			if tx {
				out = append(out, o.a)
			}
		case oBefore:
			out = append(out, o.a, o.b)
		case oAtomic:
			out = append(out, o.us...)
			out = append(out, o.ps...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// span returns the window event range the gaps are offered in.
func (p *problem) span() (lo, hi int) {
	lo, hi = len(p.w.events), -1
	for _, o := range p.obls {
		for _, k := range []int{o.a, o.b} {
			if o.kind == oDurable || o.kind == oTxAdd {
				if k != o.a {
					continue
				}
			}
			lo, hi = min(lo, k), max(hi, k)
		}
		for _, k := range append(slices.Clone(o.us), o.ps...) {
			lo, hi = min(lo, k), max(hi, k)
		}
		if o.kind == oDurable && !p.ev(o.by).tail {
			hi = max(hi, o.by)
		}
	}
	for _, t := range p.targets {
		if k := p.find(t.anchor); k >= 0 {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	return lo - gapMargin, hi + gapMargin
}

// buildChoices makes the choice variables: what may be inserted at each gap, and which
// statements may move or go.
func (p *problem) buildChoices() {
	p.byName = map[string]*choice{}
	p.lines = map[uint64]bool{}
	for _, k := range p.obligationStores() {
		for _, l := range p.linesOf(k) {
			p.lines[l] = true
		}
	}
	lo, hi := p.span()
	var gaps []*gap
	for _, g := range p.gaps {
		for _, k := range g.occEv {
			if k >= lo && k <= hi {
				gaps = append(gaps, g)
				break
			}
		}
	}
	p.gaps = gaps
	// Ties go to the place nearest the store the first obligation is about (the store to make
	// durable, the one to persist first).
	anchorLine := 0
	anchor := p.find(p.targets[0].anchor)
	if len(p.obls) > 0 {
		if o := p.obls[0]; o.kind == oAtomic && len(o.us) > 0 {
			anchor = o.us[0]
		} else if o.kind != oAtomic {
			anchor = o.a
		}
	}
	if anchor >= 0 && p.stmtAt[anchor] != nil {
		anchorLine = p.stmtAt[anchor].file.firstLine(p.stmtAt[anchor].s)
	}
	add := func(c *choice) {
		c.name = fmt.Sprintf("c%d", len(p.choices))
		if c.gap != nil {
			c.dist = abs(c.gap.line - anchorLine)
		}
		p.choices = append(p.choices, c)
		p.byName[c.name] = c
	}
	after := func(g *gap, k int) bool {
		for _, o := range g.occEv {
			if o > k || o == k && g.after {
				return true
			}
		}
		return false
	}
	needsOrder := false
	txStores := map[int]bool{}
	for _, o := range p.obls {
		if o.kind == oTxAdd {
			txStores[o.a] = true
		} else {
			needsOrder = true
		}
	}
	// Insertions.
	for _, k := range p.obligationStores() {
		st := p.stmtAt[k]
		if st == nil {
			continue
		}
		if _, _, _, ok := p.storeAddress(k); !ok {
			if _, own := p.ownFrame(k); own {
				p.note(k, "scry cannot name the address the store writes in the source")
			} else {
				p.note(k, "the store is in a function %s calls, whose address scry cannot write at the call", p.fn)
			}
			continue
		}
		if txStores[k] {
			begin := max(p.txBegin(k), 0)
			for _, g := range p.gaps {
				if !inScope(g, st) {
					continue
				}
				inTx := false
				for _, o := range g.occEv {
					if o >= begin && (o < k || o == k && !g.after) {
						inTx = true
					}
				}
				if inTx {
					add(&choice{kind: cTxAdd, gap: g, store: k, slot: slotTx})
				}
			}
		}
		if !needsOrder || !slices.Contains(p.orderStores(), k) {
			continue
		}
		single := len(p.linesOf(k)) == 1
		for _, g := range p.gaps {
			if !inScope(g, st) || !after(g, k) {
				continue
			}
			if p.styles.flush != nil && single {
				add(&choice{kind: cFlush, gap: g, store: k, slot: slotFlush})
			}
			if p.styles.persist != nil {
				add(&choice{kind: cPersist, gap: g, store: k, slot: slotPersist})
			}
		}
	}
	if needsOrder {
		for _, g := range p.gaps {
			add(&choice{kind: cFence, gap: g, slot: slotFence})
		}
	}
	// Moves and deletions of the statements of the window (deletions also for a TX_ADD,
	// which can make a later persist of the same range redundant).
	{
		seen := map[string]bool{}
		for _, st := range p.stmtAt {
			if st == nil || seen[st.key()] {
				continue
			}
			seen[st.key()] = true
			if st.s.kind != sSimple {
				continue
			}
			runs := p.runs(st)
			inSpan := false
			for _, r := range runs {
				if r[0] >= lo && r[len(r)-1] <= hi {
					inSpan = true
				}
			}
			if !inSpan {
				continue
			}
			ordering, stores := p.stmtClass(runs)
			if stores {
				obl := false
				for _, r := range runs {
					for _, k := range r {
						if slices.Contains(p.orderStores(), k) {
							obl = true
						}
					}
				}
				stores = obl
			}
			if !ordering && !stores {
				continue
			}
			if ordering && st.file.owns(st.s) {
				add(&choice{kind: cDelete, st: st, runs: runs})
			}
			if !needsOrder {
				continue
			}
			slot := slotStore
			if ordering {
				slot = slotMovedOther
				if p.onlyFlushes(runs) {
					slot = slotMovedFlush
				}
			}
			for _, g := range p.gaps {
				if len(g.occ) != len(runs) || !st.file.owns(st.s) || !p.crossable(st, g, stores) {
					continue
				}
				add(&choice{kind: cMove, st: st, runs: runs, gap: g, slot: slot})
			}
		}
	}
	// Order of the choices at one gap and slot.
	subs := map[[2]int]int{}
	for _, c := range p.choices {
		if c.gap == nil {
			continue
		}
		key := [2]int{c.gap.id, c.slot}
		c.sub = subs[key]
		subs[key]++
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// note records why something could not be offered for store k.
func (p *problem) note(k int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if fr := p.frames[k]; len(fr) > 0 {
		msg = fmt.Sprintf("store at %s:%d: %s", fr[0].File, fr[0].Line, msg)
	}
	if !slices.Contains(p.notes, msg) {
		p.notes = append(p.notes, msg)
	}
}

// onlyFlushes reports whether the runs hold flushes and no fence.
func (p *problem) onlyFlushes(runs [][]int) bool {
	for _, r := range runs {
		for _, k := range r {
			if p.ev(k).kind != trace.KindFlush {
				return false
			}
		}
	}
	return true
}

// txBegin returns the window event index of the TX_BEGIN of the transaction level holding
// event k (the innermost level open on its thread, as the replay recorded it: tevent.tx and
// txLevel), -1 when the window holds none (no transaction, or the window starts inside it).
func (p *problem) txBegin(k int) int {
	e := p.ev(k)
	if e.tx == 0 {
		return -1
	}
	for i := k; i >= 0; i-- {
		b := p.ev(i)
		if b.txChange == pmdk.Began && b.thread == e.thread && !b.tail && b.tx == e.tx && b.txLevel == e.txLevel {
			return i
		}
	}
	return -1
}

// buildInstrs makes the symbolic trace: the window's modeled records, the stores unpersisted
// when it starts, and what each insertion choice adds.
func (p *problem) buildInstrs() {
	ls := p.lineSize
	var relevant []uint64
	for l := range p.lines {
		relevant = append(relevant, l)
	}
	slices.Sort(relevant)
	for _, s := range p.w.initial {
		l := s.Addr &^ (ls - 1)
		if !p.lines[l] {
			continue
		}
		kind := px86.SymStore
		if s.NT() {
			kind = px86.SymNTStore
		}
		p.instrs = append(p.instrs, pinstr{ev: -1, pos: 1, kind: kind, lines: []uint64{l}, thread: s.Origin.Thread, store: -1})
		if s.State == px86.Pending && !s.NT() {
			o := p.w.initialFlush[l]
			p.instrs = append(p.instrs, pinstr{ev: -1, pos: 2, kind: px86.SymFlush, flush: 3, lines: []uint64{l}, thread: o.Thread, store: -1})
		}
	}
	moves := map[int][]pmove{}
	dels := map[int]string{}
	for _, c := range p.choices {
		switch c.kind {
		case cMove:
			for i, r := range c.runs {
				for j, k := range r {
					moves[k] = append(moves[k], pmove{choice: c.name, pos: c.gap.occ[i] + int64(c.slot*100+c.sub*10+j)})
				}
			}
		case cDelete:
			for _, r := range c.runs {
				for _, k := range r {
					dels[k] = c.name
				}
			}
		}
	}
	var txAdds []*choice
	for _, c := range p.choices {
		if c.kind == cTxAdd {
			txAdds = append(txAdds, c)
		}
	}
	for k := range p.w.events {
		if !p.modeled(k) {
			continue
		}
		e := p.ev(k)
		in := pinstr{ev: k, pos: int64(k+1) * posScale, moves: moves[k], del: dels[k], thread: e.thread, store: -1}
		switch e.kind {
		case trace.KindStore, trace.KindNTStore, trace.KindExternalWrite:
			in.kind = px86.SymStore
			if e.kind == trace.KindNTStore {
				in.kind = px86.SymNTStore
			}
			for _, l := range p.linesOf(k) {
				if p.lines[l] {
					in.lines = append(in.lines, l)
				}
			}
			p.instrs = append(p.instrs, in)
			if e.kind == trace.KindExternalWrite && e.flags&trace.ExternalPersisted != 0 {
				in.kind, in.pos = px86.SymPersist, in.pos+1
				p.instrs = append(p.instrs, in)
			}
			continue
		case trace.KindFlush:
			in.kind, in.flush, in.lines = px86.SymFlush, uint8(e.flush), []uint64{e.addr &^ (ls - 1)}
			in.harm = e.dirty && !e.internal
		case trace.KindFence:
			if e.fence == trace.FenceDMB || p.arm && e.fence == trace.FenceLocked {
				continue // orders no clean's completion (problem.arm)
			}
			in.kind = px86.SymFence
			in.harm = e.persisted && !e.internal && e.fence != trace.FenceLocked && !p.fenceNeededElsewhere(k)
		case trace.KindTxCommit:
			// The outermost commit persists the lines of the transaction's ranges (as the
			// replay applied it), and those of the TX_ADDs a choice inserts in the transaction.
			if e.txChange != pmdk.CommittedOutermost {
				continue
			}
			in.kind = px86.SymPersist
			added := map[uint64]bool{}
			for _, r := range e.persists {
				for l := r.Addr &^ (ls - 1); l < r.End(); l += ls {
					added[l] = true
				}
			}
			for _, l := range relevant {
				guard := "false"
				if added[l] {
					guard = "true"
				}
				var ors []string
				for _, c := range txAdds {
					if s := p.ev(c.store); slices.Contains(p.linesOf(c.store), l) && c.store < k && s.thread == e.thread && s.tx == e.tx {
						ors = append(ors, c.name)
					}
				}
				guard = smt.Or(append(ors, guard)...)
				if guard != "false" {
					in.lines = append(in.lines, l)
					in.sym.LineGuards = append(in.sym.LineGuards, guard)
				}
			}
			if len(in.lines) == 0 {
				continue
			}
		default:
			continue
		}
		p.instrs = append(p.instrs, in)
	}
	for _, c := range p.choices {
		if c.kind != cFlush && c.kind != cFence && c.kind != cPersist {
			continue
		}
		for _, base := range c.gap.occ {
			in := pinstr{ev: -1, pos: base + int64(c.slot*100+c.sub*10), ins: c.name, thread: p.w.thread, harm: true, store: c.store}
			switch c.kind {
			case cFlush:
				in.kind, in.flush, in.lines = px86.SymFlush, p.styles.flush.kind, p.linesOf(c.store)[:1]
			case cFence:
				in.kind = px86.SymFence
			case cPersist:
				in.kind, in.lines = px86.SymPersist, p.linesOf(c.store)
			}
			p.instrs = append(p.instrs, in)
		}
	}
	p.never = int64(len(p.w.events)+2) * posScale
	for i := range p.instrs {
		in := &p.instrs[i]
		in.sym.Kind, in.sym.Flush, in.sym.Thread, in.sym.Lines = in.kind, in.flush, in.thread, in.lines
		in.sym.Pos = in.posTerm()
		in.sym.Present = in.presentTerm()
	}
}

func (in *pinstr) posTerm() string {
	t := smt.Int(in.pos)
	for i := len(in.moves) - 1; i >= 0; i-- {
		t = smt.Ite(in.moves[i].choice, smt.Int(in.moves[i].pos), t)
	}
	return t
}

func (in *pinstr) presentTerm() string {
	switch {
	case in.ins != "":
		return in.ins
	case in.del != "":
		return smt.Not(in.del)
	}
	return "true"
}

func (in *pinstr) moveVars() []string {
	var out []string
	for _, m := range in.moves {
		out = append(out, m.choice)
	}
	return out
}

// syms returns the symbolic trace.
func (p *problem) syms() []px86.SymInstr {
	out := make([]px86.SymInstr, len(p.instrs))
	for i := range p.instrs {
		out[i] = p.instrs[i].sym
	}
	return out
}

// instrOf returns the index in p.instrs of the (first) instruction of window event k, -1 none.
func (p *problem) instrOf(k int) int {
	for i := range p.instrs {
		if p.instrs[i].ev == k && p.instrs[i].kind != px86.SymPersist {
			return i
		}
	}
	return -1
}

// assertion returns the obligations other than TX_ADDs as a Bool term over persist times pt
// (Huang §3.3.4: Φ_assertion), with per the persistency formula's entries.
func (p *problem) assertion(per *px86.Persistency, pt func(e int) string) string {
	var conj []string
	entries := func(k int) []int {
		i := p.instrOf(k)
		var out []int
		for e, en := range per.Entries {
			if en.Instr == i {
				out = append(out, e)
			}
		}
		return out
	}
	for _, o := range p.obls {
		switch o.kind {
		case oDurable:
			by := smt.Int(int64(o.by+1) * posScale)
			if ib := p.instrOfAny(o.by); ib >= 0 {
				by = p.instrs[ib].sym.Pos
			}
			for _, e := range entries(o.a) {
				if o.strict {
					conj = append(conj, smt.Lt(pt(e), by))
				} else {
					conj = append(conj, smt.Le(pt(e), by))
				}
			}
		case oBefore:
			for _, ea := range entries(o.a) {
				for _, eb := range entries(o.b) {
					conj = append(conj, smt.Le(pt(ea), pt(eb)))
				}
			}
		case oAtomic:
			var dis []string
			for _, u := range o.us {
				for _, pp := range o.ps {
					for _, eu := range entries(u) {
						for _, ep := range entries(pp) {
							dis = append(dis, smt.Le(pt(eu), pt(ep)))
						}
					}
				}
			}
			conj = append(conj, smt.Or(dis...))
		}
	}
	return smt.And(conj...)
}

// instrOfAny is instrOf, or -1 when window event k is not modeled (a deadline record).
func (p *problem) instrOfAny(k int) int {
	for i := range p.instrs {
		if p.instrs[i].ev == k {
			return i
		}
	}
	return -1
}

// structure returns the constraints every candidate meets: a statement moves to at most one
// place or goes, TX_ADD obligations are met, and do-no-harm: no flush or fence that did work
// becomes redundant, no inserted or moved one is redundant, and no store of the window is made
// durable later than the window's end or after a later store it preceded when it did before
// (the original program's facts come from the model, simulate).
func (p *problem) structure(per *px86.Persistency) []string {
	var out []string
	byStmt := map[string][]string{}
	for _, c := range p.choices {
		if c.kind == cMove || c.kind == cDelete {
			byStmt[c.st.key()] = append(byStmt[c.st.key()], c.name)
		}
	}
	keys := make([]string, 0, len(byStmt))
	for k := range byStmt {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := byStmt[k]
		for i := range vs {
			for j := i + 1; j < len(vs); j++ {
				out = append(out, smt.Not(smt.And(vs[i], vs[j])))
			}
		}
	}
	for _, o := range p.obls {
		if o.kind != oTxAdd {
			continue
		}
		var ors []string
		for _, c := range p.choices {
			if c.kind == cTxAdd && c.store == o.a {
				ors = append(ors, c.name)
			}
		}
		out = append(out, smt.Or(ors...))
	}
	orig := p.simulate(map[string]bool{})
	for i := range p.instrs {
		in := &p.instrs[i]
		if in.kind != px86.SymFlush && in.kind != px86.SymFence {
			continue
		}
		cond := smt.Or(append(in.moveVars(), fmt.Sprint(in.harm))...)
		if cond == "false" {
			continue
		}
		var nr string
		if in.kind == px86.SymFence {
			nr = per.NonRedundantFence(i)
		} else {
			nr = per.NonRedundantFlush(i)
		}
		out = append(out, smt.Implies(smt.And(in.sym.Present, cond), nr))
	}
	end := smt.Int(p.never - 1)
	for e, en := range per.Entries {
		in := &p.instrs[en.Instr]
		if in.ev < 0 || orig.persistedAt[en.Instr] >= p.never {
			continue
		}
		out = append(out, per.Guaranteed(e, end, true))
	}
	// Orders the program guaranteed between its stores (a durable before b was written).
	n := 0
	for e, en := range per.Entries {
		a := &p.instrs[en.Instr]
		if a.ev < 0 || a.ev >= len(p.w.events) || p.ev(a.ev).tail {
			continue
		}
		for j := range p.instrs {
			b := &p.instrs[j]
			if b.ev <= a.ev || (b.kind != px86.SymStore && b.kind != px86.SymNTStore) || p.ev(b.ev).tail || slices.Equal(a.lines, b.lines) {
				continue
			}
			if orig.persistedAt[en.Instr] < b.pos && n < 256 {
				out = append(out, per.Guaranteed(e, b.sym.Pos, false))
				n++
			}
		}
	}
	return out
}

// sim is what the model says of a candidate (simulate).
type sim struct {
	present     []bool
	pos         []int64
	persistedAt []int64 // per instruction (stores): position at which the model holds it persisted; never when not
	redundant   []bool  // per instruction (flushes, fences): the model's effect did nothing
}

// simulate runs the candidate (choices set to true in assign) through the persistency model
// (package px86): the one model decides what the SMT encoding claims (solve checks they agree).
func (p *problem) simulate(assign map[string]bool) *sim {
	s := &sim{present: make([]bool, len(p.instrs)), pos: make([]int64, len(p.instrs)),
		persistedAt: make([]int64, len(p.instrs)), redundant: make([]bool, len(p.instrs))}
	order := make([]int, 0, len(p.instrs))
	for i := range p.instrs {
		in := &p.instrs[i]
		s.present[i] = in.ins == "" && (in.del == "" || !assign[in.del]) || in.ins != "" && assign[in.ins]
		s.pos[i] = in.pos
		for _, m := range in.moves {
			if assign[m.choice] {
				s.pos[i] = m.pos
			}
		}
		s.persistedAt[i] = p.never
		if s.present[i] {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return s.pos[order[a]] < s.pos[order[b]] })
	m, _ := px86.New(p.lineSize)
	var live []int
	for _, i := range order {
		in := &p.instrs[i]
		switch in.kind {
		case px86.SymStore, px86.SymNTStore:
			var flags uint8
			if in.kind == px86.SymNTStore {
				flags = px86.NT
			}
			for _, l := range in.lines {
				m.Store(uint64(i), px86.Origin{Thread: in.thread}, l, 8, flags)
			}
			live = append(live, i)
		case px86.SymFlush:
			s.redundant[i] = m.Flush(in.flush, in.lines[0], px86.Origin{Thread: in.thread}).Dirty == 0
		case px86.SymFence:
			s.redundant[i] = m.Fence(in.thread).Persisted == 0
		case px86.SymPersist:
			for j, l := range in.lines {
				if in.sym.LineGuards != nil && !evalGuard(in.sym.LineGuards[j], assign) {
					continue
				}
				m.PersistRange(l, 1)
			}
		}
		keep := live[:0]
		for _, j := range live {
			done := true
			for _, l := range p.instrs[j].lines {
				if m.StateOf(uint64(j), l) != px86.Persisted {
					done = false
				}
			}
			if done {
				s.persistedAt[j] = s.pos[i]
			} else {
				keep = append(keep, j)
			}
		}
		live = keep
	}
	return s
}

// evalGuard evaluates a guard term made by buildInstrs: true, false, a choice, or (or ...).
func evalGuard(t string, assign map[string]bool) bool {
	switch t {
	case "true":
		return true
	case "false":
		return false
	}
	if assign[t] {
		return true
	}
	es, err := smt.Parse(t)
	if err != nil || len(es) != 1 || !es[0].IsList {
		return false
	}
	for _, a := range es[0].List[1:] {
		if evalGuard(a.String(), assign) {
			return true
		}
	}
	return false
}

// check reports whether the model agrees that a candidate meets the obligations and does no
// harm (the independent check of a solver's answer); why says what fails.
func (p *problem) check(assign map[string]bool) (ok bool, why string) {
	s := p.simulate(assign)
	orig := p.simulate(map[string]bool{})
	persistedBefore := func(a, b int) bool { // instruction a durable before b is issued
		ia, ib := p.instrOf(a), p.instrOf(b)
		if ia < 0 || ib < 0 {
			return false
		}
		if s.persistedAt[ia] < s.pos[ib] {
			return true
		}
		return slices.Equal(p.instrs[ia].lines, p.instrs[ib].lines) && s.pos[ia] < s.pos[ib]
	}
	for _, o := range p.obls {
		switch o.kind {
		case oDurable:
			ia := p.instrOf(o.a)
			by := int64(o.by+1) * posScale
			if ib := p.instrOfAny(o.by); ib >= 0 {
				by = s.pos[ib]
			}
			if ia < 0 || s.persistedAt[ia] > by || o.strict && s.persistedAt[ia] >= by {
				return false, fmt.Sprintf("store %d is not durable in time", o.a)
			}
		case oBefore:
			if !persistedBefore(o.a, o.b) {
				return false, fmt.Sprintf("store %d can persist after store %d", o.a, o.b)
			}
		case oAtomic:
			any := false
			for _, u := range o.us {
				for _, pp := range o.ps {
					if persistedBefore(u, pp) {
						any = true
					}
				}
			}
			if !any {
				return false, "the failing crash state is still possible"
			}
		case oTxAdd:
			any := false
			for _, c := range p.choices {
				if c.kind == cTxAdd && c.store == o.a && assign[c.name] {
					any = true
				}
			}
			if !any {
				return false, fmt.Sprintf("store %d is not added to its transaction", o.a)
			}
		}
	}
	for i := range p.instrs {
		in := &p.instrs[i]
		moved := false
		for _, m := range in.moves {
			moved = moved || assign[m.choice]
		}
		if s.present[i] && (in.harm || moved) && s.redundant[i] {
			return false, fmt.Sprintf("instruction %d (%v) would be redundant", i, in.kind)
		}
		if in.ev >= 0 && (in.kind == px86.SymStore || in.kind == px86.SymNTStore) && orig.persistedAt[i] < p.never && s.persistedAt[i] >= p.never {
			return false, fmt.Sprintf("store %d would no longer be durable", in.ev)
		}
	}
	return true, ""
}
