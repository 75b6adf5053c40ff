// Skipcheck reads the output of `go test -json` and prints it as `go test` does without -v (the
// package lines, and each failed test with its log), then lists the skipped tests with their
// reasons. It exits 1 when a test failed, a package did not build, or a test skipped that is not
// on the allowlist; a skip is a failure unless the allowlist says why it may happen.
//
//	go test -json ./... 2>&1 | go run ./test/skipcheck -allow test/skip-allowlist.txt
//
// The allowlist has one entry per line: a package (its import path below the module, e.g.
// pm/image, or "." for the root), a test name (path.Match patterns, matched against the whole
// name with its subtests, e.g. TestExamples/*), then the reason the test may skip. Blank lines
// and lines starting with # are ignored. With -skips FILE, the skipped tests are also written
// to FILE, one a line (for .ci/run's count). Lines that are not JSON (go's own errors on
// standard error) are printed as they are.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// module is the import path the allowlist's packages are relative to.
const module = "github.com/scry-pm/scry"

// event is one record of `go test -json` (cmd/test2json's TestEvent, and go build's
// BuildEvent, which has ImportPath and the build-output and build-fail actions).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// rule is one allowlist entry.
type rule struct {
	pkg, test, reason string
	line              int
}

// skip is one skipped test.
type skip struct {
	pkg, test, reason string
	allowed           *rule
}

// summary counts what a run did.
type summary struct {
	passed, failed int // tests (and subtests)
	// pkgFailed counts the packages whose test binary failed, buildFailed those that did not
	// build.
	pkgFailed, buildFailed int
	skips                  []skip
	unfinished             []string // tests still running when the stream ended
}

// ok reports whether the run is a success: nothing failed and every skip is allowed.
func (s *summary) ok() bool {
	return s.failed == 0 && s.pkgFailed == 0 && s.buildFailed == 0 && len(s.unfinished) == 0 && s.disallowed() == 0
}

func (s *summary) disallowed() int {
	n := 0
	for _, k := range s.skips {
		if k.allowed == nil {
			n++
		}
	}
	return n
}

func main() {
	allowPath := flag.String("allow", "", "the allowlist `FILE` of tests that may skip")
	skipsPath := flag.String("skips", "", "write the skipped tests to `FILE`, one a line")
	flag.Parse()
	var rules []rule
	if *allowPath != "" {
		f, err := os.Open(*allowPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "skipcheck:", err)
			os.Exit(2)
		}
		rules, err = parseAllowlist(f, *allowPath)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "skipcheck:", err)
			os.Exit(2)
		}
	}
	s, err := check(os.Stdin, os.Stdout, rules)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	report(os.Stdout, s, *allowPath)
	if *skipsPath != "" {
		var b strings.Builder
		for _, k := range s.skips {
			fmt.Fprintf(&b, "%s %s: %s\n", k.pkg, k.test, k.reason)
		}
		if err := os.WriteFile(*skipsPath, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "skipcheck:", err)
			os.Exit(2)
		}
	}
	if !s.ok() {
		os.Exit(1)
	}
}

// parseAllowlist reads an allowlist (name is its path, for messages).
func parseAllowlist(r io.Reader, name string) ([]rule, error) {
	var rules []rule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want PACKAGE TEST REASON, got %q", name, n, line)
		}
		for _, p := range f[:2] {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%s:%d: bad pattern %q: %v", name, n, p, err)
			}
		}
		rest := strings.TrimSpace(line[len(f[0]):])
		reason := strings.TrimSpace(rest[len(f[1]):])
		rules = append(rules, rule{pkg: f[0], test: f[1], reason: reason, line: n})
	}
	return rules, sc.Err()
}

