// Package integration runs scry end to end: it compiles real C programs with `scry cc`, records
// them, verifies and analyses their traces, and feeds scry bad input. It uses the build tree
// made by `make` (build/bin/scry and the native parts), found through internal/testenv: `make
// test` sets SCRY_REQUIRE_BUILD=1, so that a missing build or Debian package fails instead of
// skipping.
package integration

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// result of one command.
type result struct {
	stdout, stderr string
	code           int
}

// run runs a command with optional stdin in dir and returns its output and exit status.
func run(t testing.TB, dir string, stdin string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %s %q: %v", name, args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// compile builds a C source with `scry cc` into dir and returns the binary.
func compile(t testing.TB, dir, src string, extra ...string) string {
	t.Helper()
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	args := append([]string{"cc", "-O1", "-mclflushopt", "-mclwb", "-o", bin, src}, extra...)
	r := run(t, dir, "", testenv.Scry(t), args...)
	if r.code != 0 {
		t.Fatalf("scry cc %s: exit %d\n%s%s", src, r.code, r.stdout, r.stderr)
	}
	return bin
}

// finding is the part of a JSON finding the tests compare.
type finding struct {
	Kind     string `json:"kind"`
	Class    string `json:"class"`
	Message  string `json:"message"`
	Location struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Function string `json:"function"`
	} `json:"location"`
	Count int `json:"count"`
}

// parseFindings decodes `scry ... --format json` output.
func parseFindings(t testing.TB, out string) []finding {
	t.Helper()
	var doc struct {
		Findings []finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("parsing JSON report: %v\n%s", err, out)
	}
	return doc.Findings
}
