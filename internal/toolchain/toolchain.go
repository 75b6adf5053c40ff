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
	"slices"
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

// PluginMajors returns the LLVM major versions that have a pass plugin in the install, in
// increasing order (none: nil).
func (in Install) PluginMajors() []int {
	dirs, _ := filepath.Glob(filepath.Join(in.Root, "lib", "scry", "llvm-*", "scry-pass.so"))
	var majors []int
	for _, d := range dirs {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(d)), "llvm-")); err == nil {
			majors = append(majors, n)
		}
	}
	slices.Sort(majors)
	return majors
}

// Runtime returns the paths of the runtime archive and of its dynamic list (the linker's
// --dynamic-list file naming the runtime's symbols, __scry_* and scry_*, which an executable
// exports so that an instrumented shared library resolves them, dlopen'ed ones too), or an error
// naming the missing file.
func (in Install) Runtime() (archive, dynamicList string, err error) {
	return in.RuntimeFor("")
}

// RuntimeFor is Runtime for the target architecture arch ("": the host's; "aarch64": the
// runtime cross-built for aarch64 programs, `make runtime-aarch64`). Errors: as Runtime's,
// naming what installs the aarch64 runtime.
func (in Install) RuntimeFor(arch string) (archive, dynamicList string, err error) {
	archive = filepath.Join(in.Root, "lib", "scry", "libscry_rt.a")
	if arch != "" {
		archive = filepath.Join(in.Root, "lib", "scry", arch, "libscry_rt.a")
	}
	dynamicList = filepath.Join(in.Root, "lib", "scry", "scry_rt.dynlist")
	for _, p := range []string{archive, dynamicList} {
		if _, err := os.Stat(p); err != nil {
			if arch != "" {
				return "", "", fmt.Errorf("scry's %s runtime not found at %s: install the cross toolchain (make deps) and rebuild scry", arch, p)
			}
			return "", "", fmt.Errorf("scry runtime not found at %s: rebuild scry", p)
		}
	}
	return archive, dynamicList, nil
}

// TargetArch returns the architecture a clang command line compiles for when it is not the
// host's: "aarch64" for a --target (or -target) naming aarch64 or arm64, "" otherwise. The
// last target wins, as in clang.
func TargetArch(args []string) string {
	arch := ""
	for i, a := range args {
		var t string
		switch {
		case strings.HasPrefix(a, "--target="):
			t = a[len("--target="):]
		case (a == "-target" || a == "--target") && i+1 < len(args):
			t = args[i+1]
		default:
			continue
		}
		arch = ""
		if strings.HasPrefix(t, "aarch64") || strings.HasPrefix(t, "arm64") {
			arch = "aarch64"
		}
	}
	return arch
}

// IncludeDir is the directory holding scry.h (searched first: `-I`).
func (in Install) IncludeDir() string { return filepath.Join(in.Root, "include", "scry") }

// CompatIncludeDir is the directory holding the fallback valgrind.h and scry's pmemcheck.h
// (searched last: `-idirafter`), so that a project's own copy of either wins and a build that
// plain clang accepts is never broken by them.
func (in Install) CompatIncludeDir() string { return filepath.Join(in.Root, "include", "scry-compat") }

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

// Links reports whether a clang command line (without the driver, response files expanded:
// [ExpandResponseFiles]) links an executable. It does when it names an input (a file, `-` for
// standard input, or a library with -l) and no option stops clang before the link or makes it link
// something else: -c, -S, -E, -M, -MM, -fsyntax-only, --precompile, --analyze, -emit-llvm,
// -emit-ast (earlier steps), -shared and -r (a shared library or relocatable object: the runtime
// belongs once in the executable, not in every library), and --version, --help, -dumpmachine,
// -dumpversion, -print-* (queries that print and compile nothing). -v and -### change nothing:
// clang prints the commands it runs (or, with -###, would run), the runtime's link included.
// -MD, -MMD, -MF, -MT, -MQ and -MP are side outputs of a compile and stop nothing.
func Links(args []string) bool {
	return scan(args).links
}

// noLink are the options after which clang links no executable.
var noLink = map[string]bool{
	"-c": true, "--compile": true, "-S": true, "--assemble": true, "-E": true, "--preprocess": true,
	"-M": true, "--dependencies": true, "-MM": true, "--user-dependencies": true,
	"-fsyntax-only": true, "--precompile": true, "--analyze": true, "-emit-llvm": true, "-emit-ast": true,
	"-shared": true, "--shared": true, "-r": true,
	"--version": true, "-help": true, "--help": true, "--help-hidden": true, "-dumpmachine": true,
	"-dumpversion": true,
}

