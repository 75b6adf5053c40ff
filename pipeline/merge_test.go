package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scry-pm/scry/report"
)

// writeShard writes a shard's JSON report to dir/name: shard i of n of the trace with digest,
// with one crash finding of cluster id when id is set.
func writeShard(t *testing.T, dir, name string, i, n int, digest, id string) string {
	t.Helper()
	r := &report.Report{Trace: "/t.trace", Stats: &report.Stats{CrashPoints: 2, StatesTested: 5, Failures: 1, Jobs: 2, RepeatRuns: 1, VaryingLines: i}}
	r.Shard = &report.Shard{Index: i, Count: n, TraceDigest: digest, Partition: "p", Clusters: []report.ShardCluster{}}
	if id != "" {
		o := report.ShardOrder{Walk: 0, Event: uint64(10 * (i + 1)), Seq: 1}
		r.Findings = []report.Finding{{Kind: report.AtomicityViolation, Class: report.Correctness, Count: 1,
			Location: report.Location{File: "a.c", Line: 3},
			Crash:    &report.Crash{FailingState: report.FailingState{ID: id, CrashPoint: i}, Variants: 1, Operations: []uint64{uint64(i)}, Event: o.Event, State: []int{0}}}}
		img := &report.CrashVariant{CrashPoint: i, Event: o.Event, State: []int{0}, Operation: uint64(i), Input: i + 2}
		r.Shard.Clusters = []report.ShardCluster{{ID: id, First: o, Window: "w|p",
			Variants:   []report.ShardVariant{{Key: "v" + string(rune('a'+i%2)), Order: o, Image: img}},
			Operations: []report.ShardOperation{{Index: uint64(i), Order: o}}}}
		r.Shard.ClusterFailures, r.Shard.SampleKeys = 8, []string{"atomicity-violation|w", "w|p"}
		r.Shard.States = []report.ShardState{{Order: o, Key: 0, Window: 0, Prefix: 1, Failed: true, Operation: uint64(i), Image: img}}
	}
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.WriteJSON(f, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergeReports(t *testing.T) {
	dir := t.TempDir()
	s0 := writeShard(t, dir, "s0.json", 0, 3, "d1", "c1")
	s1 := writeShard(t, dir, "s1.json", 1, 3, "d1", "c1")
	s2 := writeShard(t, dir, "s2.json", 2, 3, "d1", "c1")
	other := writeShard(t, dir, "other.json", 2, 3, "d2", "")
	four := writeShard(t, dir, "four.json", 2, 4, "d1", "")
	fsShard := filepath.Join(dir, "fs.json")
	fsRep := &report.Report{Shard: &report.Shard{Index: 2, Count: 3, TraceDigest: "d1", Partition: "p", Mode: "fs", Clusters: []report.ShardCluster{}}}
	var b strings.Builder
	if err := report.WriteJSON(&b, fsRep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fsShard, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Shard 2 explored under other persistency profiles.
	profiled := filepath.Join(dir, "profiled.json")
	data, err := os.ReadFile(s2)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := report.ReadJSON(data, s2)
	if err != nil {
		t.Fatal(err)
	}
	pr.Profiles = []string{"adr", "eadr"}
	var pb strings.Builder
	if err := report.WriteJSON(&pb, pr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(profiled, []byte(pb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.json")
	if err := os.WriteFile(plain, []byte(`{"findings":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := MergeReports([]string{s2, s0, s1}, "/out/merged.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("merged findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	c := f.Crash
	// The first state is shard 0's; three states, two distinct variants, three operations.
	if f.Count != 3 || c.Variants != 2 || c.CrashPoint != 0 || len(c.Operations) != 3 || c.Operations[0] != 0 ||
		len(c.VariantImages) != 1 || c.VariantImages[0].ID != "c1-2" || c.VariantImages[0].Operation != 1 ||
		!strings.Contains(c.ImageCommand, "merged.json' c1") {
		t.Errorf("merged finding: count %d, crash %+v", f.Count, c)
	}
	if st := rep.Stats; st.CrashPoints != 6 || st.StatesTested != 15 || st.Failures != 3 || st.Findings != 1 || st.Jobs != 2 || st.RepeatRuns != 3 || st.VaryingLines != 2 {
		t.Errorf("merged stats %+v", st)
	}
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{s0, s1, other}, "different traces"},
		{[]string{s0, s1, fsShard}, "different modes"},
		{[]string{s0, s1, four}, "shard 2/4"},
		{[]string{s0, s1, s1, s2}, "given twice"},
		{[]string{s0, s1, profiled}, "different persistency profiles (adr and adr,eadr)"},
		{[]string{s0, s2}, "shard(s) 1 of 3 missing"},
		{[]string{s0, plain}, "not the report of a shard"},
		{[]string{s0, filepath.Join(dir, "none.json")}, "none.json"},
		{nil, "no report"},
	} {
		if _, err := MergeReports(tc.paths, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MergeReports(%v): %v, want an error with %q", tc.paths, err, tc.want)
		}
	}
}

// TestAddStatsEveryField: every statistic of a shard reaches the merged report (a field added to
// report.Stats and forgotten by addStats would be 0 there), but the count of findings, which
// MergeReports takes from the merged findings.
func TestAddStatsEveryField(t *testing.T) {
	var one report.Stats
	v := reflect.ValueOf(&one).Elem()
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int:
			f.SetInt(1)
		case reflect.Float64:
			f.SetFloat(1)
		case reflect.String:
			f.SetString("x")
			if v.Type().Field(i).Name == "LazyStates" {
				f.SetString("1") // a decimal count
			}
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]int{"x": 1}))
		default:
			t.Fatalf("report.Stats.%s: a %s, which this test does not know", v.Type().Field(i).Name, f.Kind())
		}
	}
	var sum report.Stats
	addStats(&sum, &one, true)
	addStats(&sum, &one, false)
	s := reflect.ValueOf(sum)
	for i := 0; i < s.NumField(); i++ {
		if s.Type().Field(i).Name == "Findings" {
			continue // MergeReports counts the merged findings
		}
		if s.Field(i).IsZero() {
			t.Errorf("report.Stats.%s is not merged (addStats)", s.Type().Field(i).Name)
		}
	}
}

// TestMergeScheduleShards: the shards of the traces of two thread schedules of one program merge
// into one report, each trace's shards first, then the schedules by root cause; two traces of
// one schedule are refused.
func TestMergeScheduleShards(t *testing.T) {
	dir := t.TempDir()
	scheduled := func(p, spec string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ReadJSON(b, p)
		if err != nil {
			t.Fatal(err)
		}
		r.Shard.Schedule = spec
		for i := range r.Findings {
			r.Findings[i].Schedule = spec
		}
		var sb strings.Builder
		if err := report.WriteJSON(&sb, r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	os0 := writeShard(t, dir, "os0.json", 0, 2, "d1", "c1")
	os1 := writeShard(t, dir, "os1.json", 1, 2, "d1", "c1")
	pm0 := scheduled(writeShard(t, dir, "pm0.json", 0, 2, "d2", "c2"), "pm:2:3:9")
	pm1 := scheduled(writeShard(t, dir, "pm1.json", 1, 2, "d2", "c2"), "pm:2:3:9")
	again := writeShard(t, dir, "again.json", 0, 1, "d3", "")
	rep, err := MergeReports([]string{pm1, os1, pm0, os0}, "/out/merged.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Crash.ID+"@"+f.Schedule)
	}
	if strings.Join(got, " ") != "c1@ c2@pm:2:3:9" {
		t.Errorf("merged findings %v, want c1 of the operating system's schedule and c2 of pm:2:3:9", got)
	}
	if st := rep.Stats; st.Schedules != 2 || st.CrashPoints != 8 || st.Findings != 2 {
		t.Errorf("merged stats %+v", st)
	}
	if _, err := MergeReports([]string{os0, os1, again}, ""); err == nil || !strings.Contains(err.Error(), "same thread schedule (the operating system's)") {
		t.Errorf("two traces of one schedule: %v", err)
	}
	if _, err := MergeReports([]string{os0, os1, pm0}, ""); err == nil || !strings.Contains(err.Error(), "shard(s) 1 of 2 missing") {
		t.Errorf("a schedule's shard missing: %v", err)
	}
}
