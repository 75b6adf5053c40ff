// Package testenv is what scry's tests share about their environment: where the source tree and
// the build tree are, what a test does when a part of the build or a tool it needs is missing,
// and how a test waits for an event of another process.
//
// # Strictness
//
// A test that needs something it cannot find (build/bin/scry, a pass plugin, the runtime, clang,
// z3, strace...) calls [Missing] or one of the helpers built on it ([Built], [Scry], [Tool]).
// By default that skips the test with the reason. In strict mode it fails the test instead:
// strict mode is on when SCRY_REQUIRE_BUILD=1 or SCRY_EXAMPLES_STRICT is set (as `make test`
// does after building everything and installing Debian's packages), or when CI is set (and not
// "false" or "0"), as CI services do. A test never checks a feature of scry before using it:
// what scry lacks is a failure, not a skip.
//
// # Waiting
//
// Tests never synchronise by sleeping: they wait on an event. A line on a pipe or a channel is
// waited on directly; a condition only observable by looking (a file appears, a process is gone)
// is polled by [WaitFor] or [Poll] until it holds or a deadline passes, the deadline being a
// bound on a failure, never an assertion about how fast something is.
package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Strict reports whether a missing part of the build or a missing tool fails a test instead of
// skipping it: SCRY_REQUIRE_BUILD=1, SCRY_EXAMPLES_STRICT non-empty, or CI non-empty and neither
// "false" nor "0".
func Strict() bool {
	if os.Getenv("SCRY_REQUIRE_BUILD") == "1" || os.Getenv("SCRY_EXAMPLES_STRICT") != "" {
		return true
	}
	switch os.Getenv("CI") {
	case "", "false", "0":
		return false
	}
	return true
}

// Missing ends the test because something it needs is missing: with t.Skipf normally, with
// t.Fatalf in strict mode ([Strict]). The message says what is missing and how to get it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Strict() {
		t.Fatalf("%s (strict mode: SCRY_REQUIRE_BUILD, SCRY_EXAMPLES_STRICT or CI is set)", fmt.Sprintf(format, args...))
	}
	t.Skipf(format, args...)
}

// Root returns the root of the source tree: the nearest directory above the test's working
// directory (its package's directory) that holds go.mod.
func Root() string {
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	// Not below the module (a test binary run elsewhere): this file's tree.
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// BuildDir returns the build tree `make` writes: $BUILD, else build/ under [Root].
func BuildDir() string {
	if b := os.Getenv("BUILD"); b != "" {
		return b
	}
	return filepath.Join(Root(), "build")
}

// Built returns the path of rel under [BuildDir] (e.g. "bin/scry", "mapcli/mapcli"), ending the
// test through [Missing] when it does not exist.
func Built(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(BuildDir(), rel)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s is not built (run make): %v", p, err)
	}
	return p
}

// Scry returns the scry binary the tests run: $SCRY_BIN, else bin/scry under [BuildDir],
// ending the test through [Missing] when it does not exist.
func Scry(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SCRY_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			Missing(t, "SCRY_BIN=%s: %v", p, err)
		}
		return p
	}
	return Built(t, filepath.Join("bin", "scry"))
}

// Tool returns the path of the program name found in $PATH, ending the test through [Missing]
// when there is none (Debian's packages are installed by `make deps`).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed (make deps installs Debian's packages): %v", name, err)
	}
	return p
}

// Tools ends the test through [Missing] when one of the programs names is not in $PATH.
func Tools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		Tool(t, n)
	}
}

// ProcessGone reports whether process pid has exited: it no longer exists, or it is a zombie
// (exited, not yet reaped by its parent). A process sent SIGKILL is gone a little later, so
// callers wait for it with [WaitFor] or [Poll].
func ProcessGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// Poll calls cond until it returns true, and reports true, or until timeout has passed, and
// reports false (after one last call). The interval between calls grows from 1 ms to 50 ms.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// WaitFor polls cond ([Poll]) until it holds, failing the test (t.Fatalf, naming what) when it
// still does not after timeout. The timeout bounds a failure: it is no assertion about speed,
// so it is generous.
func WaitFor(t testing.TB, cond func() bool, timeout time.Duration, what string) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("waited %v for %s", timeout, what)
	}
}
