package integration

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// TestPmemcheckCxx builds testdata/skiplist-size.cpp with `scry c++`, once with its pmemcheck
// annotation (scry's pmemcheck.h, found on the include path scry c++ adds) and once without, and
// checks it: the annotated build declares its atomic counter's increments flushed and has no
// correctness finding; the plain build has the findings the annotation answers
// (docs/pmemcheck.md).
func TestPmemcheckCxx(t *testing.T) {
	scry := testenv.Scry(t)
	if _, err := os.Stat("/usr/include/valgrind/valgrind.h"); err != nil {
		testenv.Missing(t, "valgrind.h is not installed (Debian package valgrind): %v", err)
	}
	src := filepath.Join(testenv.Root(), "test", "integration", "testdata", "skiplist-size.cpp")
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		kinds []string // the correctness findings' kinds, sorted, each once
	}{
		// scry c++ compiles libpmemobj-cpp's annotations in by default (docs/pmemcheck.md).
		{"annotated", nil, 0, nil},
		{"annotations compiled out", []string{"-DLIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED=0"}, 1, []string{"overwritten-unpersisted", "unpersisted-store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "skiplist-size")
			args := append([]string{"c++", "-O1", "-o", bin, src, "-lpmem"}, tc.flags...)
			if r := run(t, dir, "", scry, args...); r.code != 0 {
				t.Fatalf("scry c++: exit %d\n%s", r.code, r.stderr)
			}
			rep := filepath.Join(dir, "rep.json")
			r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--", bin, filepath.Join(dir, "list.pool"))
			if r.code != tc.code {
				t.Fatalf("scry check: exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			b, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, f := range parseFindings(t, string(b)) {
				if f.Class == "correctness" && !slices.Contains(kinds, f.Kind) {
					kinds = append(kinds, f.Kind)
				}
			}
			slices.Sort(kinds)
			if !slices.Equal(kinds, tc.kinds) {
				t.Errorf("correctness findings %v, want %v", kinds, tc.kinds)
			}
		})
	}
}
