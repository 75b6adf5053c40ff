package strace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// straceCall is one system call as strace printed it (one line, or an "<unfinished ...>" line
// joined with its "<... resumed>" line), with the call stack strace -k printed after it.
type straceCall struct {
	Line   int      // 1-based line of the strace output where the call (or its resumption) ended
	PID    int      // process (or thread) id
	Name   string   // system call name: "openat", "write", ...
	Args   []string // top-level arguments, as printed (strings still escaped)
	Ret    int64    // return value (hexadecimal values of raw calls decoded); valid when !Failed && !NoReturn
	RetTag string   // the decoration after the return value (-y: the path of a returned descriptor), unescaped
	// Failed: the call returned an error (-1 ERRNO); NoReturn: it did not return ("= ?", exit).
	Failed, NoReturn bool
	Frames           []rawFrame // strace -k frames, innermost first
}

// rawFrame is one frame of an strace -k stack: "binary(symbol+0xoff) [0xaddr]", where addr is
// the offset in the binary's file of the return (or, for the innermost frame, the current)
// instruction.
type rawFrame struct {
	Binary string
	Symbol string // "" when strace found none
	SymOff uint64 // offset from Symbol
	Addr   uint64 // file offset in Binary
}

// ParseError is a line of strace output the parser could not read.
type ParseError struct {
	Line int
	Text string
	Msg  string
}

func (e *ParseError) Error() string {
	t := e.Text
	if len(t) > 120 {
		t = t[:120] + "..."
	}
	return fmt.Sprintf("strace output line %d: %s: %q", e.Line, e.Msg, t)
}

// maxLine bounds one line of strace output (a write of up to 16 MiB printed as \xNN escapes).
const maxLine = 4*stringLimit + 1<<20

// parseStrace reads the output of `strace -f -xx -y [-k]` (one file, lines prefixed by the pid)
// and calls fn for each complete system call in the order strace printed their ends. Lines that
// are not system calls (exit notices, signals) are skipped. Calls interrupted by another
// process's output ("<unfinished ...>") are joined with their resumption; an unfinished call
// never resumed (the process was killed) is dropped. Errors: a line that is not strace output
// (*ParseError), a line over the size limit, the error fn returns, or the read error of r.
// parseStrace never panics, whatever the input.
func parseStrace(r io.Reader, fn func(*straceCall) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	pending := map[int]string{} // pid -> text of its unfinished call
	var last *straceCall
	flush := func() error {
		if last == nil {
			return nil
		}
		c := last
		last = nil
		return fn(c)
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, " > ") {
			if last != nil {
				last.Frames = append(last.Frames, parseFrame(line[3:]))
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		sp := strings.IndexByte(line, ' ')
		if sp <= 0 {
			return &ParseError{Line: n, Text: line, Msg: "no process id"}
		}
		pid, err := strconv.Atoi(line[:sp])
		if err != nil || pid <= 0 {
			return &ParseError{Line: n, Text: line, Msg: "no process id"}
		}
		rest := strings.TrimLeft(line[sp+1:], " ")
		switch {
		case strings.HasPrefix(rest, "+++"), strings.HasPrefix(rest, "---"):
			continue
		case strings.HasPrefix(rest, "<... "):
			// "<... NAME resumed>REST"
			end := strings.Index(rest, " resumed>")
			if end < 0 {
				return &ParseError{Line: n, Text: line, Msg: "resumed call without \"resumed>\""}
			}
			head, ok := pending[pid]
			if !ok {
				continue // its start was not seen (strace attached mid-call)
			}
			delete(pending, pid)
			rest = head + rest[end+len(" resumed>"):]
		case strings.HasSuffix(rest, " <unfinished ...>"):
			pending[pid] = strings.TrimSuffix(rest, " <unfinished ...>")
			continue
		}
		c, err := parseCall(rest)
		if err != nil {
			return &ParseError{Line: n, Text: line, Msg: err.Error()}
		}
		c.Line, c.PID = n, pid
		last = c
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("strace output line %d: longer than %d bytes", n+1, maxLine)
		}
		return err
	}
	return flush()
}

// parseCall parses "name(args) = ret[<tag>] [ERRNO (text)]".
func parseCall(s string) (*straceCall, error) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return nil, errors.New("no system call name")
	}
	c := &straceCall{Name: s[:open]}
	for _, r := range c.Name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return nil, errors.New("bad system call name")
		}
	}
	args, rest, err := splitArgs(s[open+1:])
	if err != nil {
		return nil, err
	}
	c.Args = args
	rest = strings.TrimLeft(rest, " ")
	if !strings.HasPrefix(rest, "=") {
		return nil, errors.New("no return value")
	}
	rest = strings.TrimLeft(rest[1:], " ")
	if strings.HasPrefix(rest, "?") {
		c.NoReturn = true
		return c, nil
	}
	end := 0
	for end < len(rest) && rest[end] != ' ' && rest[end] != '<' {
		end++
	}
	num := rest[:end]
	v, err := strconv.ParseInt(num, 0, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(num, 0, 64)
		if uerr != nil {
			return nil, fmt.Errorf("bad return value %q", num)
		}
		v = int64(u)
	}
	c.Ret = v
	rest = rest[end:]
	if strings.HasPrefix(rest, "<") {
		tag, after, ok := cutTag(rest)
		if !ok {
			return nil, errors.New("unterminated <...> after the return value")
		}
		c.RetTag = tag
		rest = after
	}
	if v == -1 && strings.HasPrefix(strings.TrimSpace(rest), "E") {
		c.Failed = true
	}
	if v < 0 && v != -1 {
		c.Failed = true
	}
	return c, nil
}