// separate are the driver options whose value is the next argument (when not joined to them):
// that argument is no input file.
var separate = map[string]bool{
	"-o": true, "-x": true, "-I": true, "-L": true, "-D": true, "-U": true, "-B": true, "-F": true,
	"-include": true, "-imacros": true, "-isystem": true, "-idirafter": true, "-iquote": true,
	"-isysroot": true, "-iprefix": true, "-iwithprefix": true, "-iwithprefixbefore": true,
	"-cxx-isystem": true, "-MF": true, "-MT": true, "-MQ": true, "-MJ": true, "-Xlinker": true,
	"-Xclang": true, "-Xassembler": true, "-Xpreprocessor": true, "-Xanalyzer": true, "-mllvm": true,
	"-target": true, "-arch": true, "-z": true, "-T": true, "-e": true, "-u": true, "-rpath": true,
	"--sysroot": true, "--param": true, "--config": true, "-dependency-file": true,
	"-dependency-dot": true, "--serialize-diagnostics": true, "-resource-dir": true,
}

// invocation is what scan learns from a command line.
type invocation struct {
	links bool // it links an executable (Links)
	// lang: a -x other than `-x none` is in effect after the last argument, so that a file
	// appended to the command line would be read as that language.
	lang bool
	// sharedDefs: it links a shared library (-shared) and forbids it undefined symbols
	// (--no-undefined or -z defs, last of those and -z undefs wins), as Meson does by default.
	sharedDefs bool
}

func scan(args []string) invocation {
	var inv invocation
	inputs, stop, shared := false, false, false
	var ld []string // the arguments clang passes the linker as they are
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-shared" || a == "--shared" {
			shared = true
		}
		switch {
		case strings.HasPrefix(a, "-Wl,"):
			ld = append(ld, strings.Split(a[len("-Wl,"):], ",")...)
		case (a == "-Xlinker" || a == "-z") && i+1 < len(args):
			if a == "-z" {
				ld = append(ld, a)
			}
			ld = append(ld, args[i+1])
			i++
		case noLink[a] || strings.HasPrefix(a, "-print-") || strings.HasPrefix(a, "--print-"):
			stop = true
		case a == "-x":
			if i+1 < len(args) {
				inv.lang = args[i+1] != "none"
			}
			i++
		case strings.HasPrefix(a, "-x") && len(a) > 2:
			inv.lang = a[2:] != "none"
		case separate[a]:
			i++
		case a == "-l":
			inputs = true
			i++
		case strings.HasPrefix(a, "-l") || a == "-" || !strings.HasPrefix(a, "-"):
			inputs = true
		}
	}
	inv.links = inputs && !stop
	for i, a := range ld {
		z := ""
		if a == "-z" && i+1 < len(ld) {
			z = ld[i+1]
		} else if strings.HasPrefix(a, "-z") {
			z = a[2:]
		}
		switch {
		case a == "--no-undefined" || z == "defs":
			inv.sharedDefs = shared
		case z == "undefs":
			inv.sharedDefs = false
		}
	}
	return inv
}

// maxResponseDepth bounds the nesting of response files (clang's driver errors on a cycle).
const maxResponseDepth = 32

// ExpandResponseFiles returns args with every @FILE argument replaced by the arguments FILE
// holds, split as clang's driver splits them on Linux (GNU quoting: white space separates
// arguments, single and double quotes group, a backslash escapes the next character), nested
// @FILEs expanded the same way, every path relative to the working directory as clang resolves
// them. An @FILE that cannot be read stays as it is: clang takes it for an input file. The error
// is a nesting deeper than 32 files (a response file that includes itself).
func ExpandResponseFiles(args []string) ([]string, error) {
	return expand(args, 0)
}

func expand(args []string, depth int) ([]string, error) {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "@") || len(a) == 1 {
			out = append(out, a)
			continue
		}
		data, err := os.ReadFile(a[1:])
		if err != nil {
			out = append(out, a)
			continue
		}
		if depth >= maxResponseDepth {
			return nil, fmt.Errorf("response file %s: nested more than %d deep (does it include itself?)", a[1:], maxResponseDepth)
		}
		inner, err := expand(tokenizeGNU(string(data)), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, inner...)
	}
	return out, nil
}

// tokenizeGNU splits the text of a response file as LLVM's cl::TokenizeGNUCommandLine does.
func tokenizeGNU(s string) []string {
	var toks []string
	var tok strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if tok.Len() > 0 { // an empty token ("") is none, as in LLVM
				toks = append(toks, tok.String())
				tok.Reset()
			}
		case c == '\\' && i+1 < len(s):
			i++
			tok.WriteByte(s[i])
		case c == '\'' || c == '"':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				tok.WriteByte(s[i])
			}
		default:
			tok.WriteByte(c)
		}
	}
	if tok.Len() > 0 {
		toks = append(toks, tok.String())
	}
	return toks
}

