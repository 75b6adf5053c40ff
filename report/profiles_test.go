package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestProfilesOutput: a report checked under persistency profiles says under which each finding
// occurs in every format, and a JSON report read back keeps them.
func TestProfilesOutput(t *testing.T) {
	r := &Report{
		Profiles: []string{"adr", "eadr"},
		Findings: []Finding{{Kind: UnpersistedStore, Class: Correctness, Message: "m", Count: 1,
			Location: Location{File: "a.c", Line: 3}, Profiles: []string{"adr"}}},
	}
	for _, tt := range []struct{ format, want string }{
		{"text", "    persistency profiles: adr; not under eadr\n"},
		{"json", `"profiles": [`},
		{"sarif", `"persistency_profiles": [`},
		{"html", `<td class="profiles">adr; not under eadr`},
	} {
		var b bytes.Buffer
		var err error
		if tt.format == "html" {
			err = WriteHTML(&b, r, HTMLOptions{})
		} else {
			err = Write(&b, r, tt.format)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("%s output lacks %q:\n%s", tt.format, tt.want, b.String())
		}
		if tt.format == "json" {
			back, err := ReadJSON(b.Bytes(), "r.json")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(back.Profiles, ",") != "adr,eadr" || strings.Join(back.Findings[0].Profiles, ",") != "adr" {
				t.Errorf("read back: report %v, finding %v", back.Profiles, back.Findings[0].Profiles)
			}
		}
	}
}
