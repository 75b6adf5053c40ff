package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

// Persistency races (Yashme, Gorjiara, Xu, Demsky; ASPLOS'22, §2–3).
//
// C11 and C++11 let a compiler split a plain (non-atomic) store into narrower ones, in any order
// (GCC stores some 64-bit constants as two 32-bit halves): a crash after part of it reached PM
// leaves a value the program never wrote. A post-crash read of a plain store that no flush and
// fence made durable before the crash can therefore see half of it: Yashme calls that a
// persistency race. The torn strategy (crash.Strategy "torn") builds the states that show it: at
// a crash point, for a plain store of 2 to 8 bytes issued since the last fence, the program-order
// prefix before the store with either half of its bytes persisted (crash.Tear), and the prefixes
// with none and all of it. A torn state whose re-execution fails while both whole states recover
// proves the race (a persistency-race finding at the store, one per source position); a torn
// state that fails where a whole state fails too adds nothing (the whole state's finding explains
// it). The finding names the re-execution's load that read the torn bytes when a traced run on
// the crash image finds it (package pipeline, RoleRecoveryLoad).

// tornPair is what a torn state is judged with: the whole states next to it (the store lost, the
// store persisted), and the torn store.
type tornPair struct {
	without, with *item
	unit          crash.Unit
	loc           report.Location
}

// tornPairOf returns the pair of torn state st from the items made so far at its crash point
// (seen, by stateKey), or nil when either whole state was left out.
func tornPairOf(sp *crash.Space, st crash.State, seen map[string]*item) *tornPair {
	t := st.Tear
	with := slices.Clone(st.K)
	with[t.Line]++
	a, b := seen[stateKey(crash.State{K: st.K})], seen[stateKey(crash.State{K: with})]
	if a == nil || b == nil {
		return nil
	}
	return &tornPair{without: a, with: b, unit: sp.Lines[t.Line].Units[st.K[t.Line]]}
}

// tornItem makes item it, of a torn state, the torn store's: the finding it may make is placed at
// the store and names it (unpersist), clustered by its source position.
func (e *explorer) tornItem(cp *crash.CrashPoint, it *item, t *tornPair) {
	u := t.unit
	t.loc = e.places.location(u.Site, u.Stack)
	it.torn = t
	it.persisted = nil
	it.unpersist = []unitRef{{Site: u.Site, Stack: u.Stack, Seq: u.Seq, Event: u.Store}}
	it.site, it.stack = u.Site, u.Stack
	it.cause = "store=" + t.loc.Key()
}

// explained reports whether a torn state's failure is explained by a whole state next to it: one
// of them failed too, or was not judged (then nothing is proven).
func (t *tornPair) explained() bool {
	return !t.without.judged || !t.with.judged || t.without.failed || t.with.failed
}

// tornBytes says which bytes of a unit of size bytes a tear keeps: "bytes 0–3 of 8".
func tornBytes(keep uint8, size int) string {
	var runs []string
	for b := 0; b < size; {
		if keep&(1<<b) == 0 {
			b++
			continue
		}
		e := b
		for e+1 < size && keep&(1<<(e+1)) != 0 {
			e++
		}
		if e == b {
			runs = append(runs, fmt.Sprint(b))
		} else {
			runs = append(runs, fmt.Sprintf("%d–%d", b, e))
		}
		b = e + 1
	}
	return fmt.Sprintf("byte%s %s of %d", plural(len(runs) > 1 || strings.Contains(strings.Join(runs, ""), "–")), strings.Join(runs, ", "), size)
}

func plural(p bool) string {
	if p {
		return "s"
	}
	return ""
}
