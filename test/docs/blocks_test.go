package docs

import (
	"os/exec"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []Block // Line, Lang, Marked, Output, Dir, len(Lines) compared
		err       string
	}{
		{name: "unmarked", doc: "text\n```sh\nscry version\n```\n",
			want: []Block{{Line: 2, Lang: "sh", Lines: []string{"scry version"}}}},
		{name: "marked with cd and output", doc: "<!-- doctest cd=try -->\n```sh\na\nb\n```\n<!-- doctest output -->\n```\nx\n```\n",
			want: []Block{{Line: 2, Lang: "sh", Marked: true, Dir: "try", Lines: []string{"a", "b"}},
				{Line: 7, Marked: true, Output: true, Lines: []string{"x"}}}},
		{name: "blank line after marker", doc: "<!-- doctest -->\n\n```\na\n```\n",
			want: []Block{{Line: 3, Marked: true, Lines: []string{"a"}}}},
		{name: "inner fence of another length", doc: "````md\n```sh\n```\n````\n",
			want: []Block{{Line: 1, Lang: "md", Lines: []string{"```sh", "```"}}}},
		{name: "marker before text", doc: "<!-- doctest -->\ntext\n```sh\na\n```\n", err: "line 1: doctest marker not followed"},
		{name: "marker at end", doc: "```sh\na\n```\n<!-- doctest -->\n", err: "line 4: doctest marker not followed"},
		{name: "unknown option", doc: "<!-- doctest exit=1 -->\n```sh\na\n```\n", err: `line 1: unknown doctest option "exit=1"`},
		{name: "cd outside", doc: "<!-- doctest cd=../x -->\n```sh\na\n```\n", err: "want a directory inside"},
		{name: "output first", doc: "<!-- doctest output -->\n```\na\n```\n", err: "line 2: doctest output block before any block that runs"},
		{name: "unclosed", doc: "```sh\na\n", err: "line 1: fenced block never closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.doc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d blocks %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Line != w.Line || g.Lang != w.Lang || g.Marked != w.Marked || g.Output != w.Output || g.Dir != w.Dir || strings.Join(g.Lines, "|") != strings.Join(w.Lines, "|") {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestShell(t *testing.T) {
	for _, tc := range []struct {
		b    Block
		want bool
	}{
		{Block{Lang: "sh"}, true},
		{Block{Lang: "json", Lines: []string{"scry x"}}, false},
		{Block{Lines: []string{"# comment", "scry check -- ./p"}}, true},
		{Block{Lines: []string{"btree_map.c:40: tx-unlogged-store"}}, false},
		{Block{Lines: []string{"", "make mapcli"}}, true},
	} {
		if got := tc.b.Shell(); got != tc.want {
			t.Errorf("Shell(%q, %q) = %v, want %v", tc.b.Lang, tc.b.Lines, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	got := "scry: recording\nfoo.c:3: unpersisted-store (2 occurrences)\n  in function main\nscry: 1 correctness findings in 44 events, 0.1s\n"
	for _, tc := range []struct {
		name string
		want []string
		line int // -1: matches
	}{
		{"excerpt in order", []string{"foo.c:3: unpersisted-store (2 occurrences)", "scry: 1 correctness findings in 44 events, ...s"}, -1},
		{"lines left out", []string{"...", "foo.c:3: ...", "...", "scry: 1 correctness findings in 44 events, ...s"}, -1},
		{"indentation ignored", []string{"foo.c:3: ...", "in function main"}, -1},
		{"stale count", []string{"foo.c:3: unpersisted-store (3 occurrences)"}, 0},
		{"out of order", []string{"in function main", "foo.c:3: ..."}, 1},
		{"wildcard stays in its line", []string{"foo.c:3: ...main"}, 0},
		{"regexp characters are literal", []string{"scry: 1 correctness findings in 4. events, ...s"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, line := Match(tc.want, got)
			if line != tc.line || (line >= 0) != (msg != "") {
				t.Errorf("Match = %q, %d; want line %d", msg, line, tc.line)
			}
		})
	}
}

// TestScript runs scripts made from blocks with bash: `# exit N` lets a command exit N (and
// only N), and a failing command is reported at its line of the document.
func TestScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		name  string
		lines []string
		ok    bool
		out   string
	}{
		{"all succeed", []string{"true", "echo hi"}, true, "hi"},
		{"failure names its doc line", []string{"true", "false", "echo not reached"}, false, "doctest: command at line 11 exited 1"},
		{"expected status", []string{"(exit 3)   # exit 3: the doc says so", "echo after"}, true, "after"},
		{"continued command with expected status", []string{"echo a \\", "  b; (exit 1) # exit 1", "echo after"}, true, "after"},
		{"wrong status", []string{"true", "(exit 2)  # exit 1"}, false, "doctest: command at line 11 exited 2, the doc says exit 1"},
		{"expected failure that succeeds", []string{"true  # exit 1"}, false, "doctest: command at line 10 exited 0, the doc says exit 1"},
		{"pipefail", []string{"false | cat"}, false, "doctest: command at line 10 exited 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bash, "-euo", "pipefail", "-c", Script(Block{Lines: tc.lines}, 10), "doctest").CombinedOutput()
			if (err == nil) != tc.ok || !strings.Contains(string(out), tc.out) {
				t.Errorf("err = %v, output:\n%s\nwant ok=%v and %q", err, out, tc.ok, tc.out)
			}
		})
	}
}
