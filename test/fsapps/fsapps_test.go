// Package fsapps is the corpus of real applications for file-system mode (docs/fs-mode.md, "Real
// applications"), in the spirit of ALICE's study (Pillai et al., OSDI'14, §5, Table 3): Debian's
// LevelDB, LMDB, GDBM, SQLite, git and Mercurial, each driven by a small workload written here
// that prints every operation the application acknowledged, and judged by a checker that opens
// the recovered store with the application itself and verifies what was acknowledged
// ($SCRY_STDOUT). Each application's directory holds its driver, checker and set-up, with a
// header comment saying what they do.
//
// TestFSApps runs `scry fs check --apm ext4-ordered` on each and compares the findings with the
// expectations written below as data: every finding must be expected (kind and the system calls
// involved), every expected finding must be reported, and the report must have no warning. An
// expectation says why the finding is there: a vulnerability ALICE reported, or a real one it
// did not (docs/fs-mode.md triages each).
package fsapps

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// expect is a finding the corpus expects: its kind, and regular expressions over the two calls of
// one of its dynamic vulnerabilities (report.FSVulnerability's CallA and CallB: the system call,
// the logical operation with its file, and where it was issued; "" matches anything). n is how many
// findings (static vulnerabilities: clusters of call stacks) it matches.
type expect struct {
	kind string
	a, b string
	n    int
	// why is the triage: "ALICE: ..." (a vulnerability of the application ALICE reported) or
	// "real: ..." (one ALICE did not report).
	why string
}

// app is one application of the corpus. Programs and files named in build, setup, prog and
// checker by a path starting with "@/" are in the test's build directory, "./" under
// test/fsapps.
type app struct {
	name string
	// tools are the programs it needs in $PATH, headers the development headers (Debian's
	// -dev packages: DEBIAN_PACKAGES in the Makefile).
	tools   []string
	headers []string
	// build compiles the driver and the checker: each entry is a command line (gcc or g++).
	build [][]string
	// setup builds the initial state in the (empty) workload directory; prog is the recorded
	// workload, checker the command judging each crash directory.
	setup   []string
	prog    []string
	checker string
	want    []expect
}

