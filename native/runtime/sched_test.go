package scryrt_test

// Tests of the controlled scheduler (sched.c, SCRY_SCHED): programs of testdata/ built with the
// build's `scry cc` (pass and runtime), run under chosen schedules, their traces and outputs
// checked. Every run is bounded by schedTimeout: a run that hangs fails its test.
//
// The runs whose traces are compared byte for byte run under `setarch -R` (personality
// ADDR_NO_RANDOMIZE): with address-space randomization the pool's mapping and every address the
// trace holds would move from run to run, whatever the schedule.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
)

// schedTimeout bounds one run; a run of these programs takes milliseconds (a read past its grace
// period, a fifth of a second).
const schedTimeout = 2 * time.Minute

// schedRun is one run of a scheduled program.
type schedRun struct {
	status syscall.WaitStatus
	stdout string
	stderr string
	trace  string // path of the trace ("" when the run wrote none)
}

// runSched runs exe with args in dir under setarch -R, SCRY_SCHED=spec (none when spec is "no")
// and the trace dir/t.trace (moved to dir/<name>.trace afterwards), and fails the test when the
// run does not end within schedTimeout.
func runSched(t *testing.T, dir, name, spec, exe string, args ...string) schedRun {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, "setarch"), append([]string{"-R", exe}, args...)...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SCRY_") && !strings.HasPrefix(e, "PMEM_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	tr := filepath.Join(dir, "t.trace")
	os.Remove(tr)
	cmd.Env = append(cmd.Env, "SCRY_TRACE="+tr, "PMEM_IS_PMEM_FORCE=1")
	if spec != "no" {
		cmd.Env = append(cmd.Env, "SCRY_SCHED="+spec)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hang := time.AfterFunc(schedTimeout, func() { cmd.Process.Kill() })
	cmd.Wait()
	if !hang.Stop() {
		t.Fatalf("%s %v under SCRY_SCHED=%s did not end within %v (it hangs)\nstderr:\n%s", filepath.Base(exe), args, spec, schedTimeout, stderr.String())
	}
	r := schedRun{status: cmd.ProcessState.Sys().(syscall.WaitStatus), stdout: stdout.String(), stderr: stderr.String()}
	if _, err := os.Stat(tr); err == nil {
		r.trace = filepath.Join(dir, name+".trace")
		if err := os.Rename(tr, r.trace); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// ok fails the test unless the run exited 0 with the output want and a trace.
func (r schedRun) ok(t *testing.T, what, want string) {
	t.Helper()
	if !r.status.Exited() || r.status.ExitStatus() != 0 || r.stdout != want || r.trace == "" {
		t.Fatalf("%s: status %#x, output %q, trace %q; want exit 0, output %q and a trace\nstderr:\n%s",
			what, int(r.status), r.stdout, r.trace, want, r.stderr)
	}
}

// schedProg builds testdata/schedprog.c with the build's scry cc; dir is a fresh directory for
// the runs, pool the pool's path in it.
func schedProg(t *testing.T) (exe, dir, pool string) {
	t.Helper()
	testenv.Tool(t, "gcc")
	dir = t.TempDir()
	return scryCC(t, "schedprog"), dir, filepath.Join(dir, "pool")
}

// schedules returns the trace's SCHEDULE records: the one after the header and the one before END.
func schedules(t *testing.T, res result) (first, last trace.Schedule) {
	t.Helper()
	s := res.of(trace.KindSchedule)
	if len(s) != 2 || s[0].Index != 0 || res.recs[len(res.recs)-2].Kind != trace.KindSchedule {
		t.Fatalf("%s: %d SCHEDULE records; want one first and one just before END", res.path, len(s))
	}
	first, last = trace.ScheduleOf(&s[0].Event), trace.ScheduleOf(&s[1].Event)
	if first.End || !last.End || first.Points != 0 || first.Threads != 1 || first.Spec != last.Spec {
		t.Fatalf("%s: SCHEDULE records %+v and %+v", res.path, first, last)
	}
	return first, last
}

// storeOrder is the threads of the trace's STORE records, one digit each.
func storeOrder(res result) string {
	var b strings.Builder
	for _, e := range res.of(trace.KindStore) {
		fmt.Fprint(&b, e.Thread)
	}
	return b.String()
}

// TestSchedSameTrace: a program recorded twice under the same SCRY_SCHED gives the same trace,
// byte for byte, with the scheduler's thread ids (1 for main, 2 and 3 for the workers) and a
// schedule that replays (no choice depended on time); the threads' PM stores show their
// interleaving. Under pct:11 the two workers' appends come in one order, under pct:7:3:60 a
// change point splits a worker's run, under pm a coin switches after stores.
func TestSchedSameTrace(t *testing.T) {
	exe, _, _ := schedProg(t)
	for _, tc := range []struct {
		mode, spec, out string
	}{
		{"mutex", "pct:11", ""},
		{"mutex", "pct:7:3:60", ""},
		{"mutex", "pm:3:2:100", ""},
		{"cond", "pct:5:3:40", "sum 10 after 111\n"},
		{"cond", "pm:2", "sum 10 after 111\n"},
	} {
		t.Run(tc.mode+"/"+tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			pool := filepath.Join(dir, "pool")
			a := runSched(t, dir, "a", tc.spec, exe, tc.mode, pool)
			b := runSched(t, dir, "b", tc.spec, exe, tc.mode, pool)
			want := tc.out
			if want == "" {
				want = a.stdout // the log's order depends on the schedule
			}
			a.ok(t, "first run", want)
			b.ok(t, "second run", want)
			ta, err := os.ReadFile(a.trace)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := os.ReadFile(b.trace)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ta, tb) {
				t.Errorf("the two traces differ (%d and %d bytes)", len(ta), len(tb))
			}
			res := readTrace(t, a.trace)
			_, last := schedules(t, res)
			if !last.Replayable() || last.Threads != 3 || last.Switches == 0 || last.Spec != tc.spec {
				t.Errorf("schedule %+v: want spec %s, 3 threads, switches, replayable", last, tc.spec)
			}
			threads := map[uint32]bool{}
			for _, e := range res.of(trace.KindThread) {
				threads[e.Thread] = true
			}
			if len(threads) != 3 || !threads[1] || !threads[2] || !threads[3] {
				t.Errorf("THREAD ids %v, want 1, 2 and 3", threads)
			}
			if tc.mode == "mutex" {
				// The log the program printed is the order of the appends the trace shows.
				var log strings.Builder
				base := res.of(trace.KindRegionMap)[0].Addr
				for _, e := range res.of(trace.KindStore) {
					if e.Addr != base { // not the count: an entry of the log
						fmt.Fprint(&log, e.Thread-1)
					}
				}
				if log.String()+"\n" != a.stdout {
					t.Errorf("appends in the trace by thread %s, the program's log %q", log.String(), a.stdout)
				}
			}
		})
	}
}

