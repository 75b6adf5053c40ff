package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

// blockTimeout bounds one block's run: a hang is a failure, not a wait for the suite's timeout.
const blockTimeout = 3 * time.Minute

// TestDocs runs the marked blocks of README.md and docs/*.md (package doc) on the build tree.
func TestDocs(t *testing.T) {
	root := testenv.Root()
	build := testenv.BuildDir()
	testenv.Scry(t)
	testenv.Built(t, "mapcli/mapcli")
	testenv.Built(t, "mapcli/mapcli-injected") // docs/pmdk-examples.md; make test builds it
	testenv.Tools(t, "bash", "clang-14")
	build, err := filepath.Abs(build)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	for _, doc := range docs {
		rel, _ := filepath.Rel(root, doc)
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := Parse(string(text))
		if err != nil {
			t.Errorf("%s:%v", rel, err)
			continue
		}
		var run, unmarked []string
		for _, b := range blocks {
			switch {
			case b.Marked && !b.Output:
				run = append(run, fmt.Sprint(b.Line))
			case !b.Marked && b.Shell():
				unmarked = append(unmarked, fmt.Sprint(b.Line))
			}
		}
		t.Logf("%s: %d shell blocks run, %d unmarked (lines %s)", rel, len(run), len(unmarked), strings.Join(unmarked, ", "))
		if len(run) == 0 {
			continue
		}
		t.Run(strings.TrimSuffix(rel, ".md"), func(t *testing.T) {
			runDoc(t, rel, blocks, root, build)
		})
	}
}

// runDoc runs the marked blocks of one document in order in a fresh scratch directory.
func runDoc(t *testing.T, rel string, blocks []Block, root, build string) {
	scratch := t.TempDir()
	if err := copyTree(root, scratch, build); err != nil {
		t.Fatalf("copying the source tree: %v", err)
	}
	if err := os.Symlink(build, filepath.Join(scratch, "build")); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir() // the runs' $TMPDIR: what scry keeps there is removed with the test
	env := append(os.Environ(), "PATH="+filepath.Join(build, "bin")+":"+os.Getenv("PATH"), "TMPDIR="+tmp)
	var last string // the output of the last block run
	for _, b := range blocks {
		if !b.Marked {
			continue
		}
		if b.Output {
			if msg, i := Match(b.Lines, last); msg != "" {
				t.Errorf("%s:%d: the output the doc shows is not what the block before printed: %s\n--- output:\n%s", rel, b.Line+1+i, msg, tail(last))
			}
			continue
		}
		start := time.Now()
		out, err := runBlock(b, filepath.Join(scratch, b.Dir), env)
		last = out
		t.Logf("%s:%d: ran in %.1fs", rel, b.Line, time.Since(start).Seconds())
		if err != nil {
			t.Fatalf("%s:%d: block failed: %v\n--- block:\n%s\n--- output:\n%s", rel, b.Line, err, strings.Join(b.Lines, "\n"), tail(out))
		}
	}
}

// tail returns the end of a block's output, at most 32 KiB of it: enough to show what failed
// without flooding the log with a long report.
func tail(out string) string {
	const max = 32 << 10
	if len(out) <= max {
		return out
	}
	return fmt.Sprintf("[%d bytes left out]\n%s", len(out)-max, out[len(out)-max:])
}

// runBlock runs b's script with bash -euo pipefail in dir and returns its merged output.
func runBlock(b Block, dir string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", Script(b, b.Line+1), "doctest")
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", blockTimeout, err)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		err = fmt.Errorf("exit status %d", ee.ExitCode())
	}
	return out.String(), err
}

// copyTree copies the source tree at root into dst: regular files, directories and symbolic
// links, without .git, root's build/ and the build tree skip.
func copyTree(root, dst, skip string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" { // a directory, or in a git worktree a file naming one
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && (rel == "build" || p == skip) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case rel == ".":
			return nil
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil // sockets, devices: not part of a checkout
	})
}
