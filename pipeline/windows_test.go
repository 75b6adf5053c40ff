package pipeline

import (
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

// TestScheduleWindows: the window candidates of a trace (schedWindows) and their order. Thread 2
// runs operation 0, thread 3 operation 1; A and B are data words, L a lock word.
func TestScheduleWindows(t *testing.T) {
	const base, A, B, L = 0x10000, 0x10040, 0x10080, 0x100c0
	one, zero := []byte{1, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 8)
	// The lock word is 0 before the operations begin.
	begin := func(b *analysistest.Builder) *analysistest.Builder {
		return b.Map(1, base, 4096).Thread(1).StoreBytes(30, L, zero).Thread(2).OpBegin(0, "put").Thread(3).OpBegin(1, "get")
	}
	end := func(b *analysistest.Builder) *analysistest.Builder {
		return b.Thread(2).OpEnd(0).Thread(3).OpEnd(1).Exit(0)
	}
	cases := []struct {
		name  string
		build func(b *analysistest.Builder) *analysistest.Builder
		want  []string // specs on pct:1:1, best first
	}{
		{"the reader loads after the store", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(2).Store(10, A, 8).Flush(11, trace.FlushCLWB, A).Fence(12, trace.FenceSFENCE).
				Thread(3).Load(20, A, 8)
		}, []string{"pct:1:1@2.1"}},
		{"the reader loads before the store", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(3).Load(20, A, 8).Thread(2).Store(10, B, 8).Store(11, A, 8)
		}, []string{"pct:1:1@2.2"}},
		{"a load of the storing thread is no reader", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(2).Store(10, A, 8).Load(20, A, 8)
		}, nil},
		{"a lock word taken and released comes after the data", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(2).StoreBytes(31, L, one).Thread(3).Load(20, L, 8).Thread(2).StoreBytes(32, L, zero).
				Thread(3).Load(20, L, 8).Thread(2).Store(10, A, 8).Thread(3).Load(21, A, 8)
		}, []string{"pct:1:1@2.3", "pct:1:1@2.1", "pct:1:1@2.2"}},
		{"the last store of an operation that another read comes first: the key after its value", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(2).Store(10, B, 8).Store(11, A, 8).Thread(3).Load(20, A, 8).Load(21, B, 8)
		}, []string{"pct:1:1@2.2", "pct:1:1@2.1"}},
		{"a store overwritten in its operation comes after its last", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(2).Store(10, A, 8).Thread(3).Load(20, A, 8).Thread(2).Store(11, A, 8)
		}, []string{"pct:1:1@2.2", "pct:1:1@2.1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := end(c.build(begin(analysistest.New())))
			keep := map[*analysis.Analyzer]any{}
			if _, err := analysis.Run(b.Source(t), []*analysis.Analyzer{schedWindowsAnalyzer}, analysis.Config{Keep: keep}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range keep[schedWindowsAnalyzer].(*schedWindows).best(4) {
				got = append(got, w.Spec("pct:1:1"))
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}

// TestNextSchedule: the window schedules take the odd slots from the third on while any is
// left; the others are ScheduleSpec's.
func TestNextSchedule(t *testing.T) {
	ws := []windowCandidate{{Thread: 2, Store: 5}, {Thread: 3, Store: 1}}
	var got []string
	for i := 1; i <= 7; i++ {
		got = append(got, nextSchedule(i, 100, &ws))
	}
	want := []string{"pct:1:1", "pm:2:3:100", "pct:1:1@2.5", "pm:4:3:100", "pct:1:1@3.1", "pm:6:3:100", "pct:7:3:100"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("schedule %d: %q, want %q", i+1, got[i], want[i])
		}
	}
	for n, want := range map[int]int{1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 2} {
		if got := windowSchedules(n); got != want {
			t.Errorf("windowSchedules(%d) = %d, want %d", n, got, want)
		}
	}
}
