package repair

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// This file reads C (and the C subset of C++) source well enough to place a repair: where each
// statement starts and ends, which block holds it, whether it is the body of an if, else, for,
// while or do without braces, and the text of the lvalue a store writes. It is a lexer and a
// statement parser over tokens, not a compiler: preprocessor lines are skipped (both branches of
// an #if are read as code), macros are read as the calls and identifiers they look like, and a
// macro that takes a block (TX_BEGIN(pop) { ... } TX_END) is read as a statement with a body. A
// repair is rebuilt and checked again (validate.go), which catches what this reading gets wrong.

type tokKind uint8

const (
	tIdent tokKind = iota + 1
	tNumber
	tString
	tChar
	tPunct
)

type token struct {
	kind      tokKind
	text      string
	off, end  int // byte offsets in the file
	line, col int // 1-based; col counts bytes, as the compiler's debug information does
}

// stmtKind is the kind of a statement.
type stmtKind uint8

const (
	sSimple   stmtKind = iota + 1 // an expression or declaration statement, up to its ';'
	sCompound                     // { ... }
	sControl                      // if / for / while / switch / do, with its bodies
	sMacro                        // NAME(args) { ... } [NAME ...]: a macro that takes a block
	sLabel                        // case X: / default: / name:
	sEmpty                        // ;
)

// stmt is one statement: tokens [first, last] (inclusive).
type stmt struct {
	kind        stmtKind
	first, last int
	// head is the last token of a control or macro statement's head (the ')' of its condition,
	// or 'do' / 'else').
	parent *stmt // the enclosing statement (compound, control or macro); nil at the top
	// bodies are the sub-statements of a compound (in order) or of a control or macro
	// statement (its bodies).
	bodies []*stmt
	// braceless: the statement is the body of a control statement written without braces.
	braceless bool
}

// srcFile is one source file, read and parsed.
type srcFile struct {
	path   string // where it was read
	name   string // the name the trace gives it (the compiler's)
	text   []byte
	starts []int // byte offset of the start of each line (line n at index n-1)
	toks   []token
	top    []*stmt // statements of the top-level blocks (function bodies), in order
	all    []*stmt
}

// readSource reads and parses the file at path.
func readSource(path string) (*srcFile, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSource(path, text), nil
}

// parseSource parses text (the file at path).
func parseSource(path string, text []byte) *srcFile {
	f := &srcFile{path: path, name: path, text: text, starts: []int{0}}
	for i, c := range text {
		if c == '\n' {
			f.starts = append(f.starts, i+1)
		}
	}
	f.lex()
	f.parseTop()
	return f
}

// lines returns the number of lines.
func (f *srcFile) lines() int {
	n := len(f.starts)
	if n > 0 && f.starts[n-1] == len(f.text) {
		n-- // a final newline opens no line
	}
	return n
}

// lineText returns line n (1-based) without its newline.
func (f *srcFile) lineText(n int) string {
	if n < 1 || n > len(f.starts) {
		return ""
	}
	end := len(f.text)
	if n < len(f.starts) {
		end = f.starts[n] - 1
	}
	return string(f.text[f.starts[n-1]:end])
}

// indent returns the leading white space of line n.
func (f *srcFile) indent(n int) string {
	l := f.lineText(n)
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}

