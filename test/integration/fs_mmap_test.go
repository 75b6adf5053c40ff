package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// fsReport is the part of a `scry fs check --format json` report these tests compare.
type fsReport struct {
	Findings []finding `json:"findings"`
	Warnings []string  `json:"warnings"`
}

// fsCheckJSON runs `scry fs check --format json` with env added and returns its exit status,
// report (none for exit status 2) and what it printed.
func fsCheckJSON(t *testing.T, env []string, dir, checker string, args ...string) (int, fsReport, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rep.json")
	cmd := exec.Command(testenv.Scry(t), append([]string{"fs", "check", "--dir", dir, "--checker", checker, "-j", "2",
		"--format", "json", "-o", out, "--"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("scry fs check: %v", err)
	}
	var rep fsReport
	if code != 2 {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("scry fs check exited %d without a report: %v\n%s", code, err, b)
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatalf("report: %v", err)
		}
	}
	return code, rep, string(b)
}

// markedLine returns the 1-based line of src holding the comment "// L:name".
func markedLine(t *testing.T, src, name string) int {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(l, "// L:"+name) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line marked L:%s", src, name)
	return 0
}

// TestFSMappedWrites runs `scry fs check` on testdata/fsmmap/mapped.c, which stores a record
// through a MAP_SHARED mapping and makes it visible in one of several ways before printing
// "stored", with a checker that wants the record once "stored" is printed (docs/fs-mode.md,
// "Recording": the mapping shim). msync(MS_SYNC), fsync, fdatasync, a forked child's msync and
// an msync after mremap make the record durable: no finding. msync(MS_ASYNC) and munmap only
// issue the write (msync(2)): a durability violation at that call. Without any of them the
// write is placed at the process's exit, after the output: the crash between the output and
// the exit is an atomicity violation of the two (the shim cannot see the store earlier). Every
// run's model must rebuild the directory it left (no warning). A static binary (no shim) keeps
// the warning.
func TestFSMappedWrites(t *testing.T) {
	testenv.Tools(t, "strace", "gcc")
	testenv.Built(t, "lib/scry/libscry_fsshim.so")
	src, _ := filepath.Abs("testdata/fsmmap/mapped.c")
	bin := filepath.Join(t.TempDir(), "mapped")
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	checker := writeScript(t, "check.sh", `grep -q stored "$SCRY_STDOUT" || exit 0
grep -q record db && exit 0
echo "record missing after stored"
exit 1
`)
	for _, tc := range []struct {
		mode, want, at string // the finding's kind and marked line, or none
	}{
		{"sync", "", ""},
		{"fsync", "", ""},
		{"fdatasync", "", ""},
		{"fork", "", ""},
		{"mremap", "", ""},
		{"async", "fs-durability-violation", "async"},
		{"munmap", "fs-durability-violation", "munmap"},
		{"exit", "fs-atomicity-violation", "output"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "db"), make([]byte, 8192), 0o644); err != nil {
				t.Fatal(err)
			}
			code, rep, _ := fsCheckJSON(t, nil, dir, checker, bin, tc.mode)
			if len(rep.Warnings) > 0 {
				t.Errorf("warnings: %q", rep.Warnings)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Kind+" "+filepath.Base(f.Location.File)+":"+strconv.Itoa(f.Location.Line))
			}
			wantCode, want := 0, ""
			if tc.want != "" {
				wantCode, want = 1, tc.want+" mapped.c:"+strconv.Itoa(markedLine(t, src, tc.at))
			}
			if code != wantCode || strings.Join(got, "\n") != want {
				t.Errorf("exit %d, findings %q; want exit %d, findings %q", code, got, wantCode, want)
			}
		})
	}
	// A static binary cannot load the shim: its stores stay invisible, the warning says so, and
	// the checker rejects the model of the finished run (exit 2).
	t.Run("static", func(t *testing.T) {
		static := filepath.Join(t.TempDir(), "mapped-static")
		if out, err := exec.Command("gcc", "-static", "-g", "-O0", "-o", static, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc -static: %v\n%s", err, out)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "db"), make([]byte, 8192), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, out := fsCheckJSON(t, nil, dir, checker, static, "sync")
		if code != 2 || !strings.Contains(out, "mapped shared and writable by a process without scry's mapping shim") {
			t.Errorf("exit %d, want 2 and the warning about the shim:\n%s", code, out)
		}
	})
}

// TestFSGDBMMapped runs `scry fs check` on Debian's GDBM 1.23 in its default mode, which
// updates the database through a shared writable mapping and makes it durable with msync
// (gdbm_sync): testdata/fsmmap/gdbm_store.c stores four keys, each followed by gdbm_sync and
// "stored kI"; the checker (gdbm_check.c) opens the crash directory's database with GDBM, wants
// every acknowledged key with its value and stores one more key. With the mapping shim the
// model rebuilds the run's database and no crash state fails: every key is msynced before it
// is acknowledged. Without it (an install without the shim) the stores are invisible and the
// check is refused (exit 2: the checker rejects the model of the finished run).
func TestFSGDBMMapped(t *testing.T) {
	testenv.Tools(t, "strace", "gcc")
	testenv.Built(t, "lib/scry/libscry_fsshim.so")
	if _, err := os.Stat("/usr/include/gdbm.h"); err != nil {
		testenv.Missing(t, "libgdbm-dev is not installed (make deps): %v", err)
	}
	tmp := t.TempDir()
	var bins []string
	for _, name := range []string{"gdbm_store", "gdbm_check"} {
		bin := filepath.Join(tmp, name)
		if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join("testdata/fsmmap", name+".c"), "-lgdbm").CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", name, err, out)
		}
		bins = append(bins, bin)
	}
	checker := writeScript(t, "check.sh", "exec "+bins[1]+` "$SCRY_STDOUT" probe`+"\n")
	noShim := t.TempDir()
	if err := os.MkdirAll(filepath.Join(noShim, "lib", "scry"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      []string
		wantCode int
	}{
		{"shim", nil, 0},
		{"no-shim", []string{"SCRY_HOME=" + noShim}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if r := run(t, dir, "", bins[0], "0"); r.code != 0 { // an empty database
				t.Fatalf("gdbm_store 0: %d %s", r.code, r.stderr)
			}
			code, rep, _ := fsCheckJSON(t, tc.env, dir, checker, bins[0], "4")
			if code != tc.wantCode || len(rep.Findings) > 0 || len(rep.Warnings) > 0 {
				t.Errorf("exit %d, findings %v, warnings %q; want exit %d and none", code, rep.Findings, rep.Warnings, tc.wantCode)
			}
		})
	}
}
