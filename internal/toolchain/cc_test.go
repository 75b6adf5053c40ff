package toolchain_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// The runtime's registration callback: defined in an executable `scry cc` linked, undefined
// (referenced by the module constructor) in an object or a shared library it compiled.
const runtimeSym = "__scry_register_module_deps"

// symbol reports whether the ELF file at path has sym in its symbol table (or, for a shared
// object, its dynamic one), and whether it defines it there.
func symbol(t *testing.T, path, sym string) (present, defined bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: symbols: %v", path, err)
	}
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name == sym {
			present = true
			defined = defined || s.Section != elf.SHN_UNDEF
		}
	}
	return present, defined
}

// run runs name with args in dir, stdin as its standard input, and returns its standard output
// and error together.
func run(t *testing.T, dir, stdin string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestDropIn runs `scry cc` and `scry c++` as build systems do, on the queries and partial steps
// that must behave as clang's and the link steps that must link the runtime.
func TestDropIn(t *testing.T) {
	scry := testenv.Scry(t)
	const src = "int main(void) { return 0; }\n"
	// made: what the step leaves in the file "out": an executable with the runtime linked in
	// (that runs), an object or a shared library that only references it, or nothing.
	const (
		none = iota
		executable
		object
	)
	tests := []struct {
		name  string
		args  []string // after "cc" (or "c++" when cxx)
		cxx   bool
		stdin string
		made  int
		out   string // a part of the output (standard output and error)
	}{
		{"link", []string{"a.c", "-o", "out"}, false, "", executable, ""},
		{"-v link (CMake's ABI probe)", []string{"-v", "a.c", "-o", "out"}, false, "", executable, "libscry_rt.a"},
		{"-v alone", []string{"-v"}, false, "", none, "clang version"},
		{"--version", []string{"--version"}, false, "", none, "clang version"},
		{"-### prints the commands", []string{"-###", "a.c", "-o", "out"}, false, "", none, "scry-pass.so"},
		{"-E with the plugin", []string{"-E", "a.c"}, false, "", none, "int main(void)"},
		{"-M", []string{"-M", "a.c"}, false, "", none, "a.o: a.c"},
		{"-MD -MF at a link", []string{"-MD", "-MF", "a.d", "a.c", "-o", "out"}, false, "", executable, ""},
		{"-MMD -MP -MT at a compile", []string{"-MMD", "-MP", "-MT", "out", "-MF", "a.d", "-c", "a.c", "-o", "out"}, false, "", object, ""},
		{"-fsyntax-only", []string{"-fsyntax-only", "a.c"}, false, "", none, ""},
		{"-dumpmachine", []string{"-dumpmachine"}, false, "", none, "x86_64"},
		{"-dumpversion", []string{"-dumpversion"}, false, "", none, "."},
		{"-print-file-name", []string{"-print-file-name=libc.so"}, false, "", none, "libc.so"},
		{"--print-search-dirs", []string{"--print-search-dirs"}, false, "", none, "libraries:"},
		{"-x c++ - from standard input", []string{"-x", "c++", "-", "-o", "out"}, true, "int main() { return 0; }\n", executable, ""},
		{"-x c -E - from standard input", []string{"-x", "c", "-E", "-"}, false, "int from_stdin;\n", none, "int from_stdin;"},
		{"compile in a response file", []string{"@compile.rsp"}, false, "", object, ""},
		{"nested response files link", []string{"@link.rsp"}, false, "", executable, ""},
		{"shared library in a response file", []string{"@shared.rsp"}, false, "", object, ""},
		{"shared library with --no-undefined (Meson's default)", []string{"-shared", "-fPIC", "a.c", "-Wl,--no-undefined", "-o", "out"}, false, "", object, ""},
		{"shared library with -z defs and gold", []string{"-fuse-ld=gold", "-shared", "-fPIC", "a.c", "-Wl,-z,defs", "-o", "out"}, false, "", object, ""},
		{"-Wl pass-through", []string{"a.c", "-Wl,-z,now,--build-id=none", "-Xlinker", "-rpath", "-Xlinker", "/opt/x", "-o", "out"}, false, "", executable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{
				"a.c":         src,
				"compile.rsp": "-c 'a.c' -o out\n",
				"link.rsp":    "-O1 @inner.rsp",
				"inner.rsp":   "a.c -o \"out\"",
				"shared.rsp":  "-shared -fPIC a.c -o out",
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := "cc"
			if tt.cxx {
				cmd = "c++"
			}
			out, err := run(t, dir, tt.stdin, nil, scry, append([]string{cmd}, tt.args...)...)
			if err != nil {
				t.Fatalf("scry %s %s: %v\n%s", cmd, strings.Join(tt.args, " "), err, out)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("scry %s %s: output lacks %q:\n%s", cmd, strings.Join(tt.args, " "), tt.out, out)
			}
			made := filepath.Join(dir, "out")
			_, statErr := os.Stat(made)
			switch tt.made {
			case none:
				if statErr == nil {
					t.Errorf("scry %s %s made %s", cmd, strings.Join(tt.args, " "), made)
				}
			case executable:
				if present, defined := symbol(t, made, runtimeSym); !present || !defined {
					t.Errorf("%s: the runtime is not linked in (%s: present %v, defined %v)", made, runtimeSym, present, defined)
				}
				if out, err := run(t, dir, "", nil, made); err != nil {
					t.Errorf("%s: %v\n%s", made, err, out)
				}
			case object:
				if present, defined := symbol(t, made, runtimeSym); !present || defined {
					t.Errorf("%s: want an instrumented object referencing %s, not defining it (present %v, defined %v)", made, runtimeSym, present, defined)
				}
			}
		})
	}
}

// check runs `scry check --format json` on argv in dir (the files *.pool there are PM) and
// returns its findings; exit status 1 (correctness findings) is no error.
func check(t *testing.T, scry, dir string, argv ...string) []testenv.Want {
	t.Helper()
	report := filepath.Join(dir, "report.json")
	args := append([]string{"check", "--format", "json", "-o", report, "--pm", filepath.Join(dir, "*.pool"), "--"}, argv...)
	out, err := run(t, dir, "", nil, scry, args...)
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
	return got
}

// compare fails the test when got differs from the want comments of the sources.
func compare(t *testing.T, got []testenv.Want, sources ...string) {
	t.Helper()
	var want []testenv.Want
	for _, s := range sources {
		ws, err := testenv.Wants(s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ws...)
	}
	if missing, unexpected := testenv.CompareWants(want, got); len(missing)+len(unexpected) > 0 {
		t.Errorf("findings differ from the want comments of %s\nmissing: %v\nunexpected: %v", strings.Join(sources, ", "), missing, unexpected)
	}
}

// TestSharedLibrary builds kvlib.c as a shared library with `scry cc -shared -fPIC` and
// kvmain.c as a program linking it, or dlopen'ing it, with `scry cc`: the runtime is in the
// executable only, the library's references to it resolve in both, and `scry check` finds the
// library's store at its line.
func TestSharedLibrary(t *testing.T) {
	scry := testenv.Scry(t)
	lib, main := testdata(t, "kvlib.c"), testdata(t, "kvmain.c")
	dir := t.TempDir()
	steps := [][]string{
		{"cc", "-O1", "-shared", "-fPIC", "-o", "libkv.so", lib},
		{"cc", "-O1", "-o", "linked", main, "-L.", "-lkv", "-Wl,-rpath," + dir},
		{"cc", "-O1", "-DDLOPEN", "-o", "loader", main, "-ldl"},
	}
	for _, s := range steps {
		if out, err := run(t, dir, "", nil, scry, s...); err != nil {
			t.Fatalf("scry %s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	if present, defined := symbol(t, filepath.Join(dir, "libkv.so"), runtimeSym); !present || defined {
		t.Errorf("libkv.so: want a reference to %s, not the runtime (present %v, defined %v)", runtimeSym, present, defined)
	}
	for _, argv := range [][]string{
		{"./linked", "kv.pool"},
		{"./loader", "kv.pool", filepath.Join(dir, "libkv.so")},
	} {
		t.Run(argv[0], func(t *testing.T) {
			compare(t, check(t, scry, dir, argv...), lib)
		})
	}
}

// TestLTO builds kvmain.c and kvlib.c with -flto and -flto=thin with each clang scry has a
// plugin for, linked by ld.bfd (and by gold): the pass runs at the compile step, the bitcode
// keeps its instrumentation through the link (the linker's LLVM plugin, LLVMgold.so), and
// `scry check` finds the store in kvlib.c at its line though LTO may inline put into main.
func TestLTO(t *testing.T) {
	scry := testenv.Scry(t)
	lib, main := testdata(t, "kvlib.c"), testdata(t, "kvmain.c")
	tests := []struct{ clang, lto, linker string }{
		{"clang-14", "-flto", "bfd"},
		{"clang-14", "-flto=thin", "bfd"},
		{"clang-16", "-flto", "bfd"},
		{"clang-16", "-flto=thin", "bfd"},
		{"clang-16", "-flto", "gold"},
		{"clang-16", "-flto=thin", "gold"},
	}
	for _, tt := range tests {
		testenv.Tool(t, tt.clang)
		t.Run(tt.clang+" "+tt.lto+" "+tt.linker, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := []string{"SCRY_CLANG=" + tt.clang}
			steps := [][]string{
				{"cc", tt.lto, "-O2", "-c", "-o", "kvlib.o", lib},
				{"cc", tt.lto, "-O2", "-c", "-o", "kvmain.o", main},
				{"cc", tt.lto, "-O2", "-fuse-ld=" + tt.linker, "-o", "prog", "kvmain.o", "kvlib.o"},
			}
			for _, s := range steps {
				if out, err := run(t, dir, "", env, scry, s...); err != nil {
					t.Fatalf("SCRY_CLANG=%s scry %s: %v\n%s", tt.clang, strings.Join(s, " "), err, out)
				}
			}
			compare(t, check(t, scry, dir, "./prog", "kv.pool"), lib)
		})
	}
}

// testdata returns the absolute path of name under testdata/.
func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOwnPmemcheckHeader builds translation units of a project that ships its own copy of
// pmemcheck's header (guard __PMEMCHECK_H, as pmem's): scry's pmemcheck.h is searched after the
// project's include directories, so <pmemcheck.h> is the project's copy when the project puts it
// on the path, and it shares the guard, so a unit that includes the project's copy by its path
// and <pmemcheck.h> (scry's) compiles in either order: no enumerator defined twice.
func TestOwnPmemcheckHeader(t *testing.T) {
	scry := testenv.Scry(t)
	if _, err := os.Stat("/usr/include/valgrind/valgrind.h"); err != nil {
		testenv.Missing(t, "Valgrind's valgrind.h (Debian's valgrind package): %v", err)
	}
	const own = `#ifndef __PMEMCHECK_H
#define __PMEMCHECK_H
#include <valgrind/valgrind.h>
#define PROJECT_PMEMCHECK 1
typedef enum {
	VG_USERREQ__PMC_REGISTER_PMEM_MAPPING = VG_USERREQ_TOOL_BASE('P', 'C'),
	VG_USERREQ__PMC_REGISTER_PMEM_FILE,
	VG_USERREQ__PMC_REMOVE_PMEM_MAPPING
} Vg_PMemCheckClientRequest;
#endif
`
	tests := []struct {
		name string
		src  string
		args []string
	}{
		{"the project's copy on the path wins", "#include <pmemcheck.h>\n#ifndef PROJECT_PMEMCHECK\n#error scry's pmemcheck.h was found before the project's\n#endif\n", []string{"-Ivendor"}},
		{"the project's copy, then scry's", "#include \"vendor/pmemcheck.h\"\n#include <pmemcheck.h>\n", nil},
		{"scry's, then the project's copy", "#include <pmemcheck.h>\n#include \"vendor/pmemcheck.h\"\n#ifdef PROJECT_PMEMCHECK\n#error the project's copy was included after scry's\n#endif\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "vendor"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"vendor/pmemcheck.h": own, "a.c": tt.src + "int main(void) { return VG_USERREQ__PMC_REGISTER_PMEM_FILE == 0; }\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"cc", "-c", "a.c", "-o", "a.o"}, tt.args...)
			if out, err := run(t, dir, "", nil, scry, args...); err != nil {
				t.Fatalf("scry %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		})
	}
}
