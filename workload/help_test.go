package workload

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// The help texts in testdata/help were captured from the programs Debian bookworm ships (git
// 2.39, coreutils 9.1, sqlite3 3.40) and from argparse and docopt's documentation style.
func TestExtractHelp(t *testing.T) {
	tests := []struct {
		file    string
		usages  []string
		lines   []int
		options []string // some of the options, in order
		absent  []string // options that must not be found
	}{
		{
			file: "git-reset-h.txt",
			usages: []string{
				"git reset [--mixed | --soft | --hard | --merge | --keep] [-q] [<commit>]",
				"git reset [-q] [<tree-ish>] [--] <pathspec>...",
				"git reset [-q] [--pathspec-from-file [--pathspec-file-nul]] [<tree-ish>]",
				"git reset --patch [<tree-ish>] [--] [<pathspec>...]",
			},
			lines:   []int{1, 2, 3, 4},
			options: []string{"-q", "--quiet", "--no-refresh", "--recurse-submodules[=<reset>]", "-p", "--patch", "--pathspec-from-file <file>"},
		},
		{
			file: "git-commit-h.txt",
			usages: []string{"git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend] " +
				"[--dry-run] [(-c | -C | --squash) <commit> | --fixup [(amend|reword):]<commit>)] " +
				"[-F <file> | -m <msg>] [--reset-author] [--allow-empty] " +
				"[--allow-empty-message] [--no-verify] [-e] [--author=<author>] " +
				"[--date=<date>] [--cleanup=<mode>] [--[no-]status] " +
				"[-i | -o] [--pathspec-from-file=<file> [--pathspec-file-nul]] " +
				"[(--trailer <token>[(=|:)<value>])...] [-S[<keyid>]] " +
				"[--] [<pathspec>...]"},
			lines:   []int{1},
			options: []string{"-F <file>", "--file <file>", "-m <message>", "--message <message>", "--fixup [(amend|reword):]commit", "-S[<key-id>]", "--gpg-sign[=<key-id>]", "-u[<mode>]"},
		},
		{
			file: "cp-help.txt",
			usages: []string{
				"cp [OPTION]... [-T] SOURCE DEST",
				"cp [OPTION]... SOURCE... DIRECTORY",
				"cp [OPTION]... -t DIRECTORY SOURCE...",
			},
			lines:   []int{1, 2, 3},
			options: []string{"-a", "--archive", "--backup[=CONTROL]", "-b", "-S SUFFIX", "--suffix=SUFFIX", "-t DIRECTORY", "--target-directory=DIRECTORY"},
			absent:  []string{"--help", "--version", "-n option)"},
		},
		{
			file:    "sort-help.txt",
			usages:  []string{"sort [OPTION]... [FILE]...", "sort [OPTION]... --files0-from=F"},
			lines:   []int{1, 2},
			options: []string{"-b", "-k KEYDEF", "--key=KEYDEF", "-o FILE", "--output=FILE", "--parallel=N", "-u"},
			absent:  []string{"--help", "--version"},
		},
		{
			file:    "sqlite3-help.txt",
			usages:  []string{"sqlite3 [OPTIONS] FILENAME [SQL]"},
			lines:   []int{1},
			options: []string{"-A ARGS...", "-append", "-cmd COMMAND", "-init FILENAME", "-[no]header", "-lookaside SIZE N"},
			absent:  []string{"-help", "-version"},
		},
		{
			file: "argparse.txt",
			usages: []string{"backup.py [-h] [--level LEVEL] [--exclude PATTERN] [--compress {gzip,xz}] [-v] " +
				"source [source ...] dest"},
			lines:   []int{1},
			options: []string{"--level LEVEL", "--compress {gzip,xz}", "-v", "--verbose"},
			absent:  []string{"-h", "--help"},
		},
		{
			file: "docopt.txt",
			usages: []string{
				"naval_fate ship new <name>...",
				"naval_fate ship <name> move <x> <y> [--speed=<kn>]",
				"naval_fate mine (set|remove) <x> <y> [--moored | --drifting]",
				"naval_fate -h | --help",
			},
			lines:   []int{4, 5, 6, 7},
			options: []string{"--speed=<kn>", "--moored"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "help", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			h := ExtractHelp(string(b))
			var got []string
			var lines []int
			for _, u := range h.Usages {
				got = append(got, u.Text)
				lines = append(lines, u.Line)
			}
			if !reflect.DeepEqual(got, tc.usages) {
				t.Errorf("usages:\n got %q\nwant %q", got, tc.usages)
			}
			if !reflect.DeepEqual(lines, tc.lines) {
				t.Errorf("usage lines: got %v, want %v", lines, tc.lines)
			}
			var opts []string
			for _, o := range h.Options {
				opts = append(opts, o.Text)
			}
			i := 0
			for _, o := range opts {
				if i < len(tc.options) && o == tc.options[i] {
					i++
				}
			}
			if i < len(tc.options) {
				t.Errorf("options: %q not found in order in %q", tc.options[i], opts)
			}
			for _, a := range tc.absent {
				for _, o := range opts {
					if o == a {
						t.Errorf("option %q should be left out", a)
					}
				}
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	b, err := os.ReadFile("testdata/help/git-commit-h.txt")
	if err != nil {
		t.Fatal(err)
	}
	// git commit's usage has a stray ')': no usage parses, and the error names line and column.
	_, _, err = ParseHelp(ExtractHelp(string(b)), "git commit -h")
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "column 152") {
		t.Errorf("ParseHelp(git commit -h) = %v, want an error naming line 1, column 152", err)
	}
	// One bad usage among good ones is left out with a note.
	h := Help{Usages: []HelpLine{{"x [a", 1}, {"x <file>", 2}}, Options: []HelpLine{{"-a", 4}, {"--b=[", 5}}}
	us, notes, err := ParseHelp(h, "x -h")
	if err != nil || len(us) != 1 || us[0].Text != "x <file>" || us[0].Source != "x -h" || len(us[0].Options) != 1 {
		t.Fatalf("ParseHelp = %v, %v, %v", us, notes, err)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "option synopses") || !strings.Contains(notes[1], "line 1") {
		t.Errorf("notes = %q, want one for the bad option and one naming the bad usage's line", notes)
	}
	if _, _, err := ParseHelp(Help{}, "y"); err == nil {
		t.Error("ParseHelp of no usage: no error")
	}
}

// TestUsagesFromHelp runs real programs' help.
func TestUsagesFromHelp(t *testing.T) {
	tests := []struct {
		cmd    string
		usages int
		option bool // an option table was found
	}{
		{"git reset -h", 4, true},
		{"cp --help", 3, true},
		{"sort --help", 2, true},
		{"sqlite3 -help", 1, true}, // prints to standard error
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			testenv.Tool(t, strings.Fields(tc.cmd)[0])
			us, notes, err := UsagesFromHelp(context.Background(), tc.cmd)
			if err != nil {
				t.Fatalf("UsagesFromHelp(%q): %v", tc.cmd, err)
			}
			if len(us) != tc.usages {
				t.Errorf("UsagesFromHelp(%q): %d usages, want %d (notes %q)", tc.cmd, len(us), tc.usages, notes)
			}
			if tc.option && len(us) > 0 && len(us[0].Options) == 0 {
				t.Errorf("UsagesFromHelp(%q): no options", tc.cmd)
			}
		})
	}
}

func TestUsagesFromHelpErrors(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"", "no command"},
		{"   ", "no command"},
		{"'unterminated", "--usage-from"},
		{"/nonexistent/prog --help", "could not start"},
		{"true", `no line starting with "usage:"`},
		{"sh -c 'echo usage: x [a'", "no usage parses"},
	}
	for _, tc := range tests {
		_, _, err := UsagesFromHelp(context.Background(), tc.cmd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UsagesFromHelp(%q) = %v, want an error containing %q", tc.cmd, err, tc.want)
		}
	}
	// Not through a shell: the words are the arguments, a ';' is one of them.
	us, _, err := UsagesFromHelp(context.Background(), `sh -c 'echo "usage: $0 [-q] <file>"' "prog; rm"`)
	if err != nil || len(us) != 1 || us[0].Program != "prog;" {
		t.Errorf("UsagesFromHelp with quoted words = %v, %v; want the program named by $0", us, err)
	}
}

// FuzzExtractHelp: any text gives usages and options without line breaks, options starting
// with '-', lines inside the text.
func FuzzExtractHelp(f *testing.F) {
	entries, _ := os.ReadDir("testdata/help")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata/help", e.Name())); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("Usage:\n  a\n  b\nUsage:")
	f.Add("usage: x\n\tcontinued\n   or: y\n  -k, --key=K[=x]\n")
	f.Fuzz(func(t *testing.T, text string) {
		h := ExtractHelp(text)
		n := strings.Count(text, "\n") + 1
		for _, u := range h.Usages {
			if strings.ContainsAny(u.Text, "\n") || u.Line < 1 || u.Line > n {
				t.Fatalf("usage %q on line %d of %d", u.Text, u.Line, n)
			}
		}
		for _, o := range h.Options {
			if !strings.HasPrefix(o.Text, "-") || strings.ContainsAny(o.Text, "\n") || o.Line < 1 || o.Line > n {
				t.Fatalf("option %q on line %d of %d", o.Text, o.Line, n)
			}
		}
		// Whatever was found goes through ParseHelp without panicking.
		_, _, _ = ParseHelp(h, "fuzz")
	})
}
