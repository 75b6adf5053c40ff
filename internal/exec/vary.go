package exec

import (
	"bytes"
	"slices"
	"strings"
)

// VariesMark is what Normalized writes in place of an output line or block of lines that a
// Variance says varies between identical runs, and after the fields of a line that do not.
const VariesMark = "{varies}"

// Variance is what differs between two runs of a program on the same consistent image with the
// same input, which Outcome.Normalized then leaves out of every output it is compared with
// (LearnVariance). A program that prints times, process ids, random keys or hash-ordered
// output prints something else in every run; such differences say nothing of a crash image.
//
// A line is split into fields: maximal runs of bytes other than white space and the
// separators , ; = ( ) [ ] { } < > " ' |, so that "12:03:44", "0x7f3a" and "1.25s" are one field
// each and "key=5" is two. When the two outputs have the same number of lines, each line that
// differs between them is compared by the fields it has in both, so that one varying number
// on a line leaves the rest of the line compared:
//
//   - the same fields in another order (hash-ordered output): as a multiset of fields,
//     written sorted and followed by "{varies: order}";
//   - else by the longest common subsequence of their fields (the stable fields, in order):
//     a line matches when the stable fields are a subsequence of its own and it has as many
//     other fields as the two runs had (when they had as many); it is then written as the
//     first run's line with its other fields as "{varies}" (and "{varies}" after it when the
//     number of other fields varies), and a line that does not match is left as it is, so it
//     differs. Other fields may fall anywhere among the stable ones: new random keys printed
//     in a sorted line among keys that do not change;
//   - a line of more than 4096 fields: the whole line, written "{varies}".
//
// When the numbers of lines differ, the lines between their common first and last lines are
// left out as one block, written "{varies}".
type Variance struct {
	lines map[int]lineMask // by line index
	// With block set, the outputs differ in their number of lines: lines from head to the
	// last tail lines (exclusive) vary as one block.
	block      bool
	head, tail int
	// nlines and nfields count the lines that vary (a block: the larger of the two) and
	// their fields that vary (at most, of the two runs), whole lines and blocks excepted.
	nlines, nfields int
}

// lineMask is how one line that varies is compared (Variance).
type lineMask struct {
	whole     bool
	unordered bool
	stable    []string // the fields of both runs, in order
	other     int      // the number of other fields, -1 when the two runs had different numbers
	shown     string   // how a line that matches is written: the first run's, its other fields as VariesMark
}

// maxFieldsLCS bounds the fields of a line compared by their common subsequence.
const maxFieldsLCS = 4096

// Lines returns the number of output lines that vary, in part or whole (0 for nil).
func (v *Variance) Lines() int {
	if v == nil {
		return 0
	}
	return v.nlines
}

// Fields returns the number of fields that vary in lines that vary only in part (0 for nil).
func (v *Variance) Fields() int {
	if v == nil {
		return 0
	}
	return v.nfields
}

// LearnVariance compares two runs of the same program on the same image with the same input
// (their outputs as Normalized writes them, without a variance) and returns what varies
// between them, or nil when their outputs are equal.
func LearnVariance(a, b Outcome) *Variance {
	a.vary, b.vary = nil, nil
	x, y := a.Normalized(), b.Normalized()
	if bytes.Equal(x, y) {
		return nil
	}
	la, lb := splitLines(x), splitLines(y)
	v := &Variance{}
	if len(la) != len(lb) {
		for v.head < min(len(la), len(lb)) && la[v.head] == lb[v.head] {
			v.head++
		}
		for v.tail < min(len(la), len(lb))-v.head && la[len(la)-1-v.tail] == lb[len(lb)-1-v.tail] {
			v.tail++
		}
		v.block = true
		v.nlines = max(len(la), len(lb)) - v.head - v.tail
		return v
	}
	v.lines = map[int]lineMask{}
	for i := range la {
		if la[i] == lb[i] {
			continue
		}
		v.nlines++
		fa, fb := fieldsOf(la[i]), fieldsOf(lb[i])
		var m lineMask
		switch {
		case len(fa) > maxFieldsLCS || len(fb) > maxFieldsLCS:
			m.whole = true
		case slices.Equal(sorted(fa), sorted(fb)):
			m.unordered = true
		default:
			m.stable = lcs(fa, fb)
			m.other = len(fa) - len(m.stable)
			if len(fb) != len(fa) {
				m.other = -1
			}
			m.shown = m.show(la[i])
			v.nfields += max(len(fa), len(fb)) - len(m.stable)
		}
		v.lines[i] = m
	}
	return v
}

