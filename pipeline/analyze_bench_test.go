package pipeline_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

// synthTrace returns a synthetic trace of about n events: operations that load and store a few
// fields of a random 256-byte object of a 64 MiB pool, flush the lines and fence; every tenth
// operation is a PMDK transaction; a few stores are left unflushed and a few flushes are
// redundant, so the oracles have something to report.
func synthTrace(tb testing.TB, n int) []byte {
	write, done := analysistest.RawWriter(tb)
	var sites []trace.Site
	for i := uint32(1); i <= 64; i++ {
		sites = append(sites, trace.Site{ID: i, Kind: trace.SiteStore, Function: "f", File: "bench.c", Line: i, Column: 1})
	}
	write(&trace.Event{Kind: trace.KindSites, Sites: sites})
	const base, size = 0x7f0000000000, 64 << 20
	write(&trace.Event{Kind: trace.KindRegionMap, Region: 1, Addr: base, Size: size, Path: "/pmem/pool", Site: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 64)
	count := 2
	op := uint64(0)
	for count < n {
		obj := base + rng.Uint64N(size/256)*256
		write(&trace.Event{Kind: trace.KindOpBegin, Op: op, Text: "insert"})
		count++
		tx := op%10 == 9
		if tx {
			write(&trace.Event{Kind: trace.KindTxBegin, Site: 40})
			write(&trace.Event{Kind: trace.KindTxAdd, Site: 41, Addr: obj, Size: 64})
			count += 2
		}
		for f := uint64(0); f < 4; f++ {
			write(&trace.Event{Kind: trace.KindLoad, Site: 2, Addr: obj + f*8, Data: data[:8]})
			write(&trace.Event{Kind: trace.KindStore, Site: uint32(3 + f), Addr: obj + f*8, Data: data[:8]})
			count += 2
		}
		write(&trace.Event{Kind: trace.KindStore, Site: 8, Addr: obj + 64, Data: data[:32]})
		count++
		if tx {
			write(&trace.Event{Kind: trace.KindTxCommit, Site: 42})
			write(&trace.Event{Kind: trace.KindTxEnd, Site: 43})
			count += 2
		} else {
			write(&trace.Event{Kind: trace.KindFlush, Site: 10, Flush: trace.FlushCLWB, Addr: obj})
			count++
			if op%7 != 3 { // sometimes forgets the second line
				write(&trace.Event{Kind: trace.KindFlush, Site: 11, Flush: trace.FlushCLWB, Addr: obj + 64})
				count++
			}
			if op%13 == 5 { // redundant flush
				write(&trace.Event{Kind: trace.KindFlush, Site: 12, Flush: trace.FlushCLWB, Addr: obj + 128})
				count++
			}
			write(&trace.Event{Kind: trace.KindFence, Site: 13, Fence: trace.FenceSFENCE})
			count++
		}
		write(&trace.Event{Kind: trace.KindOpEnd, Op: op})
		count++
		op++
	}
	write(&trace.Event{Kind: trace.KindRegionUnmap, Region: 1, Site: 1})
	write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	return done()
}

var (
	benchOnce sync.Once
	benchData []byte
)

func benchTrace(b *testing.B) []byte {
	benchOnce.Do(func() { benchData = synthTrace(b, 2_000_000) })
	return benchData
}

// BenchmarkAnalyze runs every oracle over a synthetic trace of 2 million events and reports the
// throughput (events/s) of reading plus analysing; BenchmarkAnalyze/read-only is the trace
// reader alone on the same input, so the difference is the analyses' own cost.
func BenchmarkAnalyze(b *testing.B) {
	benchReadAndAnalyze(b, benchTrace(b))
}

// BenchmarkAnalyzeTrace is BenchmarkAnalyze over a recorded trace, the file named by the
// environment variable SCRY_BENCH_TRACE (skipped when unset), read from memory. Record one
// with `scry record` (docs/performance.md) to measure a real workload, for example PMDK's
// mapcli btree.
func BenchmarkAnalyzeTrace(b *testing.B) {
	benchReadAndAnalyze(b, analysistest.RecordedTrace(b))
}

// benchReadAndAnalyze runs the sub-benchmarks read-only (the trace reader alone), analyze and
// oracles over the trace bytes data, reporting events/s.
func benchReadAndAnalyze(b *testing.B, data []byte) {
	var events uint64
	b.Run("read-only", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			r, err := trace.NewReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			events = 0
			for {
				if _, err := r.Next(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
				events++
			}
		}
		b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	// "analyze" is what `scry analyze` runs (the inference prepass, the oracles and the checks
	// of inferred properties); "oracles" the trace oracles alone (--no-infer).
	for _, bc := range []struct {
		name string
		opts pipeline.AnalyzeOptions
	}{{"analyze", pipeline.AnalyzeOptions{}}, {"oracles", pipeline.AnalyzeOptions{NoInfer: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rep, err := pipeline.AnalyzeSource(analysis.BytesSource(data), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				events = rep.Events
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
