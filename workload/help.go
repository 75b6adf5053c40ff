package workload

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/shlex"

	"github.com/scry-pm/scry/internal/exec"
)

// Reading usage strings from a program's help text (Barowsky et al., Improving Application
// Crash Consistency with Symbolic Execution and Fuzzing (2021) §5.2.1: "a parser that takes
// docstrings for the program (in the format of output from -help or the like) and converts them
// into commands for the grammar").

// HelpLine is a piece of a help text: its text and the 1-based line it starts on.
type HelpLine struct {
	Text string
	Line int
}

// Help is what ExtractHelp finds in a help text.
type Help struct {
	// Usages are the usage strings: the text after "usage:" (any case) and after each "or:"
	// line that follows, each joined with its continuation lines.
	Usages []HelpLine
	// Options are the synopses of the option table's entries, each option's spellings apart:
	// "  -k, --key=KEYDEF   sort via a key" gives "-k" and "--key=KEYDEF". Entries for help and
	// version are left out.
	Options []HelpLine
}

var (
	usageLine = regexp.MustCompile(`(?i)^(\s*usage:\s*)(.*)$`)
	orLine    = regexp.MustCompile(`(?i)^(\s*or:\s*)(\S.*)$`)
	// optionLine: an option table entry, indented by 1 to 10 columns (deeper lines continue
	// a description), its synopsis ending at two spaces, a tab, or the end of the line.
	optionLine = regexp.MustCompile(`^([ \t]{1,10})(-[^\s,].*?)(?:\s{2,}|\t|$)`)
	optionEnd  = regexp.MustCompile(`^-{1,2}(help|version)$`)
)

// width is the column width of a line's leading whitespace (tabs to the next multiple of 8).
func width(prefix string) int {
	w := 0
	for _, c := range prefix {
		if c == '\t' {
			w = (w/8 + 1) * 8
		} else {
			w++
		}
	}
	return w
}

// ExtractHelp finds the usage strings and option synopses of a help text, in the styles of git
// ("usage: git reset ..." then "   or: git reset ..."), GNU ("Usage: cp ..." then "  or:  cp
// ..."), argparse and docopt ("Usage:" alone, then one usage per indented line). A line that
// follows a usage without a blank line and is indented at least to the usage's text continues
// it (git commit -h spreads one usage over eight lines). It accepts any input.
func ExtractHelp(text string) Help {
	var h Help
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		m := usageLine.FindStringSubmatch(lines[i])
		if m == nil {
			if o := optionEntry(lines[i], i+1); o != nil {
				h.Options = append(h.Options, o...)
			}
			continue
		}
		if strings.TrimSpace(m[2]) == "" {
			// docopt: "Usage:" alone; each deeper-indented line below is a usage.
			indent := width(m[1][:len(m[1])-len(strings.TrimLeft(m[1], " \t"))])
			for i+1 < len(lines) {
				next := lines[i+1]
				body := strings.TrimLeft(next, " \t")
				if body == "" || width(next[:len(next)-len(body)]) <= indent {
					break
				}
				i++
				h.Usages = append(h.Usages, HelpLine{strings.TrimSpace(body), i + 1})
			}
			continue
		}
		cur := HelpLine{strings.TrimSpace(m[2]), i + 1}
		col := width(m[1])
		for i+1 < len(lines) {
			next := lines[i+1]
			body := strings.TrimLeft(next, " \t")
			if body == "" {
				break
			}
			if o := orLine.FindStringSubmatch(next); o != nil {
				h.Usages = append(h.Usages, cur)
				cur = HelpLine{strings.TrimSpace(o[2]), i + 2}
				col = width(o[1])
				i++
				continue
			}
			if width(next[:len(next)-len(body)]) < col {
				break
			}
			cur.Text += " " + strings.TrimSpace(body)
			i++
		}
		h.Usages = append(h.Usages, cur)
	}
	return h
}

// optionEntry returns the option synopses of an option table line, or nil.
func optionEntry(line string, n int) []HelpLine {
	m := optionLine.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	alts := splitTopLevel(strings.TrimSpace(m[2]))
	// The argument written after the last spelling belongs to the bare short ones too (GNU:
	// "-k, --key=KEYDEF" is -k KEYDEF or --key=KEYDEF; an optional one, --gpg-sign[=<key-id>],
	// is glued to the short option: -S[<key-id>]).
	arg := ""
	if a := longArg.FindStringSubmatch(alts[len(alts)-1]); a != nil {
		if a[1] == "[=" {
			arg = "[" + a[2]
		} else {
			arg = " " + a[2]
		}
	}
	var out []HelpLine
	for _, alt := range alts {
		if optionEnd.MatchString(alt) {
			return nil // -h/--help, --version: nothing to test
		}
		if !strings.HasPrefix(alt, "-") {
			continue // not an option's spelling
		}
		if shortBare.MatchString(alt) {
			alt += arg
		}
		out = append(out, HelpLine{alt, n})
	}
	return out
}

