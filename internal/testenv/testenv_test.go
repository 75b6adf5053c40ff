package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStrict(t *testing.T) {
	tests := []struct {
		require, examples, ci string
		want                  bool
	}{
		{"", "", "", false},
		{"1", "", "", true},
		{"0", "", "", false},
		{"", "1", "", true},
		{"", "", "true", true},
		{"", "", "1", true},
		{"", "", "false", false},
		{"", "", "0", false},
	}
	for _, tc := range tests {
		t.Setenv("SCRY_REQUIRE_BUILD", tc.require)
		t.Setenv("SCRY_EXAMPLES_STRICT", tc.examples)
		t.Setenv("CI", tc.ci)
		if got := Strict(); got != tc.want {
			t.Errorf("SCRY_REQUIRE_BUILD=%q SCRY_EXAMPLES_STRICT=%q CI=%q: Strict() = %v, want %v",
				tc.require, tc.examples, tc.ci, got, tc.want)
		}
	}
}

// recorder is a testing.TB that records how a helper ended the test instead of ending it: its
// Skipf and Fatalf stop the helper with a panic that call recovers.
type recorder struct {
	testing.TB
	skipped, failed string
}

type ended struct{}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = format; panic(ended{}) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = format; panic(ended{}) }

// call runs f, which may end the test through r.
func (r *recorder) call(f func()) {
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(ended); !ok {
				panic(e)
			}
		}
	}()
	f()
}

func TestMissing(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Setenv("SCRY_EXAMPLES_STRICT", "")
		t.Setenv("CI", "")
		t.Setenv("SCRY_REQUIRE_BUILD", map[bool]string{false: "", true: "1"}[strict])
		r := &recorder{TB: t}
		r.call(func() { Missing(r, "z3 is not installed") })
		if strict && (r.failed == "" || r.skipped != "") || !strict && (r.skipped == "" || r.failed != "") {
			t.Errorf("strict %v: skipped %q, failed %q", strict, r.skipped, r.failed)
		}
	}
}

func TestBuiltAndTool(t *testing.T) {
	t.Setenv("SCRY_REQUIRE_BUILD", "1")
	t.Setenv("SCRY_EXAMPLES_STRICT", "")
	t.Setenv("SCRY_BIN", "")
	dir := t.TempDir()
	t.Setenv("BUILD", dir)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "scry"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	var got string
	r.call(func() { got = Scry(r) })
	if got != filepath.Join(dir, "bin", "scry") || r.failed != "" {
		t.Errorf("Scry = %q (failed %q)", got, r.failed)
	}
	r.call(func() { Built(r, "lib/none.a") })
	if r.failed == "" {
		t.Error("a missing build file did not fail in strict mode")
	}
	r = &recorder{TB: t}
	r.call(func() { Tool(r, "scry-no-such-tool") })
	if r.failed == "" {
		t.Error("a missing tool did not fail in strict mode")
	}
	if Tool(t, "sh") == "" {
		t.Error("Tool(sh) is empty")
	}
}

func TestRoot(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	want := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if got := Root(); got != want {
		t.Errorf("Root() = %q, want %q", got, want)
	}
	t.Setenv("BUILD", "")
	if got := BuildDir(); got != filepath.Join(want, "build") {
		t.Errorf("BuildDir() = %q", got)
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Minute, func() bool { n++; return n == 5 }) || n != 5 {
		t.Errorf("Poll: %d calls, want 5", n)
	}
	// A condition that never holds: false once the deadline has passed.
	if Poll(0, func() bool { return false }) {
		t.Error("Poll of a false condition reported true")
	}
}

func TestProcessGone(t *testing.T) {
	cmd := exec.Command(Tool(t, "sleep"), "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if ProcessGone(pid) {
		t.Fatal("a running process is reported gone")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Killed, not yet reaped: a zombie, which is gone.
	WaitFor(t, func() bool { return ProcessGone(pid) }, time.Minute, "the killed process to exit")
	cmd.Wait()
	if !ProcessGone(pid) {
		t.Error("a reaped process is not reported gone")
	}
}

func TestDiff(t *testing.T) {
	type inner struct {
		S []int
		M map[string]int
	}
	type outer struct {
		Name  string
		N     int64
		U     uint8
		F     float64
		B     bool
		P     *inner
		Items []inner
	}
	base := func() outer {
		return outer{Name: "a", N: 1, U: 2, F: 0.5, B: true, P: &inner{S: []int{1}}, Items: []inner{{M: map[string]int{"k": 1}}}}
	}
	tests := []struct {
		name   string
		change func(*outer)
		want   []string // substrings of the difference lines, one per line
	}{
		{"equal", func(*outer) {}, nil},
		{"nil and empty", func(o *outer) { o.P.M = map[string]int{}; o.Items[0].S = []int{} }, nil},
		{"string", func(o *outer) { o.Name = "b" }, []string{`.Name: want "a", got "b"`}},
		{"numbers", func(o *outer) { o.N, o.U, o.F, o.B = 2, 3, 1.5, false }, []string{".N:", ".U:", ".F:", ".B:"}},
		{"nil pointer", func(o *outer) { o.P = nil }, []string{".P: want"}},
		{"element", func(o *outer) { o.P.S = []int{2} }, []string{".P.S[0]: want 1, got 2"}},
		{"length", func(o *outer) { o.Items = append(o.Items, inner{}) }, []string{".Items: want 1 elements, got 2"}},
		{"map key", func(o *outer) { o.Items[0].M = map[string]int{"j": 1} }, []string{`.Items[0].M["j"]`, `.Items[0].M["k"]`}},
		{"map value", func(o *outer) { o.Items[0].M["k"] = 3 }, []string{`.Items[0].M["k"]: want 1, got 3`}},
	}
	for _, tc := range tests {
		got := base()
		tc.change(&got)
		d := Diff(base(), got)
		var lines []string
		if d != "" {
			lines = strings.Split(d, "\n")
		}
		if len(lines) != len(tc.want) {
			t.Errorf("%s: %d difference lines, want %d:\n%s", tc.name, len(lines), len(tc.want), d)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("%s: line %q does not contain %q", tc.name, lines[i], w)
			}
		}
	}
	a, b := make([]int, 30), make([]int, 30)
	for i := range b {
		b[i] = i + 1
	}
	if d := Diff(a, b); strings.Count(d, "\n") != maxDiffs || !strings.HasSuffix(d, "and 10 more differences") {
		t.Errorf("30 differences listed as:\n%s", d)
	}
}
