package exec

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestScratchParent: an explicit directory wins, then $TMPDIR; else the tmpfs when it has room
// for the pool, else the temporary directory, saying why.
func TestScratchParent(t *testing.T) {
	var fs unix.Statfs_t
	shm := unix.Statfs(ShmDir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC && unix.Access(ShmDir, unix.W_OK) == nil &&
		fs.Bavail*uint64(fs.Bsize) >= minShmFree
	type scratchCase struct {
		name       string
		dir        string
		tmpdir     string
		pool       uint64
		avoid      string
		wantParent string
		wantSay    string
	}
	tests := []scratchCase{
		{"explicit", "/explicit", "/from-env", 0, "", "/explicit", "in /explicit"},
		{"TMPDIR", "", "/from-env", 0, "", "/from-env", "$TMPDIR"},
		{"pool too large for any tmpfs", "", "", 1 << 60, "", os.TempDir(), "in "},
		{"the program allocates its pool", "", "", 1 << 20, "it allocates", os.TempDir(), "not on the tmpfs /dev/shm: it allocates"},
		{"TMPDIR wins over avoiding", "", "/from-env", 1 << 20, "it allocates", "/from-env", "$TMPDIR"},
	}
	if shm {
		tests = append(tests, scratchCase{"tmpfs", "", "", 1 << 20, "", ShmDir, "on tmpfs"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", tc.tmpdir)
			if tc.tmpdir == "" {
				os.Unsetenv("TMPDIR")
			}
			parent, say := ScratchParent(tc.dir, tc.pool, tc.avoid)
			if parent != tc.wantParent || !strings.Contains(say, tc.wantSay) {
				t.Errorf("ScratchParent(%q, %d) = %q, %q; want %q, containing %q", tc.dir, tc.pool, parent, say, tc.wantParent, tc.wantSay)
			}
			if tc.pool == 1<<60 && shm && !strings.Contains(say, "wanted") {
				t.Errorf("the report line does not say why the tmpfs was not used: %q", say)
			}
		})
	}
}
