// Package slurm tests sharded crash exploration on a real Slurm cluster (docs/distributed.md):
// it starts a single-node cluster from Debian's slurm-wlm and munge in a temporary directory, as
// root and without systemd, submits a job array of `scry explore --shard auto` (and one of `scry
// fs explore --shard auto` on a recording of examples/fs/copy), merges the shards' reports with
// `scry merge` and compares the result with the unsharded exploration.
package slurm

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

// shards is the size of the job array.
const shards = 4

// example is the crash-only example explored: two crash findings over eight operations.
const example = "lock-reset"

func TestSlurmArray(t *testing.T) {
	testenv.Tools(t, "munged", "slurmctld", "slurmd", "sbatch", "sinfo")
	scry := testenv.Scry(t)
	if os.Geteuid() != 0 {
		t.Skip("starting slurmd needs root (it runs the jobs as their users)")
	}
	dir := t.TempDir()
	// munged refuses a socket in a directory others cannot search.
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	conf := startCluster(t, dir)
	env := append(os.Environ(), "SLURM_CONF="+conf)

	// Record the example once; explore it unsharded, then as a job array, and merge.
	src := filepath.Join(testenv.Root(), "examples", example)
	prog := filepath.Join(dir, "prog")
	run(t, nil, scry, "cc", "-O0", "-g", "-mclflushopt", "-mclwb", "-I"+filepath.Join(testenv.Root(), "examples", "include"),
		"-o", prog, filepath.Join(src, "buggy.c"), "-lpmem")
	wl := filepath.Join(src, "workload.txt")
	tr := filepath.Join(dir, "run.trace")
	run(t, nil, scry, "record", "--trace", tr, "--workload", wl, "--", prog, filepath.Join(dir, "rec.pool"))
	explore := []string{"explore", "--trace", tr, "--workload", wl, "--format", "json", "-j", "1"}
	full := filepath.Join(dir, "full.json")
	run(t, nil, scry, append(explore, "-o", full, "--", prog, "{pool}")...)

	merged := shardArray(t, env, dir, "pm", scry, fmt.Sprintf("%s --shard auto -o %s/pm-shard-$SLURM_ARRAY_TASK_ID.json -- %s '{pool}'",
		shellJoin(append([]string{scry}, explore...)), dir, prog))
	compare(t, example, full, merged)
	// The merged report replays like any other.
	run(t, nil, scry, "replay", merged, "1", "--out", filepath.Join(dir, "crash.img"))

	// File-system mode: examples/fs/copy recorded once (scry fs record), explored unsharded and
	// as a job array of scry fs explore --shard auto.
	if _, err := exec.LookPath("strace"); err != nil {
		t.Logf("file-system mode not tested: no strace")
		return
	}
	fsSrc := filepath.Join(testenv.Root(), "examples", "fs", "copy")
	copyProg := filepath.Join(dir, "copy")
	run(t, nil, "gcc", "-g", "-O0", "-o", copyProg, filepath.Join(fsSrc, "buggy.c"))
	run(t, nil, "cp", "-r", filepath.Join(fsSrc, "init"), filepath.Join(dir, "w"))
	rec := filepath.Join(dir, "rec")
	run(t, nil, scry, "fs", "record", "--dir", filepath.Join(dir, "w"), "--out", rec, "--", copyProg, "in", "out")
	fsExplore := []string{scry, "fs", "explore", rec, "--checker", filepath.Join(fsSrc, "checker.sh"), "--format", "json", "-j", "1"}
	fsFull := filepath.Join(dir, "fs-full.json")
	run(t, nil, fsExplore[0], append(fsExplore[1:], "-o", fsFull)...)
	fsMerged := shardArray(t, env, dir, "fs", scry, fmt.Sprintf("%s --shard auto -o %s/fs-shard-$SLURM_ARRAY_TASK_ID.json", shellJoin(fsExplore), dir))
	compare(t, "fs/copy", fsFull, fsMerged)
	run(t, nil, scry, "replay", fsMerged, "1", "--out", filepath.Join(dir, "crash"))
}

