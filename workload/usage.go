package workload

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The usage language: the synopses programs print for -h / --help, such as
//
//	git reset [-q] [<commit>] [--] <name>
//	cp [OPTION]... [-T] SOURCE DEST
//	git commit [-F <file> | -m <msg>] [--[no-]status] [-u<mode>]
//
// parsed into a tree from which the grammar fuzzer (Barowsky et al., Improving Application Crash
// Consistency with Symbolic Execution and Fuzzing (2021) §5.2.1) builds one BNF rule per usage.
// The syntax, tightest binding first:
//
//   - a word is a literal (`git`, `-q`, `--`, `--amend`); a quoted 'text' or "text" is a literal
//     that may hold spaces and brackets (no escapes inside);
//   - <name> is a placeholder, and so is a word in capitals (FILE, SOURCE, DEST, KEYDEF: the
//     GNU and POSIX style), named in lower case; `--opt=VALUE` is the literal `--opt=` glued to
//     the placeholder <value>. The usage's first word, the program, is always a literal;
//   - items written without space between them are glued: `-u<mode>`, `--[no-]status` and
//     `[(=|:)<value>]` produce no space there;
//   - a|b without spaces around the bar chooses between the glued units next to it
//     (`btree|ctree <file>`);
//   - `...` (or `…`), glued to an item or after a space, repeats the item once or more
//     (`<pathspec>...`, `[FILE]...`, `[arg] ...`);
//   - items separated by spaces follow each other;
//   - [ ... ] is optional, ( ... ) and { ... } are required groups, and inside any group, or
//     at the top level, ` | ` with spaces separates mutually exclusive alternatives:
//     `[-a | --interactive | --patch]`, `(-c | -C | --squash) <commit>`, `{A|c|x}`.
//
// Malformed usage (an unclosed or unmatched bracket, an empty group or alternative, `...` that
// repeats nothing, an unterminated placeholder or quote) is a *UsageError naming the column.

// NodeKind is the kind of a usage tree node.
type NodeKind uint8

const (
	// Literal is text written as is (Node.Text).
	Literal NodeKind = iota
	// Placeholder is a value to fill (Node.Text is its name: as written inside <>, or a
	// capitalised word in lower case).
	Placeholder
	// Seq is its Kids one after the other: separated by a space, or by nothing for a kid whose
	// Glued is set.
	Seq
	// Group is one of its Kids (alternatives, each a Seq), or nothing when Optional.
	Group
	// Repeat is its one kid, once or more, separated by spaces.
	Repeat
)

// Node is a node of a parsed usage.
type Node struct {
	Kind NodeKind
	// Text is a Literal's text or a Placeholder's name.
	Text string
	// Kids: a Seq's items, a Group's alternatives (each a Seq with at least one item), a
	// Repeat's body (one node: a Literal, Placeholder, Group or a Seq of glued items).
	Kids []*Node
	// Glued: in a Seq, this item follows the previous one without a space.
	Glued bool
	// Optional: a Group written [ ... ], which may produce nothing.
	Optional bool
	// Pos is the byte offset in the usage text where the node starts.
	Pos int
}

// Usage is a parsed usage string.
type Usage struct {
	// Text is the usage as given.
	Text string
	// Program is the program's name: the first word (or quoted literal), when a space or the
	// end follows it; "" otherwise (then Root holds the whole usage, its first word still a
	// literal).
	Program string
	// Root is a non-optional Group of the alternatives after the program (usually one; docopt's
	// `prog -h | --help` has two). A usage that is just the program has one empty alternative.
	Root *Node
	// Options are the program's options as the help text's option table lists them (see
	// ExtractHelp), each a usage fragment such as `-k`, `--key=KEYDEF` or `--backup[=CONTROL]`,
	// already parsed; a placeholder named option(s), opt(s) or flag(s) takes them. Nil when
	// the usage was given with --usage.
	Options []*Node
	// Source names where the usage came from, for messages: "--usage 2" or `git reset -h`.
	Source string
}

// UsageError is a malformed usage: Msg at byte offset Pos of Usage.
type UsageError struct {
	Usage string
	Pos   int
	Msg   string
}

func (e *UsageError) Error() string {
	col := column(e.Usage, e.Pos)
	if len(e.Usage) <= 80 {
		return fmt.Sprintf("usage %q: column %d: %s", e.Usage, col, e.Msg)
	}
	// A long usage: its start, and the text around the column.
	return fmt.Sprintf("usage %q: column %d, at %q: %s", excerpt(e.Usage, 0, 30), col, excerpt(e.Usage, e.Pos-25, e.Pos+25), e.Msg)
}

