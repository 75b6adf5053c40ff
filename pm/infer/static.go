package infer

import (
	"github.com/scry-pm/scry/trace"
)

// Bounds of the static closures (documented in docs/inference.md, "Limits").
const (
	// maxGuards bounds the guard loads of one site: the loads its transitive control
	// dependences (or, for RO1, its value and address) depend on.
	maxGuards = 64
	// maxBranches bounds the branch sites visited for one site's control closure.
	maxBranches = 256
)

// guardRef is one static guard of a site: the load (or read-modify-write) site L whose value
// the branch B decides on, B being in the site's transitive control-dependence closure. With
// call set, L is a call site instead: the guards are the loads that decided the callee's
// returned value, captured when the call returned (engine.captureReturn).
type guardRef struct {
	l      int32  // compact index of L
	lid    uint32 // site id of L
	branch uint32 // site id of B
	call   bool
}

// static holds the trace's static facts by compact site index: the sites in order of
// definition, numbered from 1 (0 is "no site"). It is rebuilt when a SITES or DEPS record adds
// facts (a module loaded later); the compact indexes of known sites never change.
type static struct {
	r      *trace.Reader
	nsites int // len(r.Sites()) indexed
	ndeps  int // len(r.Deps()) indexed

	idx     map[uint32]int32 // site id -> compact index
	dense   []int32          // the same for ids below maxDense
	ids     []uint32         // compact index -> site id
	kinds   []trace.SiteKind
	callees []string           // compact index -> callee (call sites)
	rets    map[string][]int32 // function -> its return sites (compact indexes)

	ctrl  [][]uint32 // compact index -> branch sites (ids) it is directly control dependent on
	value [][]uint32 // compact index -> producer sites (ids) of its value (DepValue)
	addr  [][]uint32 // compact index -> producer sites (ids) of its address (DepAddress)

	guards    [][]guardRef // memo of guardsOf (nil: not computed; see done)
	done      []bool
	producers [][]guardRef // memo of producersOf (branch 0)
	pdone     []bool
	returns   map[int32][]guardRef // memo of returnRefs, by return site

	seen map[uint32]bool // scratch of guardsOf
}

func newStatic(r *trace.Reader) *static {
	return &static{r: r, idx: map[uint32]int32{}, ids: []uint32{0}, kinds: []trace.SiteKind{0}, callees: []string{""},
		rets: map[string][]int32{}, returns: map[int32][]guardRef{},
		ctrl: [][]uint32{nil}, value: [][]uint32{nil}, addr: [][]uint32{nil},
		guards: [][]guardRef{nil}, done: []bool{true}, producers: [][]guardRef{nil}, pdone: []bool{true},
		seen: map[uint32]bool{}}
}

// sync indexes the sites and facts the reader has read since the last call.
func (s *static) sync() {
	sites := s.r.Sites()
	deps := s.r.Deps()
	if len(sites) == s.nsites && len(deps) == s.ndeps {
		return
	}
	for _, st := range sites[s.nsites:] {
		if _, ok := s.idx[st.ID]; ok {
			continue
		}
		s.idx[st.ID] = int32(len(s.ids))
		if st.ID < maxDense {
			if int(st.ID) >= len(s.dense) {
				s.dense = append(s.dense, make([]int32, int(st.ID)+1-len(s.dense))...)
			}
			s.dense[st.ID] = int32(len(s.ids))
		}
		s.ids = append(s.ids, st.ID)
		s.kinds = append(s.kinds, st.Kind)
		s.callees = append(s.callees, st.Callee)
		if st.Kind == trace.SiteReturn {
			s.rets[st.Function] = append(s.rets[st.Function], int32(len(s.ids)-1))
		}
		s.ctrl = append(s.ctrl, nil)
		s.value = append(s.value, nil)
		s.addr = append(s.addr, nil)
		s.guards = append(s.guards, nil)
		s.done = append(s.done, false)
		s.producers = append(s.producers, nil)
		s.pdone = append(s.pdone, false)
	}
	s.nsites = len(sites)
	if len(deps) != s.ndeps {
		for _, d := range deps[s.ndeps:] {
			i := s.idx[d.From]
			if i == 0 {
				continue
			}
			switch d.Kind {
			case trace.DepControl:
				s.ctrl[i] = append(s.ctrl[i], d.To)
			case trace.DepValue:
				s.value[i] = append(s.value[i], d.To)
			case trace.DepAddress:
				s.addr[i] = append(s.addr[i], d.To)
			}
		}
		s.ndeps = len(deps)
		// New facts may extend any closure: forget the memos.
		clear(s.guards)
		clear(s.done)
		clear(s.producers)
		clear(s.pdone)
		clear(s.returns)
		s.done[0], s.pdone[0] = true, true
	}
}

