package smt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Sexp is one S-expression of a solver's answer: an atom (a symbol, a numeral, a string
// literal, with List nil) or a list.
type Sexp struct {
	Atom string // the atom's text; for a string literal, its contents without quotes
	// Str marks a string literal ("..." in SMT-LIB).
	Str  bool
	List []Sexp
	// IsList distinguishes the empty list () from an atom.
	IsList bool
}

// String writes s back in SMT-LIB syntax.
func (s Sexp) String() string {
	if !s.IsList {
		if s.Str {
			return `"` + strings.ReplaceAll(s.Atom, `"`, `""`) + `"`
		}
		return s.Atom
	}
	parts := make([]string, len(s.List))
	for i, e := range s.List {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// Int returns the value of an integer term of a model: a numeral or (- numeral).
func (s Sexp) Int() (int64, error) {
	if !s.IsList {
		return strconv.ParseInt(s.Atom, 10, 64)
	}
	if len(s.List) == 2 && !s.List[0].IsList && s.List[0].Atom == "-" {
		v, err := s.List[1].Int()
		return -v, err
	}
	return 0, fmt.Errorf("not an integer value: %s", s)
}

// Bool returns the value of a Boolean term of a model: true or false.
func (s Sexp) Bool() (bool, error) {
	switch {
	case !s.IsList && s.Atom == "true":
		return true, nil
	case !s.IsList && s.Atom == "false":
		return false, nil
	}
	return false, fmt.Errorf("not a Boolean value: %s", s)
}

// MaxDepth bounds the nesting of lists the reader accepts; MaxAtom the bytes of one atom.
const (
	MaxDepth = 1000
	MaxAtom  = 1 << 20
)

// ErrSyntax is wrapped by the errors of a malformed S-expression.
var ErrSyntax = errors.New("malformed S-expression")

// Reader reads S-expressions from a solver's output, one at a time.
type Reader struct {
	r *bufio.Reader
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReader(r)} }

// Parse reads every S-expression of text (for tests, and answers read whole). Errors wrap
// ErrSyntax.
func Parse(text string) ([]Sexp, error) {
	rd := NewReader(strings.NewReader(text))
	var out []Sexp
	for {
		s, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
}

// Next returns the next S-expression. It returns io.EOF at the end of the input before any
// token, and an error wrapping ErrSyntax (or io.ErrUnexpectedEOF) for a malformed or cut one.
func (rd *Reader) Next() (Sexp, error) {
	return rd.next(0)
}

func (rd *Reader) skipSpace() (byte, error) {
	for {
		c, err := rd.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case ';': // comment to the end of the line
			for c != '\n' {
				if c, err = rd.r.ReadByte(); err != nil {
					return 0, err
				}
			}
			continue
		}
		return c, nil
	}
}

func (rd *Reader) next(depth int) (Sexp, error) {
	if depth > MaxDepth {
		return Sexp{}, fmt.Errorf("%w: nested deeper than %d lists", ErrSyntax, MaxDepth)
	}
	c, err := rd.skipSpace()
	if err != nil {
		if depth > 0 && errors.Is(err, io.EOF) {
			return Sexp{}, io.ErrUnexpectedEOF
		}
		return Sexp{}, err
	}
	switch c {
	case '(':
		list := Sexp{IsList: true}
		for {
			c, err := rd.skipSpace()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return Sexp{}, io.ErrUnexpectedEOF
				}
				return Sexp{}, err
			}
			if c == ')' {
				return list, nil
			}
			if err := rd.r.UnreadByte(); err != nil {
				return Sexp{}, err
			}
			e, err := rd.next(depth + 1)
			if err != nil {
				if errors.Is(err, io.EOF) {
					return Sexp{}, io.ErrUnexpectedEOF
				}
				return Sexp{}, err
			}
			list.List = append(list.List, e)
		}
	case ')':
		return Sexp{}, fmt.Errorf("%w: unbalanced ')'", ErrSyntax)
	case '"':
		var b strings.Builder
		for {
			c, err := rd.r.ReadByte()
			if err != nil {
				return Sexp{}, io.ErrUnexpectedEOF
			}
			if c == '"' {
				// "" is an escaped quote inside a string literal (SMT-LIB 2.6 §3.1).
				if n, err := rd.r.Peek(1); err == nil && n[0] == '"' {
					rd.r.ReadByte()
				} else {
					return Sexp{Atom: b.String(), Str: true}, nil
				}
			}
			if b.Len() >= MaxAtom {
				return Sexp{}, fmt.Errorf("%w: string longer than %d bytes", ErrSyntax, MaxAtom)
			}
			b.WriteByte(c)
		}
	case '|':
		var b strings.Builder
		b.WriteByte('|')
		for {
			c, err := rd.r.ReadByte()
			if err != nil {
				return Sexp{}, io.ErrUnexpectedEOF
			}
			b.WriteByte(c)
			if c == '|' {
				return Sexp{Atom: b.String()}, nil
			}
			if b.Len() >= MaxAtom {
				return Sexp{}, fmt.Errorf("%w: symbol longer than %d bytes", ErrSyntax, MaxAtom)
			}
		}
	}
	var b strings.Builder
	b.WriteByte(c)
	for {
		c, err := rd.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Sexp{Atom: b.String()}, nil
			}
			return Sexp{}, err
		}
		switch c {
		case ' ', '\t', '\n', '\r', '(', ')', '"', ';':
			rd.r.UnreadByte()
			return Sexp{Atom: b.String()}, nil
		}
		if b.Len() >= MaxAtom {
			return Sexp{}, fmt.Errorf("%w: atom longer than %d bytes", ErrSyntax, MaxAtom)
		}
		b.WriteByte(c)
	}
}
