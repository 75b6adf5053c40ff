package exec

import (
	"context"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestWatch feeds a run's standard output to the streaming comparison in chunks and checks
// the line it stops at (0: never).
func TestWatch(t *testing.T) {
	seed := regexp.MustCompile(`^seed:`)
	legal := func(pool, out string) Outcome {
		return Outcome{Stdout: []byte(out), filter: seed, pool: pool}
	}
	a := legal("/w1/a.img", "pool: /w1/a.img\nseed: 1\nop: x\nop: y\nop: z\n")
	b := legal("/w2/b.img", "pool: /w2/b.img\nseed: 2\nop: x\nop: Y\nop: Z\nop: extra\n")
	tests := []struct {
		name   string
		legal  []Outcome
		chunks []string
		want   int
	}{
		{"match", []Outcome{a}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: y\nop: z\n"}, 0},
		{"mismatch at line 4", []Outcome{a}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: q\nop: z\n"}, 4},
		{"lines split across writes", []Outcome{a}, []string{"pool: /w3/c", ".img\nse", "ed: 3\nop: x\no", "p: q", "\nop: z\n"}, 4},
		{"the filtered seed varies, the pool's path too", []Outcome{a}, []string{"pool: /w3/c.img\nseed: 999\nop: x\n"}, 0},
		{"one legal outcome left: the other's line 4", []Outcome{a, b}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: Y\nop: Z\nop: extra\n"}, 0},
		{"diverges from the second after the first", []Outcome{a, b}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: Y\nop: z\n"}, 5},
		{"a line past every legal outcome's end", []Outcome{a}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: y\nop: z\nop: more\n"}, 6},
		{"an incomplete last line decides nothing", []Outcome{a}, []string{"pool: /w3/c.img\nseed: 3\nop: x\nop: q"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLegal(tc.legal...)
			w := newWatch(WithLegal(context.Background(), l), &boundedBuffer{limit: stdoutLimit}, seed, "/w3/c.img")
			stops := 0
			w.stop = func() { stops++ }
			for _, c := range tc.chunks {
				w.Write([]byte(c))
			}
			if got := w.divergedAt(); got != tc.want {
				t.Errorf("diverged at line %d, want %d", got, tc.want)
			}
			if want := min(tc.want, 1); stops != want {
				t.Errorf("stop called %d times, want %d", stops, want)
			}
		})
	}
}

// TestNewLegalUnusable: no streaming comparison against legal outcomes that did not complete,
// were cut, or are compared under a variance already.
func TestNewLegalUnusable(t *testing.T) {
	ok := Outcome{Stdout: []byte("a\n")}
	v := LearnVariance(Outcome{Stdout: []byte("1\n")}, Outcome{Stdout: []byte("2\n")})
	for _, tc := range []struct {
		name  string
		legal []Outcome
		nil   bool
	}{
		{"completed", []Outcome{ok}, false},
		{"none", nil, true},
		{"hung only", []Outcome{{TimedOut: true}}, true},
		{"a hung one is left out", []Outcome{ok, {TimedOut: true}}, false},
		{"truncated", []Outcome{ok, {Stdout: []byte("a\n"), Truncated: true}}, true},
		{"varies", []Outcome{ok.WithVariance(v)}, true},
	} {
		if got := NewLegal(tc.legal...) == nil; got != tc.nil {
			t.Errorf("%s: NewLegal nil = %v, want %v", tc.name, got, tc.nil)
		}
	}
}

// TestDecidedDivergence: a run stopped at a line that, once the legal outcome's variance is
// known, varies between identical runs is not decided; one stopped elsewhere is.
func TestDecidedDivergence(t *testing.T) {
	first := Outcome{Stdout: []byte("key 1 at 10:00\nop: x\nop: y\n")}
	second := Outcome{Stdout: []byte("key 1 at 10:07\nop: x\nop: y\n")}
	fields := LearnVariance(first, second) // the time on line 1 varies
	block := LearnVariance(first, Outcome{Stdout: []byte("key 1 at 10:00\nmore\nop: x\nop: y\n")})
	stopped := func(out string, k int) Outcome { return Outcome{Stdout: []byte(out), ExitCode: -1, Diverged: k} }
	for _, tc := range []struct {
		name  string
		got   Outcome
		legal Outcome
		want  bool
	}{
		{"no variance", stopped("key 1 at 11:30\n", 1), first, true},
		{"the diverging field varies", stopped("key 1 at 11:30\n", 1), first.WithVariance(fields), false},
		{"a field that does not vary", stopped("key 2 at 11:30\n", 1), first.WithVariance(fields), true},
		{"a later line", stopped("key 1 at 11:30\nop: q\n", 2), first.WithVariance(fields), true},
		{"a block varies", stopped("key 1 at 10:00\nop: q\n", 2), first.WithVariance(block), false},
		{"not stopped", Outcome{Stdout: []byte("key 2\n")}, first, false},
	} {
		if got := DecidedDivergence(tc.got, tc.legal); got != tc.want {
			t.Errorf("%s: DecidedDivergence = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRunStopsAtDivergence runs real processes under legal outcomes, by exec and through a fork
// server: one that prints a line no legal outcome has and then would hang is stopped there (a
// ten-minute timeout: the test would not end otherwise), its child killed; one whose output
// matches and that then crashes is not stopped and ends by its signal.
func TestRunStopsAtDivergence(t *testing.T) {
	needProg(t)
	seed := regexp.MustCompile(`^seed:`)
	for _, tc := range []struct {
		name     string
		args     []string
		legalOut string
		diverged int
		signal   syscall.Signal
	}{
		{"first line diverges", []string{"hang", "{pool}", "child.pid"}, "nothing alike\n", 1, 0},
		{"matches then crashes", []string{"signal", "{pool}", "11"}, "pool: {pool}\nseed: 1\n", 0, syscall.SIGSEGV},
	} {
		for _, mode := range []string{"exec", "fork server"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				pool := filepath.Join(dir, "pool.img")
				tg := Target{Args: append([]string{prog}, tc.args...), Timeout: 10 * time.Minute, OutputFilter: seed}
				run := func(ctx context.Context) Outcome { return tg.Run(ctx, pool, nil, dir) }
				if mode == "fork server" {
					needScryProg(t)
					tg.Args[0] = scryProg
					fs := NewForkServers(tg, t.TempDir())
					defer fs.Close()
					run = func(ctx context.Context) Outcome { return fs.Run(ctx, pool, nil, dir) }
				}
				legal := Outcome{Stdout: []byte(tc.legalOut), filter: seed, pool: "{pool}"}
				o := run(WithLegal(context.Background(), NewLegal(legal)))
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				want := tc.diverged
				if o.Diverged != want || o.Signal != tc.signal || o.TimedOut {
					t.Fatalf("diverged at %d signal %v timed out %v (%s), want line %d signal %v", o.Diverged, o.Signal, o.TimedOut, o.Describe(), want, tc.signal)
				}
				if want > 0 {
					if o.Completed() || Mismatch(o, legal) != SymptomOutput {
						t.Errorf("completed %v mismatch %q: a stopped run did not end by itself, its symptom is its output", o.Completed(), Mismatch(o, legal))
					}
					if tc.args[0] == "hang" && fileExists(filepath.Join(dir, "child.pid")) {
						childGone(t, dir, "the stopped program's child")
					}
				}
			})
		}
	}
}

// TestWatchLongLine: a line longer than any legal outcome's whole output matches none, decided
// before its newline (the watch does not hold it without bound).
func TestWatchLongLine(t *testing.T) {
	defer func(n int) { stdoutLimit = n }(stdoutLimit)
	stdoutLimit = 64
	w := newWatch(WithLegal(context.Background(), NewLegal(Outcome{Stdout: []byte("short\n")})), &boundedBuffer{limit: stdoutLimit}, nil, "")
	stops := 0
	w.stop = func() { stops++ }
	for i := 0; i < 10; i++ {
		w.Write([]byte("0123456789abcdef"))
	}
	if w.divergedAt() != 1 || stops != 1 || len(w.partial) != 0 {
		t.Errorf("diverged at %d, %d stops, %d bytes held; want line 1, 1 stop, none held", w.divergedAt(), stops, len(w.partial))
	}
}
