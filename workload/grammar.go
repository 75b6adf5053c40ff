package workload

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A context-free grammar in BNF: nonterminals, each with alternatives that are sequences of
// symbols, as the grammar-based fuzzer of Barowsky et al., Improving Application Crash
// Consistency with Symbolic Execution and Fuzzing (2021) §3.3 and §5.2 uses:
//
//	<start>   ::= <program>
//	<program> ::= <command> "\n" | <command> "\n" <program>
//	<command> ::= <cmd1> | <cmd2> | ...
//
// with one rule per usage string and rules for its placeholders. Besides terminals and
// nonterminals, a grammar may hold generated terminals, written ? description ? in the BNF (the
// special sequences of ISO EBNF): a value drawn at random when expanded, such as a new file name
// or a large number, which no finite list of alternatives describes.

// SymbolKind is the kind of a grammar symbol.
type SymbolKind uint8

const (
	// Terminal is text produced as is.
	Terminal SymbolKind = iota
	// Nonterminal names a rule.
	Nonterminal
	// Generated is a terminal drawn by a generator (Grammar.Generators) when expanded.
	Generated
)

// Symbol is one symbol of an alternative.
type Symbol struct {
	Kind SymbolKind
	// Text is a Terminal's text, a Nonterminal's rule name (without <>), or a Generated
	// symbol's generator name.
	Text string
	// Placeholder, for a nonterminal that fills a usage's placeholder, is the placeholder's
	// name: forms show <Placeholder> there instead of expanding it.
	Placeholder string
	// Cont marks the recursive occurrence in a repetition rule (<r> ::= x | x " " <r>): forms
	// show a repetition at most twice.
	Cont bool
}

// T, N and G make terminal, nonterminal and generated symbols.
func T(text string) Symbol { return Symbol{Kind: Terminal, Text: text} }
func N(name string) Symbol { return Symbol{Kind: Nonterminal, Text: name} }
func G(gen string) Symbol  { return Symbol{Kind: Generated, Text: gen} }

// RuleKind says what a rule stands for, where it matters to expansion.
type RuleKind uint8

const (
	// RulePlain is any other rule.
	RulePlain RuleKind = iota
	// RuleCommand is one usage: each expansion of it is one command (one workload line), whose
	// form is computed from its derivation.
	RuleCommand
	// RuleFiles lists paths of files: the values an expansion picks from it are remembered for
	// the rest of the command (the same-file generator names them again).
	RuleFiles
)

// Rule is one nonterminal and its alternatives.
type Rule struct {
	Name string
	Alts [][]Symbol
	Kind RuleKind
	// Usage, for a RuleCommand, is the index of its usage in Grammar.Usages.
	Usage int
	// Comment is printed above the rule (e.g. the usage text).
	Comment string
}

// Generator draws the value of a Generated symbol from r. cmd holds the values RuleFiles rules
// gave earlier in the same command.
type Generator struct {
	// Desc describes the values, as the BNF prints them between ? and ?.
	Desc string
	Gen  func(r *rand.Rand, cmd []string) string
}

// Grammar is a BNF grammar with generated terminals.
type Grammar struct {
	// Start is the start symbol's rule name.
	Start string
	// Rules in printing order.
	Rules []*Rule
	// Generators by name.
	Generators map[string]Generator
	// Usages are the usage strings of the RuleCommand rules.
	Usages []string

	index map[string]*Rule
	cost  map[string]int
}

// NewGrammar returns an empty grammar with the given start symbol.
func NewGrammar(start string) *Grammar {
	return &Grammar{Start: start, Generators: map[string]Generator{}, index: map[string]*Rule{}}
}

// Add appends a rule. Errors: a rule of that name exists.
func (g *Grammar) Add(r *Rule) error {
	if _, ok := g.index[r.Name]; ok {
		return fmt.Errorf("grammar: rule <%s> defined twice", r.Name)
	}
	g.Rules = append(g.Rules, r)
	g.index[r.Name] = r
	g.cost = nil
	return nil
}

