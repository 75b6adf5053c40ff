// Package oracle declares scry's trace oracles: the analyses that turn the persistency state of
// a trace (packages px86 and pmdk, kept by the driver in package analysis/framework) into
// findings. docs/oracles.md is the catalogue (meaning, example, fix, source of each rule).
//
// Correctness: unpersisted-store, overwritten-unpersisted, tx-unlogged-store.
// Performance: redundant-flush, redundant-fence, redundant-tx-add.
package oracle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scry-pm/scry/analysis/framework"
	"github.com/scry-pm/scry/report"
)

// All returns every oracle in the catalogue's stable order.
func All() []*framework.Analyzer {
	return []*framework.Analyzer{
		UnpersistedStore,
		OverwrittenUnpersisted,
		TxUnloggedStore,
		RedundantFlush,
		RedundantFence,
		RedundantTxAdd,
	}
}

// ByName returns the oracles named (in the order of All, without duplicates). An unknown name
// is an error that lists the known ones. A nil or empty names selects all.
func ByName(names []string) ([]*framework.Analyzer, error) {
	if len(names) == 0 {
		return All(), nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[strings.TrimSpace(n)] = true
	}
	var out []*framework.Analyzer
	for _, a := range All() {
		if want[a.Name] {
			out = append(out, a)
			delete(want, a.Name)
		}
	}
	if len(want) > 0 {
		var unknown []string
		for n := range want {
			unknown = append(unknown, n)
		}
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown oracle %s (known: %s)", strings.Join(unknown, ", "), strings.Join(Names(), ", "))
	}
	return out, nil
}

// Names returns the names of all oracles.
func Names() []string {
	var ns []string
	for _, a := range All() {
		ns = append(ns, a.Name)
	}
	return ns
}

// Class returns the class of kind, "" for an unknown kind.
func Class(kind string) report.Class {
	for _, a := range All() {
		if a.Name == kind {
			return a.Class
		}
	}
	return ""
}

func plural(n uint64, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
