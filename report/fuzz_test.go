package report

import (
	"strings"
	"testing"
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
