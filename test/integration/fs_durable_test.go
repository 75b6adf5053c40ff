package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// everyModel is what a finding legal under every persistence model lists (report.FSCrash.Models).
var everyModel = []string{"default", "ext4-ordered", "ext4-journal"}

// modelWarnings returns the report's warnings that say the model failed to rebuild the run's
// directory (model.Verify) or could not model a call.
func modelWarnings(rep *report.Report) []string {
	var out []string
	for _, w := range rep.Warnings {
		if strings.Contains(w, "does not rebuild") || strings.Contains(w, "missing from the crash states") {
			out = append(out, w)
		}
	}
	return out
}

// TestFSLMDB runs `scry fs check` on Debian's LMDB 0.9.24 (lmdb-utils): mdb_load adds a key to
// an existing database, then the shell prints "committed"; the checker wants the key once that
// was printed. LMDB writes its data pages, fdatasyncs them, and commits by writing the meta page
// through a second descriptor opened with O_DSYNC, durable when the write returns (open(2)): no
// finding under any model (scry once reported the meta page's write as a durability violation).
func TestFSLMDB(t *testing.T) {
	testenv.Tools(t, "strace", "mdb_load", "mdb_dump")
	tmp := t.TempDir()
	dump := func(name, key string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte("VERSION=3\nformat=print\ntype=btree\nmapsize=1048576\nHEADER=END\n "+key+"\n v\nDATA=END\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := dump("dump1", "k1"), dump("dump2", "k2")
	checker := writeScript(t, "lmdb-check.sh", `out=$(mdb_dump -n -p db.mdb 2>&1) || { echo "mdb_dump: $out"; exit 1; }
echo "$out" | grep -q k1 || { echo "k1 missing: $out"; exit 1; }
if grep -q committed "$SCRY_STDOUT"; then echo "$out" | grep -q k2 || { echo "committed but k2 missing"; exit 1; }; fi
exit 0
`)
	for _, apm := range everyModel {
		t.Run(apm, func(t *testing.T) {
			dir := t.TempDir()
			if out, err := exec.Command("mdb_load", "-n", "-f", first, filepath.Join(dir, "db.mdb")).CombinedOutput(); err != nil {
				t.Fatalf("mdb_load: %v %s", err, out)
			}
			tr := filepath.Join(t.TempDir(), "run.trace")
			c := &pipeline.FSCheck{Options: explore.Options{Checker: checker, APM: apm, Jobs: 2},
				Dir: dir, Args: []string{"/bin/sh", "-c", `mdb_load -n -f "$0" db.mdb && echo committed`, second}, Trace: tr, KeepDir: t.TempDir()}
			rep, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				t.Errorf("%s: %s", f.Kind, f.Message)
			}
			// The commit is there to be missed: the meta page's write carries flag dsync.
			out, err := exec.Command(testenv.Scry(t), "trace", "dump", tr).CombinedOutput()
			if err != nil {
				t.Fatalf("scry trace dump: %v %s", err, out)
			}
			if !strings.Contains(string(out), "dsync") {
				t.Errorf("no write with flag dsync in the trace:\n%s", out)
			}
			t.Logf("%s: %d states", apm, rep.Stats.StatesTested)
		})
	}
}

// TestFSDurableWrites drives Debian's coreutils and util-linux: dd overwriting a file with
// oflag=dsync or oflag=sync (O_DSYNC, O_SYNC) then the shell printing "done" has no finding;
// without them a crash after the output can lose a block's write. The finding's state (the
// first block lost, the later ones persisted: omit-one) is legal under default and
// ext4-ordered, not under ext4-journal, which persists writes in program order (fs.models says
// so). cp copies with copy_file_range, and fallocate punches a hole and zeroes a range: the
// model rebuilds the directory each left (no warning that it does not), and the unsynced copy
// before "done" is a durability violation whose state every model allows.
func TestFSDurableWrites(t *testing.T) {
	testenv.Tools(t, "strace", "dd", "cp", "fallocate")
	same := writeScript(t, "same.sh", `if grep -q done "$SCRY_STDOUT"; then cmp -s in out || { echo "done but out differs from in"; exit 1; }; fi
exit 0
`)
	cases := []struct {
		name, cmd string
		want      []string // kinds of findings
		models    []string // of every finding
	}{
		{"dd oflag=dsync", "dd if=in of=out bs=4096 conv=notrunc oflag=dsync status=none && echo done", nil, nil},
		{"dd oflag=sync", "dd if=in of=out bs=4096 conv=notrunc oflag=sync status=none && echo done", nil, nil},
		{"dd", "dd if=in of=out bs=4096 conv=notrunc status=none && echo done", []string{"fs-durability-violation"}, everyModel[:2]},
		{"cp", "rm out && cp in out && echo done", []string{"fs-durability-violation"}, everyModel},
		{"fallocate", "fallocate --punch-hole -o 4096 -l 4096 in && fallocate -z -o 8192 -l 8192 in && fallocate -z -o 0 -l 100 out && cat in > out && echo done",
			[]string{"fs-durability-violation"}, everyModel},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := make([]byte, 12000)
			for i := range in {
				in[i] = byte('a' + i%26)
			}
			if err := os.WriteFile(filepath.Join(dir, "in"), in, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "out"), []byte(strings.Repeat("-", 12000)), 0o644); err != nil {
				t.Fatal(err)
			}
			p := &pipeline.FSCheck{Options: explore.Options{Checker: same, APM: "default", Jobs: 2, Strategies: []string{"prefix", "omit-one"}},
				Dir: dir, Args: []string{"/bin/sh", "-c", c.cmd}, KeepDir: t.TempDir()}
			rep, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if w := modelWarnings(rep); len(w) > 0 {
				t.Errorf("model warnings: %q", w)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, string(f.Kind))
				if !slices.Equal(f.FS.Models, c.models) {
					t.Errorf("%s: models %q, want %q: %s", f.Kind, f.FS.Models, c.models, f.Message)
				}
			}
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("findings %q, want %q", got, c.want)
				for _, f := range rep.Findings {
					t.Log(f.Message)
				}
			}
		})
	}
}

