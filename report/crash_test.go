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
	c := &Crash{ID: "c000000000001", PointKind: "fence", Symptom: "output", Detail: "d", Strategy: "invariants",
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
