// Package oracle declares scry's trace oracles: the analyses that turn the persistency state of
// a trace (packages px86 and pmdk, replayed by package replay for the driver of package
// analysis) into findings. Package pipeline lists them in the catalogue of finding
// kinds; docs/oracles.md describes each (meaning, example, fix, source of the rule).
//
// Correctness: unpersisted-store, overwritten-unpersisted, tx-unlogged-store.
// Performance: redundant-flush, redundant-fence, redundant-tx-add.
// Unconfirmed until a crash settles it: pm-lock-word.
package oracle

import (
	"fmt"

	"github.com/scry-pm/scry/pm/analysis"
)

// All returns every oracle in the catalogue's stable order.
func All() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		UnpersistedStore,
		OverwrittenUnpersisted,
		TxUnloggedStore,
		RedundantFlush,
		RedundantFence,
		RedundantTxAdd,
		PMLockWord,
	}
}

func plural(n uint64, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
