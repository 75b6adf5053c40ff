package report

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/scry-pm/scry/trace"
)

// Scope is the code a change touched, for a run scoped to it (`scry check --changed-since REV`,
// docs/ci.md): the lines `git diff REV` changed in the program's sources, and the functions the
// recorded run executed that hold them. A function's extent is taken from the trace: the lines of
// its sites (each load, store, flush, fence and call the pass instrumented) from the first to the
// last, so a change on a line between two of them (a flush deleted, a store moved) touches it,
// and a change outside every executed function (a comment, a function the run never called)
// touches nothing. Code in scope is a touched function and, through the call stacks the trace
// keeps, everything it calls: an event is in scope when one of its frames is in a touched
// function.
type Scope struct {
	// Rev is the revision the diff is against, Root the repository's top directory (absolute).
	Rev  string `json:"rev"`
	Root string `json:"root"`
	// Hunks are the changed line ranges of the new side, in the diff's order.
	Hunks []Hunk `json:"hunks"`
	// Functions are the touched functions the run executed (File, Function, the Line of their
	// first site), in file and line order; Outside counts the hunks that touch none.
	Functions []Location `json:"functions"`
	Outside   int        `json:"hunks_outside_executed_code"`
	// PointsLeftOut and FindingsLeftOut count the crash points explored by a full run that the
	// scoped run left out (none of their frames in scope, nothing pending from the scope), and
	// the trace findings it dropped (no location, related location or frame in scope).
	PointsLeftOut   int `json:"crash_points_left_out"`
	FindingsLeftOut int `json:"findings_left_out"`

	funcs map[string]bool // scopeKey(file, function) of the touched functions
}

// Hunk is one changed range of a file (a path relative to the repository's top directory): the
// new side's lines Start..End, 1-based and inclusive; a deletion is the two lines around it.
type Hunk struct {
	File  string `json:"file"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// ChangedSince reads `git diff REV` (no context lines, renames followed) of the repository
// holding dir, and returns the scope of its hunks, to be resolved against a trace (Resolve).
// Deleted files change nothing that runs. Errors: git is missing, dir is not in a repository,
// REV is not a revision, or the diff cannot be parsed (each naming the command).
func ChangedSince(dir, rev string) (*Scope, error) {
	if strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("--changed-since %q: a revision does not begin with '-'", rev)
	}
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("--changed-since %s: git %s: %v: %s", rev, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	out, err := git("diff", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", "-M", rev, "--")
	if err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("--changed-since %s: reading git's diff: %w", rev, err)
	}
	s := &Scope{Rev: rev, Root: strings.TrimSpace(string(top)), funcs: map[string]bool{}}
	for _, f := range files {
		if f.IsDelete || f.IsBinary {
			continue
		}
		for _, h := range f.TextFragments {
			start, end := int(h.NewPosition), int(h.NewPosition+h.NewLines-1)
			if h.NewLines == 0 {
				// A deletion after line NewPosition: the lines on both sides of it.
				start, end = int(h.NewPosition), int(h.NewPosition)+1
			}
			s.Hunks = append(s.Hunks, Hunk{File: f.NewName, Start: max(start, 1), End: max(end, 1)})
		}
	}
	return s, nil
}

// Resolve finds the functions the hunks touch among those of sites (a trace's site table, every
// module's): a function, by its file and name, is touched when a hunk of its file overlaps the
// lines from its first site to its last.
func (s *Scope) Resolve(sites []trace.Site) {
	type extent struct {
		file, function string
		first, last    int
	}
	ext := map[string]*extent{}
	for _, st := range sites {
		if st.Function == "" || st.File == "" || st.Line == 0 {
			continue
		}
		k := scopeKey(st.File, st.Function)
		e := ext[k]
		if e == nil {
			e = &extent{file: st.File, function: st.Function, first: int(st.Line), last: int(st.Line)}
			ext[k] = e
		}
		e.first, e.last = min(e.first, int(st.Line)), max(e.last, int(st.Line))
	}
	s.funcs, s.Functions, s.Outside = map[string]bool{}, nil, 0
	for _, h := range s.Hunks {
		hit := false
		for k, e := range ext {
			if h.Start <= e.last && h.End >= e.first && s.sameFile(e.file, h.File) {
				hit = true
				if !s.funcs[k] {
					s.funcs[k] = true
					s.Functions = append(s.Functions, Location{File: e.file, Line: e.first, Function: e.function})
				}
			}
		}
		if !hit {
			s.Outside++
		}
	}
	slices.SortFunc(s.Functions, func(a, b Location) int {
		return cmpOr(strings.Compare(a.File, b.File), a.Line-b.Line, strings.Compare(a.Function, b.Function))
	})
}

// cmpOr is the first of cs that is not 0.
func cmpOr(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

// sameFile reports whether a site's file (as the compiler saw it: absolute, or relative to the
// directory it compiled in, which the trace does not say) is the repository's file rel: the same
// absolute path, else the same trailing path components.
func (s *Scope) sameFile(site, rel string) bool {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if filepath.IsAbs(site) {
		r, err := filepath.Rel(s.Root, site)
		return err == nil && filepath.ToSlash(r) == rel
	}
	site = filepath.ToSlash(filepath.Clean(site))
	for strings.HasPrefix(site, "../") {
		site = site[3:]
	}
	return site == rel || strings.HasSuffix(rel, "/"+site) || strings.HasSuffix(site, "/"+rel)
}

// scopeKey identifies a function: its file, cleaned, and its name.
func scopeKey(file, function string) string { return filepath.Clean(file) + "\x00" + function }

// Touches reports whether the function named function in file is a touched one.
func (s *Scope) Touches(file, function string) bool {
	return s != nil && s.funcs[scopeKey(file, function)]
}

// InFrames reports whether one of frames is in a touched function: the event is in the changed
// code or in what it calls.
func (s *Scope) InFrames(frames []Frame) bool {
	return slices.ContainsFunc(frames, func(f Frame) bool { return s.Touches(f.File, f.Function) })
}

// Holds reports whether finding f is in scope: its location, one of its related locations or one
// of its frames is in a touched function.
func (s *Scope) Holds(f *Finding) bool {
	if s.Touches(f.Location.File, f.Location.Function) || s.InFrames(f.Stack) {
		return true
	}
	return slices.ContainsFunc(f.Related, func(r Related) bool { return s.Touches(r.File, r.Function) })
}

// Summary says in one line what the scope is and what it left out.
func (s *Scope) Summary() string {
	var fs []string
	for _, f := range s.Functions {
		fs = append(fs, fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line))
	}
	what := "no function the run executed"
	if len(fs) > 0 {
		what = strings.Join(fs, ", ")
	}
	touch := "hunks touch"
	if len(s.Hunks) == 1 {
		touch = "hunk touches"
	}
	return fmt.Sprintf("scoped to the change since %s: %d %s %s, %s no executed code; left out: %s, %s outside it (a full run, without --changed-since, checks everything)",
		s.Rev, len(s.Hunks), touch, what, plural(s.Outside, "hunk", "hunks"), plural(s.PointsLeftOut, "crash point", "crash points"), plural(s.FindingsLeftOut, "trace finding", "trace findings"))
}
