package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// ev is one event of a synthetic `go test -json` stream, as a line.
func ev(action, pkg, test, output string) string {
	b, err := json.Marshal(event{Action: action, Package: module + pkg, Test: test, Output: output})
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

func TestCheck(t *testing.T) {
	rules, err := parseAllowlist(strings.NewReader(`# comment

pm/image TestBig* needs a 160 MiB sparse file
. TestRoot/* a reason with  two spaces
`), "allow.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[1].reason != "a reason with  two spaces" || rules[1].line != 4 {
		t.Fatalf("rules %+v", rules)
	}
	tests := []struct {
		name   string
		stream string
		ok     bool
		// out must contain each of want, in order, and none of absent.
		want, absent []string
		passed       int
		failed       int
		skips        []string // "pkg test allowed?"
	}{
		{
			name: "pass",
			stream: ev("start", "/a", "", "") + ev("run", "/a", "TestA", "") + ev("output", "/a", "TestA", "=== RUN   TestA\n") +
				ev("output", "/a", "TestA", "--- PASS: TestA (0.00s)\n") + ev("pass", "/a", "TestA", "") +
				ev("output", "/a", "", "PASS\n") + ev("output", "/a", "", "ok  \tgithub.com/scry-pm/scry/a\t0.1s\n") + ev("pass", "/a", "", ""),
			ok: true, want: []string{"ok  \tgithub.com/scry-pm/scry/a"}, absent: []string{"=== RUN", "--- PASS", "PASS\n"}, passed: 1,
		},
		{
			name: "failure shown with its log",
			stream: ev("run", "/a", "TestA", "") + ev("output", "/a", "TestA", "=== RUN   TestA\n") +
				ev("output", "/a", "TestA", "    a_test.go:12: got 3, want 4\n") + ev("output", "/a", "TestA", "--- FAIL: TestA (0.01s)\n") +
				ev("fail", "/a", "TestA", "") + ev("output", "/a", "", "FAIL\n") + ev("fail", "/a", "", ""),
			want: []string{"--- FAIL: TestA (0.01s)\n    a_test.go:12: got 3, want 4\n", "FAIL\n"}, absent: []string{"=== RUN"}, failed: 1,
		},
		{
			name: "allowed skips",
			stream: ev("run", "/pm/image", "TestBigFile", "") + ev("output", "/pm/image", "TestBigFile", "    image_test.go:9: too big\n") +
				ev("output", "/pm/image", "TestBigFile", "--- SKIP: TestBigFile (0.00s)\n") + ev("skip", "/pm/image", "TestBigFile", "") +
				ev("run", "", "TestRoot/x", "") + ev("skip", "", "TestRoot/x", ""),
			ok: true, want: []string{"2 skipped", "skipped pm/image TestBigFile: image_test.go:9: too big [allowed (allow.txt:3: needs a 160 MiB sparse file)]",
				"skipped . TestRoot/x: (no reason given) [allowed"},
			skips: []string{"pm/image TestBigFile true", ". TestRoot/x true"},
		},
		{
			name: "skip not allowed",
			stream: ev("run", "/pm/image", "TestSmall", "") + ev("output", "/pm/image", "TestSmall", "    x_test.go:1: no z3\n") +
				ev("skip", "/pm/image", "TestSmall", "") +
				// A subtest of an allowed name's package, but not matching its pattern.
				ev("run", "", "TestRoot/x/y", "") + ev("skip", "", "TestRoot/x/y", ""),
			want:  []string{"2 skipped (2 not on the allowlist allow.txt: a failure)", "skipped pm/image TestSmall: x_test.go:1: no z3 [NOT ALLOWED]"},
			skips: []string{"pm/image TestSmall false", ". TestRoot/x/y false"},
		},
		{
			name: "build failure",
			stream: `{"ImportPath":"github.com/scry-pm/scry/b [github.com/scry-pm/scry/b.test]","Action":"build-output","Output":"b/b.go:3:1: syntax error\n"}` + "\n" +
				`{"ImportPath":"github.com/scry-pm/scry/b [github.com/scry-pm/scry/b.test]","Action":"build-fail"}` + "\n" +
				ev("output", "/b", "", "FAIL\tgithub.com/scry-pm/scry/b [build failed]\n") + ev("fail", "/b", "", ""),
			want: []string{"b/b.go:3:1: syntax error\n", "[build failed]", "1 packages failed", "1 packages did not build"},
		},
		{
			name: "unfinished test and a line that is not JSON",
			stream: "go: downloading something\n" + ev("run", "/a", "TestHang", "") + ev("output", "/a", "TestHang", "    a_test.go:5: still waiting\n") +
				ev("output", "/a", "", "panic: test timed out after 10m0s\n") + ev("fail", "/a", "", ""),
			want: []string{"go: downloading something\n", "panic: test timed out", "--- UNFINISHED: a TestHang\n    a_test.go:5: still waiting\n", "a TestHang never finished"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			s, err := check(strings.NewReader(tc.stream), &out, rules)
			if err != nil {
				t.Fatal(err)
			}
			report(&out, s, "allow.txt")
			text := out.String()
			if s.ok() != tc.ok {
				t.Errorf("ok() = %v, want %v\n%s", s.ok(), tc.ok, text)
			}
			if s.passed != tc.passed || s.failed != tc.failed {
				t.Errorf("%d passed, %d failed; want %d, %d", s.passed, s.failed, tc.passed, tc.failed)
			}
			rest := text
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("output lacks %q (or has it out of order):\n%s", w, text)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, a := range tc.absent {
				if strings.Contains(text, a) {
					t.Errorf("output has %q:\n%s", a, text)
				}
			}
			var skips []string
			for _, k := range s.skips {
				skips = append(skips, relPackage(k.pkg)+" "+k.test+" "+map[bool]string{false: "false", true: "true"}[k.allowed != nil])
			}
			if strings.Join(skips, "; ") != strings.Join(tc.skips, "; ") {
				t.Errorf("skips %q, want %q", skips, tc.skips)
			}
		})
	}
}

func TestCheckErrors(t *testing.T) {
	if _, err := check(strings.NewReader("not json at all\n"), &strings.Builder{}, nil); err == nil {
		t.Error("a stream without events: no error")
	}
	for _, bad := range []string{
		"pm/image TestX\n",          // no reason
		"pm/image Test[ a reason\n", // bad pattern
	} {
		if _, err := parseAllowlist(strings.NewReader(bad), "allow.txt"); err == nil || !strings.Contains(err.Error(), "allow.txt:1") {
			t.Errorf("%q: error %v, want one naming allow.txt:1", bad, err)
		}
	}
}

// TestAllowlist: the repository's allowlist parses, and each entry gives a reason.
func TestAllowlist(t *testing.T) {
	f, err := os.Open("../skip-allowlist.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := parseAllowlist(f, "test/skip-allowlist.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if len(strings.Fields(r.reason)) < 3 {
			t.Errorf("line %d: the reason %q does not say why the test may skip", r.line, r.reason)
		}
	}
}