// excerpt returns s[from:to] clipped to s and widened to character boundaries, with "..." where
// it cuts s.
func excerpt(s string, from, to int) string {
	from, to = max(from, 0), min(to, len(s))
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	out := s[from:to]
	if from > 0 {
		out = "..." + out
	}
	if to < len(s) {
		out += "..."
	}
	return out
}

// column is the 1-based column (in characters) of byte offset pos of s.
func column(s string, pos int) int {
	if pos > len(s) {
		pos = len(s)
	}
	return utf8.RuneCountInString(s[:pos]) + 1
}

// ParseUsage parses a usage string in the language above. The first word is the program's
// name, always a literal, and alternatives at the top level are alternatives of what follows it
// (docopt's `naval_fate -h | --help`). Errors: a *UsageError naming the column of the problem.
func ParseUsage(text string) (*Usage, error) {
	toks, err := lexUsage(text)
	if err != nil {
		return nil, err
	}
	p := &usageParser{text: text, toks: toks, program: true}
	if len(toks) == 0 {
		return nil, p.errAt(0, "empty usage")
	}
	u := &Usage{Text: text}
	// The program: a run of glued words and quoted literals followed by the end, or by a space
	// and something other than a bar (`a | b` are alternatives of the whole usage).
	n := 0
	for n < len(toks) && (toks[n].kind == tkWord || toks[n].kind == tkQuoted) && (n == 0 || !toks[n].space) {
		n++
	}
	if n > 0 && (n == len(toks) || toks[n].space && toks[n].kind != tkBar) {
		for _, t := range toks[:n] {
			u.Program += t.text
		}
		if u.Program == "" {
			return nil, p.errAt(0, "the program's name is empty")
		}
		if n == len(toks) {
			u.Root = &Node{Kind: Group, Pos: len(text), Kids: []*Node{{Kind: Seq, Pos: len(text)}}}
			return u, nil
		}
		p.i = n
	}
	if u.Root, err = p.top(); err != nil {
		return nil, err
	}
	return u, nil
}

// ParseFragment parses a piece of usage that does not start with a program name, such as an
// option's synopsis (`-k, --key=KEYDEF` gives two fragments): a capitalised first word is a
// placeholder too. It returns the non-optional Group of its alternatives. Errors: as ParseUsage.
func ParseFragment(text string) (*Node, error) {
	toks, err := lexUsage(text)
	if err != nil {
		return nil, err
	}
	p := &usageParser{text: text, toks: toks}
	if len(toks) == 0 {
		return nil, p.errAt(0, "empty usage")
	}
	return p.top()
}

// top parses the alternatives from the current token to the end.
func (p *usageParser) top() (*Node, error) {
	root, err := p.alts(p.toks[p.i].pos)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		return nil, p.errAt(t.pos, fmt.Sprintf("%q closes nothing (no bracket is open)", t.text))
	}
	return root, nil
}

// Token kinds of the usage lexer.
type tokKind uint8

const (
	tkWord tokKind = iota
	tkAngle
	tkQuoted
	tkOpen
	tkClose
	tkBar
	tkEllipsis
)

type usageTok struct {
	kind tokKind
	text string // word / placeholder / quoted text; the bracket or bar itself
	pos  int
	// space: whitespace (or the start of the text) comes right before the token.
	space bool
}

// isSpecial reports whether r is a character of the usage syntax that ends a word.
func isSpecial(r rune) bool {
	switch r {
	case '[', ']', '(', ')', '{', '}', '|', '<', '>':
		return true
	}
	return false
}