var (
	// longArg splits a long option's argument off: --key=KEYDEF, --file <file>,
	// --backup[=CONTROL].
	longArg = regexp.MustCompile(`^--[A-Za-z0-9][A-Za-z0-9_-]*(=|\[=| )(\S.*)$`)
	// shortBare is a short option without an argument: -k.
	shortBare = regexp.MustCompile(`^-[A-Za-z0-9]$`)
)

// splitTopLevel splits "-k, --key=KEYDEF" at commas followed by a space outside brackets.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '{', '<':
			depth++
		case ']', ')', '}', '>':
			depth--
		case ',':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// HelpTimeout bounds the run of a --usage-from command.
const HelpTimeout = 10 * time.Second

// UsagesFromHelp runs cmdline (split into words as a shell would: quotes are honoured, but the
// command is run directly, never through a shell; write `sh -c '...'` to ask for one), with no
// standard input and HelpTimeout, and parses the usages and option table of what it prints
// (standard output, else standard error; its exit status does not matter, as `git reset -h`
// exits 129). Each usage gets the option table as Options and cmdline as Source. A usage that
// does not parse is left out with a note naming its line and column, as is an option synopsis
// (counted). Errors: an empty or badly quoted cmdline, a command that cannot start or hangs, a
// help text with no usage line, or no usage that parses.
func UsagesFromHelp(ctx context.Context, cmdline string) ([]*Usage, []string, error) {
	args, err := shlex.Split(cmdline)
	if err != nil {
		return nil, nil, fmt.Errorf("--usage-from %q: %v", cmdline, err)
	}
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("--usage-from %q: no command (e.g. --usage-from 'git reset -h')", cmdline)
	}
	o := exec.RunCommand(ctx, args, "", HelpTimeout)
	if o.Err != nil || o.TimedOut {
		return nil, nil, fmt.Errorf("--usage-from %q: %s", cmdline, o.Describe())
	}
	h := ExtractHelp(string(o.Stdout))
	if len(h.Usages) == 0 {
		h = ExtractHelp(string(o.Stderr))
	}
	if len(h.Usages) == 0 {
		out := strings.TrimSpace(string(o.Stdout) + string(o.Stderr))
		if len(out) > 300 {
			out = out[:300] + "..."
		}
		return nil, nil, fmt.Errorf("--usage-from %q: no line starting with \"usage:\" in its output (it %s); output: %q; give the usage with --usage instead",
			cmdline, o.Describe(), out)
	}
	return ParseHelp(h, cmdline)
}

// ParseHelp parses the usages and options ExtractHelp found in the help text of source (the
// command, for messages), as UsagesFromHelp does.
func ParseHelp(h Help, source string) ([]*Usage, []string, error) {
	if len(h.Usages) == 0 {
		return nil, nil, fmt.Errorf("%s: no usage line in the help text", source)
	}
	var notes []string
	var opts []*Node
	badOpts := 0
	for _, o := range h.Options {
		frag, err := ParseFragment(o.Text)
		if err != nil {
			badOpts++
			continue
		}
		opts = append(opts, frag)
	}
	if badOpts > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d of %d option synopses do not parse and are left out", source, badOpts, len(h.Options)))
	}
	var usages []*Usage
	var bad []string
	var first error
	for _, l := range h.Usages {
		u, err := ParseUsage(l.Text)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("line %d: %w", l.Line, err)
			} else {
				bad = append(bad, fmt.Sprintf("%s: usage on line %d left out: %v", source, l.Line, err))
			}
			continue
		}
		u.Options = opts
		u.Source = source
		usages = append(usages, u)
	}
	if len(usages) == 0 {
		return nil, append(notes, bad...), fmt.Errorf("%s: no usage parses: %w (correct it and give it with --usage)", source, first)
	}
	if first != nil {
		notes = append(notes, fmt.Sprintf("%s: usage on %v: left out", source, first))
	}
	return usages, append(notes, bad...), nil
}
