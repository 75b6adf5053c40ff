// Package buildsys_test builds the small projects in this directory with real build systems,
// with `scry cc` and `scry c++` as their compilers, and checks the programs they build:
//
//	cmake-kv/      C++, CMake: find_library of Debian's libpmem, find_package(Threads), a SHARED
//	               persistent-memory library and a program linking it
//	autotools-kv/  C, autoconf, automake and libtool: a libtool library over libpmem and a
//	               program linking it, configured with ./configure CC="scry cc" and installed
//
// Each project's sources mark their known crash-consistency bugs with want comments, as
// examples/ does (internal/testenv: Want): `scry check` on the built program must report those
// findings and no other. The tests need Debian's cmake, autoconf, automake, libtool and ccache
// (`make deps`); in strict mode (`make test`) a missing one fails them.
package buildsys_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// multiarch is where Debian keeps the libraries of the machine's architecture.
const multiarch = "/usr/lib/x86_64-linux-gnu"

// runIn runs name with args in dir with env added, failing the test with its output when it
// fails, and returns its output (standard output and error).
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// compilers is the environment that makes scry's wrappers the build's C and C++ compilers.
func compilers(scry string) []string {
	return []string{"CC=" + scry + " cc", "CXX=" + scry + " c++"}
}

// checkProgram runs `scry check --format json` on argv in dir and compares the findings with
// the want comments of sources.
func checkProgram(t *testing.T, scry, dir string, sources []string, argv ...string) {
	t.Helper()
	report := filepath.Join(dir, "report.json")
	args := append([]string{"check", "--format", "json", "-o", report, "--"}, argv...)
	cmd := exec.Command(scry, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("scry %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("scry %s: no report: %v\n%s", strings.Join(args, " "), err, out)
	}
	got, err := testenv.ReportFindings(data)
	if err != nil {
		t.Fatal(err)
	}
	var want []testenv.Want
	for _, s := range sources {
		ws, err := testenv.Wants(s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ws...)
	}
	if len(want) == 0 {
		t.Fatalf("%s: no want comment", strings.Join(sources, ", "))
	}
	if missing, unexpected := testenv.CompareWants(want, got); len(missing)+len(unexpected) > 0 {
		t.Errorf("findings differ from the want comments\nmissing: %v\nunexpected: %v\nreport:\n%s", missing, unexpected, data)
	}
}

// runtimeIn reports whether the ELF file at path defines scry's runtime (its registration
// callback) and whether it references it.
func runtimeIn(t *testing.T, path string) (defines, references bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name == "__scry_register_module_deps" {
			references = true
			defines = defines || s.Section != elf.SHN_UNDEF
		}
	}
	return defines, references
}

// cacheValue returns the value of variable name in a CMakeCache.txt (NAME:TYPE=VALUE lines).
func cacheValue(t *testing.T, cache, name string) string {
	t.Helper()
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:\w+=(.*)$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s: no %s", cache, name)
	}
	return string(m[1])
}

// configureCMake configures cmake-kv in a fresh build directory with scry's compilers (env
// added to the environment, extra to cmake's arguments) and checks what CMake found: the
// compiler's ABI (which it detects by linking a probe with -v), the library architecture,
// libpmem under it.
func configureCMake(t *testing.T, scry string, env []string, extra ...string) (src, build string) {
	t.Helper()
	src = filepath.Join(testenv.Root(), "test", "buildsys", "cmake-kv")
	build = t.TempDir()
	out := runIn(t, build, append(compilers(scry), env...), testenv.Tool(t, "cmake"), append([]string{"-S", src, "-B", build}, extra...)...)
	if strings.Contains(out, "ABI info - failed") || !strings.Contains(out, "Detecting CXX compiler ABI info - done") {
		t.Errorf("cmake did not detect the compiler's ABI with scry c++:\n%s", out)
	}
	arch, err := filepath.Glob(filepath.Join(build, "CMakeFiles", "*", "CMakeCXXCompiler.cmake"))
	if err != nil || len(arch) != 1 {
		t.Fatalf("no CMakeCXXCompiler.cmake under %s/CMakeFiles (%v)", build, err)
	}
	data, err := os.ReadFile(arch[0])
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`set\(CMAKE_LIBRARY_ARCHITECTURE "([^"]*)"\)`).FindSubmatch(data); m == nil || "/usr/lib/"+string(m[1]) != multiarch {
		t.Errorf("%s: CMAKE_LIBRARY_ARCHITECTURE is not %s's (%q)", arch[0], multiarch, m)
	}
	if lib := cacheValue(t, filepath.Join(build, "CMakeCache.txt"), "PMEM_LIBRARY"); filepath.Dir(lib) != multiarch {
		t.Errorf("find_library(pmem) found %q, want a library in %s", lib, multiarch)
	}
	return src, build
}

