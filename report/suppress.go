package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Suppressions is a set of rules that remove findings from a report. The file format (one rule a
// line, documented in docs/oracles.md "Suppressions"):
//
//	# comment
//	KIND FILE-GLOB[:FUNCTION-GLOB]
//
// KIND is a finding kind or "*". FILE-GLOB is matched with path.Match against the finding's
// location file, and, when it contains no "/", also against the file's base name; a relative
// glob with a "/" (vendor/*.c) is also matched against the file's path relative to the current
// directory when the suppressions were loaded, since reports name files by absolute path. The optional
// FUNCTION-GLOB is matched against the location's function. A finding is suppressed when some
// rule matches it. Blank lines and lines starting with # are ignored; text after " #" is a
// comment.
type Suppressions struct {
	rules []suppRule
	dir   string // the current directory at load time ("" unknown)
	path  string // the file LoadSuppressions read ("" parsed from a stream)
}

// Path returns the absolute path of the file the suppressions were loaded from ("" when parsed
// from a stream).
func (s *Suppressions) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

type suppRule struct {
	kind, file, fn string
	hasFn          bool
	line           int // line in the file, for messages
	used           int
}

// LoadSuppressions reads a suppressions file. Errors name the file and the line.
func LoadSuppressions(name string) (*Suppressions, error) {
	b, err := ReadFile(name, "a suppressions file")
	if err != nil {
		return nil, err
	}
	s, err := ParseSuppressions(bytes.NewReader(b), name)
	if s != nil {
		s.path, _ = filepath.Abs(name)
	}
	return s, err
}

// ParseSuppressions reads suppressions in the format of Suppressions from r; name is used in
// error messages ("name:line: ...").
func ParseSuppressions(r io.Reader, name string) (*Suppressions, error) {
	s := &Suppressions{}
	if wd, err := os.Getwd(); err == nil {
		s.dir = wd
	}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"KIND FILE-GLOB[:FUNCTION-GLOB]\", got %d fields", name, n, len(fields))
		}
		rule := suppRule{kind: fields[0], line: n}
		if !validKind(rule.kind) {
			return nil, fmt.Errorf("%s:%d: bad kind %q: want a kebab-case kind name or *", name, n, rule.kind)
		}
		pat := fields[1]
		if i := strings.LastIndexByte(pat, ':'); i >= 0 {
			rule.file, rule.fn, rule.hasFn = pat[:i], pat[i+1:], true
			if rule.fn == "" {
				return nil, fmt.Errorf("%s:%d: empty function pattern after ':'", name, n)
			}
			if _, err := path.Match(rule.fn, ""); err != nil {
				return nil, fmt.Errorf("%s:%d: bad function pattern %q: %v", name, n, rule.fn, err)
			}
		} else {
			rule.file = pat
		}
		if rule.file == "" {
			return nil, fmt.Errorf("%s:%d: empty file pattern", name, n)
		}
		if _, err := path.Match(rule.file, ""); err != nil {
			return nil, fmt.Errorf("%s:%d: bad file pattern %q: %v", name, n, rule.file, err)
		}
		s.rules = append(s.rules, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

func validKind(k string) bool {
	if k == "*" {
		return true
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return k != "" && k[0] != '-' && k[len(k)-1] != '-'
}

func (r *suppRule) matches(f *Finding, dir string) bool {
	if r.kind != "*" && r.kind != string(f.Kind) {
		return false
	}
	file := f.Location.File
	ok, _ := path.Match(r.file, file)
	switch {
	case ok:
	case !strings.Contains(r.file, "/"):
		ok, _ = path.Match(r.file, path.Base(file))
	case dir != "" && !path.IsAbs(r.file) && path.IsAbs(file):
		if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
			ok, _ = path.Match(r.file, filepath.ToSlash(rel))
		}
	}
	if !ok {
		return false
	}
	if r.hasFn {
		ok, _ = path.Match(r.fn, f.Location.Function)
	}
	return ok
}

// Len returns the number of rules.
func (s *Suppressions) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// Match reports whether a rule suppresses f.
func (s *Suppressions) Match(f *Finding) bool {
	if s == nil {
		return false
	}
	for i := range s.rules {
		if s.rules[i].matches(f, s.dir) {
			s.rules[i].used++
			return true
		}
	}
	return false
}

// Filter removes the suppressed findings from rep and counts them in rep.Suppressed (by kind).
// It returns the number removed. A nil *Suppressions removes nothing.
func (s *Suppressions) Filter(rep *Report) int {
	if s == nil || len(s.rules) == 0 {
		return 0
	}
	kept := rep.Findings[:0]
	removed := 0
	for _, f := range rep.Findings {
		if s.Match(&f) {
			if rep.Suppressed == nil {
				rep.Suppressed = map[Kind]int{}
			}
			rep.Suppressed[f.Kind]++
			removed++
			continue
		}
		kept = append(kept, f)
	}
	clear(rep.Findings[len(kept):])
	rep.Findings = kept
	return removed
}

// Unused returns the rules (as "line N: KIND PATTERN") that suppressed nothing so far.
func (s *Suppressions) Unused() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, r := range s.rules {
		if r.used == 0 {
			p := r.file
			if r.hasFn {
				p += ":" + r.fn
			}
			out = append(out, fmt.Sprintf("line %d: %s %s", r.line, r.kind, p))
		}
	}
	return out
}