func (f *srcFile) pos(off int) (line, col int) {
	lo, hi := 0, len(f.starts)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if f.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1, off - f.starts[lo] + 1
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '$'
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

var puncts3 = []string{"<<=", ">>=", "...", "->*"}
var puncts2 = []string{"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", "##"}

// lex splits the text into tokens, skipping white space, comments and preprocessor lines.
func (f *srcFile) lex() {
	t := f.text
	lineStart := true
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < len(t) && t[i+1] == '/':
			for i < len(t) && t[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(t) && t[i+1] == '*':
			j := bytes.Index(t[i+2:], []byte("*/"))
			if j < 0 {
				i = len(t)
			} else {
				i += j + 4
			}
			continue
		case c == '#' && lineStart:
			// A preprocessor line, with its continuations.
			for i < len(t) && t[i] != '\n' {
				if t[i] == '\\' && i+1 < len(t) && t[i+1] == '\n' {
					i += 2
					continue
				}
				if t[i] == '/' && i+1 < len(t) && t[i+1] == '*' {
					j := bytes.Index(t[i+2:], []byte("*/"))
					if j < 0 {
						i = len(t)
						break
					}
					i += j + 4
					continue
				}
				i++
			}
			continue
		case c == '\\' && i+1 < len(t) && t[i+1] == '\n':
			i += 2
			continue
		}
		lineStart = false
		start := i
		kind := tPunct
		switch {
		case isIdentStart(c):
			kind = tIdent
			for i < len(t) && isIdent(t[i]) {
				i++
			}
			// A string or character literal with an encoding prefix (L"", u8"").
			if i < len(t) && (t[i] == '"' || t[i] == '\'') && i-start <= 2 {
				if p := string(t[start:i]); p == "L" || p == "u" || p == "U" || p == "u8" {
					q := t[i]
					i = skipQuoted(t, i, q)
					kind = tString
					if q == '\'' {
						kind = tChar
					}
				}
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(t) && t[i+1] >= '0' && t[i+1] <= '9':
			kind = tNumber
			for i < len(t) && (isIdent(t[i]) || t[i] == '.' || (t[i] == '+' || t[i] == '-') && (t[i-1] == 'e' || t[i-1] == 'E' || t[i-1] == 'p' || t[i-1] == 'P')) {
				i++
			}
		case c == '"':
			kind = tString
			i = skipQuoted(t, i, '"')
		case c == '\'':
			kind = tChar
			i = skipQuoted(t, i, '\'')
		default:
			n := 1
			for _, p := range puncts3 {
				if bytes.HasPrefix(t[i:], []byte(p)) {
					n = 3
					break
				}
			}
			if n == 1 {
				for _, p := range puncts2 {
					if bytes.HasPrefix(t[i:], []byte(p)) {
						n = 2
						break
					}
				}
			}
			i += n
		}
		line, col := f.pos(start)
		f.toks = append(f.toks, token{kind: kind, text: string(t[start:i]), off: start, end: i, line: line, col: col})
	}
}

// skipQuoted returns the offset after the literal quoted by q starting at i (at the quote).
func skipQuoted(t []byte, i int, q byte) int {
	i++
	for i < len(t) && t[i] != q && t[i] != '\n' {
		if t[i] == '\\' {
			i++
		}
		i++
	}
	if i < len(t) && t[i] == q {
		i++
	}
	return i
}

func (f *srcFile) is(i int, text string) bool {
	return i >= 0 && i < len(f.toks) && f.toks[i].text == text && f.toks[i].kind != tString && f.toks[i].kind != tChar
}

// match returns the index of the bracket closing the one at i ('(', '[' or '{'), or the last
// token when it is not closed.
func (f *srcFile) match(i int) int {
	open := f.toks[i].text
	var close string
	switch open {
	case "(":
		close = ")"
	case "[":
		close = "]"
	case "{":
		close = "}"
	default:
		return i
	}
	depth := 0
	for j := i; j < len(f.toks); j++ {
		switch {
		case f.is(j, "(") || f.is(j, "[") || f.is(j, "{"):
			depth++
		case f.is(j, ")") || f.is(j, "]") || f.is(j, "}"):
			depth--
			if depth == 0 {
				if f.toks[j].text != close {
					return j
				}
				return j
			}
		}
	}
	return len(f.toks) - 1
}

// parseTop finds the top-level brace blocks (function bodies; also initializers, harmlessly)
// and parses their statements. The body of a class, struct, union or namespace is a scope, not
// a block: the member functions defined in it (C++) are found as top-level bodies too.
func (f *srcFile) parseTop() {
	for i := 0; i < len(f.toks); i++ {
		switch {
		case f.is(i, "(") || f.is(i, "["):
			i = f.match(i)
		case f.is(i, "{") && f.scopeBody(i):
			// Go on inside: its members are top-level declarations.
		case f.is(i, "{"):
			body := f.parseCompound(i, nil)
			f.top = append(f.top, body)
			i = body.last
		}
	}
}

// scopeWords open a body that holds declarations, not statements.
var scopeWords = map[string]bool{"struct": true, "class": true, "union": true, "namespace": true, "extern": true}

// scopeBody reports whether the brace at token i opens the body of a class, struct, union or
// namespace (or an extern "C" block): its head, back to the previous ";", "{" or "}", names one
// of them and is not an initializer ("= {") or a function's parameter list ("(...) {").
func (f *srcFile) scopeBody(i int) bool {
	if i > 0 && (f.is(i-1, ")") || f.is(i-1, "=")) {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		switch {
		case f.is(j, ";") || f.is(j, "{") || f.is(j, "}"):
			return false
		case f.is(j, "=") || f.is(j, ")"):
			return false
		case f.toks[j].kind == tIdent && scopeWords[f.toks[j].text]:
			return true
		}
	}
	return false
}

func (f *srcFile) newStmt(k stmtKind, first, last int, parent *stmt) *stmt {
	s := &stmt{kind: k, first: first, last: last, parent: parent}
	f.all = append(f.all, s)
	return s
}

// parseCompound parses the block opening at token i.
func (f *srcFile) parseCompound(i int, parent *stmt) *stmt {
	s := f.newStmt(sCompound, i, i, parent)
	j := i + 1
	for j < len(f.toks) && !f.is(j, "}") {
		sub := f.parseStmt(j, s)
		s.bodies = append(s.bodies, sub)
		j = sub.last + 1
	}
	if j >= len(f.toks) {
		j = len(f.toks) - 1
	}
	s.last = j
	return s
}

var controlWords = map[string]bool{"if": true, "for": true, "while": true, "switch": true}

// parseStmt parses the statement starting at token i.
func (f *srcFile) parseStmt(i int, parent *stmt) *stmt {
	tk := f.toks[i]
	switch {
	case f.is(i, "{"):
		return f.parseCompound(i, parent)
	case f.is(i, ";"):
		return f.newStmt(sEmpty, i, i, parent)
	case tk.kind == tIdent && controlWords[tk.text] && f.is(i+1, "("):
		s := f.newStmt(sControl, i, i, parent)
		head := f.match(i + 1)
		body := f.parseBody(head+1, s)
		s.last = body.last
		if tk.text == "if" && f.is(s.last+1, "else") {
			els := f.parseBody(s.last+2, s)
			s.last = els.last
		}
		return s
	case tk.kind == tIdent && tk.text == "do":
		s := f.newStmt(sControl, i, i, parent)
		body := f.parseBody(i+1, s)
		s.last = body.last
		if f.is(s.last+1, "while") && f.is(s.last+2, "(") {
			s.last = f.match(s.last + 2)
			if f.is(s.last+1, ";") {
				s.last++
			}
		}
		return s
	case tk.kind == tIdent && (tk.text == "case" || tk.text == "default"):
		j := i + 1
		for j < len(f.toks) && !f.is(j, ":") && !f.is(j, ";") && !f.is(j, "{") && !f.is(j, "}") {
			if f.is(j, "(") {
				j = f.match(j)
			}
			j++
		}
		if j >= len(f.toks) {
			j = len(f.toks) - 1
		}
		return f.newStmt(sLabel, i, j, parent)
	case tk.kind == tIdent && f.is(i+1, ":") && !f.is(i+2, ":"):
		return f.newStmt(sLabel, i, i+1, parent)
	case tk.kind == tIdent && f.is(i+1, "(") && f.is(f.match(i+1)+1, "{"):
		// A macro that takes a block: TX_BEGIN(pop) { ... } TX_ONABORT { ... } TX_END.
		s := f.newStmt(sMacro, i, i, parent)
		j := f.match(i+1) + 1
		for {
			body := f.parseCompound(j, s)
			s.bodies = append(s.bodies, body)
			s.last = body.last
			closeLine := f.toks[body.last].line
			k := body.last + 1
			// Continuations on the line of the closing brace: NAME, NAME(args), then maybe a
			// block again.
			if k >= len(f.toks) || f.toks[k].kind != tIdent || f.toks[k].line != closeLine || controlWords[f.toks[k].text] || f.toks[k].text == "else" {
				break
			}
			if f.is(k+1, "(") {
				k = f.match(k + 1)
			}
			s.last = k
			if f.is(k+1, ";") {
				s.last = k + 1
				break
			}
			if !f.is(k+1, "{") {
				break
			}
			j = k + 1
		}
		return s
	}
	// A simple statement: to the ';' outside brackets.
	j := i
	for j < len(f.toks) {
		switch {
		case f.is(j, "(") || f.is(j, "[") || f.is(j, "{"):
			j = f.match(j)
		case f.is(j, ";"):
			return f.newStmt(sSimple, i, j, parent)
		case f.is(j, "}"):
			// A statement missing its ';' (a macro such as TX_END on its own line).
			return f.newStmt(sSimple, i, j-1, parent)
		}
		j++
	}
	return f.newStmt(sSimple, i, len(f.toks)-1, parent)
}

// parseBody parses the body of a control statement at token i, marking it braceless when it
// is not a block.
func (f *srcFile) parseBody(i int, parent *stmt) *stmt {
	if i >= len(f.toks) {
		s := f.newStmt(sEmpty, len(f.toks)-1, len(f.toks)-1, parent)
		return s
	}
	b := f.parseStmt(i, parent)
	b.braceless = b.kind != sCompound
	parent.bodies = append(parent.bodies, b)
	return b
}

// firstLine and lastLine are the lines of a statement's first and last tokens.
func (f *srcFile) firstLine(s *stmt) int { return f.toks[s.first].line }
func (f *srcFile) lastLine(s *stmt) int  { return f.toks[s.last].line }

// stmtAt returns the innermost statement that holds the token at (line, col): a simple
// statement, or a control, macro or label statement when the position is in its head. nil when
// no statement holds it (outside every function body).
func (f *srcFile) stmtAt(line, col int) *stmt {
	ti := f.tokenAt(line, col)
	if ti < 0 {
		return nil
	}
	var best *stmt
	for _, s := range f.all {
		if s.kind == sCompound || s.first > ti || s.last < ti {
			continue
		}
		if best == nil || s.last-s.first < best.last-best.first {
			best = s
		}
	}
	return best
}

// tokenAt returns the index of the token at (line, col): the one starting there, else the
// one covering it, else the first token of the line at or after col; -1 when the line has no
// token.
func (f *srcFile) tokenAt(line, col int) int {
	first := -1
	for i, t := range f.toks {
		if t.line < line {
			continue
		}
		if t.line > line {
			break
		}
		if t.col == col || t.col < col && col < t.col+(t.end-t.off) {
			return i
		}
		if first < 0 && t.col > col {
			first = i
		}
	}
	if first < 0 && col > 0 {
		// Past the last token of the line (a column the compiler put at its end): the last
		// token of the line.
		for i := len(f.toks) - 1; i >= 0; i-- {
			if f.toks[i].line == line {
				return i
			}
		}
	}
	return first
}

// span returns the source text of tokens [a, b], with the white space between them as written
// (newlines and runs of blanks folded to one space).
func (f *srcFile) span(a, b int) string {
	if a > b || a < 0 || b >= len(f.toks) {
		return ""
	}
	var sb strings.Builder
	for i := a; i <= b; i++ {
		if i > a && f.toks[i].off > f.toks[i-1].end {
			sb.WriteByte(' ')
		}
		sb.WriteString(f.toks[i].text)
	}
	return sb.String()
}

// stmtText returns the statement's source text as written, lines and all.
func (f *srcFile) stmtText(s *stmt) string {
	return string(f.text[f.toks[s.first].off:f.toks[s.last].end])
}

// movedText returns what a statement that moves takes with it: its lines, with their comments,
// without the first line's indentation (the statement owns its lines, see owns).
func (f *srcFile) movedText(s *stmt) string {
	a, b := f.starts[f.firstLine(s)-1], len(f.text)
	if n := f.lastLine(s); n < len(f.starts) {
		b = f.starts[n] - 1
	}
	return strings.TrimLeft(string(f.text[a:b]), " \t")
}

// owns reports whether the statement's lines hold nothing but it (and comments): it can be
// deleted or moved as whole lines.
func (f *srcFile) owns(s *stmt) bool {
	for i, t := range f.toks {
		if i >= s.first && i <= s.last {
			continue
		}
		if t.line >= f.firstLine(s) && t.line <= f.lastLine(s) {
			return false
		}
	}
	return true
}

// assignOps are the operators whose left operand a store writes.
var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true}

