package report

import (
	"strconv"

	"github.com/scry-pm/scry/trace"
)

// SiteTable is what resolves static sites and call-stack nodes: a trace.Reader (its sites and
// STACK records read so far).
type SiteTable interface {
	Site(id uint32) (trace.Site, bool)
	StackOf(node uint32) []uint32
}

// Loc returns the location of a static site as the trace describes it (site 0 is unknown).
func Loc(s trace.Site) Location {
	return Location{File: s.File, Line: int(s.Line), Column: int(s.Column), Function: s.Function}
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

// Frame returns l as a call-stack frame.
func (l Location) Frame() Frame {
	return Frame{Function: l.Function, File: l.File, Line: l.Line, Column: l.Column}
}

// Related returns l as a related location with a role.
func (l Location) Related(role string) Related {
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

// Key returns a key that identifies l exactly (file, line, column and function), for grouping.
func (l Location) Key() string {
	return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Column) + ":" + l.Function
}