// tmpfileC writes an O_TMPFILE file (open(2)), names it "o" by linkat of /proc/self/fd/N with
// AT_SYMLINK_FOLLOW, and prints "done"; with argument "sync" it fsyncs the file before the link
// and the directory after it.
const tmpfileC = `#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int sync = argc > 1 && strcmp(argv[1], "sync") == 0;
	int fd = open(".", O_TMPFILE | O_WRONLY, 0644);
	if (fd < 0) { perror("open"); return 1; }
	if (write(fd, "object", 6) != 6) return 1;
	if (sync && fsync(fd) != 0) return 1;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, p, AT_FDCWD, "o", AT_SYMLINK_FOLLOW) != 0) { perror("linkat"); return 1; }
	if (sync) { int d = open(".", O_RDONLY | O_DIRECTORY); if (d < 0 || fsync(d) != 0) return 1; }
	printf("done\n");
	return 0;
}
`

// TestFSTmpfile compiles tmpfileC with Debian's gcc: the anonymous file and its name are
// modeled (the model rebuilds the directory the run left); without syncs two durability
// violations: the link lost after "done" (legal under every model), and the data lost with the
// link kept (default and ext4-ordered, whose delayed allocation writes the data after the link;
// not ext4-journal, which keeps program order). With the syncs nothing is reported.
func TestFSTmpfile(t *testing.T) {
	testenv.Tools(t, "strace", "gcc")
	src := filepath.Join(t.TempDir(), "tmpfile.c")
	bin := filepath.Join(t.TempDir(), "tmpfile")
	if err := os.WriteFile(src, []byte(tmpfileC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	checker := writeScript(t, "tmpfile-check.sh", `if grep -q done "$SCRY_STDOUT"; then [ "$(cat o 2>/dev/null)" = object ] || { echo "done but o is not the object"; exit 1; }; fi
exit 0
`)
	for _, c := range []struct {
		arg  string
		want map[string][]string // models by the lost call
	}{{"nosync", map[string][]string{"append": everyModel[:2], "link": everyModel}}, {"sync", nil}} {
		t.Run(c.arg, func(t *testing.T) {
			p := &pipeline.FSCheck{Options: explore.Options{Checker: checker, APM: "default", Jobs: 2},
				Dir: t.TempDir(), Args: []string{bin, c.arg}, KeepDir: t.TempDir()}
			rep, err := p.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if w := modelWarnings(rep); len(w) > 0 {
				t.Errorf("model warnings: %q", w)
			}
			for _, w := range rep.Warnings {
				if strings.Contains(w, "does not fit") || strings.Contains(w, "not modeled") {
					t.Errorf("warning: %s", w)
				}
			}
			if len(rep.Findings) != len(c.want) {
				t.Errorf("%d findings, want %d", len(rep.Findings), len(c.want))
			}
			for _, f := range rep.Findings {
				call, _, _ := strings.Cut(f.Message, "(")
				if want, ok := c.want[call]; !ok || f.Kind != report.FSDurabilityViolation || !slices.Equal(f.FS.Models, want) {
					t.Errorf("%s, models %q: %s", f.Kind, f.FS.Models, f.Message)
				}
			}
		})
	}
}