// cutTag reads a "<...>" decoration at the start of s, unescaping it.
func cutTag(s string) (tag, rest string, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				t, err := unescape(s[1:i])
				if err != nil {
					t = s[1:i]
				}
				return t, s[i+1:], true
			}
		case '\\':
			i++
		}
	}
	return "", s, false
}

// splitArgs splits the arguments of a call at top-level commas, up to the closing parenthesis;
// rest is what follows it.
func splitArgs(s string) (args []string, rest string, err error) {
	var stack []byte
	start := 0
	inStr := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if inStr {
			switch ch {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			inStr = true
		case '(', '{', '[', '<':
			stack = append(stack, ch)
		case '}', ']', '>':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ')':
			if len(stack) == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" || len(args) > 0 {
					args = append(args, a)
				}
				return args, s[i+1:], nil
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil, "", errors.New("unterminated argument list")
}

// parseFrame parses one frame strace -k prints (after " > "), as strace 6.1's unwinder writes
// it (strace(1) -k): "BINARY(SYMBOL+0xOFF) [0xADDR]", "BINARY(+0xOFF) [0xADDR]" and
// "BINARY() [0xADDR]" (no symbol), "ERROR [0xADDR]" (strace could not unwind:
// "unexpected_backtracing_error"). BINARY is the mapping's path as /proc/PID/maps gives it,
// " (deleted)" included. SYMBOL may hold parentheses (a C++ name strace demangled:
// "ns::f(int) const", "operator()", "(anonymous namespace)::g()"), so the symbol is the
// parenthesized group that ends the text before " [0x", matched from the right; a mangled
// symbol (strace built without demangling) is demangled here ([demangleSymbol]). What cannot be
// read stays empty; parseFrame never panics.
func parseFrame(s string) rawFrame {
	var f rawFrame
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " [0x"); i >= 0 && strings.HasSuffix(s, "]") {
		f.Addr, _ = strconv.ParseUint(s[i+2:len(s)-1], 0, 64)
		s = s[:i]
	}
	open := symbolOpen(s)
	if open < 0 {
		f.Binary = s
		return f
	}
	f.Binary = s[:open]
	sym := s[open+1 : len(s)-1]
	if j := strings.LastIndex(sym, "+0x"); j >= 0 {
		if off, err := strconv.ParseUint(sym[j+1:], 0, 64); err == nil {
			f.SymOff, sym = off, sym[:j]
		}
	}
	f.Symbol = demangleSymbol(sym)
	return f
}

// symbolOpen returns the index of the '(' that opens the symbol group ending s, or -1 when s
// does not end with one. The group is matched from the right, parentheses balanced; a symbol
// whose parentheses do not balance is taken to start after the binary: at " (deleted)(" when the
// mapping was deleted, else at the first '('.
func symbolOpen(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	if i := strings.Index(s, deletedSuffix+"("); i >= 0 {
		return i + len(deletedSuffix)
	}
	return strings.IndexByte(s, '(')
}

// deletedSuffix ends the path of a mapping whose file was deleted (proc(5), /proc/PID/maps).
const deletedSuffix = " (deleted)"

// demangleSymbol returns a mangled C++ (Itanium ABI, "_Z...") or Rust ("_R...") symbol
// demangled, and any other symbol (C, or already demangled by strace) as it is.
func demangleSymbol(sym string) string {
	if !strings.HasPrefix(sym, "_Z") && !strings.HasPrefix(sym, "_R") {
		return sym
	}
	if d, err := demangle.ToString(sym); err == nil {
		return d
	}
	return sym
}

// unescape decodes a string as strace -xx prints it: the text between the quotes, with \xNN,
// \n, \t, \\, \" and octal escapes. Errors: a bad or cut escape.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	b := make([]byte, 0, len(s)/4+1)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' {
			b = append(b, ch)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("escape cut at the end of a string")
		}
		switch e := s[i]; e {
		case 'x':
			if i+3 > len(s) {
				return "", errors.New("\\x escape cut")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape %q", s[i+1:i+3])
			}
			b = append(b, byte(v))
			i += 2
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'v':
			b = append(b, '\v')
		case 'f':
			b = append(b, '\f')
		case '\\', '"', '\'':
			b = append(b, e)
		default:
			if e >= '0' && e <= '7' {
				j := i
				v := 0
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					v = v*8 + int(s[j]-'0')
					j++
				}
				if v > 255 {
					return "", errors.New("octal escape over 255")
				}
				b = append(b, byte(v))
				i = j - 1
				continue
			}
			return "", fmt.Errorf("unknown escape \\%c", e)
		}
	}
	return string(b), nil
}

// unquote decodes a quoted strace string argument ("..." with escapes); a trailing "..."
// after the closing quote (strace cut the string at -s) sets cut.
func unquote(a string) (s string, cut bool, err error) {
	if strings.HasSuffix(a, "...") && len(a) >= 5 {
		a, cut = a[:len(a)-3], true
	}
	if len(a) < 2 || a[0] != '"' || a[len(a)-1] != '"' {
		return "", false, fmt.Errorf("not a string: %.40q", a)
	}
	s, err = unescape(a[1 : len(a)-1])
	return s, cut, err
}
