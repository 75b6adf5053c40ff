package workload

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestParseUsage(t *testing.T) {
	tests := []struct {
		in, want string
		program  string
	}{
		{"git reset [-q] [<commit>] [--] <name>", "git reset [-q] [<commit>] [--] <name>", "git"},
		{"  git   reset\t[-q]  ", "git reset [-q]", "git"},
		{"cp [OPTION]... [-T] SOURCE DEST", "cp [<option>...] [-T] <source> <dest>", "cp"},
		{"sort [OPTION]... --files0-from=F", "sort [<option>...] --files0-from=<f>", "sort"},
		{"cp --backup[=CONTROL] SOURCE", "cp --backup[=<control>] <source>", "cp"},
		{"git commit [-u<mode>] [--[no-]status] [-S[<keyid>]]", "git commit [-u<mode>] [--[no-]status] [-S[<keyid>]]", "git"},
		{"git commit [(--trailer <token>[(=|:)<value>])...]", "git commit [(--trailer <token>[(= | :)<value>])...]", "git"},
		{"git commit [-F <file> | -m <msg>] [-i | -o]", "git commit [-F <file> | -m <msg>] [-i | -o]", "git"},
		{"mapcli hashmap_tx|btree|ctree file-name [<seed>]", "mapcli (hashmap_tx | btree | ctree) file-name [<seed>]", "mapcli"},
		{"tar {A|c|x}[GnS] [ARG...]", "tar (A | c | x)[GnS] [<arg>...]", "tar"},
		{"backup.py [--compress {gzip,xz}] source [source ...]", "backup.py [--compress (gzip | xz)] source [source...]", "backup.py"},
		{"python [option] ... [arg] ...", "python [option...] [arg...]", "python"},
		{"x <pathspec>...", "x <pathspec>...", "x"},
		{"x --key=<v> ...", "x --key=<v>...", "x"},
		{"x [FILE]...", "x [<file>...]", "x"},
		{"x [a b]...", "x [(a b)...]", "x"},
		{"x ((a | b))", "x (a | b)", "x"},
		{"x [(a | b)]", "x [a | b]", "x"},
		{"naval_fate -h | --help", "naval_fate -h | --help", "naval_fate"},
		{"p", "p", "p"},
		{"FILE <x>", "FILE <x>", "FILE"},
		{"x 'two words' \"it's\" '[a]'", "x 'two words' it's '[a]'", "x"},
		{"x \"'a\" 'b'\"'\"", "x \"'\"'a' b'", "x"},
		{"x don't", "x don't", "x"},
		{"x 'FILE'", "x 'FILE'", "x"},
		{"x ''", "x ''", "x"},
		{"prog[-x] y", "prog[-x] y", ""},
		{"FOO|BAR x", "('FOO' | <bar>) x", ""},
		{"i <number> <number>", "i <number> <number>", "i"},
	}
	for _, tc := range tests {
		u, err := ParseUsage(tc.in)
		if err != nil {
			t.Errorf("ParseUsage(%q): %v", tc.in, err)
			continue
		}
		if got := u.String(); got != tc.want {
			t.Errorf("ParseUsage(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		if u.Program != tc.program {
			t.Errorf("ParseUsage(%q).Program = %q, want %q", tc.in, u.Program, tc.program)
		}
		checkRoundTrip(t, u)
	}
}

// checkRoundTrip checks that a usage's canonical form parses back into the same tree.
func checkRoundTrip(t *testing.T, u *Usage) {
	t.Helper()
	again, err := ParseUsage(u.String())
	if err != nil {
		t.Errorf("canonical form %q of %q does not parse: %v", u.String(), u.Text, err)
		return
	}
	if again.Program != u.Program || !sameTree(again.Root, u.Root) {
		t.Errorf("canonical form %q of %q parses into another tree:\n got %s\nwant %s", u.String(), u.Text, dumpTree(again.Root), dumpTree(u.Root))
	}
}

// sameTree compares trees ignoring positions.
func sameTree(a, b *Node) bool {
	return reflect.DeepEqual(stripPos(a), stripPos(b))
}

func stripPos(n *Node) *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Pos = 0
	c.Kids = nil
	for _, k := range n.Kids {
		c.Kids = append(c.Kids, stripPos(k))
	}
	return &c
}

func dumpTree(n *Node) string {
	var b strings.Builder
	var walk func(*Node)
	walk = func(n *Node) {
		if n.Glued {
			b.WriteString("~")
		}
		switch n.Kind {
		case Literal:
			b.WriteString("L(" + n.Text + ")")
		case Placeholder:
			b.WriteString("P(" + n.Text + ")")
		case Seq:
			b.WriteString("S(")
		case Group:
			if n.Optional {
				b.WriteString("O(")
			} else {
				b.WriteString("G(")
			}
		case Repeat:
			b.WriteString("R(")
		}
		if n.Kind >= Seq {
			for i, k := range n.Kids {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(k)
			}
			b.WriteString(")")
		}
	}
	walk(n)
	return b.String()
}