var apps = []app{
	{
		name:    "leveldb",
		tools:   []string{"g++"},
		headers: []string{"leveldb/db.h"},
		build: [][]string{
			{"g++", "-g", "-O1", "-o", "@/driver", "./leveldb/driver.cc", "-lleveldb"},
			{"g++", "-g", "-O1", "-o", "@/checker", "./leveldb/checker.cc", "-lleveldb"},
		},
		setup: []string{"@/driver", "init"}, prog: []string{"@/driver", "run"}, checker: "@/checker",
		// ALICE's LevelDB vulnerabilities that remain in 1.23 need reordered directory
		// operations (the old MANIFEST unlinked before the rename of CURRENT persists): ext4
		// keeps them in order; the default model finds it (docs/fs-mode.md).
	},
	{
		name:    "lmdb",
		tools:   []string{"gcc"},
		headers: []string{"lmdb.h"},
		build: [][]string{
			{"gcc", "-g", "-O1", "-o", "@/driver", "./lmdb/driver.c", "-llmdb"},
			{"gcc", "-g", "-O1", "-o", "@/checker", "./lmdb/checker.c", "-llmdb"},
		},
		setup: []string{"sh", "-c", "mkdir db && exec \"$0\" init", "@/driver"}, prog: []string{"@/driver", "run"}, checker: "@/checker",
		// ALICE's one LMDB vulnerability, the meta page's overwrite torn inside a sector, is
		// ALICE's default model's alone (ext4 writes a 4 KiB block whole); docs/fs-mode.md.
	},
	{
		name:    "gdbm-nommap",
		tools:   []string{"gcc"},
		headers: []string{"gdbm.h"},
		build: [][]string{
			{"gcc", "-g", "-O1", "-o", "@/driver", "./gdbm/driver.c", "-lgdbm"},
			{"gcc", "-g", "-O1", "-o", "@/checker", "./gdbm/checker.c", "-lgdbm"},
		},
		setup: []string{"@/driver", "init", "nommap"}, prog: []string{"@/driver", "run", "nommap"}, checker: "@/checker",
		want: []expect{{
			kind: "fs-ordering-violation", a: `write\("db\.gdbm", offset=\d+, count=(2|200)\) at .*_gdbm_full_write`, b: `write\("db\.gdbm", offset=8192, count=4096\)`, n: 2,
			why: "ALICE: GDBM writes a new record (its key, then its data) and then the bucket that points to it, with no sync between: ext4 may write the bucket's block back before the record's (data=ordered does not order overwrites), and the bucket then points to a record that is not there (malformed bucket entry, wrong value)",
		}},
	},
	{
		name:    "gdbm-mmap",
		tools:   []string{"gcc"},
		headers: []string{"gdbm.h"},
		build: [][]string{
			{"gcc", "-g", "-O1", "-o", "@/driver", "./gdbm/driver.c", "-lgdbm"},
			{"gcc", "-g", "-O1", "-o", "@/checker", "./gdbm/checker.c", "-lgdbm"},
		},
		setup: []string{"@/driver", "init"}, prog: []string{"@/driver", "run"}, checker: "@/checker",
		want: []expect{{
			kind: "fs-atomicity-violation", a: `write\("db\.gdbm", offset=8192, count=8192\) at .*_gdbm_mapped_sync`, n: 1,
			why: "ALICE: the same update as without mmap, through the mapping: gdbm_sync's msync writes the bucket's page and the record's page back, each a block of its own on ext4, and a crash between them leaves the bucket pointing to a record that is not there (malformed bucket entry)",
		}},
	},
	{
		name:  "sqlite-rollback",
		tools: []string{"sqlite3"},
		setup: []string{"sh", "./sqlite/setup.sh", "delete"}, prog: []string{"./sqlite/driver.sh"}, checker: "./sqlite/check.sh",
		want: []expect{{
			kind: "fs-durability-violation", a: `unlink\("db-journal"\)`, b: `stdout\("ack k\d\\n"\)`, n: 1,
			why: "ALICE: SQLite commits a transaction by unlinking its rollback journal and, with synchronous=FULL, does not sync the directory afterwards (only synchronous=EXTRA does): a crash after `ack kN` can bring the hot journal back, and the next open rolls the acknowledged row back",
		}},
	},
	{
		name:  "sqlite-wal",
		tools: []string{"sqlite3"},
		setup: []string{"sh", "./sqlite/setup.sh", "wal"}, prog: []string{"./sqlite/driver.sh"}, checker: "./sqlite/check.sh",
	},
	{
		name:  "git",
		tools: []string{"git"},
		setup: []string{"sh", "./git/setup.sh"}, prog: []string{"./git/driver.sh"}, checker: "./git/check.sh",
		want: []expect{{
			kind: "fs-ordering-violation", a: `append\("\.git/objects/[0-9a-f]{2}/tmp_obj_\w+", offset=0, count=\d+\)`, b: `link\("\.git/objects/[0-9a-f]{2}/tmp_obj_\w+", "\.git/objects/[0-9a-f]{2}/[0-9a-f]{38}"\)`, n: 3,
			why: "ALICE: git writes each loose object (the blob, the tree, the commit) to a temporary file and links it to its name without fsync (core.fsync leaves loose objects unsynced by default): with delayed allocation the name persists before the data, and `git fsck` finds an empty object",
		}},
	},
	{
		// The slowest: each of its ~670 crash states costs two or three starts of Python.
		name:  "hg",
		tools: []string{"hg"},
		setup: []string{"sh", "./hg/setup.sh"}, prog: []string{"./hg/driver.sh"}, checker: "./hg/check.sh",
		want: []expect{{
			kind: "fs-ordering-violation", a: `append\("\.hg/store/(data/b\.txt|00manifest|00changelog)\.i", `, b: `rename\("\.hg/store/journal", "\.hg/store/undo"\)`, n: 2,
			why: "ALICE: Mercurial closes its transaction by renaming the journal to undo without syncing the revlogs it appended to (it issues no fsync): with delayed allocation the rename persists first, and after a crash there is no journal to roll the half-written revlogs back (`hg verify`: a manifest pointing to a changeset that is not there)",
		}, {
			kind: "fs-ordering-violation", a: `append\("\.hg/store/journal", `, b: `append\("\.hg/store/(00manifest|00changelog)\.i", `, n: 2,
			why: "ALICE: the journal's entry for a revlog (its length before the transaction) is appended, unsynced, before the revlog grows: a crash that keeps the revlog's append and loses the entry leaves `hg recover` nothing to truncate (`hg verify`: a revision pointing to a changeset that is not there)",
		}},
	},
}

