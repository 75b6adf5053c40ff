package analysis_test

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/report"
)

// HeaderOutsideTx is the package doc's example: a program-specific oracle in the manner of
// AGAMOTTO's atomic-operation oracle (AGAMOTTO, OSDI'20, §4.2.2) for a program that changes its
// pool's first 4 KiB only inside PMDK transactions.
var HeaderOutsideTx = &analysis.Analyzer{
	Name:       "header-outside-tx",
	Doc:        "a store to the pool's header (its first 4 KiB) outside a PMDK transaction",
	Class:      report.Correctness,
	ResultType: reflect.TypeOf((*headerOutsideTx)(nil)),
	New:        func(*analysis.Pass) (any, error) { return &headerOutsideTx{}, nil },
}

type headerOutsideTx struct{}

func (*headerOutsideTx) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	off := s.Addr - s.Region.Base + s.Region.FileOffset // bytes into the pool file
	if off >= 4096 || !s.Recorded() || s.Tx.InWork() {
		return
	}
	if p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
		return // already reported at this site and call stack: only counted
	}
	p.Report(analysis.Diagnostic{
		Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Op: s.Origin.Op,
		Message: fmt.Sprintf("store of %d bytes to %s outside a transaction", s.Size, p.State.Where(s.Addr)),
	})
}

// The oracle over a small trace: a header store inside a transaction (site 11), one outside
// (site 12, twice), and a store past the header (site 13).
func Example() {
	const base = 0x10000
	b := analysistest.New().Map(1, base, 1<<20).
		TxBegin(10).TxAdd(10, base+64, 8, 0).Store(11, base+64, 8).TxCommit(10).TxEnd(10).
		Store(12, base+128, 8).Store(12, base+128, 8).
		Store(13, base+8192, 8).Persist(14, base, 16384).Exit(0)
	data, err := b.Encode()
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := analysis.Run(analysis.BytesSource(data), []*analysis.Analyzer{HeaderOutsideTx}, analysis.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.Findings {
		fmt.Printf("%s at line %d (%d times): %s\n", f.Kind, f.Location.Line, f.Count, f.Message)
	}
	// Output:
	// header-outside-tx at line 12 (2 times): store of 8 bytes to pool1+0x80 outside a transaction
}