// TestSchedSeedsDiffer: seeds give different interleavings of the workers' PM stores.
func TestSchedSeedsDiffer(t *testing.T) {
	exe, dir, pool := schedProg(t)
	orders := map[string][]int{}
	for seed := 1; seed <= 8; seed++ {
		r := runSched(t, dir, fmt.Sprint(seed), fmt.Sprintf("pct:%d:3:60", seed), exe, "mutex", pool)
		r.ok(t, fmt.Sprintf("seed %d", seed), r.stdout)
		o := storeOrder(readTrace(t, r.trace))
		orders[o] = append(orders[o], seed)
	}
	if len(orders) < 2 {
		t.Errorf("every seed gave the same order of stores: %v", orders)
	}
	t.Logf("orders of the threads' stores, with their seeds: %v", orders)
}

// TestSchedBlocking: a worker that blocks on a mutex, a condition variable, a barrier, a join, a
// semaphore and a read of a pipe, each released by another thread, never deadlocks under any of
// these schedules (each run is bounded: a hang fails the test), and gets through every step.
// A program that does deadlock (main joins a worker waiting for the mutex main holds) is ended
// by the runtime with SIGABRT and a message naming each thread's wait, never left hanging.
func TestSchedBlocking(t *testing.T) {
	exe, dir, pool := schedProg(t)
	for seed := 1; seed <= 5; seed++ {
		for _, spec := range []string{fmt.Sprintf("pct:%d", seed), fmt.Sprintf("pct:%d:4:40", seed), fmt.Sprintf("pm:%d:2:40", seed)} {
			r := runSched(t, dir, "block", spec, exe, "block", pool)
			r.ok(t, spec, "1111110010111\n")
			if _, last := schedules(t, readTrace(t, r.trace)); last.Threads != 3 || last.Deadlock {
				t.Errorf("%s: schedule %+v", spec, last)
			}
		}
	}

	r := runSched(t, dir, "deadlock", "pct:1", exe, "deadlock", pool)
	if !r.status.Signaled() || r.status.Signal() != syscall.SIGABRT ||
		!strings.Contains(r.stderr, "deadlock under SCRY_SCHED=pct:1: every thread waits: thread 1 on join of thread 2; thread 2 on mutex") {
		t.Fatalf("deadlock: status %#x, stderr %q; want SIGABRT and the waits", int(r.status), r.stderr)
	}
	res := readTrace(t, r.trace)
	if _, last := schedules(t, res); !last.Deadlock {
		t.Errorf("deadlock: the record before END is not flagged: %+v", last)
	}
	if e := res.end(t); e.How != trace.EndSignal || e.Status != int64(syscall.SIGABRT) {
		t.Errorf("deadlock: END %v %d, want signal SIGABRT", e.How, e.Status)
	}
}

