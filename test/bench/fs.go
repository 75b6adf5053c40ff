package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/fs/strace"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/workload"
)

// fsProgram is one program file-system mode is measured on: how to make a fresh workload
// directory for it, its command line, checker and workload.
type fsProgram struct {
	name     string
	args     []string
	checker  string // shell command ("" none)
	workload string // workload file ("" none)
	setup    func(dir string) error
}

// fsPrograms builds the examples (gcc -g) and returns the programs of the file-system figures:
// the examples/fs buggy twins with their checkers and workloads, Debian's git (add + commit,
// git fsck) and sqlite3 (a transaction, integrity_check and the printed count).
func fsPrograms(tmp string) ([]fsProgram, error) {
	var progs []fsProgram
	for _, ex := range []string{"copy", "sort", "kv"} {
		src := filepath.Join("examples", "fs", ex)
		bin := filepath.Join(tmp, ex)
		if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join(src, "buggy.c")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("gcc %s: %v\n%s", ex, err, out)
		}
		p := fsProgram{name: "examples/fs/" + ex, args: []string{bin}}
		if b, err := os.ReadFile(filepath.Join(src, "args")); err == nil {
			p.args = append(p.args, strings.Fields(string(b))...)
		}
		if abs, err := filepath.Abs(filepath.Join(src, "checker.sh")); err == nil {
			if _, err := os.Stat(abs); err == nil {
				p.checker = abs
			}
		}
		if abs, err := filepath.Abs(filepath.Join(src, "workload")); err == nil {
			if _, err := os.Stat(abs); err == nil {
				p.workload = abs
			}
		}
		init := filepath.Join(src, "init")
		p.setup = func(dir string) error {
			if _, err := os.Stat(init); err != nil {
				return nil
			}
			if out, err := exec.Command("cp", "-r", init+"/.", dir).CombinedOutput(); err != nil {
				return fmt.Errorf("cp: %v %s", err, out)
			}
			return nil
		}
		progs = append(progs, p)
	}
	gitCheck := filepath.Join(tmp, "git-check.sh")
	sqlCheck := filepath.Join(tmp, "sqlite-check.sh")
	for path, body := range map[string]string{
		gitCheck: `rm -f .git/*.lock .git/refs/heads/*.lock
git fsck --full >/dev/null 2>&1 || { echo "git fsck failed"; exit 1; }
if [ -f .git/refs/heads/master ]; then git log --oneline >/dev/null 2>&1 || { echo "git log failed"; exit 1; }; fi
`,
		sqlCheck: `ok=$(sqlite3 db 'PRAGMA integrity_check;' 2>&1) || { echo "sqlite3: $ok"; exit 1; }
[ "$ok" = ok ] || { echo "integrity_check: $ok"; exit 1; }
n=$(sqlite3 db 'SELECT count(*) FROM t;') || exit 1
want=$(grep -o 'rows=[0-9]*' "$SCRY_STDOUT" | tail -1 | cut -d= -f2)
[ -z "$want" ] || [ "$n" = "$want" ] || { echo "printed rows=$want, found $n"; exit 1; }
`,
	} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			return nil, err
		}
	}
	progs = append(progs,
		fsProgram{name: "git add + commit", args: []string{"sh", "-c", "git add a.txt && git commit -q -m one"}, checker: gitCheck,
			setup: func(dir string) error {
				for _, a := range [][]string{{"init", "-q", "."}, {"config", "user.email", "b@example.com"}, {"config", "user.name", "b"}} {
					if out, err := exec.Command("git", append([]string{"-C", dir}, a...)...).CombinedOutput(); err != nil {
						return fmt.Errorf("git %v: %v %s", a, err, out)
					}
				}
				return os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
			}},
		fsProgram{name: "sqlite3 transaction", args: []string{"sqlite3", "db", "BEGIN; INSERT INTO t VALUES(2); INSERT INTO t VALUES(3); COMMIT; SELECT 'rows=' || count(*) FROM t;"},
			checker: sqlCheck,
			setup: func(dir string) error {
				out, err := exec.Command("sqlite3", filepath.Join(dir, "db"), "CREATE TABLE t(x); INSERT INTO t VALUES(1);").CombinedOutput()
				if err != nil {
					return fmt.Errorf("sqlite3: %v %s", err, out)
				}
				return nil
			}})
	return progs, nil
}

