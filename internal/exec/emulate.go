package exec

import (
	"debug/elf"
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"sync"
)

// Aarch64Sysroot is where Debian's aarch64 C library lives (libc6-arm64-cross), the default
// root qemu-aarch64 loads an aarch64 program's dynamic libraries from; the QEMU_LD_PREFIX
// environment variable overrides it.
const Aarch64Sysroot = "/usr/aarch64-linux-gnu"

// emulated caches Emulator's answer per program path.
var emulated sync.Map // path -> emulation

type emulation struct {
	prefix []string
	err    error
}

// Emulator returns the command that runs the program at path on this machine before its own
// arguments: nil for a program the machine runs itself (a native binary, a script, anything
// that is not an ELF file of another architecture), and for an aarch64 ELF on an x86-64 host
// qemu-user's `qemu-aarch64 -cpu max -L SYSROOT` (SYSROOT: $QEMU_LD_PREFIX, else
// Aarch64Sysroot). `-cpu max` enables every Armv8 extension qemu knows (DC CVAP itself is
// emulated by scry's runtime: docs/persistency-profiles.md). The answer is cached per path.
// Errors: an aarch64 program and no qemu-aarch64 (Debian's qemu-user), or an ELF file of an
// architecture scry cannot run here.
func Emulator(path string) ([]string, error) {
	if v, ok := emulated.Load(path); ok {
		e := v.(emulation)
		return e.prefix, e.err
	}
	e := emulation{}
	if f, err := elf.Open(path); err == nil {
		switch m := f.Machine; {
		case m == elf.EM_AARCH64 && runtime.GOARCH != "arm64":
			q, err := osexec.LookPath("qemu-aarch64")
			if err != nil {
				e.err = fmt.Errorf("%s is an aarch64 program: running it here needs qemu-aarch64 (Debian's qemu-user; make deps installs it)", path)
				break
			}
			root := os.Getenv("QEMU_LD_PREFIX")
			if root == "" {
				root = Aarch64Sysroot
			}
			e.prefix = []string{q, "-cpu", "max", "-L", root}
		case m == elf.EM_X86_64 && runtime.GOARCH == "amd64", m == elf.EM_AARCH64:
		default:
			e.err = fmt.Errorf("%s is an ELF program for %v, which scry cannot run on this %s machine", path, m, runtime.GOARCH)
		}
		f.Close()
	}
	emulated.Store(path, e)
	return e.prefix, e.err
}

// Command returns args (a resolved program path and its arguments) as the command that runs
// them here: with the Emulator's prefix when the program needs one. Errors: Emulator's.
func Command(args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	pre, err := Emulator(args[0])
	if err != nil || pre == nil {
		return args, err
	}
	return append(append([]string(nil), pre...), args...), nil
}
