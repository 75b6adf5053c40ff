package trace

import (
	"io"
	"math/rand/v2"
	"testing"
)

// benchEvents returns a trace's events: the sites, a region, then n small events (60% 8-byte
// loads and stores, flushes, fences) and END.
func benchEvents(n int) []Event {
	rng := rand.New(rand.NewPCG(1, 2))
	evs := []Event{{Kind: KindSites, Sites: sampleSites}}
	evs = append(evs, Event{Kind: KindRegionMap, Region: 1, Addr: base, Size: 64 << 20, Path: "/pool", Site: 5})
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	addr := uint64(base)
	for i := 0; i < n; i++ {
		ev := Event{Thread: 1}
		switch p := rng.IntN(100); {
		case p < 30:
			addr = base + uint64(rng.IntN(1<<20))*8
			ev.Kind, ev.Site, ev.Addr, ev.Data = KindStore, 1, addr, data
		case p < 60:
			ev.Kind, ev.Site, ev.Addr, ev.Data = KindLoad, 2, base+uint64(rng.IntN(1<<20))*8, data
		case p < 80:
			ev.Kind, ev.Site, ev.Addr, ev.Flush = KindFlush, 3, addr&^63, FlushCLWB
		default:
			ev.Kind, ev.Site, ev.Fence = KindFence, 4, FenceSFENCE
		}
		evs = append(evs, ev)
	}
	return append(evs, Event{Kind: KindEnd, How: EndExit})
}

// BenchmarkWriter encodes the events of BenchmarkReader's trace (1 Mi events) to io.Discard.
func BenchmarkWriter(b *testing.B) {
	evs := benchEvents(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w, err := NewWriter(io.Discard, 64)
		if err != nil {
			b.Fatal(err)
		}
		for i := range evs {
			if err := w.Write(&evs[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
