package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// TestCheckRecord: the record of a check names its pools (created or not, each once) and runs
// again as the same check.
func TestCheckRecord(t *testing.T) {
	dir := t.TempDir()
	tp := filepath.Join(dir, "run.trace")
	f, err := os.Create(tp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.NewWriter(f, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []trace.Event{
		{Kind: trace.KindRegionMap, Region: 1, Addr: 4096, Size: 4096, Path: "/p/a.pool", Flags: trace.RegionCreated},
		{Kind: trace.KindRegionUnmap, Region: 1},
		{Kind: trace.KindRegionMap, Region: 2, Addr: 4096, Size: 4096, Path: "/p/a.pool"},
		{Kind: trace.KindRegionMap, Region: 3, Addr: 65536, Size: 4096, Path: "/p/b.pool"},
		{Kind: trace.KindEnd, How: trace.EndExit},
	} {
		ev := ev
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wl := filepath.Join(dir, "ops.txt")
	os.WriteFile(wl, []byte("set 1 2\n"), 0o644)
	x := Exploration{Options: explore.Options{
		Strategies: []string{"prefix"}, Crash: crash.Options{MaxStates: 9, Seed: 3, Samples: 4},
		Jobs: 2, Timeout: 5 * time.Second, MaxInFlight: 2, ClusterFailures: 8, Checker: "true {image}", OutputFilter: "^seed:",
	}}
	c := &Check{
		Recording: Recording{Args: []string{"/bin/true", "{pool}"}, PM: []string{"/p/*.pool"}, Workload: wl, OpBegin: "b", OpEnd: "e", Env: []string{"A=1"}},
		Analysis:  Analysis{Kinds: []string{"unpersisted-store"}, Profiles: []px86.Profile{px86.ADR, px86.EADR}},
		Explore:   x,
	}
	tf, err := trace.OpenFile(tp)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	_, p, err := analyzePass(tf, c.Analysis, nil, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := c.record(c.Recording.Args, p.facts, &x, nil)
	want := []report.Pool{{Path: "/p/a.pool", Created: true}, {Path: "/p/b.pool"}}
	if !reflect.DeepEqual(rec.Pools, want) {
		t.Errorf("pools %+v, want %+v", rec.Pools, want)
	}
	if rec.Program != "/bin/true" || rec.Workload != wl || rec.Crash == nil || rec.Crash.Checker != "true {image}" {
		t.Errorf("record %+v, crash %+v", rec, rec.Crash)
	}
	again, err := CheckFromRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Recording.Args, c.Recording.Args) || again.Recording.Workload != wl || again.Recording.OpBegin != "b" ||
		again.Explore.Timeout != x.Timeout || again.Explore.OutputFilter != "^seed:" || again.Explore.Strategies[0] != "prefix" ||
		again.Explore.Checker != "true {image}" || again.Explore.Crash.MaxStates != 9 || !reflect.DeepEqual(again.Analysis.Kinds, c.Analysis.Kinds) ||
		!reflect.DeepEqual(again.Analysis.Profiles, c.Analysis.Profiles) || !reflect.DeepEqual(again.Explore.Profiles, c.Analysis.Profiles) ||
		!reflect.DeepEqual(rec.Persistency, []string{"adr", "eadr"}) {
		t.Errorf("check read back differs: %+v", again)
	}
	if _, err := CheckFromRecord(&report.Check{Args: []string{"p"}, Stdin: true}); err == nil {
		t.Error("a check that read scry's standard input was accepted")
	}
	if _, err := CheckFromRecord(nil); err == nil {
		t.Error("no check was accepted")
	}
}

// TestCheckFromRecordErrors: a recorded check whose exploration options are bad is refused, the
// option named.
func TestCheckFromRecordErrors(t *testing.T) {
	for _, tc := range []struct {
		cc   report.CheckCrash
		want string
	}{
		{report.CheckCrash{Strategies: []string{"eager"}, MaxStates: 1}, "unknown strategy"},
		{report.CheckCrash{Checker: "true", MaxStates: 1}, "no {image}"},
		{report.CheckCrash{OutputFilter: "(", MaxStates: 1}, "--output-filter"},
	} {
		_, err := CheckFromRecord(&report.Check{Args: []string{"/bin/true", "{pool}"}, Crash: &tc.cc})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the recorded check") {
			t.Errorf("%+v: %v, want an error with %q", tc.cc, err, tc.want)
		}
	}
}
