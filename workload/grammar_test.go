package workload

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func mustUsages(t testing.TB, texts ...string) []*Usage {
	t.Helper()
	var us []*Usage
	for _, s := range texts {
		u, err := ParseUsage(s)
		if err != nil {
			t.Fatalf("ParseUsage(%q): %v", s, err)
		}
		us = append(us, u)
	}
	return us
}

func forms(t testing.TB, g *Grammar, rule string) []string {
	t.Helper()
	var out []string
	if err := g.Forms(rule, func(f string) bool { out = append(out, f); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The report's list of the forms of `git reset [-q] [<commit>] [--] <name>` (§5.2.1).
var gitResetForms = []string{
	"git reset <name>",
	"git reset -- <name>",
	"git reset <commit> <name>",
	"git reset <commit> -- <name>",
	"git reset -q <name>",
	"git reset -q -- <name>",
	"git reset -q <commit> <name>",
	"git reset -q <commit> -- <name>",
}

func TestFormsGitReset(t *testing.T) {
	g, err := BuildGrammar(mustUsages(t, "git reset [-q] [<commit>] [--] <name>"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := forms(t, g, "cmd1")
	if !slices.Equal(got, gitResetForms) {
		t.Errorf("forms:\n got %q\nwant %q", got, gitResetForms)
	}
	var b bytes.Buffer
	if err := WriteForms(&b, mustUsages(t, "git reset [-q] [<commit>] [--] <name>"), 0); err != nil {
		t.Fatal(err)
	}
	if want := "# git reset [-q] [<commit>] [--] <name>: 8 forms\n" + strings.Join(gitResetForms, "\n") + "\n"; b.String() != want {
		t.Errorf("WriteForms:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestForms(t *testing.T) {
	tests := []struct {
		usage string
		want  []string
	}{
		{"p", []string{"p"}},
		{"x <file>...", []string{"x <file>", "x <file> <file>"}},
		{"x [FILE]...", []string{"x", "x <file>", "x <file> <file>"}},
		{"x (a|b)...", []string{"x a", "x a a", "x a b", "x b", "x b a", "x b b"}},
		{"x --[no-]status", []string{"x --status", "x --no-status"}},
		{"x [-u<mode>]", []string{"x", "x -u<mode>"}},
		{"x [a [b]]", []string{"x", "x a", "x a b"}},
		{"x -h | --help", []string{"x -h", "x --help"}},
		{"x [-a | -b] [-a | -b]", []string{"x", "x -a", "x -b", "x -a -a", "x -a -b", "x -b -a", "x -b -b"}},
		{"x 'a b' '*'", []string{"x 'a b' '*'"}}, // literals are shell words
	}
	for _, tc := range tests {
		g, err := BuildGrammar(mustUsages(t, tc.usage), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := forms(t, g, "cmd1")
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("forms of %q:\n got %q\nwant %q", tc.usage, got, want)
		}
	}
}

func TestWriteFormsLimit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteForms(&b, mustUsages(t, "x [-a] [-b] [-c] [-d]"), 5); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "raise --max-forms") {
		t.Errorf("WriteForms with max 5:\n%s", b.String())
	}
}

// reachAll expands the usages' grammar (seed) until every form of every usage was produced,
// and returns how many commands that took, or -1 when budget commands did not suffice. It also
// fails the test when a command's form is not one Forms lists.
func reachAll(t *testing.T, usages []*Usage, env *Env, seed uint64, budget int) int {
	t.Helper()
	g, err := BuildGrammar(usages, env)
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]bool{}
	all := map[string]bool{}
	for i := range usages {
		for _, f := range forms(t, g, "cmd"+strconv.Itoa(i+1)) {
			missing[itoa(i)+"\x00"+f] = true
			all[itoa(i)+"\x00"+f] = true
		}
	}
	exp, err := NewExpander(g, rand.New(rand.NewPCG(seed, seed)), 0)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < budget; {
		for _, c := range exp.Expand().Commands() {
			key := itoa(c.Usage) + "\x00" + c.Form
			if !all[key] {
				t.Fatalf("command %q has form %q, which Forms does not list for %q", c.Text, c.Form, usages[c.Usage].Text)
			}
			delete(missing, key)
			n++
			if len(missing) == 0 {
				return n
			}
		}
	}
	for k := range missing {
		t.Logf("form never produced: %q", strings.Replace(k, "\x00", ": ", 1))
	}
	return -1
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestEveryFormReachedGitReset: every form of the report's example appears within 100
// commands, for each of 20 seeds.
func TestEveryFormReachedGitReset(t *testing.T) {
	env := &Env{Dir: "/d", Files: []string{"a"}, Commits: []string{"HEAD"}}
	worst := 0
	for seed := uint64(1); seed <= 20; seed++ {
		n := reachAll(t, mustUsages(t, "git reset [-q] [<commit>] [--] <name>"), env, seed, 100)
		if n < 0 {
			t.Fatalf("seed %d: not every form of git reset within 100 commands", seed)
		}
		worst = max(worst, n)
	}
	t.Logf("all 8 forms within %d commands for every seed 1-20", worst)
}

// TestEveryFormReachedRealUsages: the usages of real help texts, several at once.
func TestEveryFormReachedRealUsages(t *testing.T) {
	usages := mustUsages(t,
		"git reset [--mixed | --soft | --hard | --merge | --keep] [-q] [<commit>]",
		"git reset [-q] [<tree-ish>] [--] <pathspec>...",
		"git reset --patch [<tree-ish>] [--] [<pathspec>...]",
		"cp [OPTION]... [-T] SOURCE DEST",
		"git commit [--[no-]status] [-u<mode>] [-F <file> | -m <msg>] [(--trailer <token>[(=|:)<value>])...]",
		"naval_fate mine (set|remove) <x> <y> [--moored | --drifting]",
	)
	env := &Env{Dir: "/d", Files: []string{"a", "b"}, Commits: []string{"HEAD", "HEAD^"}}
	// The rarest form (git commit with two different trailers) has a chance of about 1/9000.
	if n := reachAll(t, usages, env, 7, 300000); n < 0 {
		t.Fatal("not every form within 300000 commands")
	} else {
		t.Logf("every form of 6 usages within %d commands", n)
	}
}

// TestEveryFormReachedRandomUsages is the property: for random usage strings (up to 64 forms),
// the seeded expansion produces every form the usage allows within 200 commands per form.
func TestEveryFormReachedRandomUsages(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	env := &Env{Dir: "/d", Files: []string{"a", "b", "c"}, Commits: []string{"HEAD"}}
	tested, largest, total := 0, 0, 0
	for i := 0; tested < 300 && i < 5000; i++ {
		text := randomUsage(r)
		us := mustUsages(t, text)
		g, err := BuildGrammar(us, env)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := g.Forms("cmd1", func(string) bool { n++; return n <= 64 }); err != nil {
			t.Fatal(err)
		}
		if n > 64 {
			continue
		}
		tested++
		largest, total = max(largest, n), total+n
		if got := reachAll(t, us, env, uint64(i), 200*n); got < 0 {
			t.Fatalf("usage %q: not all %d forms within %d commands", text, n, 200*n)
		}
	}
	if tested < 300 {
		t.Fatalf("only %d random usages with at most 64 forms", tested)
	}
	t.Logf("%d random usages, %d forms in all, up to %d forms each: every form reached", tested, total, largest)
}

func TestExpandDeterministic(t *testing.T) {
	usages := mustUsages(t, "git reset [-q] [<commit>] [--] <name>", "sort [-r] [-n] <file> -o <name>", "x [<number>]...")
	gen := func(seed uint64, count int) string {
		dir := t.TempDir()
		for _, f := range []string{"a.txt", "b c"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := PrepareGrammar(context.Background(), GrammarOptions{Usages: usages, Seed: seed, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.Generate(context.Background(), &b, count); err != nil {
			t.Fatal(err)
		}
		// The directory differs per call: compare with it written as DIR.
		return strings.ReplaceAll(b.String(), dir, "DIR")
	}
	for _, count := range []int{0, 1, 7, 500} {
		a, b := gen(3, count), gen(3, count)
		if a != b {
			t.Errorf("count %d: two runs with seed 3 differ", count)
		}
		if got := strings.Count(a, "\n"); got != count {
			t.Errorf("count %d: %d lines", count, got)
		}
		if count >= 7 && gen(4, count) == a {
			t.Errorf("count %d: seeds 3 and 4 give the same workload", count)
		}
	}
}

func TestExpandTerminates(t *testing.T) {
	g := NewGrammar("start")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.Add(&Rule{Name: "start", Alts: [][]Symbol{{N("e")}}}))
	// Two of three alternatives recurse twice: uniform choice alone grows without bound.
	must(g.Add(&Rule{Name: "e", Alts: [][]Symbol{{N("e"), T("+"), N("e")}, {N("e"), T("*"), N("e")}, {T("x")}}}))
	for _, maxDepth := range []int{1, 5, 20} {
		exp, err := NewExpander(g, rand.New(rand.NewPCG(1, 2)), maxDepth)
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			d := exp.Expand()
			if depth := treeDepth(d); depth > maxDepth+3 {
				t.Fatalf("max depth %d: derivation %d deep", maxDepth, depth)
			}
		}
	}
}

func treeDepth(d *Derivation) int {
	m := 0
	for _, k := range d.Kids {
		m = max(m, treeDepth(k))
	}
	return m + 1
}

func TestGrammarCheck(t *testing.T) {
	tests := []struct {
		name  string
		rules []*Rule
		want  string
	}{
		{"no start", []*Rule{{Name: "a", Alts: [][]Symbol{{T("x")}}}}, "no start rule"},
		{"no alternatives", []*Rule{{Name: "start"}}, "has no alternatives"},
		{"undefined", []*Rule{{Name: "start", Alts: [][]Symbol{{N("nope")}}}}, "undefined <nope>"},
		{"generator", []*Rule{{Name: "start", Alts: [][]Symbol{{G("nope")}}}}, `undefined generator "nope"`},
		{"never finishes", []*Rule{{Name: "start", Alts: [][]Symbol{{N("a")}}}, {Name: "a", Alts: [][]Symbol{{T("x"), N("a")}}}}, "never finishes"},
	}
	for _, tc := range tests {
		g := NewGrammar("start")
		for _, r := range tc.rules {
			if err := g.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.want)
		}
	}
	g := NewGrammar("start")
	if err := g.Add(&Rule{Name: "start", Alts: [][]Symbol{{T("x")}}}); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(&Rule{Name: "start"}); err == nil {
		t.Error("a rule added twice: no error")
	}
}

// TestGrammarBNF pins the grammar of a few usages with a fixed environment
// (testdata/grammar.bnf; go test -update rewrites it).
func TestGrammarBNF(t *testing.T) {
	vals, err := ParseValues([]string{"key=1..64,0", "<MODE>=all,no"})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Dir: "/w", Files: []string{"a.txt", "sub/b c"}, Dirs: []string{"sub"},
		Commits: []string{"0123abcd", "main", "HEAD", "HEAD^"}, Values: vals, Shell: true}
	us := mustUsages(t,
		"git reset [-q] [<commit>] [--] <name>",
		"sort [-r] [-o <output>] <file>...",
		"cp [OPTION]... SOURCE DIRECTORY",
		"i <key>",
		"git commit [-u<mode>] [--[no-]status] [-n <number>] [-m <msg>]",
	)
	us[2].Options = []*Node{mustFragment(t, "-a"), mustFragment(t, "--backup[=CONTROL]"), mustFragment(t, "-t DIRECTORY")}
	us[2].Source = "cp --help"
	g, err := BuildGrammar(us, env)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := g.WriteBNF(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/grammar.bnf", b.String())
}

func mustFragment(t *testing.T, s string) *Node {
	t.Helper()
	n, err := ParseFragment(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
	}
}

// TestPlaceholderNames: placeholders named like the builder's own rules get rules of their own.
func TestPlaceholderNames(t *testing.T) {
	us := mustUsages(t, "x <command> <program> <start> <new-name> <cmd1> <file-relative>")
	g, err := BuildGrammar(us, &Env{Dir: "/d", Files: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"command-2", "program-2", "start-2", "new-name-2", "cmd1-2", "file-relative-2"} {
		if !g.Has(want) {
			t.Errorf("no rule <%s>", want)
		}
	}
	if got := forms(t, g, "cmd1"); len(got) != 1 || got[0] != "x <command> <program> <start> <new-name> <cmd1> <file-relative>" {
		t.Errorf("forms = %q", got)
	}
}

// TestGenerateCancelled: a cancelled context stops Generate between two commands, with what
// was generated written and the cause returned.
func TestGenerateCancelled(t *testing.T) {
	f, err := PrepareGrammar(context.Background(), GrammarOptions{Usages: mustUsages(t, "x <number>")})
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("stop now")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	var b bytes.Buffer
	if err := f.Generate(ctx, &b, 10); !errors.Is(err, cause) || !strings.Contains(err.Error(), "0 of 10 commands") {
		t.Errorf("Generate with a cancelled context = %v, want the cause", err)
	}
	dir := t.TempDir()
	_, err = PrepareGrammar(ctx, GrammarOptions{Usages: mustUsages(t, "x <file>"), Dir: dir, Files: 3})
	if !errors.Is(err, cause) {
		t.Errorf("PrepareGrammar creating files with a cancelled context = %v, want the cause", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files created after the cancellation", len(entries))
	}
}
