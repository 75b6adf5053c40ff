package repair

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// An edit inserts lines before or after a statement, or deletes a statement. Edits of one file
// are applied together (applyEdits): insertions next to one statement are written once, in the
// order of their slots, and a statement without braces (the body of an if, else, for, while or
// do) gets braces around it and what is inserted.

// edit is one change to a source file.
type edit struct {
	file   *srcFile
	s      *stmt
	after  bool     // insertion after s (else before)
	lines  []string // statements to insert
	delete bool     // delete s (its whole lines)
	order  int      // slot*100+sub: the order of insertions at one place
	labels []string // the findings it repairs
}

// edits turns a solution into edits. Errors: a store whose address the source does not show.
func (p *problem) edits(sol *solution, labels []string) ([]edit, error) {
	var out []edit
	for _, c := range sol.chosen {
		var text string
		switch c.kind {
		case cFence:
			text = p.styles.fence
		case cFlush, cPersist, cTxAdd:
			addr, size, lv, ok := p.storeAddress(c.store)
			if !ok {
				return nil, fmt.Errorf("the address of the store at record %d cannot be written", p.ev(c.store).idx)
			}
			switch c.kind {
			case cFlush:
				text = p.styles.flush.render(addr, size)
			case cPersist:
				text = p.styles.persist.render(addr, size)
			default:
				text = p.styles.txAddText(lv, addr, size)
			}
		case cMove:
			text = c.st.file.movedText(c.st.s)
			out = append(out, edit{file: c.st.file, s: c.st.s, delete: true, labels: labels})
		case cDelete:
			out = append(out, edit{file: c.st.file, s: c.st.s, delete: true, labels: labels})
			continue
		}
		out = append(out, edit{file: c.gap.st.file, s: c.gap.st.s, after: c.gap.after, lines: []string{text}, order: c.slot*100 + c.sub, labels: labels})
	}
	return out, nil
}

// change is a byte-range replacement in a file's text.
type change struct {
	off, end int
	text     string
	line     int // the line the change is at (1-based), for the hunk headings
	labels   []string
}

// applyEdits returns the new text of file f with edits (all of f) applied, and the changes
// made (in offset order).
func applyEdits(f *srcFile, edits []edit) (string, []change) {
	type place struct {
		s     *stmt
		after bool
	}
	ins := map[place][]edit{}
	var places []place
	deleted := map[*stmt]bool{}
	var changes []change
	for _, e := range edits {
		if e.delete {
			if !deleted[e.s] {
				deleted[e.s] = true
				a, b := f.starts[f.firstLine(e.s)-1], lineEnd(f, f.lastLine(e.s))+1
				changes = append(changes, change{off: a, end: min(b, len(f.text)), line: f.firstLine(e.s), labels: e.labels})
			}
			continue
		}
		pl := place{e.s, e.after}
		if _, ok := ins[pl]; !ok {
			places = append(places, pl)
		}
		ins[pl] = append(ins[pl], e)
	}
	wrapped := map[*stmt]bool{}
	for _, pl := range places {
		es := ins[pl]
		sort.SliceStable(es, func(i, j int) bool { return es[i].order < es[j].order })
		var lines, labels []string
		for _, e := range es {
			lines = append(lines, e.lines...)
			labels = append(labels, e.labels...)
		}
		if n := len(lines); n > 0 {
			lines[n-1] = annotate(lines[n-1], labels)
		}
		s := pl.s
		indent := f.indent(f.firstLine(s))
		if s.braceless {
			changes = append(changes, wrapChanges(f, s, pl.after, lines, labels, !wrapped[s])...)
			wrapped[s] = true
			continue
		}
		if pl.after {
			last := f.toks[s.last]
			if restOfLineEmpty(f, s.last) {
				at, text := afterLine(f, last.line, indent+strings.Join(lines, "\n"+indent))
				changes = append(changes, change{off: at, end: at, text: text, line: last.line, labels: labels})
			} else {
				next := f.toks[s.last+1]
				changes = append(changes, change{off: last.end, end: next.off, text: "\n" + indent + strings.Join(lines, "\n"+indent) + "\n" + indent, line: last.line, labels: labels})
			}
			continue
		}
		first := f.toks[s.first]
		if s.first == 0 || f.toks[s.first-1].line < first.line {
			at := f.starts[first.line-1]
			changes = append(changes, change{off: at, end: at, text: indent + strings.Join(lines, "\n"+indent) + "\n", line: first.line, labels: labels})
		} else {
			changes = append(changes, change{off: first.off, end: first.off, text: strings.Join(lines, "\n"+indent) + "\n" + indent, line: first.line, labels: labels})
		}
	}
	// An insertion inside a deleted range goes after it.
	for i := range changes {
		if changes[i].off != changes[i].end {
			continue
		}
		for _, d := range changes {
			if d.off < d.end && changes[i].off > d.off && changes[i].off < d.end {
				changes[i].off, changes[i].end = d.end, d.end
			}
		}
	}
	sort.SliceStable(changes, func(i, j int) bool {
		if changes[i].off != changes[j].off {
			return changes[i].off < changes[j].off
		}
		return changes[i].end < changes[j].end // insertions before a deletion at the same place
	})
	var b strings.Builder
	at := 0
	for _, c := range changes {
		if c.off < at {
			continue // overlapping (a second deletion of the same lines)
		}
		b.Write(f.text[at:c.off])
		b.WriteString(c.text)
		at = c.end
	}
	b.Write(f.text[at:])
	return b.String(), changes
}

