package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixCommandErrors: bad invocations of scry fix exit 2 with a message naming the problem,
// and never write over a file that is not a patch of scry fix.
func TestFixCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{}"), 0o644)
	mine := filepath.Join(dir, "notes.txt")
	os.WriteFile(mine, []byte("my notes\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "takes a JSON report"},
		{[]string{"--apply", bad}, "--apply writes only a validated patch"},
		{[]string{filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{bad}, "no \"findings\" array"},
		{[]string{"-o", mine, bad}, "notes.txt"},
	} {
		_, errOut, code := runCmd(t, newFixCommand(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("scry fix %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	if b, _ := os.ReadFile(mine); string(b) != "my notes\n" {
		t.Errorf("scry fix -o replaced a file it did not write: %q", b)
	}
}