// shardArray submits a job array of shards tasks running cmd (a shell command writing
// dir/NAME-shard-$SLURM_ARRAY_TASK_ID.json, exiting 1 when it has findings), waits for it, merges
// the tasks' reports with scry merge and returns the merged report's path.
func shardArray(t *testing.T, env []string, dir, name, scry, cmd string) string {
	t.Helper()
	script := filepath.Join(dir, name+"-shard.sh")
	body := fmt.Sprintf("#!/bin/sh\n# scry exits 1 when it has findings: the task still succeeded.\n%s || [ $? -eq 1 ]\n", cmd)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	// --wait returns when every task of the array has ended, with a failure if one failed. The
	// array's ids start at 1: the shard index is the id less SLURM_ARRAY_TASK_MIN.
	if out, err := command(env, "sbatch", "--wait", fmt.Sprintf("--array=1-%d", shards), "--chdir", dir,
		"-o", filepath.Join(dir, name+"-task-%a.out"), script).CombinedOutput(); err != nil {
		t.Fatalf("sbatch --wait (%s): %v\n%s%s", name, err, out, taskOutputs(dir))
	}
	var reports []string
	for i := 0; i < shards; i++ {
		reports = append(reports, filepath.Join(dir, fmt.Sprintf("%s-shard-%d.json", name, i+1)))
	}
	merged := filepath.Join(dir, name+"-merged.json")
	run(t, nil, scry, append([]string{"merge", "--format", "json", "-o", merged}, reports...)...)
	return merged
}

// compare checks that the merged report equals the unsharded one (full): findings and the
// counts that add up.
func compare(t *testing.T, what, full, merged string) {
	t.Helper()
	want, got := readReport(t, full), readReport(t, merged)
	if len(want.Findings) == 0 {
		t.Fatalf("the unsharded exploration of %s found nothing: the test needs findings", what)
	}
	if !reflect.DeepEqual(want.Findings, got.Findings) {
		t.Errorf("%s: merged findings of %d Slurm tasks differ from the unsharded run's: %s", what, shards, testenv.Diff(want.Findings, got.Findings))
	}
	if want.Stats != got.Stats {
		t.Errorf("%s: merged stats %+v, unsharded %+v", what, got.Stats, want.Stats)
	}
}

// report is the part of a JSON report compared: the findings without their replay command (it
// names its report) and the counts that add up over shards.
type report struct {
	Findings []map[string]any `json:"findings"`
	Stats    struct {
		CrashPoints  int `json:"crash_points"`
		Skipped      int `json:"skipped_points"`
		StatesTested int `json:"states_tested"`
		OracleRuns   int `json:"oracle_runs"`
		Failures     int `json:"failures"`
		Findings     int `json:"findings"`
	} `json:"stats"`
}

func readReport(t *testing.T, path string) report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, f := range r.Findings {
		for _, k := range []string{"crash", "fs"} {
			if c, ok := f[k].(map[string]any); ok {
				delete(c, "image_command")
			}
		}
	}
	return r
}

// startCluster starts munged, slurmctld and slurmd in dir (a munge key, slurm.conf, state,
// spool and log files, all there), stopped with their process groups when the test ends, and
// waits until the node is idle. It returns slurm.conf's path.
func startCluster(t *testing.T, dir string) string {
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge.sock")
	daemon(t, dir, "munged", "-F", "-f", "-S", sock, "--key-file="+keyFile, "--log-file="+filepath.Join(dir, "munged.log"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"))
	testenv.WaitFor(t, func() bool { _, err := os.Stat(sock); return err == nil }, 30*time.Second, "munged's socket")

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctldPort, slurmdPort := freePort(t), freePort(t)
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=scrytest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
AuthType=auth/munge
AuthInfo=socket=%[2]s/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/slurmctld.log
SlurmdLogFile=%[2]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=scry Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, dir, ctldPort, slurmdPort)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, dir, "slurmctld", "-D", "-i", "-f", conf)
	daemon(t, dir, "slurmd", "-D", "-f", conf)
	env := append(os.Environ(), "SLURM_CONF="+conf)
	testenv.WaitFor(t, func() bool {
		out, err := command(env, "sinfo", "-h", "-o", "%t").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	}, 60*time.Second, "the Slurm node to be idle")
	return conf
}

// daemon starts name in the foreground, in a process group of its own, its output in
// dir/name.out; the test's cleanup stops the group (SIGTERM, then SIGKILL) and waits for it.
func daemon(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		// The group's other processes (slurmd's slurmstepd) end with it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, name+".out"))
			t.Logf("%s's output:\n%s", name, tail(b))
		}
	})
}

// freePort returns a TCP port free on the loopback interface at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = env
	return c
}

// run runs name, failing the test unless it exits 0 or 1 (scry: findings).
func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	var out bytes.Buffer
	c := command(env, name, args...)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
	}
}

// taskOutputs returns the array tasks' outputs, for a failure's message.
func taskOutputs(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*task-*.out"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "%s:\n%s\n", filepath.Base(f), tail(data))
	}
	return b.String()
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// shellJoin quotes words for sh.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
