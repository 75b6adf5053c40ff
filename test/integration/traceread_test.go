package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// TestTraceReadOnce: one `scry check` with crash exploration of examples/ordering, under strace,
// opens its trace three times (the program writes it, scry creates it first for the program and
// reads it through one open file) and reads it from its start once per need, each pass a
// positioned read at offset 0 of that file: the inference of persistence properties, the
// analysis pass (whose results the exploration takes: the stores never made durable, the pools),
// the exploration's plan, one walk per round of its order of exploration (three for the
// example's workload: its two inserts and its update share a path, priority.go), and the walk
// that rebuilds the crash findings' failing images for their recovery loads.
func TestTraceReadOnce(t *testing.T) {
	scry := testenv.Scry(t)
	strace := testenv.Tool(t, "strace")
	dir := t.TempDir()
	ex := filepath.Join(testenv.Root(), "examples")
	for _, f := range []string{"ordering/buggy.c", "ordering/workload.txt", "include/example.h"} {
		b, err := os.ReadFile(filepath.Join(ex, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := run(t, dir, "", scry, "cc", "-O2", "-mclwb", "-o", "prog", "buggy.c", "-lpmem"); r.code != 0 {
		t.Fatalf("scry cc: %d\n%s", r.code, r.stderr)
	}
	// One log per thread (-ff): with one log for all, a call another thread interrupts is split
	// into "<unfinished ...>" and "<... resumed>" lines, which the patterns below would miss.
	log := filepath.Join(dir, "strace.log")
	r := run(t, dir, "", strace, "-ff", "-e", "trace=openat,pread64", "-o", log,
		scry, "check", "--trace", "run.trace", "--workload", "workload.txt", "--", "./prog", "{pool}")
	if r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1 (its correctness findings)\n%s", r.code, r.stderr)
	}
	logs, err := filepath.Glob(log + ".*")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no strace log %s.*: %v", log, err)
	}
	var b []byte
	for _, l := range logs {
		lb, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, lb...)
		b = append(b, '\n')
	}
	tr := filepath.Join(dir, "run.trace")
	opens, reads := 0, 0
	fds := map[string]bool{} // the descriptors of the trace opened for reading
	openRE := regexp.MustCompile(`^()openat\(AT_FDCWD, "([^"]+)", ([A-Z_|]+).*\) = (\d+)$`)
	preadRE := regexp.MustCompile(`^()pread64\((\d+), .*, (\d+)\) = \d+$`)
	var readOpens []string
	lines := strings.Split(string(b), "\n")
	// Two passes: the thread that opened the trace need not be the one that reads it, and the
	// logs are per thread, so every open is seen before any read is counted.
	for _, line := range lines {
		if m := openRE.FindStringSubmatch(line); m != nil && m[2] == tr {
			opens++
			if strings.HasPrefix(m[3], "O_RDONLY") {
				readOpens = append(readOpens, m[1]+" "+m[4])
				fds[m[4]] = true
			}
		}
	}
	for _, line := range lines {
		// A pass starts with a read at offset 0, by any thread of scry's process, of the
		// descriptor the trace was opened on.
		if m := preadRE.FindStringSubmatch(line); m != nil && m[3] == "0" && fds[m[2]] {
			reads++
		}
	}
	if opens == 0 {
		t.Fatalf("no open of %s in the strace log", tr)
	}
	if opens > 3 || len(readOpens) != 1 {
		t.Errorf("the trace was opened %d times (%d for reading: %q), want at most 3 with one for reading", opens, len(readOpens), readOpens)
	}
	// Inference, analysis, plan, three rounds, recovery loads; the header check of the open
	// reads 16 bytes at offset 0 too.
	if want := 1 + 1 + 1 + 1 + 3 + 1; reads != want {
		t.Errorf("the trace was read from its start %d times, want %d (the header, inference, analysis, plan, 3 walks, recovery loads)", reads, want)
	}
}
