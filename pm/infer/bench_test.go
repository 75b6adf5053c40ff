package infer_test

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/trace"
)

// synthTrace returns a synthetic trace of about n events shaped like a B-tree map driven by a
// workload: each operation calls a lookup function (own activation) that loads the root, then
// walks a few nodes (one call per level, recursive): at each node it loads the key count,
// branches on it, loads keys and branches on them, and loads the child pointer or the value
// under those branches; every fourth operation is an insert that writes a node's keys, value
// and count in a PMDK transaction. The DEPS facts say which loads the branches decide on and
// which sites the branches control; FRAME and CONTEXT records give the activations.
func synthTrace(tb testing.TB, n int) []byte {
	write, done := analysistest.RawWriter(tb)
	const (
		ldRoot, ldN, ldKey, ldChild, ldVal       = 10, 11, 12, 13, 14
		stKey, stVal, stN, stRoot                = 20, 21, 22, 23
		brRoot, brN, brKey, brLeaf               = 30, 31, 32, 33
		callOp, callWalk, callWalkRec, txS, txAd = 40, 41, 42, 50, 51
	)
	var sites []trace.Site
	add := func(id uint32, k trace.SiteKind, fn string) {
		sites = append(sites, trace.Site{ID: id, Kind: k, Function: fn, File: "btree.c", Line: id, Column: 1})
	}
	for _, id := range []uint32{ldRoot} {
		add(id, trace.SiteLoad, "lookup")
	}
	for _, id := range []uint32{ldN, ldKey, ldChild, ldVal} {
		add(id, trace.SiteLoad, "walk")
	}
	for _, id := range []uint32{stKey, stVal, stN, stRoot} {
		add(id, trace.SiteStore, "insert")
	}
	add(brRoot, trace.SiteBranch, "lookup")
	for _, id := range []uint32{brN, brKey, brLeaf} {
		add(id, trace.SiteBranch, "walk")
	}
	add(callOp, trace.SiteCall, "main")
	add(callWalk, trace.SiteCall, "lookup")
	add(callWalkRec, trace.SiteCall, "walk")
	add(txS, trace.SiteLibCall, "insert")
	add(txAd, trace.SiteLibCall, "insert")
	write(&trace.Event{Kind: trace.KindSites, Sites: sites})
	write(&trace.Event{Kind: trace.KindDeps, Deps: []trace.Dep{
		{From: brRoot, Kind: trace.DepValue, To: ldRoot},
		{From: callWalk, Kind: trace.DepControl, To: brRoot},
		{From: brN, Kind: trace.DepValue, To: ldN},
		{From: ldKey, Kind: trace.DepControl, To: brN},
		{From: brKey, Kind: trace.DepValue, To: ldKey},
		{From: brKey, Kind: trace.DepControl, To: brN},
		{From: ldChild, Kind: trace.DepControl, To: brKey},
		{From: ldVal, Kind: trace.DepControl, To: brKey},
		{From: brLeaf, Kind: trace.DepValue, To: ldChild},
		{From: callWalkRec, Kind: trace.DepControl, To: brLeaf},
		{From: stKey, Kind: trace.DepControl, To: brRoot},
		{From: stVal, Kind: trace.DepValue, To: ldVal},
		{From: stN, Kind: trace.DepValue, To: ldN},
	}})
	// Call-stack nodes: main -> lookup (1), lookup -> walk (2), walk -> walk (3, 4, ...).
	const depth = 8
	write(&trace.Event{Kind: trace.KindStack, Stack: 1, Parent: 0, Site: callOp})
	write(&trace.Event{Kind: trace.KindStack, Stack: 2, Parent: 1, Site: callWalk})
	for d := uint32(3); d <= depth+1; d++ {
		write(&trace.Event{Kind: trace.KindStack, Stack: d, Parent: d - 1, Site: callWalkRec})
	}
	const base, size = 0x7f0000000000, 64 << 20
	const nodes = size / 256
	write(&trace.Event{Kind: trace.KindRegionMap, Region: 1, Addr: base, Size: size, Path: "/pmem/pool", Site: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 64)
	count := 4
	serial := uint64(0)
	for op := uint64(0); count < n; op++ {
		write(&trace.Event{Kind: trace.KindOpBegin, Op: op, Text: "get"})
		serial++
		frames := []uint64{serial}
		ev := func(e trace.Event, ctx uint32) {
			e.Context, e.Frames = ctx, frames
			if e.Kind == trace.KindLoad || e.Kind == trace.KindStore {
				e.Data = data[:8]
			}
			write(&e)
			count++
		}
		ev(trace.Event{Kind: trace.KindLoad, Site: ldRoot, Addr: base}, 1)
		levels := 2 + rng.IntN(depth-2)
		node := uint64(0)
		for l := 0; l < levels; l++ {
			serial++
			frames = append(frames[:len(frames):len(frames)], serial)
			ctx := uint32(2 + l)
			obj := base + 256 + node*256
			ev(trace.Event{Kind: trace.KindLoad, Site: ldN, Addr: obj}, ctx)
			for k := uint64(0); k < 4; k++ {
				ev(trace.Event{Kind: trace.KindLoad, Site: ldKey, Addr: obj + 8 + k*8}, ctx)
			}
			if l < levels-1 {
				ev(trace.Event{Kind: trace.KindLoad, Site: ldChild, Addr: obj + 64}, ctx)
				node = rng.Uint64N(nodes - 2)
			} else {
				ev(trace.Event{Kind: trace.KindLoad, Site: ldVal, Addr: obj + 128}, ctx)
			}
		}
		if op%4 == 3 {
			obj := base + 256 + rng.Uint64N(nodes-2)*256
			frames = frames[:1:1]
			ev(trace.Event{Kind: trace.KindTxBegin, Site: txS}, 1)
			ev(trace.Event{Kind: trace.KindTxAdd, Site: txAd, Addr: obj, Size: 256}, 1)
			ev(trace.Event{Kind: trace.KindStore, Site: stKey, Addr: obj + 8}, 1)
			ev(trace.Event{Kind: trace.KindStore, Site: stVal, Addr: obj + 128}, 1)
			ev(trace.Event{Kind: trace.KindStore, Site: stN, Addr: obj}, 1)
			ev(trace.Event{Kind: trace.KindTxCommit, Site: txS}, 1)
			ev(trace.Event{Kind: trace.KindTxEnd, Site: txS}, 1)
		}
		write(&trace.Event{Kind: trace.KindOpEnd, Op: op})
		count += 2
	}
	write(&trace.Event{Kind: trace.KindRegionUnmap, Region: 1, Site: 1})
	write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	return done()
}

var (
	benchOnce sync.Once
	benchData []byte
)

// BenchmarkInfer infers every rule from a synthetic trace of about 2 million events (see
// synthTrace) and reports the throughput (events/s); /check is the oracles plus the checks of
// the inferred properties (the second pass of `scry analyze`).
func BenchmarkInfer(b *testing.B) {
	benchOnce.Do(func() { benchData = synthTrace(b, 2_000_000) })
	benchInfer(b, benchData)
}

// BenchmarkInferTrace is BenchmarkInfer over a recorded trace, the file named by the
// environment variable SCRY_BENCH_TRACE (skipped when unset), read from memory: for example
// `scry record` of PMDK's mapcli btree with 2000 operations (docs/performance.md).
func BenchmarkInferTrace(b *testing.B) {
	benchInfer(b, analysistest.RecordedTrace(b))
}

func benchInfer(b *testing.B, data []byte) {
	var res *infer.Result
	for _, set := range []infer.RuleSet{infer.Both, infer.MPBSet} {
		b.Run(string(set), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := trace.NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				res, err = infer.Infer(r, infer.Options{Rules: set})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(res.Properties)), "properties")
		})
	}
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var events uint64
		for i := 0; i < b.N; i++ {
			rep, err := pipeline.AnalyzeSource(analysis.BytesSource(data), pipeline.AnalyzeOptions{Properties: res})
			if err != nil {
				b.Fatal(err)
			}
			events = rep.Events
		}
		b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// TestSynthTrace: the synthetic benchmark trace gives the properties its shape implies.
func TestSynthTrace(t *testing.T) {
	data := synthTrace(t, 20_000)
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	res, err := infer.Infer(r, infer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts[infer.MPB] == 0 || res.Counts[infer.DURA] != 3 {
		t.Errorf("counts %v", res.Counts)
	}
}
