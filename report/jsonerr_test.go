package report

import (
	"strings"
	"testing"
)

// TestNotReport: a file that is not a JSON report of scry gets a message naming it once and the
// problem in JSON's terms, never a Go type, for CrashFinding (scry replay) and ReadJSON (scry
// fix) alike.
func TestNotReport(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "r.json is not a JSON report of scry: the file is empty"},
		{"blank", " \n", "the file is empty"},
		{"text", "hello", "not JSON (at byte 1: invalid character 'h'"},
		{"cut", `{"findings": [`, "its JSON is cut short"},
		{"array", `[1, 2]`, "the file holds an array where a report has an object"},
		{"findings a number", `{"findings": 3}`, `its "findings" is a number where a report has an array`},
		{"kind a bool", `{"findings": [{"kind": true}]}`, `its "findings.kind" is a boolean where a report has a string`},
		{"crash an array", `{"findings": [{"kind": "x", "crash": []}]}`, `its "findings.crash" is an array where a report has an object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err1 := ReadJSON([]byte(tc.data), "r.json")
			_, err2 := CrashFinding([]byte(tc.data), "r.json", "1")
			for _, err := range []error{err1, err2} {
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.want) || strings.Count(msg, "r.json") != 1 {
					t.Errorf("error %q, want %q and the file named once", msg, tc.want)
				}
				for _, leak := range []string{"Go value", "Go struct", "report.", "[]", "*"} {
					if strings.Contains(msg, leak) {
						t.Errorf("error %q shows Go's %q", msg, leak)
					}
				}
			}
		})
	}
}
