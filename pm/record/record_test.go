package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.trace")
	tests := []struct {
		name    string
		args    []string
		wantErr error
		exit    int
		sig     syscall.Signal
	}{
		{"no program", nil, nil, 0, 0},
		{"missing program", []string{filepath.Join(dir, "nope")}, nil, 0, 0},
		{"uninstrumented program", []string{"true"}, ErrNoTrace, 0, 0},
		{"failing uninstrumented program", []string{"false"}, ErrNoTrace, 1, 0},
		{"killed program", []string{"sh", "-c", "kill -SEGV $$"}, ErrNoTrace, -1, syscall.SIGSEGV},
	}
	for _, tt := range tests {
		res, err := Run(context.Background(), Options{Trace: tr, Args: tt.args})
		if err == nil {
			t.Fatalf("%s: want an error", tt.name)
		}
		if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.wantErr)
		}
		if res != nil && (res.ExitCode != tt.exit || res.Signal != tt.sig) {
			t.Errorf("%s: result %v, want exit %d signal %v", tt.name, res, tt.exit, tt.sig)
		}
	}
}

func TestRunPassesTraceEnv(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.trace")
	// A stand-in for an instrumented program: it writes the file named by SCRY_TRACE.
	res, err := Run(context.Background(), Options{Trace: tr, PMGlobs: []string{"/pm/*"},
		Args: []string{"sh", "-c", `printf '%s|%s|%s' "$SCRY_PM_GLOBS" "$PMEM_IS_PMEM_FORCE" x > "$SCRY_TRACE"`}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("result %v", res)
	}
	got, _ := os.ReadFile(tr)
	if string(got) != "/pm/*|1|x" {
		t.Errorf("environment seen by the program: %q", got)
	}
}
