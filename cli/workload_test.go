package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// boundedWriter fails every write past max bytes: a generator without bound ends on it, fast.
type boundedWriter struct {
	n, max int
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.n += len(p); w.n > w.max {
		return 0, fmt.Errorf("more than %d bytes written", w.max)
	}
	return len(p), nil
}

// TestWorkloadBound: workload kv --ops over workload.MaxOps is an error saying the bound, before a
// line is written; the bound itself is accepted. (workload grammar streams and stops on Ctrl-C:
// TestGrammarWorkloadInterrupted.)
func TestWorkloadBound(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"workload", "kv", "--ops", "999999999999999"}, 2, "--ops 999999999999999: a workload has at most 1000000 operations"},
		{[]string{"workload", "kv", "--ops", "1000001"}, 2, "--ops 1000001: a workload has at most"},
		{[]string{"workload", "kv", "--ops", "-1"}, 2, "--ops -1: negative operation count"},
		{[]string{"workload", "kv", "--ops", "1000000"}, 0, ""},
	} {
		out := &boundedWriter{max: 64 << 20}
		var errOut bytes.Buffer
		code := Run(Config{}, tc.args, out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("scry %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errOut.String(), tc.code, tc.want)
		}
		if tc.code != 0 && out.n != 0 {
			t.Errorf("scry %s wrote %d bytes before its error", strings.Join(tc.args, " "), out.n)
		}
	}
}

// TestWorkloadFuzzBadInput: workload fuzz and cover reject bad flags and targets with exit 2 and
// a message, before running anything or creating the corpus, -o or --html (a file of the user's
// at --html is left as it is).
func TestWorkloadFuzzBadInput(t *testing.T) {
	dir := t.TempDir()
	corpus, mine := dir+"/corpus", dir+"/mine.html"
	if err := os.WriteFile(mine, []byte("<p>my page</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workload", "fuzz", "--corpus", corpus}, "no program"},
		{[]string{"workload", "fuzz", "--", "./prog", "{pool}"}, `"corpus" not set`},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--max-ops", "0", "--", "true", "{pool}"}, "--max-ops 0"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--max-ops", "-3", "--", "true", "{pool}"}, "negative"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--time-budget", "-1s", "--", "true", "{pool}"}, "negative"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--", "true"}, "no argument contains {pool}"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--", dir + "/missing", "{pool}"}, "missing"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--env", "1X=2", "--", "true", "{pool}"}, "1X"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--seed-workload", dir + "/none.txt", "--", "true", "{pool}"}, "none.txt"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--usage", "i [<key>", "--", "true", "{pool}"}, "never closed"},
		{[]string{"workload", "cover", "--", "true", "{pool}"}, "no workload"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--html", mine, "--", "true", "{pool}"}, "--force"},
		{[]string{"workload", "cover", "--workload", dir + "/w.txt", "--html", mine, "--", "true", "{pool}"}, "--force"},
		{[]string{"workload", "cover", "--workload", mine, "--html", mine, "--", "true", "{pool}"}, "a --workload names the same file"},
		{[]string{"workload", "fuzz", "--corpus", corpus, "--html", dir + "/w.txt", "-o", dir + "/w.txt", "--", "true", "{pool}"},
			"-o names the same file"},
	} {
		var out, errOut bytes.Buffer
		code := Run(Config{}, tc.args, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("scry %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errOut.String(), tc.want)
		}
	}
	if _, err := os.Stat(corpus); err == nil {
		t.Errorf("a rejected command created the corpus %s", corpus)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "<p>my page</p>\n" {
		t.Errorf("--html replaced the user's file %s: %q, %v", mine, b, err)
	}
	if _, err := os.Stat(dir + "/w.txt"); err == nil {
		t.Errorf("a rejected command created -o")
	}
}
