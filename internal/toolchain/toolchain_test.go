package toolchain

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"a.c", "-o", "a"}, true},
		{[]string{"a.o", "b.o", "-lpmemobj"}, true},
		{[]string{"-c", "a.c"}, false},
		{[]string{"--compile", "a.c"}, false},
		{[]string{"-S", "-emit-llvm", "a.c"}, false},
		{[]string{"-E", "a.c"}, false},
		{[]string{"-M", "a.c"}, false},
		{[]string{"-MM", "a.c"}, false},
		{[]string{"-fsyntax-only", "a.c"}, false},
		{[]string{"-shared", "-fPIC", "-o", "libx.so", "a.o"}, false},
		{[]string{"-r", "-o", "all.o", "a.o", "b.o"}, false},
		// -v and -### print the commands: the link is the same.
		{[]string{"-v", "a.c", "-o", "a"}, true},
		{[]string{"-v", "-o", "cmTC_1", "CMakeCCompilerABI.c.o"}, true},
		{[]string{"-###", "a.c", "-o", "a"}, true},
		// ... and with no input, clang only prints its version or commands.
		{[]string{"-v"}, false},
		{[]string{"-###"}, false},
		{[]string{"--version"}, false},
		{[]string{"--version", "a.c"}, false},
		{[]string{"-dumpmachine"}, false},
		{[]string{"-dumpversion"}, false},
		{[]string{"-print-file-name=libc.so"}, false},
		{[]string{"--print-search-dirs"}, false},
		{[]string{"-print-prog-name=ld", "a.c"}, false},
		{[]string{"--help"}, false},
		// Dependency files are side outputs of a compile or a link.
		{[]string{"-MD", "-MF", "a.d", "a.c", "-o", "a"}, true},
		{[]string{"-MMD", "-MP", "-MT", "a", "-MF", "a.d", "a.c", "-o", "a"}, true},
		{[]string{"-MD", "-c", "a.c"}, false},
		// Option values are no inputs.
		{[]string{"-o", "a"}, false},
		{[]string{"-I", "inc", "-D", "X", "-x", "c"}, false},
		{[]string{"-Xlinker", "--version"}, false},
		{[]string{"-Wl,--version"}, false},
		{[]string{"-mllvm", "-scry-stats", "-o", "a"}, false},
		// Standard input and -x.
		{[]string{"-x", "c++", "-", "-o", "a"}, true},
		{[]string{"-xc", "-", "-c", "-o", "a.o"}, false},
		{[]string{"-x", "c++", "-E", "-"}, false},
		{[]string{"-l", "m", "-o", "a"}, true},
		// Linker pass-throughs are no link decisions.
		{[]string{"a.o", "-Wl,-shared"}, true},
		{[]string{"-flto", "a.o", "b.o", "-o", "a"}, true},
		{[]string{"-flto=thin", "-c", "a.c"}, false},
		{[]string{}, false},
	}
	for _, tt := range tests {
		if got := Links(tt.args); got != tt.want {
			t.Errorf("Links(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestTokenizeGNU(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"  -c\ta.c\n-o a.o\r\n", []string{"-c", "a.c", "-o", "a.o"}},
		{`-DX="a b" 'c d' e\ f`, []string{"-DX=a b", "c d", "e f"}},
		{`"a\"b" 'c\'d'`, []string{`a"b`, `c'd`}},
		{`x"" "" y`, []string{"x", "y"}},
		{`a"b c"d`, []string{"ab cd"}},
		{`"unterminated`, []string{"unterminated"}},
		{`trailing\`, []string{`trailing\`}},
	}
	for _, tt := range tests {
		if got := tokenizeGNU(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("tokenizeGNU(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestExpandResponseFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"compile.rsp": "-c 'my file.c' -o out.o\n",
		"outer.rsp":   "-O2 @sub/inner.rsp -g",
		// Nested files are relative to the working directory, as clang reads them.
		"sub/inner.rsp": "@shared.rsp a.o",
		"shared.rsp":    "-shared -fPIC",
		"self.rsp":      "-c @self.rsp",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args  []string
		want  []string
		links bool
		err   bool
	}{
		{[]string{"a.c", "-o", "a"}, []string{"a.c", "-o", "a"}, true, false},
		{[]string{"@compile.rsp"}, []string{"-c", "my file.c", "-o", "out.o"}, false, false},
		{[]string{"-o", "libx.so", "@outer.rsp"}, []string{"-o", "libx.so", "-O2", "-shared", "-fPIC", "a.o", "-g"}, false, false},
		// An unreadable @file is an input, as clang takes it.
		{[]string{"@missing.rsp", "-o", "a"}, []string{"@missing.rsp", "-o", "a"}, true, false},
		{[]string{"@"}, []string{"@"}, true, false},
		{[]string{"@self.rsp"}, nil, false, true},
	}
	for _, tt := range tests {
		got, err := ExpandResponseFiles(tt.args)
		if (err != nil) != tt.err {
			t.Errorf("ExpandResponseFiles(%q): error %v, want error %v", tt.args, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ExpandResponseFiles(%q) = %q, want %q", tt.args, got, tt.want)
		}
		if Links(got) != tt.links {
			t.Errorf("Links(ExpandResponseFiles(%q)) = %v, want %v", tt.args, !tt.links, tt.links)
		}
	}
}

func TestArgs(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"lib/scry/llvm-16/scry-pass.so", "lib/scry/libscry_rt.a", "lib/scry/scry_rt.dynlist"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := Install{Root: root}
	c := Compiler{Path: "clang-16", Major: 16}
	so := filepath.Join(root, "lib/scry/llvm-16/scry-pass.so")
	inc := "-I" + filepath.Join(root, "include/scry")
	rt := filepath.Join(root, "lib/scry/libscry_rt.a")
	dl := "-Wl,--dynamic-list=" + filepath.Join(root, "lib/scry/scry_rt.dynlist")
	if err := os.WriteFile(filepath.Join(root, "link.rsp"), []byte("-g a.o -o a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lib.rsp"), []byte("-g -shared a.o -o liba.so"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	vh := filepath.Join(root, "valgrind.h")
	if err := os.WriteFile(vh, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(old string) { valgrindHeader = old }(valgrindHeader)
	valgrindHeader = vh
	vg := in.CompatIncludeDir()
	pmc := []string{"-D" + PmemcheckMacro + "=1", "-idirafter", vg}
	pre := append([]string{"-fplugin=" + so, "-fpass-plugin=" + so, "-Qunused-arguments", inc}, pmc...)
	plain := []string{"-fplugin=" + so, "-fpass-plugin=" + so, "-Qunused-arguments", inc}
	link := []string{"-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", dl, "-lpthread", "-ldl"}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	tests := []struct {
		name string
		user []string
		want []string
	}{
		{"compile adds -g", []string{"-c", "a.c"}, cat(pre, []string{"-g", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"keeps user -g", []string{"-g3", "-c", "a.c"}, cat(pre, []string{"-g3", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"pmemcheck macro the user's", []string{"-D" + PmemcheckMacro + "=0", "-c", "a.c"}, cat(plain, []string{"-idirafter", vg, "-g", "-D" + PmemcheckMacro + "=0", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"pmemcheck macro undefined", []string{"-U", PmemcheckMacro, "-c", "a.c"}, cat(plain, []string{"-idirafter", vg, "-g", "-U", PmemcheckMacro, "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"another macro", []string{"-D", PmemcheckMacro + "X", "-c", "a.c"}, cat(pre, []string{"-g", "-D", PmemcheckMacro + "X", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"link adds runtime", []string{"-g", "a.o", "-o", "a"}, cat(pre, []string{"-g", "a.o", "-o", "a", "-U_FORTIFY_SOURCE"}, link)},
		{"-v link adds runtime", []string{"-v", "a.c", "-o", "a"}, cat(pre, []string{"-g", "-v", "a.c", "-o", "a", "-U_FORTIFY_SOURCE"}, link)},
		{"-v alone", []string{"-v"}, cat(pre, []string{"-g", "-v", "-U_FORTIFY_SOURCE"})},
		{"shared library", []string{"-shared", "-fPIC", "a.c", "-o", "liba.so"}, cat(pre, []string{"-g", "-shared", "-fPIC", "a.c", "-o", "liba.so", "-U_FORTIFY_SOURCE"})},
		{"-x before the runtime", []string{"-x", "c++", "-", "-o", "a"}, cat(pre, []string{"-g", "-x", "c++", "-", "-o", "a", "-U_FORTIFY_SOURCE", "-x", "none"}, link)},
		{"-x none already", []string{"-xc", "a", "-x", "none", "b.o", "-o", "a"}, cat(pre, []string{"-g", "-xc", "a", "-x", "none", "b.o", "-o", "a", "-U_FORTIFY_SOURCE"}, link)},
		{"response file passed on, read", []string{"@link.rsp"}, cat(pre, []string{"@link.rsp", "-U_FORTIFY_SOURCE"}, link)},
		{"response file of a library", []string{"@lib.rsp"}, cat(pre, []string{"@lib.rsp", "-U_FORTIFY_SOURCE"})},
		{"-gz asks for no debug information", []string{"-gz", "-gsplit-dwarf", "-c", "a.c"}, cat(pre, []string{"-g", "-gz", "-gsplit-dwarf", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"-gline-tables-only does", []string{"-gline-tables-only", "-c", "a.c"}, cat(pre, []string{"-gline-tables-only", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"-g0 is kept", []string{"-g0", "-c", "a.c"}, cat(pre, []string{"-g0", "-c", "a.c", "-U_FORTIFY_SOURCE"})},
		{"shared library with --no-undefined", []string{"-shared", "a.o", "-Wl,-O1,--no-undefined", "-o", "liba.so"}, cat(pre, []string{"-g", "-shared", "a.o", "-Wl,-O1,--no-undefined", "-o", "liba.so", "-U_FORTIFY_SOURCE", "-Wl,--unresolved-symbols=ignore-in-object-files"})},
		{"shared library with -Xlinker -z defs", []string{"-shared", "a.o", "-Xlinker", "-z", "-Xlinker", "defs", "-o", "liba.so"}, cat(pre, []string{"-g", "-shared", "a.o", "-Xlinker", "-z", "-Xlinker", "defs", "-o", "liba.so", "-U_FORTIFY_SOURCE", "-Wl,--unresolved-symbols=ignore-in-object-files"})},
		{"shared library with -z defs", []string{"-shared", "a.o", "-z", "defs", "-o", "liba.so"}, cat(pre, []string{"-g", "-shared", "a.o", "-z", "defs", "-o", "liba.so", "-U_FORTIFY_SOURCE", "-Wl,--unresolved-symbols=ignore-in-object-files"})},
		{"shared library, -z defs undone", []string{"-shared", "a.o", "-Wl,-zdefs", "-Wl,-z,undefs", "-o", "liba.so"}, cat(pre, []string{"-g", "-shared", "a.o", "-Wl,-zdefs", "-Wl,-z,undefs", "-o", "liba.so", "-U_FORTIFY_SOURCE"})},
		{"executable with --no-undefined", []string{"a.o", "-Wl,--no-undefined", "-o", "a"}, cat(pre, []string{"-g", "a.o", "-Wl,--no-undefined", "-o", "a", "-U_FORTIFY_SOURCE"}, link)},
		{"linker pass-throughs unchanged", []string{"a.o", "-Wl,-rpath,$ORIGIN/../lib,--as-needed", "-Xlinker", "-z", "-Xlinker", "now", "-o", "a"}, cat(pre, []string{"-g", "a.o", "-Wl,-rpath,$ORIGIN/../lib,--as-needed", "-Xlinker", "-z", "-Xlinker", "now", "-o", "a", "-U_FORTIFY_SOURCE"}, link)},
	}
	for _, tt := range tests {
		got, err := Args(in, c, tt.user)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	if _, err := Args(in, Compiler{Path: "clang-14", Major: 14}, []string{"-c", "a.c"}); err == nil {
		t.Error("Args with no LLVM 14 plugin: want an error")
	}
}

// TestPmemcheckArgsWithoutValgrind: without Valgrind's valgrind.h the annotations could not
// compile, so scry cc neither defines the macro nor adds the fallback directory.
func TestPmemcheckArgsWithoutValgrind(t *testing.T) {
	defer func(old string) { valgrindHeader = old }(valgrindHeader)
	valgrindHeader = filepath.Join(t.TempDir(), "absent", "valgrind.h")
	if got := pmemcheckArgs(Install{Root: "/opt/scry"}, []string{"-c", "a.c"}); got != nil {
		t.Errorf("pmemcheckArgs = %q, want nothing", got)
	}
}

func TestTargetArch(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-O2", "x.c"}, ""},
		{[]string{"--target=aarch64-linux-gnu", "x.c"}, "aarch64"},
		{[]string{"-target", "arm64-apple-macos", "x.c"}, "aarch64"},
		{[]string{"--target", "aarch64-linux-gnu"}, "aarch64"},
		{[]string{"--target=aarch64-linux-gnu", "--target=x86_64-linux-gnu"}, ""},
		{[]string{"--target=riscv64-linux-gnu"}, ""},
		{[]string{"-target"}, ""},
	}
	for _, tt := range tests {
		if got := TargetArch(tt.args); got != tt.want {
			t.Errorf("TargetArch(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
