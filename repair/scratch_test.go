package repair

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScratchOutsideTree: the scratch copy of a source tree is never made inside that tree, even
// when $TMPDIR is a directory of it (the copy would copy itself); it holds the tree's files, and
// nothing of a scratch directory.
func TestScratchOutsideTree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tmpdir func(src, other string) string
	}{
		{"TMPDIR elsewhere", func(_, other string) string { return other }},
		{"TMPDIR inside the tree", func(src, _ string) string { return filepath.Join(src, "build", "tmp") }},
		{"TMPDIR is the tree", func(src, _ string) string { return src }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, other := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(src, "build", "tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "prog.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("TMPDIR", tc.tmpdir(src, other))
			s, err := newScratch(src)
			if err != nil {
				t.Fatal(err)
			}
			defer s.remove()
			if under(s.root, src) {
				t.Errorf("the scratch copy %s is inside the tree %s it copies", s.root, src)
			}
			if b, err := os.ReadFile(filepath.Join(s.root, "prog.c")); err != nil || len(b) == 0 {
				t.Errorf("the copy lacks prog.c: %v", err)
			}
			for _, d := range []string{filepath.Join(src, "build", "tmp"), filepath.Join(s.root, "build", "tmp"), src} {
				if m, _ := filepath.Glob(filepath.Join(d, "scry-fix-*")); len(m) > 0 {
					t.Errorf("a scratch directory inside the tree: %v", m)
				}
			}
		})
	}
}