func lexUsage(s string) ([]usageTok, error) {
	var toks []usageTok
	space := true
	i := 0
	errAt := func(pos int, msg string) error { return &UsageError{Usage: s, Pos: pos, Msg: msg} }
	for j, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[j:], "\uFFFD") {
			return nil, errAt(j, "invalid UTF-8")
		}
	}
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = true
			i += n
			continue
		}
		start := i
		switch {
		case strings.HasPrefix(s[i:], "..."):
			toks = append(toks, usageTok{tkEllipsis, "...", i, space})
			i += 3
		case r == '…':
			toks = append(toks, usageTok{tkEllipsis, "...", i, space})
			i += n
		case r == '[' || r == '(' || r == '{':
			toks = append(toks, usageTok{tkOpen, string(r), i, space})
			i++
		case r == ']' || r == ')' || r == '}':
			toks = append(toks, usageTok{tkClose, string(r), i, space})
			i++
		case r == '|':
			toks = append(toks, usageTok{tkBar, "|", i, space})
			i++
		case r == '>':
			return nil, errAt(i, "'>' without '<'")
		case r == '<':
			j := i + 1
			for j < len(s) && s[j] != '>' {
				c, m := utf8.DecodeRuneInString(s[j:])
				if unicode.IsSpace(c) || isSpecial(c) {
					return nil, errAt(i, fmt.Sprintf("placeholder '<' is not closed by '>' (found %q first)", c))
				}
				j += m
			}
			if j >= len(s) {
				return nil, errAt(i, "placeholder '<' is not closed by '>'")
			}
			if j == i+1 {
				return nil, errAt(i, "empty placeholder <>")
			}
			toks = append(toks, usageTok{tkAngle, s[i+1 : j], i, space})
			i = j + 1
		case (r == '\'' || r == '"') && (space || len(toks) > 0 && toks[len(toks)-1].kind != tkWord):
			// A quote opens a quoted literal at the start of an item (a quote inside a word, as
			// in don't, is an ordinary character).
			j := strings.IndexRune(s[i+1:], r)
			if j < 0 {
				return nil, errAt(i, fmt.Sprintf("quote %c is never closed", r))
			}
			if k := strings.IndexAny(s[i+1:i+1+j], "\n\r"); k >= 0 {
				return nil, errAt(i+1+k, "line break inside quotes")
			}
			toks = append(toks, usageTok{tkQuoted, s[i+1 : i+1+j], i, space})
			i += j + 2
		default:
			j := i
			for j < len(s) {
				c, m := utf8.DecodeRuneInString(s[j:])
				if unicode.IsSpace(c) || isSpecial(c) || c == '…' || strings.HasPrefix(s[j:], "...") {
					break
				}
				j += m
			}
			toks = append(toks, usageTok{tkWord, s[i:j], i, space})
			i = j
		}
		if i == start {
			return nil, errAt(i, "internal error: lexer made no progress")
		}
		space = false
	}
	return toks, nil
}

type usageParser struct {
	text    string
	toks    []usageTok
	i       int
	program bool // a usage: its first token, a word, is a literal (the program)
}

func (p *usageParser) errAt(pos int, msg string) error {
	return &UsageError{Usage: p.text, Pos: pos, Msg: msg}
}

func (p *usageParser) peek() *usageTok {
	if p.i < len(p.toks) {
		return &p.toks[p.i]
	}
	return nil
}

// closerOf is the closing bracket of an opening one.
func closerOf(open string) string {
	switch open {
	case "[":
		return "]"
	case "(":
		return ")"
	}
	return "}"
}

// looseBar reports whether the bar at index i separates alternatives of the enclosing group (it
// has a space on either side, or nothing to glue to after it) rather than choosing between the
// glued units next to it.
func (p *usageParser) looseBar(i int) bool {
	t := p.toks[i]
	if t.space || i+1 >= len(p.toks) {
		return true
	}
	next := p.toks[i+1]
	return next.space || next.kind == tkClose || next.kind == tkBar || next.kind == tkEllipsis
}

// alts parses alternatives separated by loose bars up to (not including) a closing bracket or
// the end, returning a non-optional Group that starts at byte offset pos.
func (p *usageParser) alts(pos int) (*Node, error) {
	g := &Node{Kind: Group, Pos: pos}
	for {
		seq, err := p.seq(pos)
		if err != nil {
			return nil, err
		}
		t := p.peek()
		if len(seq.Kids) == 0 {
			switch {
			case t != nil && t.kind == tkBar:
				return nil, p.errAt(t.pos, "nothing before '|'")
			case len(g.Kids) > 0:
				at := len(p.text)
				if t != nil {
					at = t.pos
				}
				return nil, p.errAt(at, "nothing after '|'")
			case t != nil && t.kind == tkClose && p.i > 0 && p.toks[p.i-1].kind == tkOpen:
				return nil, p.errAt(t.pos, fmt.Sprintf("empty group %q", p.toks[p.i-1].text+t.text))
			case t != nil && t.kind == tkClose:
				return nil, p.errAt(t.pos, fmt.Sprintf("%q closes nothing (no bracket is open)", t.text))
			default:
				return nil, p.errAt(pos, "empty usage")
			}
		}
		g.Kids = append(g.Kids, seq)
		if t == nil || t.kind != tkBar {
			return g, nil
		}
		p.i++ // a loose bar
		pos = t.pos + 1
	}
}

