// Package toolchain implements `scry cc` and `scry c++`: drop-in wrappers over Debian's clang
// that load scry's LLVM pass plugin (native/pass) into every compilation and link scry's C
// runtime (native/runtime/) into every executable they link.
//
// A plugin only loads into the clang of the LLVM major version it was built against, so scry
// builds one plugin per installed major version (lib/scry/llvm-N/scry-pass.so) and picks the one
// matching the clang in use.
package toolchain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// Install describes where scry's native parts are: Root/lib/scry/llvm-N/scry-pass.so,
// Root/lib/scry/libscry_rt.a and Root/include/scry/scry.h.
type Install struct {
	Root string
}

// FindInstall locates scry's install root: $SCRY_HOME when set, else the parent of the directory
// holding the running executable (build/bin/scry → build). It returns an error when the root
// has no lib/scry directory.
func FindInstall() (Install, error) {
	if h := os.Getenv("SCRY_HOME"); h != "" {
		return checkInstall(h)
	}
	exe, err := os.Executable()
	if err != nil {
		return Install{}, fmt.Errorf("locating scry's install directory: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return checkInstall(filepath.Dir(filepath.Dir(exe)))
}

func checkInstall(root string) (Install, error) {
	if _, err := os.Stat(filepath.Join(root, "lib", "scry")); err != nil {
		return Install{}, fmt.Errorf("scry's native parts are not installed under %s (no lib/scry): run `make` in the scry source tree or set SCRY_HOME", root)
	}
	return Install{Root: root}, nil
}

// PassPlugin returns the path of the pass plugin for LLVM major version major, or an error
// naming the missing file.
func (in Install) PassPlugin(major int) (string, error) {
	p := filepath.Join(in.Root, "lib", "scry", fmt.Sprintf("llvm-%d", major), "scry-pass.so")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no scry pass plugin for LLVM %d (looked for %s): install llvm-%d-dev and rebuild scry, or choose another clang with SCRY_CLANG", major, p, major)
	}
	return p, nil
}

// Runtime returns the path of the runtime archive.
func (in Install) Runtime() (string, error) {
	p := filepath.Join(in.Root, "lib", "scry", "libscry_rt.a")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("scry runtime not found at %s: rebuild scry", p)
	}
	return p, nil
}

// IncludeDir is the directory holding scry.h.
func (in Install) IncludeDir() string { return filepath.Join(in.Root, "include", "scry") }

// Compiler is a clang driver and its LLVM major version.
type Compiler struct {
	Path  string
	Major int
}

var versionRE = regexp.MustCompile(`clang version (\d+)\.`)

// FindCompiler picks the clang to wrap. cxx selects clang++. The environment variable
// SCRY_CLANG (or SCRY_CLANGXX for C++) names one explicitly; otherwise the newest of
// clang-16, clang-15, clang-14, clang on PATH for which a pass plugin is installed.
func FindCompiler(in Install, cxx bool) (Compiler, error) {
	env, base := "SCRY_CLANG", "clang"
	if cxx {
		env, base = "SCRY_CLANGXX", "clang++"
	}
	if p := os.Getenv(env); p != "" {
		major, err := MajorVersion(p)
		if err != nil {
			return Compiler{}, err
		}
		return Compiler{Path: p, Major: major}, nil
	}
	var tried []string
	for _, v := range []int{19, 18, 17, 16, 15, 14} {
		name := fmt.Sprintf("%s-%d", base, v)
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		tried = append(tried, name)
		if _, err := in.PassPlugin(v); err == nil {
			return Compiler{Path: p, Major: v}, nil
		}
	}
	if p, err := exec.LookPath(base); err == nil {
		if major, err := MajorVersion(p); err == nil {
			if _, err := in.PassPlugin(major); err == nil {
				return Compiler{Path: p, Major: major}, nil
			}
		}
		tried = append(tried, base)
	}
	if len(tried) == 0 {
		return Compiler{}, errors.New("no clang found on PATH: install Debian's clang-14 or clang-16 (`make deps`)")
	}
	return Compiler{}, fmt.Errorf("found %s but no matching scry pass plugin under %s: rebuild scry", strings.Join(tried, ", "), in.Root)
}

// MajorVersion runs `clang --version` and returns the LLVM major version it reports.
func MajorVersion(clang string) (int, error) {
	out, err := exec.Command(clang, "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("running %s --version: %w", clang, err)
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s --version did not report a clang version", clang)
	}
	return strconv.Atoi(string(m[1]))
}

// Links reports whether a clang command line (without the driver) links an executable: it does
// unless it only compiles, assembles, preprocesses or checks syntax, or builds a shared
// library (the runtime belongs in the executable, not in every library).
func Links(args []string) bool {
	for _, a := range args {
		switch a {
		case "-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-shared", "--version", "-v", "-###", "-emit-llvm":
			return false
		}
		if strings.HasPrefix(a, "-print-") || strings.HasPrefix(a, "--print-") {
			return false
		}
	}
	return true
}

// hasDebug reports whether the arguments already ask for debug information.
func hasDebug(args []string) bool {
	for _, a := range args {
		if a == "-g0" {
			return false
		}
		if strings.HasPrefix(a, "-g") || strings.HasPrefix(a, "-gdwarf") {
			return true
		}
	}
	return false
}

// Args returns the full clang argument list (without the driver itself) for a wrapped
// invocation with the user's args: the pass plugin is loaded (early, so -mllvm -scry-stats
// works), -g is added when absent, scry.h's
// directory is on the include path, _FORTIFY_SOURCE is undefined, and link steps get the runtime and its libraries.
func Args(in Install, c Compiler, user []string) ([]string, error) {
	plugin, err := in.PassPlugin(c.Major)
	if err != nil {
		return nil, err
	}
	// -fplugin loads the plugin before clang parses -mllvm options, so the pass's own options
	// (-mllvm -scry-stats) are accepted; -fpass-plugin adds the pass to the pipeline.
	args := []string{"-fplugin=" + plugin, "-fpass-plugin=" + plugin, "-Qunused-arguments", "-I" + in.IncludeDir()}
	if !hasDebug(user) {
		args = append(args, "-g")
	}
	args = append(args, user...)
	// Fortified libc calls (__memcpy_chk, ...) would hide copies into PM from the hooks.
	args = append(args, "-U_FORTIFY_SOURCE")
	if Links(user) && len(user) > 0 {
		rt, err := in.Runtime()
		if err != nil {
			return nil, err
		}
		args = append(args, "-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-lpthread", "-ldl")
	}
	return args, nil
}

// Exec replaces the running process with clang (clang++ with cxx) run on the user's arguments as
// Args extends them, so that clang's output and exit status are the wrapper's. It returns only
// when clang cannot be run: scry's install or a matching compiler and plugin are missing
// (FindInstall, FindCompiler, Install.PassPlugin), or the exec failed.
func Exec(cxx bool, user []string) error {
	in, err := FindInstall()
	if err != nil {
		return err
	}
	c, err := FindCompiler(in, cxx)
	if err != nil {
		return err
	}
	full, err := Args(in, c, user)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return fmt.Errorf("clang %s: %w", c.Path, err)
	}
	err = syscall.Exec(path, append([]string{c.Path}, full...), os.Environ())
	return fmt.Errorf("running %s: %w", path, err)
}
