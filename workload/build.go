package workload

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// BuildGrammar turns parsed usages into a BNF grammar (Barowsky et al., Improving Application
// Crash Consistency with Symbolic Execution and Fuzzing (2021) §5.2):
//
//	<start>   ::= <program>
//	<program> ::= <command> "\n" | <command> "\n" <program>       (commands chained)
//	<command> ::= <cmd1> | <cmd2> | ...                            (one per usage)
//	<cmd1>    ::= "git reset" <cmd1.1> <cmd1.2> <cmd1.3> " " <name>
//	<cmd1.1>  ::= "" | " -q"                                       ([-q])
//
// Each optional part, group and repetition of a usage is a rule of its own (an optional one
// has the empty alternative first); a repetition x... is <r> ::= x | x " " <r>. Literals and
// values are shell words (quoted when they need it), so every command is a valid sh command
// line; with env.Shell each line ends in " </dev/null" so that a command reading its standard
// input does not consume the workload's later lines when sh runs them.
//
// A placeholder <p> is a nonterminal: the user's values for p (--value), else the rule of p's
// class (classOf): <file>, <name>, <number>, <commit>, <directory>, <word>, or the program's
// options when p is an option placeholder and the usage came with an option table. Class rules
// take their alternatives from env (the files, directories and commits found); values no list
// describes are generated terminals. Errors: a grammar that does not check (see
// Grammar.Check), which these rules cannot produce.
func BuildGrammar(usages []*Usage, env *Env) (*Grammar, error) {
	if env == nil {
		env = &Env{}
	}
	b := &builder{g: NewGrammar("start"), env: env, placeholders: map[string]string{}, options: map[string]string{}}
	b.reserve()
	end := "\n"
	if env.Shell {
		end = " </dev/null\n"
	}
	b.add(&Rule{Name: "start", Alts: [][]Symbol{{N("program")}}})
	b.add(&Rule{Name: "program", Alts: [][]Symbol{{N("command"), T(end)}, {N("command"), T(end), N("program")}}})
	cmd := &Rule{Name: "command"}
	b.add(cmd)
	for i, u := range usages {
		name := "cmd" + strconv.Itoa(i+1)
		cmd.Alts = append(cmd.Alts, []Symbol{N(name)})
		b.usage = u
		b.prefix = name
		b.sub = 0
		r := &Rule{Name: name, Kind: RuleCommand, Usage: i, Comment: u.Text}
		if u.Source != "" {
			r.Comment = u.Source + ": " + u.Text
		}
		b.g.Usages = append(b.g.Usages, u.Text)
		b.add(r)
		for _, alt := range u.Root.Kids {
			var syms []Symbol
			if u.Program != "" {
				syms = append(syms, T(shellWord(u.Program)))
			}
			r.Alts = append(r.Alts, mergeTerminals(append(syms, b.seq(alt, u.Program != "")...)))
		}
	}
	for len(b.pending) > 0 {
		f := b.pending[0]
		b.pending = b.pending[1:]
		f()
	}
	if b.err != nil {
		return nil, b.err
	}
	if err := b.g.Check(); err != nil {
		return nil, err
	}
	return b.g, nil
}

type builder struct {
	g   *Grammar
	env *Env
	// usage is the usage being built; prefix and sub name its rules (cmd1.1, cmd1.2, ...).
	usage  *Usage
	prefix string
	sub    int
	// placeholders maps a placeholder's lower-case name to its rule; options maps a usage's
	// Source to its option rule.
	placeholders, options map[string]string
	reserved              map[string]bool
	// pending builds rules after the usages, so that the BNF lists the usages first.
	pending []func()
	err     error
}

// Rule names the builder itself uses, kept from placeholders' rules.
var builderNames = []string{"start", "program", "command", ClassFile, "file-relative", "file-absolute",
	ClassName, "new-name", "same-file", ClassNumber, ClassCommit, ClassDirectory, "dir-relative",
	"dir-absolute", ClassWord, ClassOption}

var cmdRuleName = regexp.MustCompile(`^cmd[0-9]+(\.[0-9]+)*$`)

