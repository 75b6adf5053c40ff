package exec

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

func TestWithHugePages(t *testing.T) {
	for _, tc := range []struct {
		name, inherited string
		env, want       []string
	}{
		{"nothing set", "", []string{"A=1"}, []string{"A=1", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}},
		{"the user's tunables", "", []string{"GLIBC_TUNABLES=glibc.malloc.check=3", "B=2"}, []string{"B=2", "GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.hugetlb=1"}},
		{"the user's choice stands", "", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}, []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}},
		{"inherited tunables", "glibc.malloc.arena_max=1", nil, []string{"GLIBC_TUNABLES=glibc.malloc.arena_max=1:glibc.malloc.hugetlb=1"}},
		{"inherited choice", "glibc.malloc.hugetlb=2", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GLIBC_TUNABLES", tc.inherited)
			if tc.inherited == "" {
				os.Unsetenv("GLIBC_TUNABLES")
			}
			if got := WithHugePages(tc.env); !slices.Equal(got, tc.want) {
				t.Errorf("WithHugePages(%q) = %q, want %q", tc.env, got, tc.want)
			}
		})
	}
}

func TestLinksLibrary(t *testing.T) {
	testenv.Tool(t, "gcc")
	dir := t.TempDir()
	if LinksLibrary(dir, "libc.so") || LinksLibrary("/bin/sh-no-such", "libc.so") {
		t.Error("a directory or a missing file links libc")
	}
	// The test binary itself: a Go executable (static or linking libc), never libpmemobj.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if LinksLibrary(self, "libpmemobj.so") {
		t.Error("the test binary links libpmemobj")
	}
	if !LinksLibrary("/bin/sh", "libc.so") {
		t.Error("/bin/sh does not link libc")
	}
	src, bin := filepath.Join(dir, "p.c"), filepath.Join(dir, "p")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := osexec.Command("gcc", "-o", bin, src, "-Wl,--no-as-needed", "-lpmemobj").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if !LinksLibrary(bin, "libpmemobj.so") {
		t.Error("a program linked with -lpmemobj does not link libpmemobj")
	}
}
