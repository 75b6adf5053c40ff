package repair

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// fileDiff is the change of one source file.
type fileDiff struct {
	path     string // the file read
	name     string // as written in the diff's headers (without a/ and b/)
	abs      bool   // name is absolute (the file is outside the directory scry fix runs in)
	old, new string
	changes  []change
}

// diffName returns how the diff names path: relative to dir when path is below it, else
// absolute.
func diffName(path, dir string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path, filepath.IsAbs(path)
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(rel), false
	}
	return abs, true
}

// contextLines is the context of each hunk, as diff -u writes it.
const contextLines = 3

// writeDiff writes the unified diff of the files, git's a/ and b/ prefixes on relative names
// (`git apply` and `patch -p1` take it in the directory the names are relative to; absolute
// names need `patch -p0`). Each hunk's heading (the text after its second "@@", which git apply
// and patch ignore) names the findings its changes repair. Errors: a write error.
func writeDiff(w io.Writer, files []fileDiff) error {
	for _, fd := range files {
		edits := udiff.Lines(fd.old, fd.new)
		if len(edits) == 0 {
			continue
		}
		from, to := "a/"+fd.name, "b/"+fd.name
		if fd.abs {
			from, to = fd.name, fd.name
		}
		u, err := udiff.ToUnifiedDiff(from, to, fd.old, edits, contextLines)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "--- %s\n+++ %s\n", u.From, u.To); err != nil {
			return err
		}
		for _, h := range u.Hunks {
			fromCount, toCount := 0, 0
			for _, l := range h.Lines {
				switch l.Kind {
				case udiff.Delete:
					fromCount++
				case udiff.Insert:
					toCount++
				default:
					fromCount++
					toCount++
				}
			}
			heading := hunkHeading(fd.changes, h.FromLine, h.FromLine+max(fromCount, 1))
			fmt.Fprintf(w, "@@ -%s +%s @@%s\n", hunkRange(h.FromLine, fromCount), hunkRange(h.ToLine, toCount), heading)
			for _, l := range h.Lines {
				mark := " "
				switch l.Kind {
				case udiff.Delete:
					mark = "-"
				case udiff.Insert:
					mark = "+"
				}
				fmt.Fprintf(w, "%s%s", mark, l.Content)
				if !strings.HasSuffix(l.Content, "\n") {
					fmt.Fprint(w, "\n\\ No newline at end of file\n")
				}
			}
		}
	}
	return nil
}

// hunkRange formats a hunk's start and count as diff -u does.
func hunkRange(start, count int) string {
	switch {
	case count == 0:
		return fmt.Sprintf("%d,0", max(start-1, 0))
	case count == 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// hunkHeading returns " scry fix: " and the labels of the changes at lines [from, to) of the
// old file ("" when none).
func hunkHeading(changes []change, from, to int) string {
	var labels []string
	for _, c := range changes {
		if c.line >= from-1 && c.line < to+1 {
			for _, l := range c.labels {
				if !slices.Contains(labels, l) {
					labels = append(labels, l)
				}
			}
		}
	}
	if len(labels) == 0 {
		return ""
	}
	return " scry fix: " + strings.Join(labels, "; ")
}
