package oracle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/pmdk"
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
// finding per acquiring site and call stack, at the acquire, naming every release seen for it
// (related report.RoleRelease, at most maxReleases), reported when its pool is closed or the
// program ends (a trace cut short reports none); of class unconfirmed. `scry check` settles it by crash (package
// pipeline): the crash states that lose the release right before the next operation leave the
// word durable as held; if one made the program fail, the finding is a correctness finding and
// takes the place of the release's unpersisted-store and of the acquire's
// overwritten-unpersisted (one bug, reported once, where the lock is taken); if the program
// recovered from each, it stays a warning saying so (recovery resets the lock).
//
// The records say what a read-modify-write left in the word, not what it found there (the
// runtime reads memory after the instruction), so "taken" is "left non-zero" and "given back"
// is "set to 0 by the same thread, in the same operation": a lock word's free value must be 0
// (as in P-CLHT's bucket locks, CCEH's segment semaphores and most spin locks), and a critical
// section ends in the operation that began it. Not a lock word: a word another thread sets to 0
// (a hand-off), one rewritten to another non-zero value by a plain store before it is set to 0,
// one only ever changed by read-modify-writes that never leave 0 (a counter), one a later
// operation sets to 0 (a lock-free slot that an insert fills with a compare-and-swap and an erase
// empties: Clevel hashing's entries). A counter that its own thread resets to 0 with a plain store
// in the same operation looks like one.
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
	found map[[2]uint32]*lockFound
	order [][2]uint32 // keys of found, first seen first
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
		case data == [8]byte{} && a.thread == ev.Thread && a.size == s.Size && a.op == s.Origin.Op:
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

// lockFound is one acquiring site and call stack, with the releases seen for it.
type lockFound struct {
	a        acquire     // the first acquire
	releases [][2]uint32 // site, stack; each once, at most maxReleases
	n        int         // acquire-release pairs seen
	reported int         // of n, those reported (counted)
}

// maxReleases bounds the releases named per lock word.
const maxReleases = 8

// report notes one acquire-release pair of a's site and stack; the findings are reported when
// the pool is unmapped or the program ends (flush), with every release seen.
func (l *lockWord) report(p *analysis.Pass, a acquire, rel *trace.Event) {
	k := [2]uint32{a.site, a.stack}
	f := l.found[k]
	if f == nil {
		if l.found == nil {
			l.found = map[[2]uint32]*lockFound{}
		}
		f = &lockFound{a: a}
		l.found[k] = f
		l.order = append(l.order, k)
	}
	f.n++
	r := [2]uint32{rel.Site, rel.Context}
	if !slices.ContainsFunc(f.releases, func(x [2]uint32) bool { return x[0] == r[0] }) && len(f.releases) < maxReleases {
		f.releases = append(f.releases, r)
	}
}

func (l *lockWord) OnUnmap(p *analysis.Pass, ev *trace.Event, r pmdk.Region) { l.flush(p) }

func (l *lockWord) OnEnd(p *analysis.Pass, ev *trace.Event) { l.flush(p) }

// flush reports the lock words found and not reported yet, and counts the later pairs of those
// reported before.
func (l *lockWord) flush(p *analysis.Pass) {
	for _, k := range l.order {
		f := l.found[k]
		a := f.a
		if f.reported == 0 {
			word := func(b [8]byte) string {
				v := uint64(0)
				for i := int(a.size) - 1; i >= 0; i-- {
					v = v<<8 | uint64(b[i])
				}
				return fmt.Sprintf("%#x", v)
			}
			var at []string
			rel := make([]analysis.RelatedSite, 0, len(f.releases))
			for _, r := range f.releases {
				at = append(at, siteLoc(p, r[0]))
				rel = append(rel, analysis.RelatedSite{Role: report.RoleRelease, Site: r[0], Stack: r[1]})
			}
			msg := fmt.Sprintf("a lock word in PM (%s): taken here by an atomic read-modify-write (held: %s) and given back (0) at %s; a crash in between can leave it durable as held, and unless recovery resets it when the pool is opened, no later operation can take it",
				plural(a.size, "byte"), word(a.held), strings.Join(at, ", "))
			if !p.Dup(a.site, a.stack, a.event) {
				p.Report(analysis.Diagnostic{Site: a.site, Stack: a.stack, Event: a.event, Op: a.op, Message: msg, Related: rel})
			}
			f.reported = 1
		}
		for ; f.reported < f.n; f.reported++ {
			p.Dup(a.site, a.stack, a.event)
		}
	}
}

func siteLoc(p *analysis.Pass, id uint32) string {
	if l := p.Locate(id); l.Known() {
		return l.String()
	}
	return fmt.Sprintf("site %d", id)
}