// Rule returns the rule named name, or nil.
func (g *Grammar) Rule(name string) *Rule { return g.index[name] }

// Has reports whether a rule named name exists.
func (g *Grammar) Has(name string) bool { return g.index[name] != nil }

// unbounded is the cost of a nonterminal that cannot finish (no finite expansion).
const unbounded = math.MaxInt

// Check validates the grammar and computes the cost of every nonterminal: the least number of
// nonterminal expansions that turns it into terminals (The Fuzzing Book, "Efficient Grammar
// Fuzzing": a symbol's cost is the least cost of its alternatives, an alternative's cost one
// plus the costs of its symbols). Errors: no start rule, a rule without alternatives, a symbol
// naming an undefined rule or generator, a rule that can never finish (every alternative
// recurses without end).
func (g *Grammar) Check() error {
	if g.index[g.Start] == nil {
		return fmt.Errorf("grammar: no start rule <%s>", g.Start)
	}
	for _, r := range g.Rules {
		if len(r.Alts) == 0 {
			return fmt.Errorf("grammar: rule <%s> has no alternatives", r.Name)
		}
		for _, alt := range r.Alts {
			for _, s := range alt {
				switch s.Kind {
				case Nonterminal:
					if g.index[s.Text] == nil {
						return fmt.Errorf("grammar: rule <%s> uses undefined <%s>", r.Name, s.Text)
					}
				case Generated:
					if _, ok := g.Generators[s.Text]; !ok {
						return fmt.Errorf("grammar: rule <%s> uses undefined generator %q", r.Name, s.Text)
					}
				}
			}
		}
	}
	cost := make(map[string]int, len(g.Rules))
	for _, r := range g.Rules {
		cost[r.Name] = unbounded
	}
	for changed := true; changed; {
		changed = false
		for _, r := range g.Rules {
			for _, alt := range r.Alts {
				if c := altCost(alt, cost); c < cost[r.Name] {
					cost[r.Name] = c
					changed = true
				}
			}
		}
	}
	for _, r := range g.Rules {
		if cost[r.Name] == unbounded {
			return fmt.Errorf("grammar: rule <%s> never finishes: every alternative recurses", r.Name)
		}
	}
	g.cost = cost
	return nil
}

// altCost is 1 plus the costs of the alternative's nonterminals (unbounded if one is).
func altCost(alt []Symbol, cost map[string]int) int {
	c := 1
	for _, s := range alt {
		if s.Kind != Nonterminal {
			continue
		}
		k := cost[s.Text]
		if k == unbounded || c > unbounded-k {
			return unbounded
		}
		c += k
	}
	return c
}

// WriteBNF prints the grammar: one rule per line (alternatives on lines of their own when
// long), terminals in Go string syntax, generated terminals as ? description ?, comments after #.
func (g *Grammar) WriteBNF(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, `# BNF: <name> a nonterminal, "text" a terminal (Go string syntax), ? ... ? a terminal drawn at random.`)
	for _, r := range g.Rules {
		if r.Comment != "" {
			for _, line := range strings.Split(r.Comment, "\n") {
				fmt.Fprintf(bw, "# %s\n", line)
			}
		}
		head := "<" + r.Name + "> ::= "
		alts := make([]string, len(r.Alts))
		total := len(head)
		for i, alt := range r.Alts {
			alts[i] = g.altString(alt)
			total += len(alts[i]) + 3
		}
		if total <= 100 || len(alts) == 1 {
			fmt.Fprintf(bw, "%s%s\n", head, strings.Join(alts, " | "))
			continue
		}
		pad := strings.Repeat(" ", len(head)-2)
		for i, a := range alts {
			if i == 0 {
				fmt.Fprintf(bw, "%s%s\n", head, a)
			} else {
				fmt.Fprintf(bw, "%s| %s\n", pad, a)
			}
		}
	}
	return bw.Flush()
}

