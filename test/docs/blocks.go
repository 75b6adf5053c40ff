// Package docs tests that README.md and docs/*.md run as written: the shell blocks marked
// runnable are extracted and run, in order, on the build tree `make` wrote, and a stale count, a
// wrong exit status or a missing build step fails `make test`, naming the document and line.
//
// # Marking a block
//
// An HTML comment (invisible on GitHub) on the line before a fenced block marks it:
//
//	<!-- doctest -->            the block runs (bash -euo pipefail, standard input /dev/null)
//	<!-- doctest cd=DIR -->     it runs in DIR, relative to the document's scratch directory
//	<!-- doctest output -->     this block is the expected output of the block run before it
//
// The blocks of one document run in order, in one fresh scratch directory that starts as a copy
// of the source tree (without .git and the build tree) with build/ a link to the build tree:
// the commands run from the root of a built checkout, as a user's do after `make` (the test
// also puts build/bin on PATH, as the Quickstart's `export PATH` does). What one block writes,
// the next sees; a `cd` or `export` does not carry over (each block is its own shell), so a
// block that continues in a directory says so with cd=DIR.
//
// A command exits 0 unless its line ends in a comment that starts `# exit N` (the last line of
// a command continued with backslashes): then it must exit N, and the block goes on.
//
// An output block lists lines that must appear, in this order, in the standard output and
// standard error of the block before it (merged as a terminal shows them); other lines may come
// between them. Leading and trailing blanks are ignored, and "..." in a line matches any text
// within that line (times, paths, ids), so a line that shows a count fails when the count
// changes; a line that is only "..." marks lines left out. A block that shows output without a marker is not checked.
//
// Unmarked shell blocks (those that need the network, WITCHER, root or many minutes, and the
// synopses) are counted per document in the test's log, so that coverage is visible.
package docs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Block is one fenced block of a Markdown document.
type Block struct {
	Line   int    // 1-based line of the opening fence
	Lang   string // the fence's info string ("sh", "", "json", ...)
	Lines  []string
	Marked bool   // a doctest marker precedes it
	Output bool   // marked as the expected output of the run block before it
	Dir    string // cd=DIR: where it runs, relative to the scratch directory
}

// Shell reports whether b looks like shell commands: a block tagged sh, bash, shell or console,
// or an untagged one whose first line starts with a command a user types.
func (b Block) Shell() bool {
	switch b.Lang {
	case "sh", "bash", "shell", "console":
		return true
	case "":
		for _, l := range b.Lines {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			for _, p := range []string{"scry ", "make", "build/", "./", "go ", "git ", "cd ", "$ ", "mkdir "} {
				if strings.HasPrefix(l, p) {
					return true
				}
			}
			return false
		}
	}
	return false
}