// fsBench prints file-system mode's figures (docs/performance.md): for each program, the
// recording slowdown under strace against the native run, without and with call stacks (-k),
// medians of runs runs on fresh workload directories (the native run reads its whole workload
// at once; the recording feeds it a line at a time and converts strace's output into the trace,
// which is included); then one `scry fs check` with 2 jobs and the default strategies: crash
// states per second, the time of the first failing state (taken when it was judged), and the
// time to the first finding from the start (recording included).
func fsBench(runs int) error {
	tmp, err := os.MkdirTemp("", "scry-bench-fs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	progs, err := fsPrograms(tmp)
	if err != nil {
		return err
	}
	serial := 0
	fresh := func(p fsProgram) (string, error) {
		serial++
		dir := filepath.Join(tmp, fmt.Sprintf("w%d", serial))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		return dir, p.setup(dir)
	}
	fmt.Printf("file-system mode: workload directories in %s; medians of %d runs; exploration with 2 jobs, default strategies, default model\n", os.TempDir(), runs)
	fmt.Printf("%-22s %9s %9s %9s %7s %7s %8s %8s %9s %9s %9s %s\n", "program", "native", "strace", "strace-k", "x", "x -k", "records", "states", "states/s", "1st fail", "1st find", "findings")
	for _, p := range progs {
		var input []byte
		var wl *workload.Workload
		if p.workload != "" {
			w, err := workload.Read(p.workload)
			if err != nil {
				return err
			}
			wl, input = &w, w.Suffix(-1)
		}
		var nat, plain, stack []time.Duration
		records := 0
		for i := 0; i < runs; i++ {
			dir, err := fresh(p)
			if err != nil {
				return err
			}
			cmd := exec.Command(p.args[0], p.args[1:]...)
			cmd.Dir, cmd.Stdin = dir, bytes.NewReader(input)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", p.name, err, out)
			}
			nat = append(nat, time.Since(start))
			for _, k := range []bool{false, true} {
				dir, err := fresh(p)
				if err != nil {
					return err
				}
				start := time.Now()
				res, err := strace.Record(context.Background(), strace.RecordOptions{Dir: dir, Args: p.args, Stack: k, Workload: wl,
					Stdout: io.Discard, Stderr: io.Discard, Trace: filepath.Join(dir + ".trace")})
				if err != nil {
					return fmt.Errorf("%s: recording: %v", p.name, err)
				}
				if res.Failed() {
					return fmt.Errorf("%s: the recorded program %s", p.name, res)
				}
				if k {
					stack = append(stack, time.Since(start))
					records = res.Records
				} else {
					plain = append(plain, time.Since(start))
				}
			}
		}
		dir, err := fresh(p)
		if err != nil {
			return err
		}
		start := time.Now()
		c := &pipeline.FSCheck{Options: explore.Options{Checker: p.checker, Jobs: 2},
			Dir: dir, Args: p.args, Workload: p.workload, Stdout: io.Discard, Stderr: io.Discard, KeepDir: tmp}
		rep, err := c.Run(context.Background())
		total := time.Since(start)
		if err != nil {
			return fmt.Errorf("%s: scry fs check: %v", p.name, err)
		}
		st := rep.Stats
		firstFind := "-"
		if st.FirstFailureSeconds > 0 {
			// The exploration starts after the recording, the snapshot and the model.
			firstFind = fmt.Sprintf("%.2fs", total.Seconds()-st.ElapsedSeconds+st.FirstFailureSeconds)
		}
		fmt.Printf("%-22s %7.1fms %7.1fms %7.1fms %6.1fx %6.1fx %8d %8d %9.0f %8.2fs %9s %d\n", p.name,
			ms(median(nat)), ms(median(plain)), ms(median(stack)),
			float64(median(plain))/float64(median(nat)), float64(median(stack))/float64(median(nat)), records,
			st.StatesTested, float64(st.StatesTested)/st.ElapsedSeconds, st.FirstFailureSeconds, firstFind, len(rep.Findings))
	}
	return nil
}