// TestSchedStall: a worker that spins on a plain variable passes no scheduling point, so it
// would keep the turn for ever; after seconds without one, the threads waiting for the turn take
// it from it, the variable's writer runs, and the run ends, its record before END counting the
// choice that depended on time.
func TestSchedStall(t *testing.T) {
	exe, dir, pool := schedProg(t)
	r := runSched(t, dir, "stall", "pct:1", exe, "stall", pool)
	r.ok(t, "stall", "11\n")
	if _, last := schedules(t, readTrace(t, r.trace)); last.Timed == 0 || last.Replayable() {
		t.Errorf("schedule %+v: want a choice that depended on time", last)
	}
}

// TestSchedOneThread: a program with one thread gives the same trace with SCRY_SCHED as
// without, but for the SCHEDULE records and its thread's id (1 under the scheduler, the
// process's id without): the scheduler does nothing until a second thread is created.
func TestSchedOneThread(t *testing.T) {
	exe, dir, pool := schedProg(t)
	plain := runSched(t, dir, "plain", "no", exe, "one", pool)
	sched := runSched(t, dir, "sched", "pm:4", exe, "one", pool)
	plain.ok(t, "without the scheduler", "7 1\n")
	sched.ok(t, "with the scheduler", "7 1\n")
	norm := func(res result) []rec {
		var out []rec
		for _, e := range res.recs {
			if e.Kind == trace.KindSchedule {
				continue
			}
			e.Index, e.Thread = 0, 0
			out = append(out, e)
		}
		return out
	}
	pr, sr := readTrace(t, plain.trace), readTrace(t, sched.trace)
	if d := testenv.Diff(norm(pr), norm(sr)); d != "" {
		t.Errorf("the traces differ beyond SCHEDULE and the thread id:\n%s", d)
	}
	if len(pr.of(trace.KindSchedule)) != 0 {
		t.Errorf("SCHEDULE records without SCRY_SCHED")
	}
	if _, last := schedules(t, sr); last.Points != 0 || last.Switches != 0 || last.Threads != 1 {
		t.Errorf("one thread: schedule %+v, want no point and no switch", last)
	}
}

// TestSchedLibpmemobj: two threads increment a libpmemobj counter in transactions under a
// PMEMmutex, whose pthread calls libpmemobj makes through its PLT, under several schedules: the
// count is right, both workers' records are there, the turn switched, and the trace replays to
// the pool file.
func TestSchedLibpmemobj(t *testing.T) {
	testenv.Tool(t, "gcc")
	havePMDK(t)
	exe := scryCC(t, "schedobj", "-lpmemobj")
	dir := t.TempDir()
	for _, spec := range []string{"pct:1", "pct:2:3:60", "pm:3", "pm:4:3:60"} {
		t.Run(spec, func(t *testing.T) {
			pool := filepath.Join(dir, strings.ReplaceAll(spec, ":", "-")+".pool")
			r := runSched(t, dir, "obj", spec, exe, pool)
			r.ok(t, spec, "10\n")
			res := readTrace(t, r.trace)
			_, last := schedules(t, res)
			if last.Threads != 3 || last.Switches == 0 || last.Deadlock {
				t.Errorf("schedule %+v: want 3 threads and switches", last)
			}
			threads := map[uint32]int{}
			for _, e := range res.of(trace.KindStore) {
				threads[e.Thread]++
			}
			if threads[2] == 0 || threads[3] == 0 {
				t.Errorf("stores per thread %v: want stores of threads 2 and 3", threads)
			}
			replayed(t, res)
		})
	}
}