var (
	fenceRE  = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^\\s`]*)")
	markerRE = regexp.MustCompile(`^\s*<!--\s*doctest\b(.*?)-->\s*$`)
)

// Parse splits a Markdown document into its fenced blocks and reads their markers. Errors: a
// marker that is not followed by a fenced block, an unknown marker option, an output marker
// before the first run block, or a fence that is never closed; each names its line.
func Parse(text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	var marker *Block // the pending marker's options
	markerLine := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := markerRE.FindStringSubmatch(l); m != nil {
			if marker != nil {
				return nil, fmt.Errorf("line %d: doctest marker not followed by a fenced block", markerLine)
			}
			b, err := parseOptions(m[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			marker, markerLine = &b, i+1
			continue
		}
		m := fenceRE.FindStringSubmatch(l)
		if m == nil {
			if marker != nil && strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("line %d: doctest marker not followed by a fenced block", markerLine)
			}
			continue
		}
		b := Block{Line: i + 1, Lang: m[2]}
		if marker != nil {
			b.Marked, b.Output, b.Dir = true, marker.Output, marker.Dir
			marker = nil
		}
		closed := false
		for i++; i < len(lines); i++ {
			if c := fenceRE.FindStringSubmatch(lines[i]); c != nil && c[2] == "" && strings.HasPrefix(c[1], m[1]) {
				closed = true
				break
			}
			b.Lines = append(b.Lines, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("line %d: fenced block never closed", b.Line)
		}
		if b.Output && !hasRunBlock(blocks) {
			return nil, fmt.Errorf("line %d: doctest output block before any block that runs", b.Line)
		}
		blocks = append(blocks, b)
	}
	if marker != nil {
		return nil, fmt.Errorf("line %d: doctest marker not followed by a fenced block", markerLine)
	}
	return blocks, nil
}

func hasRunBlock(blocks []Block) bool {
	for _, b := range blocks {
		if b.Marked && !b.Output {
			return true
		}
	}
	return false
}

// parseOptions reads a marker's options: "output" or "cd=DIR".
func parseOptions(s string) (Block, error) {
	var b Block
	for _, f := range strings.Fields(s) {
		switch {
		case f == "output":
			b.Output = true
		case strings.HasPrefix(f, "cd="):
			b.Dir = strings.TrimPrefix(f, "cd=")
			if b.Dir == "" || strings.HasPrefix(b.Dir, "/") || strings.Contains(b.Dir, "..") {
				return b, fmt.Errorf("doctest cd=%q: want a directory inside the scratch directory", b.Dir)
			}
		default:
			return b, fmt.Errorf("unknown doctest option %q (want output or cd=DIR)", f)
		}
	}
	if b.Output && b.Dir != "" {
		return b, fmt.Errorf("doctest output takes no cd=")
	}
	return b, nil
}

var exitRE = regexp.MustCompile(`\s#\s*exit\s+(\d+)\b`)

// Script returns the bash script that runs b. Each line keeps its number (line k of the script
// is line k of the block, after one line of preamble), so that bash's $LINENO names the doc's
// line: the preamble reports the line of a failing command, and a command whose last line ends
// in `# exit N` runs as `cmd || st=$?` followed by a check that st is N. docLine is the
// document's line of the block's first line.
func Script(b Block, docLine int) string {
	var s strings.Builder
	fmt.Fprintf(&s, `trap 'echo "doctest: command at line $((LINENO + %d)) exited $?" >&2' ERR; `, docLine-2)
	s.WriteString(`doctest_want() { if [ "$2" != "$1" ]; then echo "doctest: command at line $3 exited $2, the doc says exit $1" >&2; exit 1; fi; }` + "\n")
	lines := append([]string(nil), b.Lines...)
	for i, l := range lines {
		m := exitRE.FindStringSubmatchIndex(l)
		if m == nil || strings.HasSuffix(strings.TrimSpace(l[:m[0]]), "\\") {
			continue
		}
		want, _ := strconv.Atoi(l[m[2]:m[3]])
		start := i
		for start > 0 && strings.HasSuffix(strings.TrimRight(lines[start-1], " \t"), "\\") {
			start--
		}
		lines[i] = fmt.Sprintf("%s || doctest_st=$?; doctest_want %d \"$doctest_st\" %d %s", l[:m[0]], want, docLine+start, l[m[0]:])
		lines[start] = "doctest_st=0; " + lines[start]
	}
	for _, l := range lines {
		s.WriteString(l)
		s.WriteByte('\n')
	}
	return s.String()
}

// Match checks that the lines of want appear in got in order, each against one line of got (both
// trimmed; "..." in a want line matches any text, a want line "..." alone is skipped). It returns "" when they do, and otherwise a
// description of the first want line that is missing, with its 0-based index.
func Match(want []string, got string) (string, int) {
	gotLines := strings.Split(got, "\n")
	j := 0
	for i, w := range want {
		w = strings.TrimSpace(w)
		if w == "" || w == "..." { // a line of its own "..." stands for the lines left out
			continue
		}
		re := linePattern(w)
		for j < len(gotLines) && !re.MatchString(strings.TrimSpace(gotLines[j])) {
			j++
		}
		if j == len(gotLines) {
			return fmt.Sprintf("no line matching %q (after the lines matched before it)", w), i
		}
		j++
	}
	return "", -1
}

// linePattern compiles a want line: literal text, "..." matching any text.
func linePattern(w string) *regexp.Regexp {
	parts := strings.Split(w, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}
