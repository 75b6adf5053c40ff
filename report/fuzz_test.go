package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// FuzzParseSuppressions: any input either parses or yields an error naming its line; a parsed
// file can match findings without panicking.
func FuzzParseSuppressions(f *testing.F) {
	for _, seed := range []string{
		"redundant-fence vendor/*\n",
		"overwritten-unpersisted stats.c:bump_* # counters\n* */generated/*.c\n",
		"# only a comment\n\n",
		"bogus\n",
		"unpersisted-store [\n",
		"redundant-flush a.c:[\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSuppressions(strings.NewReader(text), "fuzz.supp")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.supp") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		fd := Finding{Kind: "redundant-fence", Class: Performance,
			Location: Location{File: "vendor/x.c", Line: 3, Function: "bump_count"}}
		s.Match(&fd)
		s.Filter(&Report{Findings: []Finding{fd}})
		s.Unused()
	})
}

// FuzzCrashFinding: any bytes given to `scry replay` as a report either select a crash finding
// naming a trace or give an error naming the report; never a panic. The finding selected,
// written in a report of its own and selected again (by the same id, or as finding 1), is the
// same finding, field for field.
func FuzzCrashFinding(f *testing.F) {
	for _, seed := range []string{
		`{"findings":[{"kind":"ordering-violation","crash":{"id":"c0123456789ab","trace":"t.trace","state":[1,0]}}]}`,
		`{"findings":[{"kind":"redundant-fence"}]}`,
		`{"findings":[]}`,
		`not json`,
		`{"findings":[{"kind":"atomicity-violation","crash":{"id":"x","trace":""}}]}`,
		`{"findings":[{"kind":"fs-ordering-violation","fs":{"id":"c0123456789ab","state":{"micro":3,"persisted":[[0,1]]},"dynamic":[{"a":1,"b":2},{"a":0,"b":2,"id":"c0123456789ab-2","state":{"micro":3,"persisted":[[1,2]]}}]}}]}`,
		`{"findings":[{"kind":"fs-atomicity-violation","fs":{"id":"c0123456789ab"}},{"kind":"redundant-flush"}]}`,
	} {
		f.Add([]byte(seed), "1")
		f.Add([]byte(seed), "c0123456789ab")
		f.Add([]byte(seed), "c0123456789ab-2")
	}
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		fd, err := CrashFinding(data, "r.json", id)
		if err != nil {
			if !strings.Contains(err.Error(), "r.json") && !strings.Contains(err.Error(), "not a crash finding") {
				t.Fatalf("error names neither the report nor the finding: %v", err)
			}
			return
		}
		if (fd.Crash == nil || fd.Crash.Trace == "") && fd.FS == nil {
			t.Fatalf("selected %+v: not a crash finding with a trace, nor a file-system finding", fd)
		}
		again, err := json.Marshal(map[string][]Finding{"findings": {*fd}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := strconv.Atoi(id); err == nil {
			id = "1"
		}
		fd2, err := CrashFinding(again, "again.json", id)
		if err != nil {
			t.Fatalf("the selected finding, written again, is not selected by %q: %v\n%s", id, err, again)
		}
		if d := testenv.Diff(fd, fd2); d != "" {
			t.Fatalf("round trip of the selected finding (want: as selected, got: written and selected again):\n%s", d)
		}
	})
}

// FuzzFSState: any crash state of a file-system finding, as JSON, either decodes into one flag
// per micro-operation that encodes back to the same ranges, or gives an error; never a panic.
// The state with its ranges so encoded (adjacent ranges merge) writes as JSON and reads back the
// same, field for field.
func FuzzFSState(f *testing.F) {
	for _, seed := range []string{
		`{"micro":5,"persisted":[[0,2],[4,4]]}`,
		`{"micro":0,"persisted":[]}`,
		`{"micro":3,"persisted":[[2,1]]}`,
		`{"micro":3,"persisted":[[0,1],[1,2]]}`,
		`{"micro":3,"persisted":[[0,3]]}`,
		`{"micro":-1}`,
		`{"micro":99999999999}`,
		`{"micro":4,"persisted":[[0,0],[1,1]]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s FSState
		if json.Unmarshal(data, &s) != nil {
			return
		}
		set, err := s.PersistedSet()
		if err != nil {
			return
		}
		if len(set) != s.Micro {
			t.Fatalf("%d flags for %d micro-operations", len(set), s.Micro)
		}
		// Adjacent ranges merge when encoded again: compare the sets.
		canon := s
		canon.Persisted = FSRanges(set)
		again, err := canon.PersistedSet()
		if err != nil || !slices.Equal(again, set) {
			t.Fatalf("round trip of %v: %v %v", s.Persisted, again, err)
		}
		b, err := json.Marshal(canon)
		if err != nil {
			t.Fatal(err)
		}
		var back FSState
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s does not read back: %v", b, err)
		}
		if d := testenv.Diff(canon, back); d != "" {
			t.Fatalf("round trip of the state through %s:\n%s", b, d)
		}
	})
}

// FuzzReadJSON: any bytes given to `scry fix` as a report either read as a report whose
// findings all have a kind, or give an error naming the report; never a panic. A report read
// writes back and reads again the same, field for field (a nil list and an empty one aside:
// WriteJSON writes [] for nil), and writes the same bytes again.
func FuzzReadJSON(f *testing.F) {
	for _, seed := range []string{
		`{"findings":[{"kind":"unpersisted-store","class":"correctness","location":{"file":"a.c","line":3},"first_event":7}],"summary":{"trace":"t.trace","events":9},"check":{"dir":"/tmp","args":["./p","x.pool"],"pools":[{"path":"/tmp/x.pool","created":true}]}}`,
		`{"findings":[],"check":{"args":[]}}`,
		`{"findings":[{"kind":"inter-thread-inconsistency","schedule":"pct:1:1@2.2"}],"witnesses":[{"schedule":"pct:1:1@2.2","store":{"file":"a.c","line":1},"load":{"file":"a.c","line":2},"dependent":{"file":"a.c","line":2,"column":7},"findings":1}]}`,
		`{"findings":[{"kind":""}]}`,
		`{"warnings":[]}`,
		`[]`,
		`not json`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadJSON(data, "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the report: %v", err)
			}
			return
		}
		for _, f := range r.Findings {
			if f.Kind == "" {
				t.Fatalf("finding without kind read")
			}
		}
		var b, b2 bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		r2, err := ReadJSON(b.Bytes(), "again.json")
		if err != nil {
			t.Fatalf("the report written does not read back: %v\n%s", err, b.Bytes())
		}
		if d := testenv.Diff(r, r2); d != "" {
			t.Fatalf("round trip of the report (want: as read, got: written and read again):\n%s", d)
		}
		if err := WriteJSON(&b2, r2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), b2.Bytes()) {
			t.Fatalf("the report read back writes other bytes:\n%s\nthen:\n%s", b.Bytes(), b2.Bytes())
		}
	})
}
