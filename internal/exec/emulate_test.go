package exec

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// TestEmulator: a native binary and a script run as they are; an aarch64 ELF runs under
// qemu-aarch64 with Debian's aarch64 library root (QEMU_LD_PREFIX overrides it).
func TestEmulator(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	clang := testenv.Tool(t, "clang-16")
	qemu := testenv.Tool(t, "qemu-aarch64")
	src := filepath.Join(dir, "p.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	arm := filepath.Join(dir, "arm")
	if out, err := osexec.Command(clang, "--target=aarch64-linux-gnu", "-o", arm, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	native, _ := osexec.LookPath("true")
	for _, p := range []string{native, script} {
		if pre, err := Emulator(p); pre != nil || err != nil {
			t.Errorf("Emulator(%s) = %q, %v; want nothing", p, pre, err)
		}
	}
	got, err := Command([]string{arm, "x"})
	want := []string{qemu, "-cpu", "max", "-L", Aarch64Sysroot, arm, "x"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Command = %q, %v; want %q", got, err, want)
	}
	t.Setenv("QEMU_LD_PREFIX", "/opt/sysroot")
	arm2 := filepath.Join(dir, "arm2") // a path not cached yet
	os.Link(arm, arm2)
	if got, _ := Command([]string{arm2}); len(got) < 5 || got[4] != "/opt/sysroot" {
		t.Errorf("with QEMU_LD_PREFIX: %q", got)
	}
	if out, err := osexec.Command(want[0], want[1:]...).CombinedOutput(); err != nil {
		t.Errorf("running %q: %v\n%s", want, err, out)
	}
}