// mask writes out with what v says varies left out.
func (v *Variance) mask(out []byte) []byte {
	ls := splitLines(out)
	var b bytes.Buffer
	b.Grow(len(out))
	if v.block {
		end := max(v.head, len(ls)-v.tail)
		for _, l := range ls[:min(v.head, len(ls))] {
			b.WriteString(l)
		}
		b.WriteString(VariesMark + "\n")
		for _, l := range ls[end:] {
			b.WriteString(l)
		}
		return b.Bytes()
	}
	for i, l := range ls {
		m, ok := v.lines[i]
		if !ok {
			b.WriteString(l)
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		b.WriteString(m.apply(l))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// apply writes line l as m compares it (without its newline).
func (m lineMask) apply(l string) string {
	f := fieldsOf(l)
	switch {
	case m.whole:
		return VariesMark
	case m.unordered:
		return strings.Join(append(sorted(f), "{varies: order}"), " ")
	}
	// The stable fields must be a subsequence of the line's fields (greedy, earliest first).
	k := 0
	for _, x := range f {
		if k < len(m.stable) && x == m.stable[k] {
			k++
		}
	}
	if k < len(m.stable) || m.other >= 0 && len(f)-len(m.stable) != m.other {
		return strings.TrimSuffix(l, "\n")
	}
	return m.shown
}

// show writes line l (without its newline) with its fields that are not m's stable ones (the
// stable fields matched earliest first) as VariesMark, and, when the number of other fields
// varies, VariesMark after it.
func (m lineMask) show(l string) string {
	l = strings.TrimSuffix(l, "\n")
	var b strings.Builder
	k, i := 0, 0
	for i < len(l) {
		if isSeparator(l[i]) {
			b.WriteByte(l[i])
			i++
			continue
		}
		j := i
		for j < len(l) && !isSeparator(l[j]) {
			j++
		}
		if k < len(m.stable) && l[i:j] == m.stable[k] {
			b.WriteString(l[i:j])
			k++
		} else {
			b.WriteString(VariesMark)
		}
		i = j
	}
	if m.other < 0 {
		b.WriteString(" " + VariesMark)
	}
	return b.String()
}

// lcs returns a longest common subsequence of a and b.
func lcs(a, b []string) []string {
	// n[i][j] is the length of an LCS of a[i:] and b[j:].
	n := make([][]int32, len(a)+1)
	for i := range n {
		n[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				n[i][j] = n[i+1][j+1] + 1
			} else {
				n[i][j] = max(n[i+1][j], n[i][j+1])
			}
		}
	}
	var out []string
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i, j = i+1, j+1
		case n[i+1][j] >= n[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

func sorted(f []string) []string {
	s := slices.Clone(f)
	slices.Sort(s)
	return s
}

// WithVariance returns o with variance v: its Normalized output then masks what v says varies.
// A run on a crash image is compared with a legal outcome under the legal outcome's variance
// (Equivalent, DiffOutcomes).
func (o Outcome) WithVariance(v *Variance) Outcome {
	o.vary = v
	return o
}

// Variance returns the variance o was given (WithVariance), or nil.
func (o Outcome) Variance() *Variance { return o.vary }

// DiffOutcomes is Diff of got's and want's normalized outputs, got masked by want's variance:
// the difference Equivalent sees. When got was stopped at its diverging line (Diverged), want
// is cut to as many lines as got printed, so that the diff shows the divergence, not the lines
// got never printed.
func DiffOutcomes(got, want Outcome) string {
	g, w := got.WithVariance(want.vary).Normalized(), want.Normalized()
	if got.Diverged > 0 {
		n := bytes.Count(g, []byte("\n"))
		end := 0
		for i := 0; i < n && end < len(w); i++ {
			j := bytes.IndexByte(w[end:], '\n')
			if j < 0 {
				end = len(w)
				break
			}
			end += j + 1
		}
		w = w[:end]
	}
	return Diff(g, w)
}

// splitLines splits out after each newline (a last line without one is kept as it is).
func splitLines(out []byte) []string {
	var ls []string
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			i = len(out) - 1
		}
		ls = append(ls, string(out[:i+1]))
		out = out[i+1:]
	}
	return ls
}

// isSeparator reports whether c separates fields (Variance).
func isSeparator(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', ',', ';', '=', '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', '|':
		return true
	}
	return false
}

// fieldsOf returns the fields of line l (Variance).
func fieldsOf(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool { return r < 0x80 && isSeparator(byte(r)) })
}
