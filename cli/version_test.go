package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// TestVersion: `scry version` and `scry --version` print the same text: the build, the trace
// format versions this scry writes and reads, and its pass plugins; `version` takes no argument.
func TestVersion(t *testing.T) {
	var texts []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := Run(Config{}, args, &out, &errOut); code != 0 {
			t.Fatalf("scry %s: exit %d, stderr %q", args[0], code, errOut.String())
		}
		texts = append(texts, out.String())
	}
	if texts[0] != texts[1] {
		t.Errorf("scry version and scry --version differ:\n%s\n%s", texts[0], texts[1])
	}
	for _, want := range []string{"scry version ", " go1.", fmt.Sprintf("trace format: writes version %d, reads versions %d to %d\n", trace.Version, trace.MinVersion, trace.Version), "pass plugins: "} {
		if !strings.Contains(texts[0], want) {
			t.Errorf("scry version lacks %q:\n%s", want, texts[0])
		}
	}
	var errOut bytes.Buffer
	if code := Run(Config{}, []string{"version", "extra"}, nil, &errOut); code != 2 || !strings.Contains(errOut.String(), "takes no arguments") {
		t.Errorf("scry version extra: exit %d, stderr %q; want 2", code, errOut.String())
	}
}