func (b *builder) reserve() {
	b.reserved = map[string]bool{}
	for _, n := range builderNames {
		b.reserved[n] = true
	}
}

// add adds a rule; names are unique by construction (fresh, subRule), so an error here is an
// internal one, returned by BuildGrammar.
func (b *builder) add(r *Rule) {
	if err := b.g.Add(r); err != nil && b.err == nil {
		b.err = fmt.Errorf("workload: internal error: %w", err)
	}
}

// fresh returns a rule name based on base that is not reserved, not a usage rule's and not
// taken.
func (b *builder) fresh(base string) string {
	name := base
	for i := 2; b.reserved[name] || cmdRuleName.MatchString(name) || b.g.Has(name) || name == ""; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	b.reserved[name] = true
	return name
}

// subRule returns a new rule name for a part of the current usage (or option table).
func (b *builder) subRule() string {
	for {
		b.sub++
		name := fmt.Sprintf("%s.%d", b.prefix, b.sub)
		if !b.reserved[name] && !b.g.Has(name) {
			return name
		}
	}
}

// seq returns the symbols of a Seq node; lead says a space comes before its first item.
func (b *builder) seq(n *Node, lead bool) []Symbol {
	var out []Symbol
	for i, k := range n.Kids {
		space := lead && i == 0 || i > 0 && !k.Glued
		out = append(out, b.item(k, space)...)
	}
	return mergeTerminals(out)
}

// item returns the symbols of one node, with a space before it when space is set.
func (b *builder) item(n *Node, space bool) []Symbol {
	sp := ""
	if space {
		sp = " "
	}
	switch n.Kind {
	case Literal:
		return []Symbol{T(sp + shellWord(n.Text))}
	case Placeholder:
		return []Symbol{T(sp), b.placeholder(n.Text)}
	case Seq:
		return b.seq(n, space)
	case Group:
		name := b.subRule()
		r := &Rule{Name: name}
		b.add(r)
		if n.Optional {
			r.Alts = append(r.Alts, nil)
		}
		for _, alt := range n.Kids {
			r.Alts = append(r.Alts, b.seq(alt, space))
		}
		return []Symbol{N(name)}
	case Repeat:
		name := b.subRule()
		r := &Rule{Name: name}
		b.add(r)
		// The second alternative is the first followed by the separator and the recursion, not
		// merged with it: forms show a repetition's recursive occurrence as its first
		// len(Alts[0]) symbols.
		body := mergeTerminals(b.item(n.Kids[0], false))
		cont := N(name)
		cont.Cont = true
		r.Alts = [][]Symbol{body, append(append(append([]Symbol(nil), body...), T(" ")), cont)}
		return []Symbol{T(sp), N(name)}
	}
	return nil
}