func TestParseUsageErrors(t *testing.T) {
	tests := []struct {
		in     string
		column int
		msg    string
	}{
		{"", 1, "empty usage"},
		{"   ", 1, "empty usage"},
		{"git reset [-q", 11, `"[" is never closed`},
		{"git reset -q]", 13, `"]" closes nothing`},
		{"x [a) b", 5, `")" closes "[" opened at column 3`},
		{"x (a | b]", 9, `"]" closes "(" opened at column 3`},
		{"x []", 4, `empty group "[]"`},
		{"x [a | ]", 8, "nothing after '|'"},
		{"x [ | a]", 5, "nothing before '|'"},
		{"x | ", 5, "nothing after '|'"},
		{"x a |", 6, "nothing after '|'"},
		{"x …", 3, "'...' repeats nothing"}, // not the program
		{"x ...", 3, "'...' repeats nothing"},
		{"x [...]", 4, "'...' repeats nothing"},
		{"x [a | ...]", 8, "'...' repeats nothing"},
		{"x a...b", 7, `"b" right after '...'`},
		{"x <a b>", 3, "placeholder '<' is not closed"},
		{"x <file", 3, "placeholder '<' is not closed"},
		{"x <>", 3, "empty placeholder"},
		{"x a > b", 5, "'>' without '<'"},
		{"x 'abc", 3, "quote ' is never closed"},
		{"x \"a\nb\"", 5, "line break inside quotes"},
		{"x \xff", 3, "invalid UTF-8"},
		{"é [a", 3, `"[" is never closed`}, // columns count characters, not bytes
		{"x a...|b", 7, "'|' has nothing before it"},
		{"git commit [(-c | -C | --squash) <commit> | --fixup [(amend|reword):]<commit>)]", 78, `")" closes "[" opened at column 12`},
	}
	for _, tc := range tests {
		_, err := ParseUsage(tc.in)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("ParseUsage(%q) = %v, want a *UsageError", tc.in, err)
			continue
		}
		if col := column(ue.Usage, ue.Pos); col != tc.column || !strings.Contains(ue.Msg, tc.msg) {
			t.Errorf("ParseUsage(%q): column %d %q, want column %d %q", tc.in, col, ue.Msg, tc.column, tc.msg)
		}
		if !strings.Contains(err.Error(), "column ") {
			t.Errorf("ParseUsage(%q): error %q does not name the column", tc.in, err)
		}
	}
}

func TestUsageErrorExcerpt(t *testing.T) {
	long := "git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend] [--dry-run] [(-c | -C) <commit>)]"
	_, err := ParseUsage(long)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "column 105") || !strings.Contains(msg, `<commit>)]`) || len(msg) > 220 {
		t.Errorf("error for a long usage: %q, want the column and the text around it, not the whole usage", msg)
	}
}

// randomUsage writes a random usage string of the language (for property tests): nested
// groups, alternatives, repetitions, glued items, placeholders in both spellings. Its number
// of forms stays small for depth <= 2.
func randomUsage(r *rand.Rand) string {
	var item func(depth int) string
	words := []string{"-q", "--all", "-v", "--", "x", "add", "-n", "--key="}
	placeholders := []string{"<file>", "<name>", "<number>", "FILE", "<commit>", "COUNT"}
	alts := func(depth int, n int) string {
		var parts []string
		for range n {
			var seq []string
			for range 1 + r.IntN(2) {
				seq = append(seq, item(depth+1))
			}
			parts = append(parts, strings.Join(seq, " "))
		}
		return strings.Join(parts, " | ")
	}
	item = func(depth int) string {
		p := r.IntN(10)
		if depth >= 2 {
			p = r.IntN(4)
		}
		switch p {
		case 0, 1:
			return words[r.IntN(len(words))]
		case 2, 3:
			return placeholders[r.IntN(len(placeholders))]
		case 4, 5:
			return "[" + alts(depth, 1+r.IntN(2)) + "]"
		case 6:
			return "(" + alts(depth, 2) + ")"
		case 7:
			if in := item(depth + 1); !strings.HasSuffix(in, "...") {
				return in + "..."
			}
			return "<x>..."
		case 8:
			return "-o" + placeholders[r.IntN(3)]
		default:
			return words[r.IntN(len(words))] + "|" + words[r.IntN(len(words))]
		}
	}
	var parts []string
	for range 1 + r.IntN(3) {
		parts = append(parts, item(0))
	}
	return "prog " + strings.Join(parts, " ")
}

func TestRandomUsagesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		text := randomUsage(r)
		u, err := ParseUsage(text)
		if err != nil {
			t.Fatalf("random usage %q: %v", text, err)
		}
		checkRoundTrip(t, u)
	}
}

// FuzzParseUsage: any input either fails with a *UsageError whose position is inside the input,
// or parses into a tree whose canonical form parses back into the same tree, whose grammar
// checks, expands and enumerates forms.
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{
		"git reset [-q] [<commit>] [--] <name>",
		"git commit [(--trailer <token>[(=|:)<value>])...] [-S[<keyid>]] [--[no-]status]",
		"cp [OPTION]... [-T] SOURCE DEST",
		"tar {A|c|x}[GnS] [ARG...]",
		"naval_fate -h | --help",
		"x 'a b' \"it's\" ...",
		"x [a",
		"x <a",
		"FOO|BAR x",
		"backup.py {gzip,xz} [x ...]",
		"x …",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		u, err := ParseUsage(text)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseUsage(%q): %v is not a *UsageError", text, err)
			}
			if ue.Pos < 0 || ue.Pos > len(text) {
				t.Fatalf("ParseUsage(%q): position %d outside the text", text, ue.Pos)
			}
			return
		}
		checkRoundTrip(t, u)
		g, err := BuildGrammar([]*Usage{u}, &Env{Shell: true})
		if err != nil {
			t.Fatalf("BuildGrammar(%q): %v", text, err)
		}
		n := 0
		if err := g.Forms("cmd1", func(form string) bool { n++; return n < 50 }); err != nil {
			t.Fatalf("Forms(%q): %v", text, err)
		}
		exp, err := NewExpander(g, rand.New(rand.NewPCG(1, 1)), 20)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			for _, c := range exp.Expand().Commands() {
				if strings.ContainsAny(c.Text, "\n") {
					t.Fatalf("usage %q: command %q holds a line break", text, c.Text)
				}
			}
		}
	})
}
