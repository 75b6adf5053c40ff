package exec

import (
	"context"
	"slices"
	"testing"
)

// TestMapFirst: Pool.First items are handed out first, in their order; the rest keep the
// shuffled order (with one worker, the order of the calls).
func TestMapFirst(t *testing.T) {
	items := make([]int, 40)
	for i := range items {
		items[i] = i
	}
	for _, tt := range []struct {
		name    string
		first   int
		ordered bool
	}{{"none", 0, false}, {"five", 5, false}, {"all and more", 50, false}, {"five, ordered", 5, true}} {
		t.Run(tt.name, func(t *testing.T) {
			var calls []int
			_, err := Map(context.Background(), Pool{Jobs: 1, Dir: t.TempDir(), First: tt.first, Ordered: tt.ordered}, items,
				func(ctx context.Context, w *Worker, item int) int {
					calls = append(calls, item)
					return item
				})
			if err != nil {
				t.Fatal(err)
			}
			n := min(tt.first, len(items))
			for i := range n {
				if calls[i] != i {
					t.Fatalf("call %d ran item %d, want %d: %v", i, calls[i], i, calls)
				}
			}
			rest := calls[n:]
			if sorted := slices.IsSorted(rest); sorted != tt.ordered && len(rest) > 1 {
				t.Errorf("the other items ran sorted: %v, want %v (%v)", sorted, tt.ordered, rest)
			}
			slices.Sort(calls)
			if !slices.Equal(calls, items) {
				t.Errorf("calls %v, want each item once", calls)
			}
		})
	}
}
