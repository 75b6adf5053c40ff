package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// namedLoc is a location a finding names, with its role ("unpersisted", "flush", the kind for
// the finding's own location).
type namedLoc struct {
	Role string
	Loc  Location
}

// excerpt is the source around the named lines of one file: File, or Missing saying why it could
// not be read; Lines are the lines shown (runs separated by a gap line, Number 0).
type excerpt struct {
	File    string
	Missing string
	Lines   []excerptLine
}

type excerptLine struct {
	Number int
	Text   string
	Roles  []string // the roles naming this line; none for a context line
}

// sourceFile is one file read for the excerpts: its lines, or why it could not be read.
type sourceFile struct {
	lines []string
	err   string
}

// sources reads each source file once per report.
type sources struct {
	read  func(string) ([]byte, error)
	files map[string]*sourceFile
}

func (s *sources) file(path string) *sourceFile {
	if f, ok := s.files[path]; ok {
		return f
	}
	f := &sourceFile{}
	b, err := s.read(path)
	switch {
	case err != nil:
		f.err = "source not available: " + errText(err)
	case len(b) > MaxExcerptBytes:
		f.err = fmt.Sprintf("source not shown: the file has %d bytes (more than %d)", len(b), MaxExcerptBytes)
	case slices.Contains(b, 0):
		f.err = "source not shown: the file is not text"
	default:
		f.lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	s.files[path] = f
	return f
}

// errText is an error's message without a leading "open PATH: " (the path is shown next to it).
func errText(err error) string {
	var u interface{ Unwrap() error }
	if errors.As(err, &u) && u.Unwrap() != nil {
		return u.Unwrap().Error()
	}
	return err.Error()
}

// excerpts returns the excerpts of the named locations (the first MaxExcerptLocs with a file and
// a line), one per file in the order the files are first named: ExcerptContext lines around each
// named line, overlapping runs merged.
func (s *sources) excerpts(named []namedLoc) []excerpt {
	var files []string
	roles := map[string]map[int][]string{}
	n := 0
	for _, nl := range named {
		l := nl.Loc
		if l.File == "" || l.Line <= 0 || n == MaxExcerptLocs {
			continue
		}
		n++
		if roles[l.File] == nil {
			roles[l.File] = map[int][]string{}
			files = append(files, l.File)
		}
		if !slices.Contains(roles[l.File][l.Line], nl.Role) {
			roles[l.File][l.Line] = append(roles[l.File][l.Line], nl.Role)
		}
	}
	var out []excerpt
	for _, path := range files {
		ex := excerpt{File: path}
		f := s.file(path)
		if f.err != "" {
			ex.Missing = f.err
			out = append(out, ex)
			continue
		}
		marked := roles[path]
		show := map[int]bool{}
		for line := range marked {
			for k := line - ExcerptContext; k <= line+ExcerptContext; k++ {
				if k >= 1 && k <= len(f.lines) {
					show[k] = true
				}
			}
		}
		if len(show) == 0 {
			ex.Missing = fmt.Sprintf("source not shown: the file has %d lines, the finding names later ones", len(f.lines))
			out = append(out, ex)
			continue
		}
		prev := 0
		for k := 1; k <= len(f.lines); k++ {
			if !show[k] {
				continue
			}
			if prev != 0 && k != prev+1 {
				ex.Lines = append(ex.Lines, excerptLine{})
			}
			ex.Lines = append(ex.Lines, excerptLine{Number: k, Text: strings.TrimRight(f.lines[k-1], "\r"), Roles: marked[k]})
			prev = k
		}
		out = append(out, ex)
	}
	return out
}
