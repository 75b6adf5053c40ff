// Command oracle is scry with one custom oracle, premature-commit, for the redo log of
// examples/custom-oracle: a log entry must be durable before the log's commit flag is set. It is
// AGAMOTTO's idea of a custom bug oracle (AGAMOTTO, OSDI'20, §4.2.2): the developer, who knows
// the layout of the program's PM data, states what must hold of it, and the tool checks it on
// every state of the run.
//
// Build and run it like scry (docs/oracles.md, "Writing your own oracle"):
//
//	go build -o oracle ./examples/custom-oracle/oracle
//	build/bin/scry cc -g -o log examples/custom-oracle/buggy.c -lpmem
//	./oracle check -- ./log /tmp/log.pool
package main

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/cli"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// The layout of the log in its pool file (struct log of buggy.c), in bytes from the file's start.
const (
	flagOff   = 0   // the commit flag: 8 bytes, non-zero when the entry is committed
	flagSize  = 8   //
	entryOff  = 8   // the entry's length (on the flag's cache line) and the entry itself
	entrySize = 184 // up to the data, at offset 192
)

// PrematureCommit reports a store that sets the commit flag (a non-zero value) while a byte of
// the log entry is not durable on another cache line than the flag's. Stores to the flag's own
// line persist in program order (px86, WITCHER's same-line rule), so an entry byte there, stored
// before the flag, cannot be lost while the flag persists; a store that clears the flag (the
// entry applied) is not checked.
var PrematureCommit = &analysis.Analyzer{
	Name:       "premature-commit",
	Doc:        "the log's commit flag is set while the log entry is not yet durable: a crash can persist the flag without the entry",
	Class:      report.Correctness,
	ResultType: reflect.TypeOf((*prematureCommit)(nil)),
	New:        func(*analysis.Pass) (any, error) { return &prematureCommit{}, nil },
}

type prematureCommit struct{}

func (*prematureCommit) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if !s.Recorded() || s.Region.FileOffset > flagOff {
		return
	}
	// The flag's address in this run, and the bytes of it the store wrote.
	flag := s.Region.Base + flagOff - s.Region.FileOffset
	lo, hi := max(s.Addr, flag), min(s.Addr+s.Size, flag+flagSize)
	if lo >= hi || hi-s.Addr > uint64(len(s.Data)) || !nonZero(s.Data[lo-s.Addr:hi-s.Addr]) {
		return // not a store that sets the flag
	}
	model := p.State.Model
	entry := s.Region.Base + entryOff - s.Region.FileOffset
	var lost px86.StoreState
	found := false
	model.ForEachOverlapping(entry, entrySize, func(e px86.StoreState) bool {
		if model.LineOf(e.Addr) == model.LineOf(flag) {
			return true // persists before the flag: same cache line, earlier store
		}
		lost, found = e, true
		return false
	})
	if !found || p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
		return
	}
	p.Report(analysis.Diagnostic{
		Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Op: s.Origin.Op,
		Message: fmt.Sprintf("the commit flag at %s is set while the log entry's %d bytes at %s are %s: a crash can persist the flag without them",
			p.State.Where(flag), lost.Size, p.State.Where(lost.Addr), lost.State),
		Related: []analysis.RelatedSite{{Role: "entry store", Site: lost.Origin.Site, Stack: lost.Origin.Stack}},
	})
}

func nonZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return true
		}
	}
	return false
}

func main() { cli.Main(PrematureCommit) }
