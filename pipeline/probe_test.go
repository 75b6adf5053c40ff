package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/testenv"
)

// TestAllocatesPool: a program that allocates its whole pool when it opens it (here the
// fallocate command, as libpmem's pmem_map_file does) is told apart from one that does not.
func TestAllocatesPool(t *testing.T) {
	testenv.Tool(t, "fallocate")
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	data := make([]byte, 4<<20)
	copy(data[1<<20:], "a little data in a pool of zeros")
	if err := os.WriteFile(pool, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		script string
		want   string
	}{
		{"allocates", `fallocate -l "$(stat -c %s "$1")" "$1"`, "allocates its whole 4 MiB pool"},
		{"only reads", `cat "$1" > /dev/null`, ""},
		{"fails", `exit 3`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := scryexec.Target{Args: []string{"/bin/sh", "-c", tc.script, "sh", scryexec.PoolPlaceholder}, Timeout: 10 * time.Second}
			got := AllocatesPool(context.Background(), tg, pool, t.TempDir())
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("AllocatesPool = %q, want %q", got, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(pool); err != nil || len(b) != len(data) || string(b[1<<20:1<<20+32]) != string(data[1<<20:1<<20+32]) {
		t.Errorf("the pool itself changed")
	}
}