// seq parses items until a loose bar, a closing bracket or the end.
func (p *usageParser) seq(pos int) (*Node, error) {
	s := &Node{Kind: Seq, Pos: pos}
	unitStart := 0 // index in s.Kids where the last item (a unit spliced in) starts
	for {
		t := p.peek()
		if t == nil || t.kind == tkClose || t.kind == tkBar && p.looseBar(p.i) {
			return s, nil
		}
		switch t.kind {
		case tkEllipsis:
			if len(s.Kids) == 0 {
				return nil, p.errAt(t.pos, "'...' repeats nothing")
			}
			p.i++
			if err := p.afterEllipsis(); err != nil {
				return nil, err
			}
			// '...' after a space repeats the whole item before it.
			unit := s.Kids[unitStart:]
			var body *Node
			if len(unit) == 1 {
				body = unit[0]
			} else {
				body = &Node{Kind: Seq, Pos: unit[0].Pos, Kids: append([]*Node(nil), unit...)}
			}
			glued := unit[0].Glued
			unit[0].Glued = false
			r := repeat(body)
			r.Glued = glued
			s.Kids = append(s.Kids[:unitStart], r)
			continue
		case tkBar:
			return nil, p.errAt(t.pos, "'|' has nothing before it to choose from: write the alternatives in a group, (a | b)")
		}
		item, err := p.chain()
		if err != nil {
			return nil, err
		}
		item.Glued = !t.space && len(s.Kids) > 0
		unitStart = len(s.Kids)
		// A glued unit that is not wrapped joins the sequence item by item.
		if item.Kind == Seq {
			item.Kids[0].Glued = item.Glued
			for _, k := range item.Kids {
				s.Kids = appendItem(s.Kids, k)
			}
		} else {
			s.Kids = appendItem(s.Kids, item)
		}
		if unitStart >= len(s.Kids) { // merged into the literal before it
			unitStart = len(s.Kids) - 1
		}
	}
}

// appendItem appends an item to a sequence, merging a glued literal into a literal before it.
func appendItem(items []*Node, n *Node) []*Node {
	if n.Kind == Literal && n.Glued && len(items) > 0 {
		if last := items[len(items)-1]; last.Kind == Literal {
			merged := *last
			merged.Text += n.Text
			items[len(items)-1] = &merged
			return items
		}
	}
	return append(items, n)
}

// afterEllipsis rejects text glued right after '...'.
func (p *usageParser) afterEllipsis() error {
	if t := p.peek(); t != nil && !t.space && t.kind != tkClose && t.kind != tkBar {
		return p.errAt(t.pos, fmt.Sprintf("%q right after '...' (put a space between them)", t.text))
	}
	return nil
}

// chain parses glued units joined by tight bars (a|b), and a glued '...' after them.
func (p *usageParser) chain() (*Node, error) {
	start := p.peek().pos
	u, err := p.unit()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t == nil || t.kind != tkBar || p.looseBar(p.i) {
		return p.maybeRepeat(u)
	}
	g := &Node{Kind: Group, Pos: start, Kids: []*Node{asSeq(u)}}
	for {
		t := p.peek()
		if t == nil || t.kind != tkBar || p.looseBar(p.i) {
			break
		}
		p.i++
		v, err := p.unit()
		if err != nil {
			return nil, err
		}
		g.Kids = append(g.Kids, asSeq(v))
	}
	return p.maybeRepeat(g)
}

// maybeRepeat wraps n in a Repeat when a glued '...' follows.
func (p *usageParser) maybeRepeat(n *Node) (*Node, error) {
	t := p.peek()
	if t == nil || t.kind != tkEllipsis || t.space {
		return n, nil
	}
	p.i++
	if err := p.afterEllipsis(); err != nil {
		return nil, err
	}
	return repeat(n), nil
}

// asSeq makes an alternative out of a unit: a Seq as is, anything else a Seq of one item.
func asSeq(n *Node) *Node {
	if n.Kind == Seq {
		return n
	}
	n.Glued = false
	return &Node{Kind: Seq, Pos: n.Pos, Kids: []*Node{n}}
}