// maxDense bounds the site ids indexed by a slice rather than the map (the pass numbers sites
// densely from 1).
const maxDense = 1 << 22

// index returns the compact index of site id (0 for an unknown site).
func (s *static) index(id uint32) int32 {
	if int(id) < len(s.dense) {
		return s.dense[id]
	}
	if id < maxDense {
		return 0
	}
	return s.idx[id]
}

// isLoad reports whether compact site i produces a PM value a dependence can start from: a
// load, an atomic read-modify-write, or a library call scry interprets whose hook records the
// PM bytes it read (strcmp, memcmp, strlen, ...: its result depends on exactly those, so
// `if (strcmp(key, slot->key) == 0)` guards like a load of slot->key). Other calls produce
// values too, but the trace does not say which loads of the callee their result depends on, so
// they guard nothing; a library call that recorded no LOAD has no instance and guards nothing
// either.
func (s *static) isLoad(i int32) bool {
	k := s.kinds[i]
	return k == trace.SiteLoad || k == trace.SiteRMW || k == trace.SiteLibCall
}

// guardsOf returns the guards of compact site i: for every branch site B in the transitive
// closure of its control dependences (through the branch sites' own control facts, within
// its function), the load sites B's condition value-depends on. Each load appears once, with
// the nearest branch (breadth-first). Bounded by maxGuards and maxBranches.
func (s *static) guardsOf(i int32) []guardRef {
	if s.done[i] {
		return s.guards[i]
	}
	var out []guardRef
	clear(s.seen)
	queue := append([]uint32(nil), s.ctrl[i]...)
	for _, b := range queue {
		s.seen[b] = true
	}
	loads := map[int32]bool{}
	for q := 0; q < len(queue) && q < maxBranches && len(out) < maxGuards; q++ {
		b := queue[q]
		bi := s.idx[b]
		if bi == 0 {
			continue
		}
		for _, l := range s.value[bi] {
			li := s.idx[l]
			if li == 0 || loads[li] {
				continue
			}
			call := s.kinds[li] == trace.SiteCall
			if !call && !s.isLoad(li) {
				continue
			}
			loads[li] = true
			out = append(out, guardRef{l: li, lid: l, branch: b, call: call})
			if len(out) == maxGuards {
				break
			}
		}
		for _, b2 := range s.ctrl[bi] {
			if !s.seen[b2] {
				s.seen[b2] = true
				queue = append(queue, b2)
			}
		}
	}
	s.guards[i], s.done[i] = out, true
	return out
}

// producersOf returns the load sites the value or the address of compact site i (a store)
// depends on at register level (RO1), with branch 0.
func (s *static) producersOf(i int32) []guardRef {
	if s.pdone[i] {
		return s.producers[i]
	}
	var out []guardRef
	for _, list := range [2][]uint32{s.value[i], s.addr[i]} {
		for _, l := range list {
			li := s.idx[l]
			if li == 0 || !s.isLoad(li) || len(out) >= maxGuards {
				continue
			}
			dup := false
			for _, g := range out {
				dup = dup || g.l == li
			}
			if !dup {
				out = append(out, guardRef{l: li, lid: l})
			}
		}
	}
	s.producers[i], s.pdone[i] = out, true
	return out
}

// returnsOf returns the return sites of the function call site ci calls (none for a call of
// code scry did not instrument).
func (s *static) returnsOf(ci int32) []int32 {
	if s.kinds[ci] != trace.SiteCall {
		return nil
	}
	return s.rets[s.callees[ci]]
}

// returnRefs returns what the value a return site r returns depends on: the guards of its
// control closure (the decision to return it) and the loads and calls its value depends on at
// register level (branch 0). Dependence through calls (the dissertation's inter-procedural
// extension, §5.5.1.2, applied to return values): a caller's branch on the call's result is
// guarded by these, evaluated in the callee's activation when it returns.
func (s *static) returnRefs(r int32) []guardRef {
	if out, ok := s.returns[r]; ok {
		return out
	}
	out := append([]guardRef(nil), s.guardsOf(r)...)
	for _, l := range s.value[r] {
		li := s.idx[l]
		if li == 0 || len(out) >= maxGuards {
			continue
		}
		call := s.kinds[li] == trace.SiteCall
		if !call && !s.isLoad(li) {
			continue
		}
		dup := false
		for _, g := range out {
			dup = dup || g.l == li
		}
		if !dup {
			out = append(out, guardRef{l: li, lid: l, call: call})
		}
	}
	s.returns[r] = out
	return out
}