// lvalueAt returns the text of the lvalue written by the store whose debug location is (line,
// col): the compiler puts an assignment's location at its operator, an increment's at its
// operator. ok is false when the position is not at such an operator.
func (f *srcFile) lvalueAt(line, col int) (lv string, ok bool) {
	ti := f.tokenAt(line, col)
	if ti < 0 || f.toks[ti].line != line || f.toks[ti].col != col {
		return "", false
	}
	op := f.toks[ti].text
	switch {
	case assignOps[op]:
		a := f.exprStart(ti - 1)
		if a > ti-1 {
			return "", false
		}
		return f.span(a, ti-1), true
	case op == "++" || op == "--":
		if ti > 0 && (f.toks[ti-1].kind == tIdent || f.is(ti-1, ")") || f.is(ti-1, "]")) && !isKeyword(f.toks[ti-1].text) {
			a := f.exprStart(ti - 1)
			return f.span(a, ti-1), a <= ti-1
		}
		b := f.exprEnd(ti + 1)
		return f.span(ti+1, b), b >= ti+1
	}
	return "", false
}

var keywords = map[string]bool{"return": true, "if": true, "while": true, "for": true, "do": true, "else": true, "switch": true, "case": true, "sizeof": true, "goto": true}

func isKeyword(s string) bool { return keywords[s] }