func (g *Grammar) altString(alt []Symbol) string {
	if len(alt) == 0 {
		return `""`
	}
	parts := make([]string, len(alt))
	for i, s := range alt {
		switch s.Kind {
		case Terminal:
			parts[i] = strconv.Quote(s.Text)
		case Nonterminal:
			parts[i] = "<" + s.Text + ">"
		case Generated:
			parts[i] = "? " + g.Generators[s.Text].Desc + " ?"
		}
	}
	return strings.Join(parts, " ")
}

// DefaultMaxDepth bounds the depth of a derivation before expansion takes the cheapest
// alternatives (the report's bound on expansion, 100, §5.2).
const DefaultMaxDepth = 100

// Derivation is a node of a derivation tree: a symbol and, for a nonterminal, the symbols of
// the alternative chosen; a terminal's or generated symbol's Text is what it produced.
type Derivation struct {
	Sym  Symbol
	Text string
	Rule *Rule
	Kids []*Derivation
}

// Expander expands a grammar with a seeded random source.
type Expander struct {
	g        *Grammar
	r        *rand.Rand
	maxDepth int
	cmd      []string // values of RuleFiles rules in the current command
}

// NewExpander checks g (see Check) and returns an expander drawing from r. maxDepth <= 0 means
// DefaultMaxDepth.
func NewExpander(g *Grammar, r *rand.Rand, maxDepth int) (*Expander, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return &Expander{g: g, r: r, maxDepth: maxDepth}, nil
}

// Expand derives one sentence from the start symbol. Up to depth maxDepth every nonterminal
// picks one of its alternatives uniformly at random; deeper, it picks among its cheapest
// alternatives (least cost, see Check), so that recursive rules finish: each cheapest
// alternative costs less than its rule, and the derivation ends after at most the rule's cost
// more levels (The Fuzzing Book's cost-based expansion, with a depth bound where the report
// bounds the number of nonterminals, §5.2).
func (e *Expander) Expand() *Derivation {
	return e.expand(N(e.g.Start), 0)
}

func (e *Expander) expand(s Symbol, depth int) *Derivation {
	d := &Derivation{Sym: s}
	switch s.Kind {
	case Terminal:
		d.Text = s.Text
		return d
	case Generated:
		d.Text = e.g.Generators[s.Text].Gen(e.r, e.cmd)
		return d
	}
	rule := e.g.index[s.Text]
	d.Rule = rule
	if rule.Kind == RuleCommand {
		e.cmd = e.cmd[:0]
	}
	alt := e.choose(rule, depth)
	d.Kids = make([]*Derivation, len(alt))
	for i, k := range alt {
		d.Kids[i] = e.expand(k, depth+1)
	}
	if rule.Kind == RuleFiles {
		e.cmd = append(e.cmd, d.text())
	}
	return d
}

// choose picks an alternative of rule at depth.
func (e *Expander) choose(rule *Rule, depth int) []Symbol {
	if len(rule.Alts) == 1 {
		return rule.Alts[0]
	}
	if depth < e.maxDepth {
		return rule.Alts[e.r.IntN(len(rule.Alts))]
	}
	best, n := unbounded, 0
	var pick []Symbol
	for _, alt := range rule.Alts {
		c := altCost(alt, e.g.cost)
		switch {
		case c < best:
			best, n, pick = c, 1, alt
		case c == best:
			// Reservoir sampling: each of the n cheapest alternatives is kept with chance 1/n.
			n++
			if e.r.IntN(n) == 0 {
				pick = alt
			}
		}
	}
	return pick
}

// text is the sentence a derivation produced.
func (d *Derivation) text() string {
	var b strings.Builder
	d.write(&b)
	return b.String()
}

func (d *Derivation) write(b *strings.Builder) {
	if d.Sym.Kind != Nonterminal {
		b.WriteString(d.Text)
		return
	}
	for _, k := range d.Kids {
		k.write(b)
	}
}

