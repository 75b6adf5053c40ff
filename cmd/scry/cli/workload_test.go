package cli

import (
	"bytes"
	"fmt"
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
