package scryrt_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/trace"
)

// TestWindowsOfThreads: two threads in libpmemobj calls at once (testdata/windowobj.c, under the
// operating system's schedule and controlled ones) each have their call's writes recorded before
// their operation ends. At every moment no operation is in flight, the pool the trace replays to
// (every store and external write so far: the consistent image crash exploration runs the
// legal outcomes on) must hold every object allocated so far. When a thread's protection window
// closed the other thread's too, the other's allocator metadata, written to a page left
// writable, reached the trace only at some later comparison, and such an image lacked an
// object its operation had allocated before it ended.
func TestWindowsOfThreads(t *testing.T) {
	testenv.Tool(t, "gcc")
	havePMDK(t)
	exe := scryCC(t, "windowobj", "-lpmemobj")
	dir := t.TempDir()
	const rounds = 8
	for _, spec := range []string{"no", "pct:1:1", "pm:2:3:300"} {
		t.Run(spec, func(t *testing.T) {
			pool := filepath.Join(dir, strings.ReplaceAll(spec, ":", "-")+".pool")
			r := runSched(t, dir, "win", spec, exe, pool, strconv.Itoa(rounds))
			r.ok(t, spec, "")
			tr, err := trace.Open(r.trace)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			inFlight, ended, checked := 0, 0, 0
			img := filepath.Join(dir, "boundary.img")
			_, err = crash.Walk(tr, crash.Options{OpBoundaries: true}, func(cp *crash.CrashPoint) error {
				switch cp.Kind {
				case crash.OpEnd:
					inFlight--
					ended++
				case crash.OpBegin:
					inFlight++
					if inFlight > 1 || ended == 0 {
						return nil
					}
					if err := cp.WriteImage(img, 1, cp.Space.FullState()); err != nil {
						return err
					}
					checked++
					if got, want := objects(t, exe, img), strconv.Itoa(ended)+" objects\n"; got != want {
						t.Errorf("the consistent image before operation %d (%d ended) holds %q, want %q", cp.Op, ended, got, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if checked != rounds-1 {
				t.Errorf("%d images checked, want %d", checked, rounds-1)
			}
		})
	}
}

// objects runs windowobj on a copy of image, inert, and returns what it prints (what went wrong
// when it fails or runs past schedTimeout).
func objects(t *testing.T, exe, image string) string {
	t.Helper()
	b, err := os.ReadFile(image)
	if err != nil {
		t.Fatal(err)
	}
	run := image + ".run"
	if err := os.WriteFile(run, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), schedTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, run)
	cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1", "SCRY_TRACE=/dev/null", "SCRY_NO_LOADS=1", "SCRY_INERT=1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		// A heap whose metadata lacks an allocation can make libpmemobj loop: a failure too.
		return fmt.Sprintf("no answer (%v; %s)", err, strings.TrimSpace(stderr.String()))
	}
	return out.String()
}