// Command is one command an expansion produced.
type Command struct {
	// Text is the command line.
	Text string
	// Form is its form: the line with placeholders unexpanded (<name>) and repetitions shown
	// at most twice, as Forms lists them.
	Form string
	// Usage is the index of its usage in Grammar.Usages.
	Usage int
}

// Commands lists the commands of a derivation (the expansions of RuleCommand rules), in order.
func (d *Derivation) Commands() []Command {
	var out []Command
	var walk func(*Derivation)
	walk = func(n *Derivation) {
		if n.Rule != nil && n.Rule.Kind == RuleCommand {
			var f strings.Builder
			n.writeForm(&f)
			out = append(out, Command{Text: n.text(), Form: f.String(), Usage: n.Rule.Usage})
			return
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	walk(d)
	return out
}

// writeForm writes the form of a derivation: placeholders as <name>, the recursive occurrence
// of a repetition only as its first item (so a repetition shows once or twice), as Forms.
func (d *Derivation) writeForm(b *strings.Builder) {
	switch {
	case d.Sym.Kind != Nonterminal:
		b.WriteString(d.Text)
	case d.Sym.Placeholder != "":
		b.WriteString("<" + d.Sym.Placeholder + ">")
	case d.Sym.Cont:
		// A repetition's recursive occurrence shows its first item only (the first
		// alternative's symbols, with which the second starts).
		for _, k := range d.Kids[:min(len(d.Kids), len(d.Rule.Alts[0]))] {
			k.writeForm(b)
		}
	default:
		for _, k := range d.Kids {
			k.writeForm(b)
		}
	}
}

// Forms calls yield with every form of rule name (as Command.Form writes them), each once, in
// a fixed order, until yield returns false. A form chooses an alternative of every optional
// part and group and takes each repetition once or twice; placeholders stay unexpanded. The
// number of forms grows as the product of the choices: stop early for large usages. Errors:
// an undefined rule, or a recursion other than a repetition's (it would have no end).
func (g *Grammar) Forms(name string, yield func(form string) bool) error {
	if g.index[name] == nil {
		return fmt.Errorf("grammar: no rule <%s>", name)
	}
	seen := map[string]bool{}
	active := map[string]bool{}
	var err error
	var sym func(s Symbol, acc string, k func(string) bool) bool
	var seq func(alt []Symbol, acc string, k func(string) bool) bool
	seq = func(alt []Symbol, acc string, k func(string) bool) bool {
		if len(alt) == 0 {
			return k(acc)
		}
		return sym(alt[0], acc, func(acc string) bool { return seq(alt[1:], acc, k) })
	}
	sym = func(s Symbol, acc string, k func(string) bool) bool {
		switch {
		case s.Kind != Nonterminal:
			return k(acc + s.Text)
		case s.Placeholder != "":
			return k(acc + "<" + s.Placeholder + ">")
		}
		r := g.index[s.Text]
		if r == nil {
			err = fmt.Errorf("grammar: undefined <%s>", s.Text)
			return false
		}
		if s.Cont {
			return seq(r.Alts[0], acc, k)
		}
		if active[r.Name] {
			err = fmt.Errorf("grammar: <%s> recurses: its forms have no end", r.Name)
			return false
		}
		// r is active while its own alternatives are enumerated, not while the continuation
		// (what follows r) is.
		active[r.Name] = true
		defer delete(active, r.Name)
		after := func(acc string) bool {
			active[r.Name] = false
			ok := k(acc)
			active[r.Name] = true
			return ok
		}
		for _, alt := range r.Alts {
			if !seq(alt, acc, after) {
				return false
			}
		}
		return true
	}
	sym(N(name), "", func(form string) bool {
		if seen[form] {
			return true
		}
		seen[form] = true
		return yield(form)
	})
	return err
}
