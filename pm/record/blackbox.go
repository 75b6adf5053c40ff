package record

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/scry-pm/scry/internal/toolchain"
)

// Black-box recording (docs/black-box.md): a program not built with `scry cc` runs under scry's
// Valgrind tool (native/valgrind), which writes the same trace format as the runtime. The tool
// directory (VALGRIND_LIB) is $SCRY_VALGRIND_LIB, else lib/scry/valgrind of scry's install
// (toolchain.FindInstall); the valgrind executable is $SCRY_VALGRIND, else valgrind on PATH.

// ErrBlackBox is returned (wrapped) when a black-box recording cannot run or the tool stopped the
// program: the message says why and what to do.
var ErrBlackBox = errors.New("black-box recording")

// blackBox is one black-box run: the command that replaces the program's, and the file where the
// tool says why it stopped the program, if it did.
type blackBox struct {
	args      []string
	env       []string
	errorFile string
}

// toolDir returns the directory holding scry's Valgrind tool.
func toolDir() (string, error) {
	dir := os.Getenv("SCRY_VALGRIND_LIB")
	if dir == "" {
		in, err := toolchain.FindInstall()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(in.Root, "lib", "scry", "valgrind")
	}
	if _, err := os.Stat(filepath.Join(dir, "scry-amd64-linux")); err != nil {
		return "", fmt.Errorf("%w: scry's Valgrind tool is not built (no %s): run `make` in the scry source tree (it needs Debian's valgrind package), or set SCRY_VALGRIND_LIB",
			ErrBlackBox, filepath.Join(dir, "scry-amd64-linux"))
	}
	return dir, nil
}

// newBlackBox checks the --pm globs and prog (CheckBinary) and returns the valgrind command line that records it
// into tracePath with opts.
func newBlackBox(prog, tracePath string, opts Options) (*blackBox, error) {
	for _, g := range opts.PMGlobs {
		// Valgrind's matcher (VG_(string_match)) knows * and ? only.
		if strings.ContainsAny(g, "[]\\:") {
			return nil, fmt.Errorf("%w: --pm %q: in black-box mode a glob may use * and ? only (no [...], \\ nor :)", ErrBlackBox, g)
		}
	}
	if err := CheckBinary(prog); err != nil {
		return nil, err
	}
	dir, err := toolDir()
	if err != nil {
		return nil, err
	}
	vg := os.Getenv("SCRY_VALGRIND")
	if vg == "" {
		vg = "valgrind"
	}
	vgPath, err := exec.LookPath(vg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found (install Debian's valgrind package, or set SCRY_VALGRIND): %v", ErrBlackBox, vg, err)
	}
	bb := &blackBox{errorFile: tracePath + ".error", env: []string{"VALGRIND_LIB=" + dir}}
	os.Remove(bb.errorFile)
	// The inlined calls' locations (inlined sites), with their directories.
	args := []string{vgPath, "--tool=scry", "-q", "--read-inline-info=yes", "--fullpath-after=",
		"--trace=" + tracePath, "--error-file=" + bb.errorFile}
	if len(opts.PMGlobs) > 0 {
		args = append(args, "--pm="+strings.Join(absGlobs(opts.PMGlobs), ":"))
	}
	if opts.NoLoads {
		args = append(args, "--loads=no")
	}
	if opts.OpBegin != "" {
		args = append(args, "--op-begin="+opts.OpBegin)
	}
	if opts.OpEnd != "" {
		args = append(args, "--op-end="+opts.OpEnd)
	}
	bb.args = append(append(args, "--", prog), opts.Args[1:]...)
	return bb, nil
}

// finish returns the tool's error, if it stopped the program, and removes its file.
func (bb *blackBox) finish() error {
	msg, err := os.ReadFile(bb.errorFile)
	os.Remove(bb.errorFile)
	if err != nil || len(bytes.TrimSpace(msg)) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBlackBox, bytes.TrimSpace(msg))
}

// absGlobs makes relative --pm globs absolute (the runtime and the tool match absolute paths).
func absGlobs(globs []string) []string {
	abs := make([]string, len(globs))
	for i, g := range globs {
		if !filepath.IsAbs(g) {
			if a, err := filepath.Abs(g); err == nil {
				g = a
			}
		}
		abs[i] = g
	}
	return abs
}

// CheckBinary tells whether the executable at path can be recorded in black-box mode, from its
// ELF file: an error (wrapping ErrBlackBox) when clang's DWARF 5 debug information is in it,
// which Debian's Valgrind 3.19 cannot read (the advice: rebuild with -gdwarf-4). A file that is
// not ELF (a script) is left to Valgrind.
func CheckBinary(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sec := f.Section(".debug_info")
	if sec == nil {
		return nil
	}
	raw, err := sec.Data()
	if err != nil {
		return nil
	}
	if v := maxUnitVersion(raw); v < 5 {
		return nil
	}
	d, err := f.DWARF()
	if err != nil {
		return fmt.Errorf("%w: %s has DWARF 5 debug information that cannot be read (%v): rebuild it with -gdwarf-4", ErrBlackBox, path, err)
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return nil
		}
		if e.Tag == dwarf.TagCompileUnit {
			if p, _ := e.Val(dwarf.AttrProducer).(string); strings.Contains(p, "clang") {
				return fmt.Errorf("%w: %s has clang's DWARF 5 debug information, which Valgrind 3.19 cannot read (it loses source lines or aborts): rebuild it with -gdwarf-4 (e.g. CFLAGS=\"-g -gdwarf-4\"), or build it with `scry cc` and drop --black-box",
					ErrBlackBox, path)
			}
		}
		r.SkipChildren()
	}
}

// maxUnitVersion returns the highest DWARF version of the compilation units in a .debug_info
// section (0 when it has none): each unit starts with its length (4 bytes, or 0xffffffff and 8
// bytes) and a 2-byte version (DWARF 5 standard, §7.5.1.1).
func maxUnitVersion(b []byte) int {
	max := 0
	for len(b) >= 6 {
		n := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
		hdr := uint64(4)
		if n == 0xffffffff {
			if len(b) < 14 {
				break
			}
			n = 0
			for i := 0; i < 8; i++ {
				n |= uint64(b[4+i]) << (8 * i)
			}
			hdr = 12
		}
		if uint64(len(b)) < hdr+2 {
			break
		}
		if v := int(b[hdr]) | int(b[hdr+1])<<8; v > max {
			max = v
		}
		if n > uint64(len(b))-hdr {
			break
		}
		b = b[hdr+n:]
	}
	return max
}
