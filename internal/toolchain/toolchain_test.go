package toolchain

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"a.c", "-o", "a"}, true},
		{[]string{"-c", "a.c"}, false},
		{[]string{"-S", "-emit-llvm", "a.c"}, false},
		{[]string{"-E", "a.c"}, false},
		{[]string{"-shared", "-o", "x.so", "a.o"}, false},
		{[]string{"a.o", "b.o", "-lpmemobj"}, true},
		{[]string{"-print-file-name=libc.so"}, false},
	}
	for _, tt := range tests {
		if got := Links(tt.args); got != tt.want {
			t.Errorf("Links(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestArgs(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"lib/scry/llvm-16/scry-pass.so", "lib/scry/libscry_rt.a"} {
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
	tests := []struct {
		name string
		user []string
		want []string
	}{
		{"compile adds -g", []string{"-c", "a.c"}, []string{"-fplugin=" + so, "-fpass-plugin=" + so, "-Qunused-arguments", inc, "-g", "-c", "a.c", "-U_FORTIFY_SOURCE"}},
		{"keeps user -g", []string{"-g3", "-c", "a.c"}, []string{"-fplugin=" + so, "-fpass-plugin=" + so, "-Qunused-arguments", inc, "-g3", "-c", "a.c", "-U_FORTIFY_SOURCE"}},
		{"link adds runtime", []string{"-g", "a.o", "-o", "a"}, []string{"-fplugin=" + so, "-fpass-plugin=" + so, "-Qunused-arguments", inc, "-g", "a.o", "-o", "a", "-U_FORTIFY_SOURCE", "-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-lpthread", "-ldl"}},
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