// relPackage is a package's import path relative to the module ("." for the module itself).
func relPackage(pkg string) string {
	if pkg == module {
		return "."
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// match returns the first rule that allows test of pkg to skip, or nil.
func match(rules []rule, pkg, test string) *rule {
	rel := relPackage(pkg)
	for i, r := range rules {
		if ok, _ := path.Match(r.pkg, rel); !ok {
			continue
		}
		if ok, _ := path.Match(r.test, test); ok {
			return &rules[i]
		}
	}
	return nil
}

// framing reports whether a line of a test's output is go test -v's framing, which go test
// without -v does not print: === RUN, PAUSE, CONT and NAME.
func framing(line string) bool {
	return strings.HasPrefix(line, "=== ")
}

// check reads the event stream from in, prints what go test without -v would to out, and
// returns the summary; rules say which skips are allowed.
func check(in io.Reader, out io.Writer, rules []rule) (*summary, error) {
	type key struct{ pkg, test string }
	s := &summary{}
	logs := map[key]*bytes.Buffer{}
	var order []key // running tests, in start order
	br := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var e event
			if line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
				out.Write(line) // not an event: go's own message
			} else {
				k := key{e.Package, e.Test}
				switch {
				case e.Action == "build-output":
					io.WriteString(out, e.Output)
				case e.Action == "build-fail":
					s.buildFailed++
				case e.Test == "":
					// The package's own lines: ok, FAIL, a panic outside a test.
					if e.Action == "output" && e.Output != "PASS\n" && !framing(e.Output) {
						io.WriteString(out, e.Output)
					}
					if e.Action == "fail" {
						s.pkgFailed++
					}
				case e.Action == "run":
					logs[k] = &bytes.Buffer{}
					order = append(order, k)
				case e.Action == "output":
					b := logs[k]
					if b == nil {
						b = &bytes.Buffer{}
						logs[k] = b
						order = append(order, k)
					}
					b.WriteString(e.Output)
				case e.Action == "pass", e.Action == "fail", e.Action == "skip":
					b := logs[k]
					delete(logs, k)
					order = slices.DeleteFunc(order, func(o key) bool { return o == k })
					text := ""
					if b != nil {
						text = b.String()
					}
					switch e.Action {
					case "pass":
						s.passed++
					case "fail":
						s.failed++
						io.WriteString(out, failureText(text))
					case "skip":
						sk := skip{pkg: e.Package, test: e.Test, reason: skipReason(text)}
						sk.allowed = match(rules, e.Package, e.Test)
						s.skips = append(s.skips, sk)
					}
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	// Tests that never finished: the binary died (a timeout, a crash) in them.
	for _, k := range order {
		name := relPackage(k.pkg) + " " + k.test
		s.unfinished = append(s.unfinished, name)
		fmt.Fprintf(out, "--- UNFINISHED: %s\n", name)
		io.WriteString(out, failureText(logs[k].String()))
	}
	if s.failed == 0 && s.pkgFailed == 0 && s.buildFailed == 0 && len(s.unfinished) == 0 && s.passed == 0 && len(s.skips) == 0 {
		return s, errors.New("no test event read: is the input `go test -json`?")
	}
	return s, nil
}

// failureText is a failed test's output as go test without -v prints it: the --- FAIL line
// first, then the log, without the framing lines.
func failureText(text string) string {
	var head, body strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		switch {
		case l == "" || framing(l):
		case strings.HasPrefix(strings.TrimSpace(l), "--- "):
			head.WriteString(l)
		default:
			body.WriteString(l)
		}
	}
	if s := body.String(); s != "" && !strings.HasSuffix(s, "\n") {
		body.WriteString("\n")
	}
	return head.String() + body.String()
}

// skipReason is the log of a skipped test on one line: what it printed besides the framing
// and the --- SKIP line (the t.Skip message last).
func skipReason(text string) string {
	var parts []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || framing(l) || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " | ")
}

// report prints the summary: counts, then every skipped test with its reason.
func report(w io.Writer, s *summary, allowPath string) {
	fmt.Fprintf(w, "\nskipcheck: %d tests passed, %d failed, %d skipped", s.passed, s.failed, len(s.skips))
	if n := s.disallowed(); n > 0 && allowPath != "" {
		fmt.Fprintf(w, " (%d not on the allowlist %s: a failure)", n, allowPath)
	} else if n > 0 {
		fmt.Fprintf(w, " (no allowlist: a failure)")
	}
	fmt.Fprintln(w)
	for _, k := range s.skips {
		verdict := "NOT ALLOWED"
		if k.allowed != nil {
			verdict = fmt.Sprintf("allowed (%s:%d: %s)", allowPath, k.allowed.line, k.allowed.reason)
		}
		fmt.Fprintf(w, "  skipped %s %s: %s [%s]\n", relPackage(k.pkg), k.test, k.reason, verdict)
	}
	if s.pkgFailed > 0 {
		fmt.Fprintf(w, "skipcheck: %d packages failed\n", s.pkgFailed)
	}
	if s.buildFailed > 0 {
		fmt.Fprintf(w, "skipcheck: %d packages did not build\n", s.buildFailed)
	}
	for _, u := range s.unfinished {
		fmt.Fprintf(w, "skipcheck: %s never finished\n", u)
	}
}
