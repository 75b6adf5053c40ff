package exec

import (
	"bytes"
	"slices"
)

// VariesMark is what Normalized writes in place of an output field, line or block of lines
// that a Variance says varies between identical runs.
const VariesMark = "{varies}"

// Variance is what differs between two runs of a program on the same consistent image with the
// same input: output fields (numbers, hexadecimal ids, times, words), whole lines, or a block
// of lines, which Outcome.Normalized then writes as VariesMark in every output it is compared
// with (LearnVariance). A program that prints times, process ids, random keys or hash-ordered
// output prints something else in every run; such differences say nothing of a crash image.
//
// A line is split into fields: maximal runs of bytes other than white space and the
// separators , ; = ( ) [ ] { } < > " ' |, so that "12:03:44", "0x7f3a" and "1.25s" are one field
// each and "key=5" is two. When the two outputs have the same number of lines, each line that
// differs masks the fields that differ, if both have the same number of fields and masking
// them makes the lines equal, else the whole line; so one varying number on a line leaves the
// rest of the line compared. When the numbers of lines differ, the lines between their common
// first and last lines are masked as one block.
type Variance struct {
	fields map[int][]int // line index -> its varying fields' indices, ascending
	whole  map[int]bool  // line index -> the whole line varies
	// With block set, the outputs differ in their number of lines: lines from head to the
	// last tail lines (exclusive) vary as one block.
	block      bool
	head, tail int
	// lines and nfields count the lines that vary (a block: the larger of the two) and the
	// fields masked in lines that vary in part.
	lines, nfields int
}

// Lines returns the number of output lines that vary, in part or whole (0 for nil).
func (v *Variance) Lines() int {
	if v == nil {
		return 0
	}
	return v.lines
}

// Fields returns the number of fields masked in lines that vary only in part (0 for nil).
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
		v.lines = max(len(la), len(lb)) - v.head - v.tail
		return v
	}
	v.fields, v.whole = map[int][]int{}, map[int]bool{}
	for i := range la {
		if la[i] == lb[i] {
			continue
		}
		v.lines++
		fa, fb := splitFields(la[i]), splitFields(lb[i])
		if len(fa) == len(fb) {
			var idx []int
			for k := 1; k < len(fa); k += 2 {
				if fa[k] != fb[k] {
					idx = append(idx, k/2)
				}
			}
			if maskFields(la[i], idx) == maskFields(lb[i], idx) {
				v.fields[i] = idx
				v.nfields += len(idx)
				continue
			}
		}
		v.whole[i] = true
	}
	return v
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
// the difference Equivalent sees.
func DiffOutcomes(got, want Outcome) string {
	return Diff(got.WithVariance(want.vary).Normalized(), want.Normalized())
}

// mask writes out with what v says varies replaced by VariesMark.
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
		switch {
		case v.whole[i]:
			if len(l) > 0 && l[len(l)-1] == '\n' {
				b.WriteString(VariesMark + "\n")
			} else {
				b.WriteString(VariesMark)
			}
		case v.fields[i] != nil:
			b.WriteString(maskFields(l, v.fields[i]))
		default:
			b.WriteString(l)
		}
	}
	return b.Bytes()
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

// splitFields splits a line into separators and fields, alternating: s[0] is the separators
// before the first field (maybe ""), s[1] the first field, s[2] the separators after it, and so
// on; the last element is separators (maybe "").
func splitFields(l string) []string {
	s := []string{}
	i := 0
	for {
		j := i
		for j < len(l) && isSeparator(l[j]) {
			j++
		}
		s = append(s, l[i:j])
		if j == len(l) {
			return s
		}
		k := j
		for k < len(l) && !isSeparator(l[k]) {
			k++
		}
		s = append(s, l[j:k])
		i = k
	}
}

// maskFields returns l with its fields of the given indices (ascending) written as VariesMark.
func maskFields(l string, idx []int) string {
	s := splitFields(l)
	for n := 1; n < len(s); n += 2 {
		if slices.Contains(idx, n/2) {
			s[n] = VariesMark
		}
	}
	var b bytes.Buffer
	for _, p := range s {
		b.WriteString(p)
	}
	return b.String()
}
