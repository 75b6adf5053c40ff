package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// TestProjectCode builds testdata/project as a user would: a project (proj/, with its own
// include/ and a Makefile at its top) whose program uses a header-only library installed under
// another prefix (prefix/include). Every finding is reported in the project's code: the
// library's stores at the program's calls (its frames marked external), the project's own
// header at its line, and a helper's store that two of its three callers leave unpersisted as
// one finding at the store, with both callers related. Built again with SCRY_PROJECT_ROOT
// naming the prefix as the project, the library's store is the program's own and reported in
// kvlib.h, and proj's frames are the external ones.
func TestProjectCode(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	proj, prefix := filepath.Join(dir, "proj"), filepath.Join(dir, "prefix")
	main := filepath.Join(proj, "src", "main.c")
	own := filepath.Join(proj, "include", "own.h")
	kvlib := filepath.Join(prefix, "include", "kvlib.h")
	type want struct {
		file    string
		line    int
		callers []string // "file:line" of the related callers
	}
	for _, tc := range []struct {
		name string
		root string // SCRY_PROJECT_ROOT, "" unset
		want []want
	}{
		{"project", "", []want{{main, 24, []string{main + ":38", main + ":39"}}, {main, 36, nil}, {main, 37, nil}, {own, 8, nil}}},
		// Every file of proj is then external: the helper's store stays one finding (at the
		// store: nothing further out is the project's), own_put's at main's call.
		{"the prefix named the project", prefix, []want{{kvlib, 9, nil}, {main, 24, []string{main + ":38", main + ":39"}}, {main, 42, nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(dir, "prog-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := []string{"cc", "-O0", "-g", "-I", filepath.Join(prefix, "include"), "-I", filepath.Join(proj, "include"), "-o", bin, main, "-lpmem"}
			t.Setenv("SCRY_PROJECT_ROOT", tc.root)
			if r := run(t, filepath.Join(proj, "src"), "", scry, args...); r.code != 0 {
				t.Fatalf("scry cc: exit %d\n%s", r.code, r.stderr)
			}
			out := filepath.Join(dir, "report-"+strings.ReplaceAll(tc.name, " ", "-")+".json")
			pool := filepath.Join(dir, "pool-"+strings.ReplaceAll(tc.name, " ", "-"))
			if r := run(t, dir, "", scry, "check", "--format", "json", "-o", out, "--", bin, pool); r.code != 1 {
				t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
			}
			rep := readReport(t, out)
			var got []want
			for _, f := range rep.Findings {
				if f.Kind != report.UnpersistedStore {
					continue
				}
				w := want{file: f.Location.File, line: f.Location.Line}
				for _, r := range f.Related {
					if r.Role == report.RoleCaller {
						w.callers = append(w.callers, fmt.Sprintf("%s:%d", r.File, r.Line))
					}
				}
				got = append(got, w)
				for _, fr := range f.Stack {
					root := proj
					if tc.root != "" {
						root = tc.root
					}
					if ext := !strings.HasPrefix(fr.File, root+"/"); fr.External != ext {
						t.Errorf("finding at %s: frame %s:%d external %v, want %v", f.Location, fr.File, fr.Line, fr.External, ext)
					}
				}
			}
			slices.SortFunc(got, func(a, b want) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			slices.SortFunc(tc.want, func(a, b want) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("unpersisted-store findings\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}
