package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Want is a finding a source file expects, written on the finding's line as a trailing comment:
// `// want "kind"` (several kinds in one string or several strings), `// want "kind:class"` to
// give the finding's class (correctness, performance or unconfirmed) when it is not its kind's.
// Clauses of one comment are separated by semicolons; examples/examples_test.go adds property
// clauses. A whole-line comment is prose, never a want.
type Want struct {
	File  string // the base name of the source file
	Line  int    // 1-based
	Kind  string // the finding's kind, e.g. "unpersisted-store"
	Class string // the class the comment gives, "" for the kind's own
}

func (w Want) String() string { return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Kind) }

var (
	// markRE finds a trailing comment (after code on its line) that starts with a want,
	// property or related clause.
	markRE   = regexp.MustCompile(`^(.*?)//\s*((?:want|property|related)\s.*)$`)
	wantRE   = regexp.MustCompile(`^want\s+(.*)$`)
	quotedRE = regexp.MustCompile(`"([^"]*)"`)
)

// Clauses returns the clauses (trimmed) of the want, property or related comment that ends a line of
// source code, or nil when the line has none.
func Clauses(line string) []string {
	m := markRE.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	if code := strings.TrimSpace(m[1]); code == "" || strings.HasPrefix(code, "//") {
		return nil // a whole-line comment is prose
	}
	var out []string
	for _, c := range strings.Split(m[2], ";") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// ParseWant parses one clause of a comment on line line of the source file named file (a base
// name): ok is false when it is no want clause; err says what is wrong with a want clause (no
// quoted kind, an unknown class).
func ParseWant(file string, line int, clause string) (wants []Want, ok bool, err error) {
	m := wantRE.FindStringSubmatch(clause)
	if m == nil {
		return nil, false, nil
	}
	quoted := quotedRE.FindAllStringSubmatch(m[1], -1)
	if len(quoted) == 0 {
		return nil, true, fmt.Errorf("want comment without a quoted kind")
	}
	for _, q := range quoted {
		for _, kind := range strings.Fields(q[1]) {
			kind, class, explicit := strings.Cut(kind, ":")
			if explicit && class != "correctness" && class != "performance" && class != "unconfirmed" {
				return nil, true, fmt.Errorf("want %q: unknown class %q (correctness, performance or unconfirmed)", kind, class)
			}
			wants = append(wants, Want{File: file, Line: line, Kind: kind, Class: class})
		}
	}
	return wants, true, nil
}

// Wants returns the want comments of the source file at path, in line order. Other clauses
// (property) are left to the caller; the error is an unreadable file or a malformed want clause,
// named by file and line.
func Wants(path string) ([]Want, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Want
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		for _, c := range Clauses(sc.Text()) {
			ws, _, err := ParseWant(filepath.Base(path), line, c)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			out = append(out, ws...)
		}
	}
	return out, sc.Err()
}

// ReportFindings returns the findings of a `scry check --format json` report as Wants: the base
// name of the file, the line, the kind and the class of each.
func ReportFindings(report []byte) ([]Want, error) {
	var rep struct {
		Findings []struct {
			Kind     string `json:"kind"`
			Class    string `json:"class"`
			Location struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"location"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		return nil, fmt.Errorf("not a JSON report of scry check: %v", err)
	}
	var out []Want
	for _, f := range rep.Findings {
		out = append(out, Want{filepath.Base(f.Location.File), f.Location.Line, f.Kind, f.Class})
	}
	return out, nil
}

// CompareWants compares findings by file, line and kind (not class): missing are the wants no
// finding of got matches, unexpected the findings of got no want names.
func CompareWants(want, got []Want) (missing, unexpected []Want) {
	key := func(w Want) Want { return Want{File: w.File, Line: w.Line, Kind: w.Kind} }
	in := func(ws []Want, w Want) bool {
		return slices.ContainsFunc(ws, func(x Want) bool { return key(x) == key(w) })
	}
	for _, w := range want {
		if !in(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !in(want, g) {
			unexpected = append(unexpected, g)
		}
	}
	return missing, unexpected
}