// mergeTerminals joins adjacent terminals and drops empty ones.
func mergeTerminals(syms []Symbol) []Symbol {
	var out []Symbol
	for _, s := range syms {
		if s.Kind == Terminal {
			if s.Text == "" {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Kind == Terminal {
				out[n-1].Text += s.Text
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// placeholder returns the symbol of placeholder p (as written) in the current usage.
func (b *builder) placeholder(p string) Symbol {
	key := strings.ToLower(p)
	class := classOf(key)
	var rule string
	vals := b.env.Values
	switch {
	case vals[key] != nil && key != class:
		rule = b.placeholderRule(key, func(name string) { b.valuesRule(name, key) })
	case class == ClassOption && len(b.usage.Options) > 0 && vals[key] == nil && vals[class] == nil:
		rule = b.optionRule()
	case key == class:
		rule = b.classRule(class)
	default:
		target := b.classRule(class)
		rule = b.placeholderRule(key, func(name string) {
			b.add(&Rule{Name: name, Alts: [][]Symbol{{N(target)}}})
		})
	}
	s := N(rule)
	s.Placeholder = p
	return s
}

// placeholderRule returns the rule of placeholder key, made by build (after the usages) the
// first time.
func (b *builder) placeholderRule(key string, build func(name string)) string {
	if name, ok := b.placeholders[key]; ok {
		return name
	}
	name := b.fresh(key)
	b.placeholders[key] = name
	b.pending = append(b.pending, func() { build(name) })
	return name
}

// valuesRule makes rule name from the user's values for key: literals as shell words, ranges as
// generated integers.
func (b *builder) valuesRule(name, key string) {
	l := b.env.Values[key]
	r := &Rule{Name: name}
	for _, v := range l.Lits {
		r.Alts = append(r.Alts, []Symbol{T(shellWord(v))})
	}
	for _, rg := range l.Ranges {
		gen := fmt.Sprintf("range %d..%d", rg[0], rg[1])
		lo, hi := rg[0], rg[1]
		b.g.Generators[gen] = Generator{Desc: fmt.Sprintf("an integer from %d to %d", lo, hi), Gen: func(r *rand.Rand, _ []string) string {
			span := uint64(hi - lo)
			if span == ^uint64(0) {
				return strconv.FormatInt(int64(r.Uint64()), 10)
			}
			return strconv.FormatInt(lo+int64(r.Uint64N(span+1)), 10)
		}}
		r.Alts = append(r.Alts, []Symbol{G(gen)})
	}
	if len(r.Alts) == 0 {
		r.Alts = [][]Symbol{{T("''")}}
	}
	b.add(r)
}

// optionRule returns the rule of the current usage's options (one per usage source).
func (b *builder) optionRule() string {
	src := b.usage.Source
	if name, ok := b.options[src]; ok {
		return name
	}
	base := "options"
	if b.usage.Program != "" {
		base = sanitizeRuleName(filepath.Base(b.usage.Program)) + "-options"
	}
	name := b.fresh(base)
	b.options[src] = name
	usage, prefix := b.usage, name
	b.pending = append(b.pending, func() {
		saveU, saveP, saveS := b.usage, b.prefix, b.sub
		b.usage, b.prefix, b.sub = usage, prefix, 0
		r := &Rule{Name: name, Comment: "options of " + usage.Source}
		b.add(r)
		seen := map[string]bool{}
		for _, frag := range usage.Options {
			for _, alt := range frag.Kids {
				syms := b.seq(alt, false)
				key := fmt.Sprint(syms)
				if !seen[key] {
					seen[key] = true
					r.Alts = append(r.Alts, syms)
				}
			}
		}
		b.usage, b.prefix, b.sub = saveU, saveP, saveS
	})
	return name
}

var ruleNameBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func sanitizeRuleName(s string) string {
	s = ruleNameBad.ReplaceAllString(s, "-")
	if s == "" || s == "-" {
		return "prog"
	}
	return s
}

// classRule returns the rule of a class, made (after the usages) the first time. The user's
// values for the class's own name replace it (--value file=a,b).
func (b *builder) classRule(class string) string {
	if b.g.Has(class) || b.placeholders[class] != "" {
		return class
	}
	b.placeholders[class] = class
	b.pending = append(b.pending, func() {
		if b.env.Values[class] != nil {
			b.valuesRule(class, class)
			return
		}
		b.makeClass(class)
	})
	return class
}

// gen registers a generator once and returns its symbol.
func (b *builder) gen(name, desc string, f func(r *rand.Rand, cmd []string) string) Symbol {
	if _, ok := b.g.Generators[name]; !ok {
		b.g.Generators[name] = Generator{Desc: desc, Gen: f}
	}
	return G(name)
}

// makeClass adds the rules of a class.
func (b *builder) makeClass(class string) {
	env := b.env
	shell := env.Shell
	switch class {
	case ClassFile:
		if len(env.Files) == 0 {
			b.add(&Rule{Name: class, Comment: "no files in the directory: new names", Alts: [][]Symbol{{N(b.newName())}}})
			return
		}
		alts := [][]Symbol{{N(b.fileLists())}}
		if !env.Relative {
			alts = append(alts, []Symbol{N("file-absolute")})
		}
		b.add(&Rule{Name: class, Alts: alts})
	case ClassName:
		alts := [][]Symbol{{N(b.newName())}}
		if len(env.Files) > 0 {
			rel := b.fileLists()
			same := b.gen("same-file", "a file named earlier in the command, else any file", func(r *rand.Rand, cmd []string) string {
				if len(cmd) > 0 {
					return cmd[r.IntN(len(cmd))]
				}
				return shellWord(env.Files[r.IntN(len(env.Files))])
			})
			b.add(&Rule{Name: "same-file", Alts: [][]Symbol{{same}}})
			alts = append(alts, []Symbol{N(rel)}, []Symbol{N("same-file")})
		}
		b.add(&Rule{Name: class, Alts: alts})
	case ClassNumber:
		b.add(&Rule{Name: class, Alts: [][]Symbol{
			{T("0")},
			{b.gen("small-number", "a number from 1 to 100", func(r *rand.Rand, _ []string) string { return smallNumber(r) })},
			{b.gen("large-number", "a number of any magnitude up to 2^64-1", func(r *rand.Rand, _ []string) string { return largeNumber(r) })},
		}})
	case ClassCommit:
		r := &Rule{Name: class}
		for _, c := range env.Commits {
			r.Alts = append(r.Alts, []Symbol{T(shellWord(c))})
		}
		if len(r.Alts) == 0 {
			r.Alts = [][]Symbol{{T("HEAD")}, {T("HEAD^")}, {T("HEAD~2")}}
			r.Comment = "no repository read: relative commits only"
		}
		b.add(r)
	case ClassDirectory:
		rel := &Rule{Name: "dir-relative", Alts: [][]Symbol{{T(".")}}}
		abs := &Rule{Name: "dir-absolute"}
		if env.Dir != "" {
			abs.Alts = append(abs.Alts, []Symbol{T(shellWord(env.Dir))})
		}
		for _, d := range env.Dirs {
			rel.Alts = append(rel.Alts, []Symbol{T(shellWord(d))})
			abs.Alts = append(abs.Alts, []Symbol{T(shellWord(filepath.Join(env.Dir, d)))})
		}
		alts := [][]Symbol{{N("dir-relative")}, {N(b.newName())}}
		b.add(rel)
		if len(abs.Alts) > 0 && !env.Relative {
			b.add(abs)
			alts = append(alts, []Symbol{N("dir-absolute")})
		}
		b.add(&Rule{Name: class, Alts: alts})
	case ClassWord:
		b.add(&Rule{Name: class, Alts: [][]Symbol{{b.gen("word", "a random word", func(r *rand.Rand, _ []string) string {
			return shellWord(randomWord(r, shell))
		})}}})
	case ClassOption:
		b.add(&Rule{Name: class, Comment: "no option table: random options", Alts: [][]Symbol{{b.gen("option", "a random option (-x or --word)", func(r *rand.Rand, _ []string) string {
			return shellWord(randomOption(r))
		})}}})
	}
}

// newName adds the new-name rule once and returns its name.
func (b *builder) newName() string {
	if !b.g.Has("new-name") {
		env := b.env
		desc := "a new random name"
		if len(env.Dirs) > 0 {
			desc += ", sometimes in a subdirectory"
		}
		b.add(&Rule{Name: "new-name", Alts: [][]Symbol{{b.gen("new-name", desc, func(r *rand.Rand, _ []string) string {
			name := newName(r, env.Shell)
			if len(env.Dirs) > 0 && r.IntN(4) == 0 {
				name = filepath.Join(env.Dirs[r.IntN(len(env.Dirs))], name)
			}
			return shellWord(name)
		})}}})
	}
	return "new-name"
}

// fileLists adds the file-relative and (without Env.Relative) file-absolute rules (RuleFiles)
// once and returns the relative one's name.
func (b *builder) fileLists() string {
	if !b.g.Has("file-relative") {
		rel := &Rule{Name: "file-relative", Kind: RuleFiles}
		abs := &Rule{Name: "file-absolute", Kind: RuleFiles}
		for _, f := range b.env.Files {
			rel.Alts = append(rel.Alts, []Symbol{T(shellWord(f))})
			abs.Alts = append(abs.Alts, []Symbol{T(shellWord(filepath.Join(b.env.Dir, f)))})
		}
		b.add(rel)
		if !b.env.Relative {
			b.add(abs)
		}
	}
	return "file-relative"
}