// TestSchedCxx: libstdc++'s threads, mutexes, condition variables, futures and atomic waits
// (futexes through syscall, which the scheduler models) run under several schedules, and no
// choice depends on time: every wait is one the scheduler sees.
func TestSchedCxx(t *testing.T) {
	testenv.Tool(t, "g++")
	exe := filepath.Join(t.TempDir(), "schedcxx")
	if out, err := exec.Command(testenv.Scry(t), "c++", "-std=c++20", "-O1", "-g", "-o", exe,
		filepath.Join("testdata", "schedcxx.cpp"), "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("scry c++ schedcxx: %v\n%s", err, out)
	}
	dir := t.TempDir()
	for _, spec := range []string{"pct:1", "pct:2:3:50", "pm:3", "pm:4:3:50"} {
		r := runSched(t, dir, "cxx", spec, exe, filepath.Join(dir, "pool"))
		r.ok(t, spec, "42 100 3\n")
		if _, last := schedules(t, readTrace(t, r.trace)); last.Threads != 4 || !last.Replayable() {
			t.Errorf("%s: schedule %+v, want 4 threads and no choice that depended on time", spec, last)
		}
	}
}

// TestSchedBadSpec: a malformed SCRY_SCHED ends the program before main with status 125 and a
// message naming the value, before any trace is written; an empty one is no scheduler.
func TestSchedBadSpec(t *testing.T) {
	exe, dir, pool := schedProg(t)
	for _, v := range []string{"bogus", "pct", "pct:", "pct:x", "pct:-1", "pct:18446744073709551616", "pct:1:0",
		"pct:1:65", "pct:1:2:0", "pct:1:2:3:4", "rr:1", "PCT:1", "pct:1 ", "pct:1:10:5", "pct:1:2:1099511627777",
		"pct:1@", "pct:1@2", "pct:1@0.1", "pct:1@2.0", "pct:1@x.1", "pct:1@2.1.1", "@2.1"} {
		r := runSched(t, dir, "bad", v, exe, "one", pool)
		want := fmt.Sprintf("scry: bad SCRY_SCHED=%q: ", v)
		if !r.status.Exited() || r.status.ExitStatus() != 125 || !strings.HasPrefix(r.stderr, want) || r.stdout != "" || r.trace != "" {
			t.Errorf("SCRY_SCHED=%q: status %#x, stderr %q, output %q, trace %q; want exit 125, a message starting %q, no output, no trace",
				v, int(r.status), r.stderr, r.stdout, r.trace, want)
		}
	}
	r := runSched(t, dir, "empty", "", exe, "one", pool)
	r.ok(t, "SCRY_SCHED empty", "7 1\n")
	if n := len(readTrace(t, r.trace).of(trace.KindSchedule)); n != 0 {
		t.Errorf("SCRY_SCHED empty: %d SCHEDULE records, want none", n)
	}
}

// TestSchedPMWindow: under pm, in some seed a worker's store that is not yet flushed is followed
// by the other worker's records before its flush: the window between a store and its
// persistence. Under pct with no change point (depth 1) no seed shows one: the workers never
// block, so the first to run runs to its end.
func TestSchedPMWindow(t *testing.T) {
	exe, dir, pool := schedProg(t)
	// windows counts the stores of one worker followed by a record of the other before the
	// flush of the store's line.
	windows := func(res result) int {
		n := 0
		for i, e := range res.recs {
			if e.Kind != trace.KindStore || e.Thread < 2 {
				continue
			}
			for _, f := range res.recs[i+1:] {
				if f.Thread == e.Thread && f.Kind == trace.KindFlush && f.Addr/64 == e.Addr/64 {
					break
				}
				if f.Thread >= 2 && f.Thread != e.Thread && f.Kind != trace.KindThread {
					n++
					break
				}
			}
		}
		return n
	}
	var pm []int
	for seed := 1; seed <= 6; seed++ {
		for _, policy := range []string{"pct", "pm"} {
			spec := fmt.Sprintf("%s:%d:1", policy, seed)
			r := runSched(t, dir, "window", spec, exe, "window", pool)
			r.ok(t, spec, "")
			n := windows(readTrace(t, r.trace))
			if policy == "pct" && n != 0 {
				t.Errorf("%s: %d stores followed by the other worker before their flush, want none", spec, n)
			}
			if policy == "pm" && n > 0 {
				pm = append(pm, seed)
			}
		}
	}
	if len(pm) == 0 {
		t.Errorf("under pm, no seed put the other worker between a store and its flush")
	}
	t.Logf("seeds whose pm schedule opened a window: %v", pm)
}

