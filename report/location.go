package report

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scry-pm/scry/trace"
)

// SiteTable is what resolves static sites and call-stack nodes: a trace.Reader (its sites and
// STACK records read so far).
type SiteTable interface {
	Site(id uint32) (trace.Site, bool)
	StackOf(node uint32) []uint32
	// ProjectRoots are the root directories of the program's own code (trace.SiteUnit sites;
	// none when the trace does not name them).
	ProjectRoots() []string
}

// Loc returns the location of a static site as the trace describes it (site 0 is unknown), its
// file path cleaned when absolute: clang names libstdc++'s headers through the driver's directory
// (/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/atomic_base.h), which
// reads as /usr/include/c++/12/bits/atomic_base.h, a system header (Frame.System).
func Loc(s trace.Site) Location {
	return Location{File: cleanFile(s.File), Line: int(s.Line), Column: int(s.Column), Function: s.Function}
}

// cleanFile returns an absolute path with its "." and ".." elements resolved lexically, any other
// path as it is (a relative path is relative to a build directory scry does not know).
func cleanFile(file string) string {
	if !filepath.IsAbs(file) || !strings.Contains(file, "/.") && !strings.Contains(file, "//") {
		return file
	}
	return filepath.Clean(file)
}

// At returns the location of site id in t; the zero Location (unknown) for site 0 or a site t
// does not know. It is the one site-to-location function of scry: every report goes through it.
func At(t SiteTable, id uint32) Location {
	if id == 0 {
		return Location{}
	}
	s, ok := t.Site(id)
	if !ok {
		return Location{}
	}
	return Loc(s)
}

// UserAt returns the location of an event at site in call-stack node stack: its innermost frame
// outside system headers (FramesAt, Frame.System), so that a store libstdc++'s <atomic> makes
// for the program is located at the program's line; At(t, site) when every frame is a system
// one or there is none.
func UserAt(t SiteTable, site, stack uint32) Location {
	fr := FramesAt(t, site, stack)
	if i := UserFrame(fr, nil); i < len(fr) && !fr[i].System() {
		return fr[i].Location()
	}
	return At(t, site)
}

// Frame returns l as a call-stack frame.
func (l Location) Frame() Frame {
	return Frame{Function: l.Function, File: l.File, Line: l.Line, Column: l.Column}
}

// Related returns l as a related location with a role.
func (l Location) Related(role Role) Related {
	return Related{Role: role, File: l.File, Line: l.Line, Column: l.Column, Function: l.Function}
}

// Location returns the location of a related entry.
func (r Related) Location() Location {
	return Location{File: r.File, Line: r.Line, Column: r.Column, Function: r.Function}
}

// Known reports whether the location names a source file.
func (l Location) Known() bool { return l.File != "" }

// String formats l for messages as "file:line (function)" ("file:line" without a function,
// "an unknown site" without a file).
func (l Location) String() string {
	if l.File == "" {
		return "an unknown site"
	}
	s := l.File + ":" + strconv.Itoa(l.Line)
	if l.Function != "" {
		s += " (" + l.Function + ")"
	}
	return s
}

// Short formats l like String in at most width characters (runes), for tables: a C++ function name
// loses its template arguments and parameters ("ns::map<…>::insert(…)"), then, when still too
// long, the function and the file lose their leading characters ("…" marks each cut: the end of
// a name and of a path is what tells them apart). A width below 20 is taken as 20.
func (l Location) Short(width int) string {
	width = max(width, 20)
	s := l.String()
	if utf8.RuneCountInString(s) <= width || l.File == "" {
		return s
	}
	fn := ShortFunction(l.Function)
	file := l.File + ":" + strconv.Itoa(l.Line)
	// The function gets what the file leaves, but at least half the width.
	fnRoom := 0
	if fn != "" {
		fnRoom = max(width-utf8.RuneCountInString(file)-3, width/2) // " (" and ")"
		fn = cutFront(fn, fnRoom)
	}
	if fn == "" {
		return cutFront(file, width)
	}
	file = cutFront(file, width-utf8.RuneCountInString(fn)-3)
	return file + " (" + fn + ")"
}

// ShortFunction returns a C++ function name without its template arguments and parameter lists,
// each replaced by "…" ("std::vector<int>::push_back(int const&)" → "std::vector<…>::push_back(…)");
// "operator<", "operator<<" and the like keep their own angle brackets. A C name is returned as
// it is.
func ShortFunction(name string) string {
	if !strings.ContainsAny(name, "<(") {
		return name
	}
	const anon = "(anonymous namespace)"
	var b strings.Builder
	depth := 0
	var open []byte // the bracket of each level
	for i := 0; i < len(name); i++ {
		c := name[i]
		if depth == 0 && strings.HasPrefix(name[i:], anon) {
			b.WriteString(anon)
			i += len(anon) - 1
			continue
		}
		if depth == 0 && strings.HasSuffix(name[:i], "operator") {
			// operator<, operator<<, operator<=, operator(), operator->: the brackets are the name.
			j := i
			if strings.HasPrefix(name[i:], "()") {
				j += 2
			}
			for j < len(name) && strings.IndexByte("<>=-", name[j]) >= 0 && j-i < 3 {
				j++
			}
			if j > i {
				b.WriteString(name[i:j])
				i = j - 1
				continue
			}
		}
		switch c {
		case '<', '(':
			if depth == 0 {
				b.WriteByte(c)
				b.WriteString("…")
			}
			open = append(open, c)
			depth++
			continue
		case '>', ')':
			if depth > 0 && (c == '>') == (open[depth-1] == '<') {
				depth--
				open = open[:depth]
				if depth == 0 {
					b.WriteByte(c)
				}
				continue
			}
		}
		if depth == 0 {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// cutFront returns s, or when s has more than n runes its last n-1 runes after "…".
func cutFront(s string, n int) string {
	if n < 1 {
		n = 1
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// Key returns a key that identifies l exactly (file, line, column and function), for grouping.
func (l Location) Key() string {
	return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Column) + ":" + l.Function
}