// repeat wraps n in a Repeat, normalising so that equal meanings give equal trees: a Repeat of
// a Repeat is that Repeat, and a repeated optional group is an optional group of a repetition
// ([x]... is [x...]: nothing, or x once or more).
func repeat(n *Node) *Node {
	switch {
	case n.Kind == Repeat:
		return n
	case n.Kind == Group && n.Optional:
		var body *Node
		if len(n.Kids) == 1 && len(n.Kids[0].Kids) == 1 {
			body = n.Kids[0].Kids[0]
		} else {
			body = &Node{Kind: Group, Pos: n.Pos, Kids: n.Kids}
		}
		body.Glued = false
		r := repeat(body)
		return &Node{Kind: Group, Optional: true, Pos: n.Pos, Kids: []*Node{{Kind: Seq, Pos: n.Pos, Kids: []*Node{r}}}}
	}
	glued := n.Glued
	n.Glued = false
	return &Node{Kind: Repeat, Pos: n.Pos, Kids: []*Node{n}, Glued: glued}
}

// unit parses atoms glued together: one atom, or a Seq whose items after the first are Glued.
func (p *usageParser) unit() (*Node, error) {
	if p.peek() == nil {
		return nil, p.errAt(len(p.text), "nothing after '|'")
	}
	var items []*Node
	for {
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		parts := []*Node{a}
		if a.Kind == Seq { // --key=KEYDEF
			parts = a.Kids
		}
		for _, k := range parts {
			k.Glued = len(items) > 0
			items = appendItem(items, k)
		}
		t := p.peek()
		if t == nil || t.space || !(t.kind == tkWord || t.kind == tkAngle || t.kind == tkQuoted || t.kind == tkOpen) {
			break
		}
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &Node{Kind: Seq, Pos: items[0].Pos, Kids: items}, nil
}

// capsWord matches a placeholder written in capitals: FILE, ATTR_LIST, KEY-DEF (a single
// capital is a literal, as tar's {A|c|x}, except after '=').
var capsWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]+(-[A-Z0-9_]+)*$`)

// capsValue matches a literal ending in '=' glued to a placeholder in capitals: --key=KEYDEF,
// =CONTROL (from --backup[=CONTROL]), --files0-from=F.
var capsValue = regexp.MustCompile(`^(.*=)([A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*)$`)

// atom parses a word, placeholder, quoted literal or bracketed group.
func (p *usageParser) atom() (*Node, error) {
	t := p.peek()
	p.i++
	switch t.kind {
	case tkWord:
		programWord := p.program && p.i == 1
		switch {
		case programWord:
		case capsWord.MatchString(t.text):
			return &Node{Kind: Placeholder, Text: strings.ToLower(t.text), Pos: t.pos}, nil
		default:
			if m := capsValue.FindStringSubmatch(t.text); m != nil {
				return &Node{Kind: Seq, Pos: t.pos, Kids: []*Node{
					{Kind: Literal, Text: m[1], Pos: t.pos},
					{Kind: Placeholder, Text: strings.ToLower(m[2]), Pos: t.pos + len(m[1]), Glued: true},
				}}, nil
			}
		}
		return &Node{Kind: Literal, Text: t.text, Pos: t.pos}, nil
	case tkAngle:
		return &Node{Kind: Placeholder, Text: t.text, Pos: t.pos}, nil
	case tkQuoted:
		return &Node{Kind: Literal, Text: t.text, Pos: t.pos}, nil
	case tkOpen:
		g, err := p.alts(t.pos)
		if err != nil {
			return nil, err
		}
		c := p.peek()
		if c == nil {
			return nil, p.errAt(t.pos, fmt.Sprintf("%q is never closed", t.text))
		}
		if want := closerOf(t.text); c.text != want {
			return nil, p.errAt(c.pos, fmt.Sprintf("%q closes %q opened at column %d (expected %q)", c.text, t.text, column(p.text, t.pos), want))
		}
		p.i++
		// argparse writes choices {gzip,xz}: a braced word with commas is a choice.
		if t.text == "{" && len(g.Kids) == 1 && len(g.Kids[0].Kids) == 1 {
			if w := g.Kids[0].Kids[0]; w.Kind == Literal && strings.Contains(w.Text, ",") && !strings.Contains(w.Text, ",,") &&
				!strings.HasPrefix(w.Text, ",") && !strings.HasSuffix(w.Text, ",") {
				g.Kids = nil
				for _, c := range strings.Split(w.Text, ",") {
					g.Kids = append(g.Kids, &Node{Kind: Seq, Pos: w.Pos, Kids: []*Node{{Kind: Literal, Text: c, Pos: w.Pos}}})
				}
			}
		}
		// A group holding just one required group is that group: ((a | b)) is (a | b) and
		// [(a | b)] is [a | b].
		if len(g.Kids) == 1 && len(g.Kids[0].Kids) == 1 {
			if in := g.Kids[0].Kids[0]; in.Kind == Group && !in.Optional {
				g.Kids = in.Kids
			}
		}
		g.Optional = t.text == "["
		return g, nil
	case tkClose:
		return nil, p.errAt(t.pos, fmt.Sprintf("%q closes nothing (no bracket is open)", t.text))
	case tkEllipsis:
		return nil, p.errAt(t.pos, "'...' repeats nothing")
	}
	return nil, p.errAt(t.pos, fmt.Sprintf("unexpected %q", t.text))
}

// String writes the usage back in canonical form: placeholders as <name>, groups as [ ... ] or
// ( ... ) with " | " between alternatives, literals quoted when they would not read back as
// themselves. Parsing the result gives the same tree.
func (u *Usage) String() string {
	if u.Program == "" {
		return renderGroupBody(u.Root, true)
	}
	prog := renderLiteral(u.Program, true)
	if len(u.Root.Kids) == 1 && len(u.Root.Kids[0].Kids) == 0 {
		return prog
	}
	return prog + " " + renderGroupBody(u.Root, false)
}

// FragmentString writes a fragment (as ParseFragment returns) in canonical form.
func FragmentString(n *Node) string { return renderGroupBody(n, false) }

func renderGroupBody(g *Node, program bool) string {
	var b strings.Builder
	for i, alt := range g.Kids {
		if i > 0 {
			b.WriteString(" | ")
		}
		renderNode(&b, alt, program && i == 0)
	}
	return b.String()
}

// renderNode writes n; program says n starts the usage (its first literal is the program).
func renderNode(b *strings.Builder, n *Node, program bool) {
	switch n.Kind {
	case Literal:
		b.WriteString(renderLiteral(n.Text, program))
	case Placeholder:
		b.WriteString("<" + n.Text + ">")
	case Seq:
		for i, k := range n.Kids {
			if i > 0 && !k.Glued {
				b.WriteByte(' ')
			}
			renderNode(b, k, program && i == 0)
		}
	case Group:
		open, close := "(", ")"
		if n.Optional {
			open, close = "[", "]"
		}
		b.WriteString(open)
		b.WriteString(renderGroupBody(n, false))
		b.WriteString(close)
	case Repeat:
		body := n.Kids[0]
		if body.Kind == Seq && !allGlued(body) {
			// A spaced sequence repeats only as a group.
			body = &Node{Kind: Group, Kids: []*Node{body}}
		}
		// A literal ending in '.' right before the '...' is quoted: a.... reads as a then '...'
		// then '.'.
		switch last := body; {
		case last.Kind == Literal && strings.HasSuffix(last.Text, "."):
			b.WriteString(quoteLiteral(last.Text))
		case last.Kind == Seq && last.Kids[len(last.Kids)-1].Kind == Literal && strings.HasSuffix(last.Kids[len(last.Kids)-1].Text, "."):
			head := &Node{Kind: Seq, Kids: last.Kids[:len(last.Kids)-1]}
			renderNode(b, head, program)
			b.WriteString(quoteLiteral(last.Kids[len(last.Kids)-1].Text))
		default:
			renderNode(b, body, program)
		}
		b.WriteString("...")
	}
}

func allGlued(s *Node) bool {
	for _, k := range s.Kids[1:] {
		if !k.Glued {
			return false
		}
	}
	return true
}

// renderLiteral writes a literal bare when it reads back as the same literal, else quoted: in
// single quotes, with each single quote of the text in double quotes (quoted pieces written
// together read back as one literal).
func renderLiteral(text string, program bool) string {
	bare := text != "" && !strings.Contains(text, "...") && !strings.ContainsRune(text, '…') &&
		text[0] != '\'' && text[0] != '"' && (program || !capsWord.MatchString(text) && !capsValue.MatchString(text))
	for _, r := range text {
		if unicode.IsSpace(r) || isSpecial(r) {
			bare = false
		}
	}
	if bare {
		return text
	}
	return quoteLiteral(text)
}

// quoteLiteral writes a literal quoted (see renderLiteral).
func quoteLiteral(text string) string {
	if text == "" {
		return "''"
	}
	var b strings.Builder
	for len(text) > 0 {
		if text[0] == '\'' {
			b.WriteString(`"'"`)
			text = text[1:]
			continue
		}
		j := strings.IndexByte(text, '\'')
		if j < 0 {
			j = len(text)
		}
		b.WriteString("'" + text[:j] + "'")
		text = text[j:]
	}
	return b.String()
}
