package strace

import (
	"bytes"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// interpreterRE matches the names of the language interpreters whose programs are code they
// read, not machine code: python3.11, perl, ruby3.1, node, php8.2, lua5.4, tclsh8.6.
var interpreterRE = regexp.MustCompile(`^(python|pypy|perl|ruby|node|nodejs|php|lua|luajit|tclsh|Rscript)[0-9.]*$`)

// Interpreter returns the interpreter a program runs under when its call stacks would show only
// the interpreter's own C frames, never the lines of the program (a Python, Perl, Ruby,
// JavaScript, PHP, Lua or Tcl script, or such an interpreter named directly), and "" for any
// other program: a compiled one, a shell script (whose children may be compiled programs whose
// stacks matter), or one that cannot be found or read. prog is a path when it holds a slash
// (relative to the current directory), else a name looked up in $PATH. A script's first line is
// `#!INTERP [ARG]`, with `/usr/bin/env [-S] [NAME=VALUE] NAME` resolved to NAME.
//
// Under strace -k such programs are the slow case (Mercurial: 47 frames a call, about 90 times
// its run: docs/performance.md), and the frames are no use to a finding.
func Interpreter(prog string) string {
	if interpreterRE.MatchString(filepath.Base(prog)) {
		return filepath.Base(prog)
	}
	path := prog
	if !strings.Contains(prog, "/") {
		p, err := osexec.LookPath(prog)
		if err != nil {
			return ""
		}
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	return scriptInterpreter(head[:n])
}

// scriptInterpreter returns the interpreter of a script whose first bytes are head when it is
// one interpreterRE names ("" otherwise).
func scriptInterpreter(head []byte) string {
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return ""
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	name := filepath.Base(fields[0])
	if name == "env" {
		rest := fields[1:]
		for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=")) {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return ""
		}
		name = filepath.Base(rest[0])
	}
	if interpreterRE.MatchString(name) {
		return name
	}
	return ""
}
