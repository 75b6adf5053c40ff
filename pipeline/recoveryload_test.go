package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// TestRecoveryLoad checks the two halves of a recovery load: what a failing crash state left
// different in the pool file, by store (explore.RebuildLost: a lost store, a torn one), and the
// first load of a re-run's trace that reads one of those bytes through a mapping of the image
// (firstLoad: loads of other bytes, of another file and after an unmap do not count).
func TestRecoveryLoad(t *testing.T) {
	const base = 0x10000
	dir := t.TempDir()
	b := analysistest.New().Map(1, base, 4096)
	b.Access(3, trace.SiteStore, trace.AccessPlain)
	b.StoreBytes(1, base, []byte{1, 1, 1, 1, 1, 1, 1, 1}).Persist(2, base, 8)
	b.StoreBytes(3, base, []byte{2, 2, 2, 2, 2, 2, 2, 2}) // the store a state loses or tears
	b.StoreBytes(4, base+64, []byte{9})                   // another line
	b.Fence(5, trace.FenceSFENCE).Exit(0)
	raw, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "pre.trace")
	if err := os.WriteFile(tracePath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// The crash point before the fence: lines base (unit of site 3) and base+64 (site 4).
	var cs []*report.Crash
	r, err := trace.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = crash.Walk(r, crash.Options{}, func(cp *crash.CrashPoint) error {
		if cp.Kind != crash.BeforeFence || cp.Site != 5 {
			return nil
		}
		c := report.Crash{Trace: tracePath, Region: 1}
		c.CrashPoint, c.Event, c.State = cp.Index, cp.Event, []int{0, 1} // site 3 lost, site 4 kept
		torn := c
		torn.State, torn.Tear = []int{0, 1}, &report.CrashTear{Line: 0, Bytes: 0x0f}
		cs = append(cs, &c, &torn)
		return crash.ErrStop
	})
	r.Close()
	if err != nil || len(cs) != 2 {
		t.Fatalf("crash point: %v, %d crashes", err, len(cs))
	}
	images := []string{filepath.Join(dir, "lost.img"), filepath.Join(dir, "torn.img")}
	full := []string{filepath.Join(dir, "full.img"), ""}
	lost, err := explore.RebuildLost(nil, cs, images, full, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The full image persists every pending store: the lost one's bytes and the other line's.
	if img, err := os.ReadFile(full[0]); err != nil || len(img) < 72 || img[0] != 2 || img[7] != 2 || img[64] != 9 {
		t.Errorf("full image: %v, bytes %v", err, img[:min(len(img), 72)])
	}
	for i, want := range [][2]int64{{0, 8}, {4, 4}} { // lost: the whole word; torn: its high half
		if len(lost[i]) != 1 || lost[i][0].Offset != want[0] || int64(lost[i][0].Size) != want[1] || lost[i][0].Store.Line == 0 {
			t.Errorf("crash %d: lost %+v, want one range at %d of %d bytes with its store", i, lost[i], want[0], want[1])
		}
	}
	img, err := os.ReadFile(images[0])
	if err != nil || len(img) < 72 || img[0] != 1 || img[64] != 9 {
		t.Errorf("lost image: %v, bytes %v", err, img[:min(len(img), 72)])
	}

	// A re-run: a load of other bytes, a load of another file, then the load of the lost bytes,
	// then an unmapped load.
	rb := analysistest.New().Map(1, 0x50000, 4096).Map(2, 0x60000, 4096)
	for i := range rb.Events {
		switch rb.Events[i].Region {
		case 1:
			rb.Events[i].Path = images[0]
		case 2:
			rb.Events[i].Path = tracePath // another file
		}
	}
	rb.Load(10, 0x50000+64, 8).Load(11, 0x60000, 8).Load(12, 0x50000+6, 4).Load(13, 0x50000, 8).Exit(0)
	raw, err = rb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rerun := filepath.Join(dir, "rerun.trace")
	if err := os.WriteFile(rerun, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	load, store, inRecovery, err := firstLoad(rerun, images[0], lost[0])
	if err != nil || load == nil || store == nil || !inRecovery {
		t.Fatalf("firstLoad: %v, %v, %v, in recovery %v", load, store, err, inRecovery)
	}
	loc := report.UserAt(readerOf(t, rerun), 12, 0)
	if *load != loc || *store != lost[0][0].Store {
		t.Errorf("first load %v of the store at %v, want %v of %v", *load, *store, loc, lost[0][0].Store)
	}
	if load, _, _, err := firstLoad(rerun, images[1], lost[1]); err != nil || load != nil {
		t.Errorf("a re-run that never maps the image: %v, %v", load, err)
	}
	// The same loads with an operation begun before the one of the lost bytes: not in recovery.
	rb = analysistest.New().Map(1, 0x50000, 4096)
	rb.Events[0].Path = images[0]
	rb.Load(10, 0x50000+64, 8).OpBegin(0, "get 1").Load(12, 0x50000+6, 4).Exit(0)
	if raw, err = rb.Encode(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rerun, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if load, _, inRecovery, err := firstLoad(rerun, images[0], lost[0]); err != nil || load == nil || inRecovery {
		t.Errorf("a load of the lost bytes in an operation: %v, %v, in recovery %v", load, err, inRecovery)
	}
}

// TestComparePhases checks what tells two recoveries apart (comparePhases, recoveryPhase): the
// pool offsets of the stores and loads but not their bytes, the outputs, the sites in order, the
// end of the run; not what comes after the first operation begins, not the image's content as
// mapped, not the mapping's address.
func TestComparePhases(t *testing.T) {
	dir := t.TempDir()
	imgs := [2]string{filepath.Join(dir, "crash.img"), filepath.Join(dir, "full.img")}
	for _, p := range imgs {
		if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// run builds a run on image i, mapped at base, with what build adds after the mapping.
	run := func(name string, i int, base uint64, build func(b *analysistest.Builder, base uint64)) string {
		b := analysistest.New().Map(1, base, 4096)
		b.Events[0].Path = imgs[i]
		build(b, base)
		raw, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	durable := func(b *analysistest.Builder, base uint64) {
		b.LoadBytes(1, base, []byte{5}).StoreBytes(2, base+64, []byte{1}).OpBegin(0, "get 1").Load(3, base+128, 8).Exit(0)
	}
	threaded := func(b *analysistest.Builder, base uint64) {
		b.LoadBytes(1, base, []byte{5}).StoreBytes(2, base+64, []byte{1}).Sync(trace.SyncCreate, 2, 8).Load(3, base+128, 8).OpBegin(0, "get 1").Exit(0)
	}
	for _, tc := range []struct {
		name  string
		full  func(b *analysistest.Builder, base uint64) // nil: durable
		crash func(b *analysistest.Builder, base uint64)
		same  bool
		err   bool // not told: the run was stopped before its recovery ended
	}{
		{"the same", nil, durable, true, false},
		{"the load read other bytes", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).OpBegin(0, "get 1").Load(3, base+128, 8).Exit(0)
		}, true, false},
		{"the image's content as mapped", nil, func(b *analysistest.Builder, base uint64) {
			b.External(9, base, 8, trace.ExternalInitial)
			durable(b, base)
		}, true, false},
		{"the operations differ", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).OpBegin(0, "get 1").Load(4, base+192, 8).Exit(1)
		}, true, false},
		{"another value stored (an address of DRAM, from run to run)", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{2}).OpBegin(0, "get 1").Exit(0)
		}, true, false},
		{"stored elsewhere", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+72, []byte{1}).OpBegin(0, "get 1").Exit(0)
		}, false, false},
		{"another path", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(5, base+64, []byte{1}).OpBegin(0, "get 1").Exit(0)
		}, false, false},
		{"more done", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).Store(6, base+256, 8).OpBegin(0, "get 1").Exit(0)
		}, false, false},
		{"ends sooner", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).Exit(1)
		}, false, false},
		{"dies in recovery", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).Signal(11)
		}, false, false},
		{"stopped in recovery, so far the same", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0})
		}, true, true},
		{"stopped in recovery after it differed", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+72, []byte{1})
		}, false, false},
		{"the same until a thread starts", threaded, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).Sync(trace.SyncCreate, 2, 8).Store(9, base+512, 8).OpBegin(0, "get 1").Exit(0)
		}, true, false},
		{"another value printed", nil, func(b *analysistest.Builder, base uint64) {
			b.LoadBytes(1, base, []byte{0}).StoreBytes(2, base+64, []byte{1}).Output(7, "new pool\n").OpBegin(0, "get 1").Exit(0)
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := tc.full
			if fb == nil {
				fb = durable
			}
			full := run("full.trace", 1, 0x70000, fb)
			crashed := run("crash.trace", 0, 0x90000, tc.crash)
			at, err := comparePhases(crashed, imgs[0], full, imgs[1])
			if (err != nil) != tc.err {
				t.Fatalf("comparePhases = %q, %v; want an error: %v", at, err, tc.err)
			}
			if (at == "") != tc.same {
				t.Errorf("comparePhases = %q, want the recoveries told apart: %v", at, !tc.same)
			}
		})
	}
}