// TestSchedWindow: a window (@THREAD.STORE) runs THREAD ahead of the other worker until its
// STORE-th store, then below it: under pct:1@W.1 worker W appends first and, once it released
// the mutex, the other worker appends all six times before W's second append; the trace says
// the spec, and the run replays byte for byte.
func TestSchedWindow(t *testing.T) {
	exe, _, _ := schedProg(t)
	for _, w := range []uint32{2, 3} {
		spec := fmt.Sprintf("pct:1@%d.1", w)
		t.Run(spec, func(t *testing.T) {
			dir := t.TempDir()
			pool := filepath.Join(dir, "pool")
			a := runSched(t, dir, "a", spec, exe, "mutex", pool)
			a.ok(t, spec, a.stdout)
			other := 5 - w
			want := fmt.Sprintf("%d%s%s\n", w-1, strings.Repeat(fmt.Sprint(other-1), 6), strings.Repeat(fmt.Sprint(w-1), 5))
			if a.stdout != want {
				t.Errorf("log %q, want %q (worker %d first, then the other's six appends)", a.stdout, want, w)
			}
			res := readTrace(t, a.trace)
			if _, last := schedules(t, res); last.Spec != spec || !last.Replayable() {
				t.Errorf("schedule %+v, want spec %s, replayable", last, spec)
			}
			b := runSched(t, dir, "b", spec, exe, "mutex", pool)
			b.ok(t, spec, want)
			ta, _ := os.ReadFile(a.trace)
			tb, _ := os.ReadFile(b.trace)
			if !bytes.Equal(ta, tb) {
				t.Errorf("the two traces under %s differ", spec)
			}
		})
	}
}

// TestSchedOps: under the ops policy the operation that began first runs to its end before the
// other: worker 2 begins its operation first, so its three appends come before worker 1's, for
// every seed; PCT without it interleaves the unlocked appends for some seed. A DEPTH other than
// 1 is an error.
func TestSchedOps(t *testing.T) {
	exe, dir, pool := schedProg(t)
	for seed := 1; seed <= 4; seed++ {
		spec := fmt.Sprintf("ops:%d", seed)
		r := runSched(t, dir, fmt.Sprint(seed), spec, exe, "ops", pool)
		r.ok(t, spec, "222111\n")
		res := readTrace(t, r.trace)
		if _, last := schedules(t, res); last.Policy != trace.SchedOps || last.Depth != 1 || !last.Replayable() {
			t.Errorf("%s: schedule %+v, want ops of depth 1, replayable", spec, last)
		}
	}
	other := false
	for seed := 1; seed <= 8 && !other; seed++ {
		r := runSched(t, dir, "pct", fmt.Sprintf("pct:%d:3:40", seed), exe, "ops", pool)
		other = r.stdout != "222111\n"
	}
	if !other {
		t.Errorf("every PCT seed ran the operations one after the other: the test shows nothing")
	}
	r := runSched(t, dir, "bad", "ops:1:3", exe, "ops", pool)
	if !r.status.Exited() || r.status.ExitStatus() != 125 {
		t.Errorf("SCRY_SCHED=ops:1:3: status %#x, want exit 125", int(r.status))
	}
}

// TestSchedSpin: a worker that spins on a lock word in PM (compare-and-swap retried) whose holder
// a window dropped yields after SCHED_SPIN retries, not after SCHED_STARVE scheduling points: the
// trace holds a few dozen of its compare-and-swaps, not tens of thousands, and the appends are
// whole.
func TestSchedSpin(t *testing.T) {
	exe, dir, pool := schedProg(t)
	// Worker 1 (thread 2) takes the lock (its first store) and drops right after its second
	// (the log entry), holding the lock.
	r := runSched(t, dir, "spin", "pct:1@2.2", exe, "spin", pool)
	r.ok(t, "spin", r.stdout)
	if len(r.stdout) != 7 {
		t.Fatalf("log %q, want six appends", r.stdout)
	}
	res := readTrace(t, r.trace)
	cas := 0
	for _, e := range res.of(trace.KindFence) {
		if e.Fence == trace.FenceLocked && e.Thread == 3 {
			cas++
		}
	}
	if cas == 0 || cas > 1000 {
		t.Errorf("thread 3 made %d compare-and-swaps, want some and far fewer than SCHED_STARVE (it spins on a lock whose holder dropped)", cas)
	}
	t.Logf("log %q, thread 3's compare-and-swaps: %d", r.stdout, cas)
}
