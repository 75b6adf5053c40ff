package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// assertEmptyDir fails unless dir exists and holds nothing (the run directory is gone).
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("%s still holds %v", dir, ents)
	}
}

func TestMapOrderAndDirs(t *testing.T) {
	items := make([]int, 50)
	for i := range items {
		items[i] = i
	}
	var first []string
	for _, jobs := range []int{1, 2, 4, 0, 100} {
		t.Run(fmt.Sprint("jobs=", jobs), func(t *testing.T) {
			parent := t.TempDir()
			var (
				mu      sync.Mutex
				dirs    = map[string]bool{}
				indexes = map[int]bool{}
			)
			res, err := Map(context.Background(), Pool{Jobs: jobs, Dir: parent}, items,
				func(ctx context.Context, w *Worker, item int) string {
					// The worker's directory exists and starts empty for every item.
					ents, err := os.ReadDir(w.Dir)
					if err != nil || len(ents) != 0 {
						return fmt.Sprintf("item %d: dir %v %v", item, ents, err)
					}
					if err := os.WriteFile(filepath.Join(w.Dir, "pool.img"), []byte{byte(item)}, 0o644); err != nil {
						return err.Error()
					}
					if rel, err := filepath.Rel(parent, w.Dir); err != nil || strings.HasPrefix(rel, "..") {
						return "worker dir outside the pool's Dir: " + w.Dir
					}
					mu.Lock()
					dirs[w.Dir], indexes[w.Index] = true, true
					mu.Unlock()
					return fmt.Sprintf("%d^2=%d", item, item*item)
				})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if want := fmt.Sprintf("%d^2=%d", i, i*i); r != want {
					t.Errorf("result %d = %q, want %q", i, r, want)
				}
			}
			if first == nil {
				first = res
			} else if !slices.Equal(first, res) {
				t.Error("results differ from those with jobs=1")
			}
			wantWorkers := jobs
			if jobs <= 0 {
				wantWorkers = min(len(items), runtime.NumCPU())
			}
			wantWorkers = min(wantWorkers, len(items))
			if len(dirs) > wantWorkers || len(indexes) > wantWorkers {
				t.Errorf("%d dirs, %d indexes for %d workers", len(dirs), len(indexes), wantWorkers)
			}
			for d := range dirs {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("worker dir %s left behind (%v)", d, err)
				}
			}
			assertEmptyDir(t, parent)
		})
	}
}

func TestMapEmpty(t *testing.T) {
	parent := t.TempDir()
	res, err := Map(context.Background(), Pool{Dir: parent}, []int(nil),
		func(context.Context, *Worker, int) int { panic("no items, no calls") })
	if err != nil || len(res) != 0 {
		t.Errorf("res %v err %v", res, err)
	}
	assertEmptyDir(t, parent)
}

func TestMapCancel(t *testing.T) {
	needProg(t)
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hang := Target{Args: []string{prog, "hang", "{pool}", "child.pid"}, Timeout: time.Minute}
	var started atomic.Int32
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	res, err := Map(ctx, Pool{Jobs: 4, Dir: parent}, items, func(ctx context.Context, w *Worker, item int) Outcome {
		if started.Add(1) == 3 {
			cancel()
		}
		return hang.Run(ctx, filepath.Join(w.Dir, "pool.img"), nil, w.Dir)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := started.Load(); n >= int32(len(items)) {
		t.Errorf("all %d items started despite the cancellation", n)
	}
	if len(res) != len(items) {
		t.Errorf("%d results for %d items", len(res), len(items))
	}
	ran := 0
	for i, o := range res {
		if o.Stdout == nil && o.Timeout == 0 {
			continue // never started
		}
		ran++
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("item %d: %s, want it interrupted", i, o.Describe())
		}
	}
	if ran == 0 {
		t.Error("no run was interrupted")
	}
	assertEmptyDir(t, parent)
}

func TestMapPanic(t *testing.T) {
	parent := t.TempDir()
	items := []string{"a", "b", "c", "boom", "d", "e"}
	res, err := Map(context.Background(), Pool{Jobs: 2, Dir: parent}, items, func(ctx context.Context, w *Worker, item string) string {
		if item == "boom" {
			panic("exploded")
		}
		return strings.ToUpper(item)
	})
	if err == nil || !strings.Contains(err.Error(), "item 3 (boom) panicked: exploded") {
		t.Fatalf("err %v, want one naming item 3 (boom)", err)
	}
	if len(res) != len(items) || res[3] != "" {
		t.Errorf("results %q", res)
	}
	for i, r := range res {
		if r != "" && r != strings.ToUpper(items[i]) {
			t.Errorf("result %d = %q", i, r)
		}
	}
	assertEmptyDir(t, parent)
}

func TestMapCancelledBefore(t *testing.T) {
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	_, err := Map(ctx, Pool{Dir: parent}, []int{1, 2, 3}, func(context.Context, *Worker, int) int { calls++; return 0 })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("err %v, %d calls", err, calls)
	}
	assertEmptyDir(t, parent)
}

func TestSignalContext(t *testing.T) {
	ctx, stop := SignalContext(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(killWait): // a failure bound
		t.Fatal("SIGTERM did not cancel the context")
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "pool"), filepath.Join(dir, "copy")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	// Data, a hole, data, and a trailing hole.
	f.WriteAt(bytes.Repeat([]byte("a"), 5000), 0)
	f.WriteAt([]byte("middle"), 1<<20)
	f.Truncate(4 << 20)
	f.Close()
	if err := os.WriteFile(dst, []byte("old content that is longer than nothing"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CopyFile(dst, src); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(dst)
	if !bytes.Equal(a, b) {
		t.Errorf("copy differs (%d vs %d bytes)", len(b), len(a))
	}
	if err := CopyFile(dst, filepath.Join(dir, "missing")); err == nil {
		t.Error("copying a missing file succeeded")
	}
}
