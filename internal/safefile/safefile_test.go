package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreate(t *testing.T) {
	ours := func(head []byte) bool { return strings.HasPrefix(string(head), "OURS") }
	tests := []struct {
		name   string
		setup  func(t *testing.T, path string)
		policy Policy
		ok     bool
		msg    string // in the error
	}{
		{"new file", func(*testing.T, string) {}, Policy{What: "x"}, true, ""},
		{"user's file", write("precious"), Policy{What: "x", Ours: ours}, false, "exists and scry did not write it: scry does not overwrite files it did not create; remove it, name another path, or pass --force to replace it"},
		{"user's file, no --force", write("precious"), Policy{What: "x", Ours: ours, NoForce: true}, false, "it did not create; remove it or name another path"},
		{"user's file, no recogniser", write("precious"), Policy{What: "x"}, false, "exists: scry does not overwrite files; remove it, name another path, or pass --force"},
		{"user's file, no name", write("precious"), Policy{}, false, "the file "},
		{"our file", write("OURS v1"), Policy{What: "x", Ours: ours}, true, ""},
		{"user's file with force", write("precious"), Policy{What: "x", Force: true}, true, ""},
		{"directory with force", func(t *testing.T, p string) { mkdir(t, p) }, Policy{What: "x", Force: true}, false, "is a directory"},
		{"link to our file with force", func(t *testing.T, p string) {
			write("OURS")(t, p+".target")
			if err := os.Symlink(p+".target", p); err != nil {
				t.Fatal(err)
			}
		}, Policy{What: "x", Ours: ours, Force: true}, false, "symbolic link"},
		{"dangling link", func(t *testing.T, p string) {
			if err := os.Symlink(p+".nowhere", p); err != nil {
				t.Fatal(err)
			}
		}, Policy{What: "x", Force: true}, false, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "out")
			tt.setup(t, p)
			before, _ := os.ReadFile(p)
			f, err := Create(p, tt.policy)
			if tt.ok {
				if err != nil {
					t.Fatalf("Create: %v", err)
				}
				f.WriteString("new")
				f.Close()
				if b, _ := os.ReadFile(p); string(b) != "new" {
					t.Errorf("contents %q", b)
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatal("Create succeeded")
			}
			if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want ErrExists saying %q", err, tt.msg)
			}
			if strings.HasSuffix(err.Error(), ": exists") || strings.Count(err.Error(), p) != 1 {
				t.Errorf("error %q: want a sentence naming %s once, not ending in \": exists\"", err, p)
			}
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Errorf("the existing file changed: %q -> %q", before, after)
			}
			if _, err := os.Stat(p + ".nowhere"); err == nil {
				t.Error("a file was created through the dangling link")
			}
		})
	}
}

func write(content string) func(*testing.T, string) {
	return func(t *testing.T, p string) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdir(t *testing.T, p string) {
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