// exprStart returns the first token of the operand that ends at token j: going left over
// postfix and prefix expressions (member access, subscripts, calls, casts, dereferences), and
// stopping at a token no operand holds (an operator of lower precedence, an unmatched
// bracket, a statement boundary).
func (f *srcFile) exprStart(j int) int {
	i := j
	for i >= 0 {
		t := f.toks[i]
		switch {
		case f.is(i, ")") || f.is(i, "]"):
			// Find the matching opening bracket.
			depth := 0
			k := i
			for ; k >= 0; k-- {
				if f.is(k, ")") || f.is(k, "]") || f.is(k, "}") {
					depth++
				} else if f.is(k, "(") || f.is(k, "[") || f.is(k, "{") {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if k < 0 {
				return i + 1
			}
			if k > 0 && f.toks[k-1].kind == tIdent && controlWords[f.toks[k-1].text] {
				return i + 1 // the head of a control statement, not part of the operand
			}
			i = k - 1
			continue
		case t.kind == tIdent && !isKeyword(t.text) || t.kind == tNumber || t.kind == tString:
			i--
			continue
		case f.is(i, "->") || f.is(i, ".") || f.is(i, "*") || f.is(i, "&") || f.is(i, "++") || f.is(i, "--") || f.is(i, "!") || f.is(i, "~"):
			// Member access joins the operands around it; a unary operator belongs to the
			// operand when what is left of it cannot end an operand.
			if f.is(i, "->") || f.is(i, ".") {
				i--
				continue
			}
			if i == 0 || !endsOperand(f, i-1) {
				i--
				continue
			}
			return i + 1
		}
		return i + 1
	}
	return 0
}

// endsOperand reports whether token i can end an operand (so a following * or & is binary).
func endsOperand(f *srcFile, i int) bool {
	t := f.toks[i]
	return (t.kind == tIdent && !isKeyword(t.text)) || t.kind == tNumber || t.kind == tString || t.kind == tChar ||
		f.is(i, ")") || f.is(i, "]") || f.is(i, "++") || f.is(i, "--")
}

// exprEnd returns the last token of the unary operand starting at token i.
func (f *srcFile) exprEnd(i int) int {
	j := i
	for j < len(f.toks) {
		switch {
		case f.is(j, "(") || f.is(j, "["):
			j = f.match(j) + 1
		case f.toks[j].kind == tIdent || f.is(j, "->") || f.is(j, ".") || f.is(j, "*") || f.is(j, "&"):
			j++
		default:
			return j - 1
		}
	}
	return j - 1
}

// callArgs returns the argument texts of the call whose callee name is the token at (line,
// col) (or the first call of that statement when the position is elsewhere in it), and the
// callee's name. ok is false when there is no call there.
func (f *srcFile) callArgs(line, col int) (name string, args []string, ok bool) {
	ti := f.tokenAt(line, col)
	if ti < 0 {
		return "", nil, false
	}
	if !(f.toks[ti].kind == tIdent && f.is(ti+1, "(")) {
		s := f.stmtAt(line, col)
		if s == nil {
			return "", nil, false
		}
		ti = -1
		for i := s.first; i < s.last; i++ {
			if f.toks[i].kind == tIdent && !isKeyword(f.toks[i].text) && f.is(i+1, "(") {
				ti = i
				break
			}
		}
		if ti < 0 {
			return "", nil, false
		}
	}
	end := f.match(ti + 1)
	a := ti + 2
	for j := ti + 2; j <= end; j++ {
		switch {
		case f.is(j, "(") || f.is(j, "[") || f.is(j, "{"):
			j = f.match(j)
		case f.is(j, ",") || j == end:
			if j > a {
				args = append(args, f.span(a, j-1))
			}
			a = j + 1
		}
	}
	return f.toks[ti].text, args, true
}

// params returns the parameter names of the definition of function fn in the file (nil when
// it is not defined there).
func (f *srcFile) params(fn string) []string {
	for i := 0; i+1 < len(f.toks); i++ {
		if f.toks[i].kind != tIdent || f.toks[i].text != fn || !f.is(i+1, "(") {
			continue
		}
		end := f.match(i + 1)
		if !f.is(end+1, "{") {
			continue // a call or a declaration
		}
		var names []string
		last := ""
		for j := i + 2; j <= end; j++ {
			switch {
			case f.is(j, "(") || f.is(j, "["):
				j = f.match(j)
			case f.is(j, ",") || j == end:
				if last != "" {
					names = append(names, last)
				}
				last = ""
			case f.toks[j].kind == tIdent:
				last = f.toks[j].text
			}
		}
		if len(names) == 1 && names[0] == "void" {
			return nil
		}
		return names
	}
	return nil
}

// flushNames and fenceNames are the calls that write back a line or fence (intrinsics,
// built-ins, libpmem).
var flushNames = map[string]bool{"_mm_clflush": true, "_mm_clflushopt": true, "_mm_clwb": true, "__builtin_ia32_clflush": true,
	"__builtin_ia32_clflushopt": true, "__builtin_ia32_clwb": true, "pmem_flush": true, "pmemobj_flush": true}
var fenceNames = map[string]bool{"_mm_sfence": true, "_mm_mfence": true, "__builtin_ia32_sfence": true, "__builtin_ia32_mfence": true,
	"pmem_drain": true, "pmemobj_drain": true}

// helperKind tells whether function fn, defined in the file, is a persistence helper: a body of
// calls that flush or fence (intrinsics, asm, libpmem, or such helpers, depth levels deep),
// declarations and loops, writing no memory but its locals. flush and fence say what it does.
func (f *srcFile) helperKind(fn string, depth int) (flush, fence, ok bool) {
	body := f.body(fn)
	if body == nil || depth <= 0 {
		return false, false, false
	}
	var walk func(s *stmt) bool
	walk = func(s *stmt) bool {
		switch s.kind {
		case sCompound, sControl:
			for _, b := range s.bodies {
				if !walk(b) {
					return false
				}
			}
			return true
		case sEmpty:
			return true
		case sSimple:
		default:
			return false
		}
		t := f.toks
		first := t[s.first]
		if first.kind == tIdent && (first.text == "asm" || first.text == "__asm__" || first.text == "__asm") {
			for i := s.first; i <= s.last; i++ {
				if t[i].kind == tString {
					if strings.Contains(t[i].text, "clflush") || strings.Contains(t[i].text, "clwb") {
						flush = true
					}
					if strings.Contains(t[i].text, "fence") {
						fence = true
					}
				}
			}
			return true
		}
		// No store but to a local: an assignment's left side is a plain name.
		for i := s.first; i <= s.last; i++ {
			if assignOps[t[i].text] || t[i].text == "++" || t[i].text == "--" {
				if i == s.first || t[i-1].kind != tIdent || i-2 >= s.first && (t[i-2].text == "->" || t[i-2].text == "." || t[i-2].text == "*") {
					if !(t[i].text == "++" || t[i].text == "--") || i+1 > s.last || t[i+1].kind != tIdent {
						return false
					}
				}
			}
		}
		for i := s.first; i < s.last; i++ {
			if t[i].kind != tIdent || !f.is(i+1, "(") || i > s.first && (t[i-1].text == "->" || t[i-1].text == ".") {
				continue
			}
			n := t[i].text
			switch {
			case flushNames[n]:
				flush = true
			case fenceNames[n]:
				fence = true
			case n == "pmem_persist" || n == "pmemobj_persist":
				flush, fence = true, true
			case isKeyword(n) || declWords[n]:
			default:
				fl, fe, ok := f.helperKind(n, depth-1)
				if !ok {
					return false
				}
				flush, fence = flush || fl, fence || fe
			}
			i = f.match(i + 1)
		}
		return true
	}
	if !walk(body) {
		return false, false, false
	}
	return flush, fence, flush || fence
}

// body returns the block of the definition of function fn in the file, nil when none.
func (f *srcFile) body(fn string) *stmt {
	for i := 0; i+1 < len(f.toks); i++ {
		if f.toks[i].kind != tIdent || f.toks[i].text != fn || !f.is(i+1, "(") {
			continue
		}
		end := f.match(i + 1)
		if !f.is(end+1, "{") {
			continue
		}
		for _, s := range f.top {
			if s.first == end+1 {
				return s
			}
		}
	}
	return nil
}

// String describes a statement for messages: file:line and its first words.
func (f *srcFile) describe(s *stmt) string {
	txt := f.span(s.first, min(s.last, s.first+8))
	if s.last > s.first+8 {
		txt += " ..."
	}
	return fmt.Sprintf("%s:%d (%s)", f.path, f.firstLine(s), txt)
}
