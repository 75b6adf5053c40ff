package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCrashFields checks the text and JSON of the optional crash fields: the invariants a
// state violates and the operations in flight with the closest legal outcome; absent fields
// stay out of the JSON.
func TestCrashFields(t *testing.T) {
	c := &Crash{FailingState: FailingState{ID: "c000000000001", Strategy: "invariants", Symptom: "output"}, PointKind: "fence", Detail: "d",
		Invariants: []string{"RO3: store at a.c:1 (f) must persist before store at a.c:2 (f)"},
		InFlight:   []Operation{{Index: 0, Text: "put 0 5"}, {Index: 1, Text: "put 1 7"}}, Oracles: 5,
		Closest: "in-flight operations applied: 1", DiffClosest: "--- want\n+++ got\n-1:7\n+0:0\n"}
	r := &Report{Findings: []Finding{{Kind: "ordering-violation", Class: Correctness, Count: 1, Crash: c}}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    violates: RO3: store at a.c:1 (f) must persist before store at a.c:2 (f)\n",
		"    in flight: 0 \"put 0 5\", 1 \"put 1 7\" (5 legal outcomes)\n",
		"    output vs closest (in-flight operations applied: 1):\n      --- want\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	js, err := json.Marshal(&Crash{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"invariants", "in_flight", "oracles", "closest", "diff_closest"} {
		if bytes.Contains(js, []byte(`"`+k+`"`)) {
			t.Errorf("empty crash has %q: %s", k, js)
		}
	}
}

// TestCrashFindingFS: scry replay's selection of a file-system finding by number, id or a
// variant's id (whose state replaces the finding's) or kind, and its errors: no crash finding at all
// (a fixed program's report), an unknown id, a finding that is no crash finding. A report
// written before file-system replay (no state) still reads.
func TestCrashFindingFS(t *testing.T) {
	st1 := &FSState{Strategy: "omit-one", Split: FSSplit{Count: 1}, Micro: 4, Persisted: [][2]int{{0, 1}, {3, 3}}, Symptom: "checker"}
	st2 := &FSState{Strategy: "split", Split: FSSplit{Aligned: 4096}, Micro: 6, Persisted: [][2]int{{0, 4}}, Symptom: "output"}
	rep := &Report{Findings: []Finding{
		{Kind: "redundant-fence", Class: Performance, Count: 1},
		{Kind: "fs-ordering-violation", Class: Correctness, Count: 2, FS: &FSCrash{FailingState: FailingState{ID: "c0123456789ab"}, State: st1,
			Dynamic: []FSVulnerability{{A: 1, B: 2}, {A: 0, B: 2, ID: "c0123456789ab-2", State: st2}}}},
	}}
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want *FSState
		err  string
	}{
		{"2", st1, ""},
		{"c0123456789ab", st1, ""},
		{"c0123456789ab-2", st2, ""},
		{"c0123456789ab-3", nil, `no finding with id "c0123456789ab-3" and no crash finding of that kind (its crash findings: fs-ordering-violation)`},
		{"fs-ordering-violation", st1, ""},
		{"redundant-fence", nil, `no crash finding of that kind`},
		{"3", nil, "has 2 findings: no finding 3"},
		{"1", nil, "not a crash finding"},
	} {
		f, err := CrashFinding(b.Bytes(), "r.json", tc.id)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.id, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		got, _ := json.Marshal(f.FS.State)
		want, _ := json.Marshal(tc.want)
		if string(got) != string(want) {
			t.Errorf("%s: state %s, want %s", tc.id, got, want)
		}
	}
	_, err := CrashFinding([]byte(`{"findings":[{"kind":"redundant-fence"}]}`), "fixed.json", "1")
	if err == nil || !strings.Contains(err.Error(), "fixed.json has no crash finding to replay") {
		t.Errorf("a report without crash findings: %v", err)
	}
	old := `{"findings":[{"kind":"fs-atomicity-violation","fs":{"id":"c0123456789ab","apm":"default","dynamic":[{"a":1,"b":1,"call_a":"x","call_b":"x"}]}}]}`
	if f, err := CrashFinding([]byte(old), "old.json", "1"); err != nil || f.FS == nil || f.FS.State != nil {
		t.Errorf("an older report: %+v %v", f, err)
	}
	// The text report names the replay command and what was kept; SARIF keeps the pairs only.
	rep.Findings[1].FS.ImageCommand = "scry replay 'r.json' c0123456789ab --out crash"
	rep.Findings[1].FS.Reproduce = "(cd 'crash' && env /bin/sh -c true < /dev/null)"
	rep.Findings[1].FS.Snapshot, rep.Findings[1].FS.Trace = "/k/initial", "/k/run.trace"
	b.Reset()
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    replay: scry replay 'r.json' c0123456789ab --out crash   (finding 2, id c0123456789ab)\n",
		"    then:   (cd 'crash' && env /bin/sh -c true < /dev/null)\n",
		"    kept: snapshot /k/initial, trace /k/run.trace\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteSARIF(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "persisted") || !strings.Contains(b.String(), "crash_reproduce") {
		t.Errorf("SARIF properties:\n%s", b.String())
	}
}
