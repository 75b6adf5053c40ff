package oracle

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// PMLockWord reports lock words kept in PM (PMRace, Chen et al., ASPLOS'22, §3.1, "PM
// synchronization inconsistency"): a word of at most 8 bytes that a thread takes with an atomic
// read-modify-write (a compare-and-swap or an exchange) that leaves it non-zero, and later gives
// back by storing 0 to it, at the same address and width. Between the two, the word may persist
// as held (a locked instruction's store is written back like any other, and often with the data
// of the critical section, on the same cache line or flushed with it); a crash then leaves it
// held in the image, and unless the program's recovery resets it when it opens the pool, no
// later operation can take it again: they spin, report the structure busy, or skip it. One
// finding per acquiring site and call stack, at the acquire, naming the release (related
// report.RoleRelease); of class unconfirmed. `scry check` settles it by crash (package
// pipeline): the crash states that lose the release right before the next operation leave the
// word durable as held; if one made the program fail, the finding is a correctness finding and
// takes the place of the release's unpersisted-store and of the acquire's
// overwritten-unpersisted (one bug, reported once, where the lock is taken); if the program
// recovered from each, it stays a warning saying so (recovery resets the lock).
//
// The records say what a read-modify-write left in the word, not what it found there (the
// runtime reads memory after the instruction), so "taken" is "left non-zero" and "given back"
// is "set to 0 by the same thread": a lock word's free value must be 0 (as in P-CLHT's bucket
// locks, CCEH's segment semaphores and most spin locks). Not a lock word: a word another thread
// sets to 0 (a hand-off), one rewritten to another non-zero value by a plain store before it
// is set to 0, one only ever changed by read-modify-writes that never leave 0 (a counter). A
// counter that its own thread resets to 0 with a plain store looks like one.
var PMLockWord = &analysis.Analyzer{
	Name:       string(report.PMLockWord),
	Doc:        "a word in PM that a thread takes with an atomic read-modify-write and gives back with a store (a lock): a crash in between can leave it durable as held, and unless recovery resets it no later operation can take it; unconfirmed until a crash that leaves it held makes the program fail",
	Class:      report.Unconfirmed,
	ResultType: reflect.TypeOf((*lockWord)(nil)),
	New:        func(*analysis.Pass) (any, error) { return &lockWord{held: map[uint64]acquire{}}, nil },
}

// acquire is a read-modify-write that left a word non-zero.
type acquire struct {
	site, stack, thread, op uint32
	event                   uint64
	size                    uint64
	held                    [8]byte
}

type lockWord struct {
	kinds []trace.SiteKind   // by site id (0: not looked up yet)
	held  map[uint64]acquire // by address
}

// kind returns the kind of site id.
func (l *lockWord) kind(p *analysis.Pass, id uint32) trace.SiteKind {
	if int(id) < len(l.kinds) && l.kinds[id] != 0 {
		return l.kinds[id]
	}
	s, ok := p.Site(id)
	if !ok || id >= 1<<22 {
		return s.Kind
	}
	if int(id) >= len(l.kinds) {
		l.kinds = append(l.kinds, make([]trace.SiteKind, int(id)+1-len(l.kinds))...)
	}
	l.kinds[id] = s.Kind
	return s.Kind
}

func (l *lockWord) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	ev := s.Event
	if ev.Kind != trace.KindStore || s.Size == 0 || s.Size > 8 || len(s.Data) != int(s.Size) {
		return
	}
	rmw := l.kind(p, ev.Site) == trace.SiteRMW
	if !rmw && len(l.held) == 0 {
		return
	}
	var data [8]byte
	copy(data[:], s.Data)
	if a, ok := l.held[s.Addr]; ok {
		switch {
		case data == [8]byte{} && a.thread == ev.Thread && a.size == s.Size:
			delete(l.held, s.Addr)
			l.report(p, a, ev)
			return
		case rmw && a.size == s.Size && data == a.held:
			return // taken again (or a compare-and-swap that failed on it): still held
		default:
			delete(l.held, s.Addr) // another value, width or thread: not this lock's release
		}
	}
	if rmw && data != [8]byte{} {
		l.held[s.Addr] = acquire{site: ev.Site, stack: ev.Context, thread: ev.Thread, op: s.Origin.Op, event: ev.Index, size: s.Size, held: data}
	}
}

func (l *lockWord) report(p *analysis.Pass, a acquire, rel *trace.Event) {
	if p.Dup(a.site, a.stack, a.event) {
		return
	}
	word := func(b [8]byte) string {
		v := uint64(0)
		for i := int(a.size) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return fmt.Sprintf("%#x", v)
	}
	msg := fmt.Sprintf("a lock word in PM (%s): taken here by an atomic read-modify-write (held: %s) and given back at %s (0); a crash in between can leave it durable as held, and unless recovery resets it when the pool is opened, no later operation can take it",
		plural(a.size, "byte"), word(a.held), siteLoc(p, rel.Site))
	p.Report(analysis.Diagnostic{Site: a.site, Stack: a.stack, Event: a.event, Op: a.op, Message: msg,
		Related: []analysis.RelatedSite{{Role: report.RoleRelease, Site: rel.Site, Stack: rel.Context}}})
}

func siteLoc(p *analysis.Pass, id uint32) string {
	if l := p.Locate(id); l.Known() {
		return l.String()
	}
	return fmt.Sprintf("site %d", id)
}
