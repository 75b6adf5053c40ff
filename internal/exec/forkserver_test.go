package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestForkServerFallback: a program that cannot be a fork server (a script, a program built
// without scry cc) runs by exec, and the mode says why.
func TestForkServerFallback(t *testing.T) {
	needProg(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "wrap.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+prog+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, program, why string
	}{
		{"script", script, "is not an ELF executable"},
		{"built by cc", prog, "was not built with scry cc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := NewForkServers(Target{Args: []string{tc.program, "exit", "{pool}", "3"}, Timeout: 10 * time.Second}, dir)
			defer fs.Close()
			o := fs.Run(context.Background(), filepath.Join(dir, "pool"), nil, dir)
			if o.Err != nil || o.ExitCode != 3 {
				t.Errorf("outcome %+v", o)
			}
			if m := fs.Mode(); !strings.HasPrefix(m, "runs by exec: ") || !strings.Contains(m, tc.why) {
				t.Errorf("mode %q, want it to say %q", m, tc.why)
			}
		})
	}
}

// TestForkServerCancel: cancelling a run served by a fork server kills it; the server serves
// the next run.
func TestForkServerCancel(t *testing.T) {
	needScryProg(t)
	dir := t.TempDir()
	fs := NewForkServers(Target{Args: []string{scryProg, "hang", "{pool}", "child.pid"}, Timeout: 10 * time.Minute}, t.TempDir())
	defer fs.Close()
	// Twice: the server that served the cancelled run serves the next one.
	for i := 0; i < 2; i++ {
		os.Remove(filepath.Join(dir, "child.pid"))
		o := fs.Run(cancelOnFile(t, filepath.Join(dir, "child.pid")), filepath.Join(dir, "pool"), nil, dir)
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("run %d: cancelled run: %+v", i, o)
		}
		childGone(t, dir, fmt.Sprintf("run %d: the cancelled run's child", i))
	}
	if m := fs.Mode(); m != "runs through fork servers" {
		t.Errorf("mode %q", m)
	}
}