func readerOf(t *testing.T, path string) *trace.Reader {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for {
		if _, err := r.Next(); err != nil {
			return r
		}
	}
}

// TestRecoveryLoadReserve: the exploration leaves the recovery loads 3 % of a budget, at least
// 3 s, at most an eighth of it.
func TestRecoveryLoadReserve(t *testing.T) {
	for _, tc := range []struct{ d, want time.Duration }{
		{30 * time.Second, 3 * time.Second},          // a 2-minute budget's share of 4 schedules
		{15 * time.Minute, 27 * time.Second},         // 3 %
		{16 * time.Second, 2 * time.Second},          // an eighth
		{10 * time.Minute, 18 * time.Second},         // 3 %
		{120 * time.Second, 3600 * time.Millisecond}, // 3 %, over 3 s
	} {
		if got := recoveryLoadReserve(tc.d); got != tc.want {
			t.Errorf("recoveryLoadReserve(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// TestCrossFailureRead checks what becomes of a durability-violation found to be a cross-failure
// read: its kind and location, and the trace finding its crash confirmed, which names it anew;
// another store's confirmation is left as it was.
func TestCrossFailureRead(t *testing.T) {
	store, other := report.Location{File: "log.c", Line: 12}, report.Location{File: "log.c", Line: 30}
	load := report.Location{File: "log.c", Line: 51, Function: "recover"}
	confirmed := func(l report.Location) string {
		return "the store is never made durable; confirmed by a crash: 1 of the 2 crash states that " + lostStore(l, "durability-violation")
	}
	rep := &report.Report{Findings: []report.Finding{
		{Kind: report.DurabilityViolation, Location: store, Message: "a crash loses it"},
		{Kind: report.UnpersistedStore, Location: store, Message: confirmed(store)},
		{Kind: report.UnpersistedStore, Location: other, Message: confirmed(other)},
	}}
	crossFailureRead(rep, 0, load, store, "first at log.c:52")
	f := rep.Findings[0]
	if f.Kind != report.CrossFailureRead || f.Location != load || !strings.Contains(f.Message, "log.c:12") || !strings.HasSuffix(f.Message, "a crash loses it") {
		t.Errorf("the finding: %s at %v: %q", f.Kind, f.Location, f.Message)
	}
	want := "1 of the 2 crash states that lost the store at log.c:12 right before the next operation made the program fail (cross-failure-read at " + load.String() + ")"
	if got := rep.Findings[1].Message; !strings.HasSuffix(got, want) {
		t.Errorf("the confirmed trace finding: %q, want it to end with %q", got, want)
	}
	if got := rep.Findings[2].Message; got != confirmed(other) {
		t.Errorf("another store's confirmation changed: %q", got)
	}
}