// notDebugLevel are the prefixes of -g options that tune debug information without asking for it
// (-gz compresses it, -gsplit-dwarf splits it, -gno-... turns a feature off): with only these,
// clang (14 and 16) emits none.
var notDebugLevel = []string{"-gz", "-gsplit-dwarf", "-gno-", "-gcolumn-info", "-grecord-command-line",
	"-grecord-gcc-switches", "-gpubnames", "-ggnu-pubnames", "-gstrict-dwarf", "-gsimple-template-names",
	"-gdbx", "-gcodeview"}

// hasDebug reports whether the arguments decide about debug information themselves: they ask for
// it (-g, -g1..3, -ggdb, -gline-tables-only, -gdwarf-N...) or turn it off (-g0).
func hasDebug(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-g") && !slices.ContainsFunc(notDebugLevel, func(p string) bool { return strings.HasPrefix(a, p) }) {
			return true
		}
	}
	return false
}

// Args returns the full clang argument list (without the driver itself) for a wrapped
// invocation with the user's args, which are passed on unchanged (response files too: they are
// read, with [ExpandResponseFiles], only to decide): the pass plugin is loaded (early, so
// -mllvm -scry-stats works), -g is added when absent, scry.h's directory is on the include path,
// pmemcheck annotations are compiled in (pmemcheckArgs), _FORTIFY_SOURCE is undefined, a step that links an executable ([Links]) gets the runtime
// (whole, after `-x none` when a -x is in effect), the export of its symbols to shared libraries
// and its libraries, and a shared library's link that forbids undefined symbols (--no-undefined,
// -z defs) allows them in the end, the runtime's being defined by the executable. The errors are a missing plugin or runtime and a response file nested in
// itself.
func Args(in Install, c Compiler, user []string) ([]string, error) {
	plugin, err := in.PassPlugin(c.Major)
	if err != nil {
		return nil, err
	}
	expanded, err := ExpandResponseFiles(user)
	if err != nil {
		return nil, err
	}
	// -fplugin loads the plugin before clang parses -mllvm options, so the pass's own options
	// (-mllvm -scry-stats) are accepted; -fpass-plugin adds the pass to the pipeline.
	args := []string{"-fplugin=" + plugin, "-fpass-plugin=" + plugin, "-Qunused-arguments", "-I" + in.IncludeDir()}
	args = append(args, pmemcheckArgs(in, expanded)...)
	if !hasDebug(expanded) {
		args = append(args, "-g")
	}
	args = append(args, user...)
	// Fortified libc calls (__memcpy_chk, ...) would hide copies into PM from the hooks.
	args = append(args, "-U_FORTIFY_SOURCE")
	inv := scan(expanded)
	if inv.sharedDefs {
		// The library's calls of the runtime are resolved in the executable that loads it (the
		// runtime is linked into executables only): let the link leave undefined symbols. The
		// option is ld.bfd's, gold's and lld's (-z undefs is not gold's).
		args = append(args, "-Wl,--unresolved-symbols=ignore-in-object-files")
	}
	if !inv.links {
		return args, nil
	}
	rt, dynlist, err := in.RuntimeFor(TargetArch(expanded))
	if err != nil {
		return nil, err
	}
	if inv.lang {
		// Else clang would read the archive as the -x language (`-x c++ -`).
		args = append(args, "-x", "none")
	}
	return append(args, "-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-Wl,--dynamic-list="+dynlist,
		"-lpthread", "-ldl"), nil
}

// PmemcheckMacro is the macro libpmemobj-cpp compiles its pmemcheck annotations under
// (libpmemobj++/detail/common.hpp: it then includes <valgrind.h> and <pmemcheck.h>).
const PmemcheckMacro = "LIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED"

// valgrindHeader is Debian's valgrind.h (a variable for tests).
var valgrindHeader = "/usr/include/valgrind/valgrind.h"

// pmemcheckArgs returns the arguments that compile a program's pmemcheck annotations in, so
// that scry honours them (docs/pmemcheck.md), when Valgrind's valgrind.h is installed (the
// annotations cannot compile without it): PmemcheckMacro defined as 1, unless the user's
// arguments define or undefine it themselves, and scry's fallback valgrind.h searched after
// every other include directory (-idirafter CompatIncludeDir: libpmemobj-cpp includes
// <valgrind.h> without its directory), and so is scry's pmemcheck.h (a project's own copy, which
// many PM projects ship, is found first; scry's shares its guard, __PMEMCHECK_H).
func pmemcheckArgs(in Install, user []string) []string {
	if _, err := os.Stat(valgrindHeader); err != nil {
		return nil
	}
	after := []string{"-idirafter", in.CompatIncludeDir()}
	for i, a := range user {
		for _, opt := range []string{"-D", "-U"} {
			v, ok := strings.CutPrefix(a, opt)
			if ok && v == "" && i+1 < len(user) {
				v = user[i+1]
			}
			if ok && (v == PmemcheckMacro || strings.HasPrefix(v, PmemcheckMacro+"=")) {
				return after
			}
		}
	}
	return append([]string{"-D" + PmemcheckMacro + "=1"}, after...)
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
