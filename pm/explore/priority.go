package explore

import (
	"errors"

	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// PM-aware order of exploration (AGAMOTTO, OSDI'20, §4.3). AGAMOTTO steers symbolic execution
// towards the paths that reach the most PM-modifying instructions, since bugs hide where PM is
// modified. Crash exploration has no paths to choose, but it chooses the order in which
// operations are explored: a workload repeats a few kinds of operation, and the operations that
// first execute a PM-modifying instruction (a store site, or a library call that writes PM) are
// where a bug of that instruction first shows. So the exploration walks the trace twice: first
// only the operations of a greedy cover of every store site (the operation writing the most
// sites no chosen operation writes, then the next, until every site written inside an
// operation is covered), then every other operation. Each walk goes in trace order; nothing is
// explored twice. On mapcli's B-tree with an injected bug, the first split and the first removal
// come in the first walk, before the dozens of inserts into a leaf that precede them.

// priorityOps returns, for each of the n operations of the workload, whether it is explored in
// the first walk (above). Errors: the trace cannot be read.
func priorityOps(path string, n int) ([]bool, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := replay.New(r, replay.Options[struct{}]{})
	if err != nil {
		return nil, err
	}
	h := &siteCollector{m: m, sites: make([]map[uint32]bool, n), period: make([]int, n)}
	for k := range h.period {
		h.period[k] = k
	}
	if err := m.Run(h); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, err
	}
	picked := greedyCover(h.sites)
	// Operations that overlap (a busy period of several threads' operations, judged together
	// against their legal outcomes) are explored in the same walk: the first walk takes the
	// whole period when it takes one of its operations.
	for k := range picked {
		if picked[k] {
			picked[h.period[k]] = true
		}
	}
	for k := range picked {
		picked[k] = picked[h.period[k]]
	}
	return picked, nil
}

// siteCollector gathers the store sites each operation writes PM from, and the busy periods
// (replay handler).
type siteCollector struct {
	replay.Nop
	m      *replay.Machine[struct{}]
	sites  []map[uint32]bool // per operation index
	period []int             // per operation index: the first operation of its busy period
	first  int               // the first operation of the busy period in progress
}

func (h *siteCollector) OpBegan(ev *trace.Event, op replay.Op) {
	k := int(op.Index)
	if k < 0 || k >= len(h.period) {
		return
	}
	if len(h.m.Ops.InFlight()) == 1 {
		h.first = k // no other operation in flight: a new busy period
	}
	if h.first < len(h.period) {
		h.period[k] = h.first
	}
}

func (h *siteCollector) Wrote(w *replay.Write) {
	if w.Kind == replay.InitialContent || w.Origin.Op == 0 {
		return
	}
	k := int(w.Origin.Op) - 1
	if k >= len(h.sites) {
		return
	}
	if h.sites[k] == nil {
		h.sites[k] = map[uint32]bool{}
	}
	h.sites[k][w.Origin.Site] = true
}

// greedyCover picks operations (indexes of sites) by the number of sites they write that no
// operation picked before writes, most first, the earliest on a tie, until no operation adds a
// site; it returns which were picked.
func greedyCover(sites []map[uint32]bool) []bool {
	picked := make([]bool, len(sites))
	covered := map[uint32]bool{}
	for {
		best, gain := -1, 0
		for k, s := range sites {
			if picked[k] {
				continue
			}
			g := 0
			for site := range s {
				if !covered[site] {
					g++
				}
			}
			if g > gain {
				best, gain = k, g
			}
		}
		if best < 0 {
			return picked
		}
		picked[best] = true
		for site := range sites[best] {
			covered[site] = true
		}
	}
}