// lineEnd returns the offset of the newline ending line n (len(text) for the last line).
func lineEnd(f *srcFile, n int) int {
	if n < len(f.starts) {
		return f.starts[n] - 1
	}
	return len(f.text)
}

// afterLine returns where and what to insert so that body (lines without their final newline)
// follows line n: at the start of the next line, or after a newline added at the end of a
// last line without one.
func afterLine(f *srcFile, n int, body string) (int, string) {
	end := lineEnd(f, n)
	if end < len(f.text) {
		return end + 1, body + "\n"
	}
	return end, "\n" + body
}

// restOfLineEmpty reports whether no token follows token i on its line.
func restOfLineEmpty(f *srcFile, i int) bool {
	return i+1 >= len(f.toks) || f.toks[i+1].line != f.toks[i].line
}

// wrapChanges inserts lines before or after the brace-less body s, putting braces around it
// (open: write the braces; a second insertion at the same body writes only its lines).
func wrapChanges(f *srcFile, s *stmt, after bool, lines, labels []string, open bool) []change {
	head := f.toks[s.first-1]
	first, last := f.toks[s.first], f.toks[s.last]
	ctlIndent := f.indent(head.line)
	if s.parent != nil {
		ctlIndent = f.indent(f.firstLine(s.parent))
	}
	var out []change
	if first.line > head.line && restOfLineEmpty(f, s.last) {
		// The body on its own lines: "head {", body, insertions, "}".
		indent := f.indent(first.line)
		if open {
			out = append(out, change{off: head.end, end: head.end, text: " {", line: head.line, labels: labels})
		}
		if after {
			body := indent + strings.Join(lines, "\n"+indent)
			if open {
				body += "\n" + ctlIndent + "}"
			}
			at, text := afterLine(f, last.line, body)
			out = append(out, change{off: at, end: at, text: text, line: last.line, labels: labels})
		} else {
			at := f.starts[first.line-1]
			out = append(out, change{off: at, end: at, text: indent + strings.Join(lines, "\n"+indent) + "\n", line: first.line, labels: labels})
			if open {
				at, text := afterLine(f, last.line, ctlIndent+"}")
				out = append(out, change{off: at, end: at, text: text, line: last.line, labels: labels})
			}
		}
		return out
	}
	// The body on the line of its head: "head { body insertions }".
	if after {
		text := " " + strings.Join(lines, " ")
		if open {
			text += " }"
			out = append(out, change{off: first.off, end: first.off, text: "{ ", line: first.line, labels: labels})
		}
		out = append(out, change{off: last.end, end: last.end, text: text, line: last.line, labels: labels})
	} else {
		text := strings.Join(lines, " ") + " "
		if open {
			text = "{ " + text
			out = append(out, change{off: last.end, end: last.end, text: " }", line: last.line, labels: labels})
		}
		out = append(out, change{off: first.off, end: first.off, text: text, line: first.line, labels: labels})
	}
	return out
}

// annotate adds to the last line of text, a statement scry fix inserts or moves, the one-line
// comment naming the findings it repairs ("/* scry fix: ordering-violation at buggy.c:59 */"):
// at its end, or before a // comment the line ends with.
func annotate(text string, labels []string) string {
	var names []string
	for _, l := range labels {
		// "kind (finding N) at file:line": the finding's number is the report's, not the code's.
		if i := strings.Index(l, " (finding "); i >= 0 {
			if j := strings.Index(l[i:], ")"); j >= 0 {
				l = l[:i] + l[i+j+1:]
			}
		}
		if !slices.Contains(names, l) {
			names = append(names, l)
		}
	}
	if len(names) == 0 {
		return text
	}
	note := "/* scry fix: " + strings.Join(names, ", ") + " */"
	start := strings.LastIndexByte(text, '\n') + 1
	if c := lineComment(text[start:]); c >= 0 {
		return text[:start+c] + note + " " + text[start+c:]
	}
	return text + " " + note
}

// lineComment returns the offset of the // comment that ends line, outside string and character
// literals, or -1.
func lineComment(line string) int {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return i
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			if j := strings.Index(line[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				return -1
			}
		}
	}
	return -1
}