// TestCMake configures and builds cmake-kv with CC="scry cc" CXX="scry c++" and checks kvtool:
// the runtime is linked into it once (libkvstore.so only references it) and `scry check` finds
// the library's bug.
func TestCMake(t *testing.T) {
	scry := testenv.Scry(t)
	src, build := configureCMake(t, scry, nil)
	runIn(t, build, nil, "cmake", "--build", build, "-j", "2")
	if def, _ := runtimeIn(t, filepath.Join(build, "kvtool")); !def {
		t.Errorf("kvtool: scry's runtime is not linked in")
	}
	if def, ref := runtimeIn(t, filepath.Join(build, "libkvstore.so")); def || !ref {
		t.Errorf("libkvstore.so: want an instrumented library that references the runtime, not one that holds it (defines %v, references %v)", def, ref)
	}
	checkProgram(t, scry, build, []string{filepath.Join(src, "kvstore.cpp"), filepath.Join(src, "kvtool.cpp")},
		"./kvtool", "kv.pool", "3", "7")
}

// TestCCache builds cmake-kv with ccache as the compiler launcher (`ccache scry c++`, its cache
// in the test's directory) twice, cleaning in between: the second build's objects come from the
// cache, and its program is still instrumented (`scry check` finds the bug).
func TestCCache(t *testing.T) {
	scry := testenv.Scry(t)
	ccache := testenv.Tool(t, "ccache")
	// The cache is the test's, from the configure step on (in case try_compile uses the launcher).
	env := []string{"CCACHE_DIR=" + t.TempDir()}
	src, build := configureCMake(t, scry, env, "-DCMAKE_CXX_COMPILER_LAUNCHER="+ccache)
	runIn(t, build, env, "cmake", "--build", build, "-j", "2")
	runIn(t, build, env, "cmake", "--build", build, "--target", "clean")
	runIn(t, build, env, "cmake", "--build", build, "-j", "2")
	stats := runIn(t, build, env, ccache, "--print-stats")
	hits := -1
	for _, line := range strings.Split(stats, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "direct_cache_hit" {
			hits, _ = strconv.Atoi(f[1])
		}
	}
	// Two translation units, compiled twice: the second time from the cache.
	if hits != 2 {
		t.Errorf("ccache direct hits: %d, want 2 (the second build's two objects)\n%s", hits, stats)
	}
	checkProgram(t, scry, build, []string{filepath.Join(src, "kvstore.cpp"), filepath.Join(src, "kvtool.cpp")},
		"./kvtool", "kv.pool", "3", "7")
}

// TestAutotools builds autotools-kv from a copy of its sources: autoreconf, ./configure
// CC="scry cc" (its link tests, AC_CHECK_LIB among them, link with the runtime), make and make
// install (libtool relinks the program for its installed place), then checks the installed
// program.
func TestAutotools(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tools(t, "autoreconf", "automake", "libtoolize", "make")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(testenv.Root(), "test", "buildsys", "autotools-kv"))); err != nil {
		t.Fatal(err)
	}
	runIn(t, src, nil, "autoreconf", "-fi")
	prefix := filepath.Join(dir, "inst")
	out := runIn(t, src, nil, "./configure", "--prefix="+prefix, compilers(scry)[0])
	if !strings.Contains(out, "checking for pmem_map_file in -lpmem... yes") {
		t.Errorf("configure did not find libpmem with scry cc:\n%s", out)
	}
	runIn(t, src, nil, "make", "-j", "2")
	runIn(t, src, nil, "make", "install")
	prog := filepath.Join(prefix, "bin", "kvlog")
	if def, _ := runtimeIn(t, prog); !def {
		t.Errorf("%s: scry's runtime is not linked in", prog)
	}
	if def, ref := runtimeIn(t, filepath.Join(prefix, "lib", "libkvlog.so")); def || !ref {
		t.Errorf("libkvlog.so: want an instrumented library that references the runtime, not one that holds it (defines %v, references %v)", def, ref)
	}
	checkProgram(t, scry, dir, []string{filepath.Join(src, "kvlog.c"), filepath.Join(src, "main.c")},
		prog, "kv.pool", "3", "4")
}