// resolve turns a corpus path into an absolute one: "@/x" in bin, "./x" in the application's
// directory src; anything else is returned unchanged (a program in $PATH).
func resolve(p, bin, src string) string {
	switch {
	case strings.HasPrefix(p, "@/"):
		return filepath.Join(bin, p[2:])
	case strings.HasPrefix(p, "./"):
		return filepath.Join(src, p[2:])
	}
	return p
}

func resolveAll(args []string, bin, src string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = resolve(a, bin, src)
	}
	return out
}

// TestFSApps runs each application of the corpus under `scry fs check --apm ext4-ordered` and
// compares its findings with the corpus's expectations (see the package comment).
func TestFSApps(t *testing.T) {
	scry := testenv.Scry(t)
	testenv.Tools(t, "strace")
	root := filepath.Join(testenv.Root(), "test", "fsapps")
	for _, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			testenv.Tools(t, a.tools...)
			for _, h := range a.headers {
				if _, err := os.Stat(filepath.Join("/usr/include", h)); err != nil {
					testenv.Missing(t, "%s is not installed (make deps installs Debian's packages): %v", h, err)
				}
			}
			src := root
			bin := t.TempDir()
			for _, cmd := range a.build {
				args := resolveAll(cmd, bin, src)
				testenv.Tool(t, args[0])
				if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			dir := filepath.Join(t.TempDir(), "w")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			setup := resolveAll(a.setup, bin, src)
			c := exec.Command(setup[0], setup[1:]...)
			c.Dir = dir
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("set-up %s: %v\n%s", strings.Join(setup, " "), err, out)
			}
			rep := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"fs", "check", "--apm", "ext4-ordered", "--dir", dir, "--checker", resolve(a.checker, bin, src),
				"-j", "2", "--timeout", "60s", "--format", "json", "-o", rep, "--"}, resolveAll(a.prog, bin, src)...)
			cmd := exec.Command(scry, args...)
			// Kept snapshots and traces (scry-fs-replay-*) go to the test's directory.
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
				t.Fatalf("scry %s: %v (want exit 0 or 1)\n%s", strings.Join(args, " "), err, tail(out))
			}
			b, err := os.ReadFile(rep)
			if err != nil {
				t.Fatal(err)
			}
			var r report.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%s: %v", rep, err)
			}
			if r.Stats == nil || r.Stats.StatesTested == 0 {
				t.Errorf("no crash state tested: %+v", r.Stats)
			} else {
				t.Logf("%s: %d crash points, %d states, %d failing, %d findings, %.1f s exploring", a.name,
					r.Stats.CrashPoints, r.Stats.StatesTested, r.Stats.Failures, len(r.Findings), r.Stats.ElapsedSeconds)
			}
			for _, w := range r.Warnings {
				t.Errorf("warning: %s", w)
			}
			for _, e := range compare(a.want, r.Findings) {
				t.Error(e)
			}
		})
	}
}

// matches reports whether finding f is one of e's: its kind, and one of its dynamic
// vulnerabilities' calls.
func (e expect) matches(f report.Finding) bool {
	if string(f.Kind) != e.kind || f.FS == nil {
		return false
	}
	ra, rb := regexp.MustCompile(e.a), regexp.MustCompile(e.b)
	for _, d := range f.FS.Dynamic {
		if ra.MatchString(d.CallA) && rb.MatchString(d.CallB) {
			return true
		}
	}
	return false
}

// compare returns what differs between the expected findings and the reported ones: a finding no
// expectation matches, an expectation matched by another number of findings than it says.
func compare(want []expect, got []report.Finding) []string {
	var errs []string
	matched := make([]int, len(want))
	for _, f := range got {
		found := false
		for i, e := range want {
			if e.matches(f) {
				matched[i]++
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, "unexpected finding: "+describe(f))
		}
	}
	for i, e := range want {
		if matched[i] != e.n {
			errs = append(errs, fmt.Sprintf("%d findings %s (%s / %s), want %d: %s", matched[i], e.kind, e.a, e.b, e.n, e.why))
		}
	}
	return errs
}

func describe(f report.Finding) string {
	s := string(f.Kind) + " " + f.Message
	if f.FS != nil {
		for _, d := range f.FS.Dynamic {
			s += "\n\tcall_a " + d.CallA + "\n\tcall_b " + d.CallB
		}
		s += "\n\tchecker: " + f.FS.Checker
	}
	return s
}

// tail returns the last lines of a command's output, for an error message.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
