package strace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScriptInterpreter: the interpreter of a script's #! line, through /usr/bin/env too; shell
// scripts and binaries have none.
func TestScriptInterpreter(t *testing.T) {
	for _, tc := range []struct{ head, want string }{
		{"#!/usr/bin/python3\nimport sys\n", "python3"},
		{"#! /usr/bin/python3.11 -E\n", "python3.11"},
		{"#!/usr/bin/env python3\n", "python3"},
		{"#!/usr/bin/env -S perl -w\n", "perl"},
		{"#!/usr/bin/env LANG=C ruby\n", "ruby"},
		{"#!/usr/bin/node", "node"},
		{"#!/bin/sh\nexec ./prog\n", ""},
		{"#!/bin/bash\n", ""},
		{"#!/usr/bin/env\n", ""},
		{"#!\n", ""},
		{"\x7fELF\x02\x01\x01", ""},
		{"", ""},
	} {
		if got := scriptInterpreter([]byte(tc.head)); got != tc.want {
			t.Errorf("scriptInterpreter(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

// TestInterpreter: a program found by path or in $PATH, an interpreter named directly, and
// programs that are not found.
func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env python3\nprint(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte("#!/bin/sh\n./prog\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, tc := range []struct{ prog, want string }{
		{script, "python3"},
		{"tool", "python3"},
		{sh, ""},
		{"python3", "python3"},
		{"/usr/bin/perl", "perl"},
		{"sh", ""},
		{filepath.Join(dir, "absent"), ""},
		{"no-such-program-here", ""},
	} {
		if got := Interpreter(tc.prog); got != tc.want {
			t.Errorf("Interpreter(%q) = %q, want %q", tc.prog, got, tc.want)
		}
	}
}
