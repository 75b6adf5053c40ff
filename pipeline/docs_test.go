package pipeline_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pipeline"
)

// TestDocsAgree checks that docs/oracles.md says what the catalogue says: its table lists every
// kind, in catalogue order, with the class and the very doc text of the code, and every kind has
// a section "## KIND (CLASS)".
func TestDocsAgree(t *testing.T) {
	b, err := os.ReadFile("../docs/oracles.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ([a-z]+) \\| (.*) \\|$")
	var rows [][]string
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		rows = append(rows, m[1:])
	}
	kinds := pipeline.Kinds()
	if len(rows) != len(kinds) {
		t.Errorf("docs/oracles.md lists %d kinds, the catalogue %d", len(rows), len(kinds))
	}
	for i, k := range kinds {
		if i >= len(rows) {
			t.Errorf("docs/oracles.md: no row for %s", k.Kind)
			continue
		}
		if r := rows[i]; r[0] != string(k.Kind) || r[1] != string(k.Class) || r[2] != k.Doc {
			t.Errorf("docs/oracles.md row %d:\n got %q %q %q\nwant %q %q %q", i+1, r[0], r[1], r[2], k.Kind, k.Class, k.Doc)
		}
		if h := "\n## " + string(k.Kind) + " (" + string(k.Class) + ")\n"; !strings.Contains(doc, h) {
			t.Errorf("docs/oracles.md has no section %q", strings.TrimSpace(h))
		}
	}
}
