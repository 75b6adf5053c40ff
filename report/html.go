package report

import (
	"bufio"
	"embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"strconv"
	"strings"
)

//go:embed templates/report.html.tmpl templates/coverage.html.tmpl templates/report.css
var htmlFS embed.FS

// reportCSS is the style sheet of scry's HTML pages.
func reportCSS() template.CSS {
	b, _ := htmlFS.ReadFile("templates/report.css")
	return template.CSS(b)
}

// htmlHead is how every HTML report of scry begins (Recognize).
const htmlHead = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"generator\" content=\"scry\">"

var htmlTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"css":  reportCSS,
	"head": func() template.HTML { return template.HTML(htmlHead) },
}).ParseFS(htmlFS, "templates/report.html.tmpl"))

// HTMLOptions are what WriteHTML shows besides the report's own data.
type HTMLOptions struct {
	// Timelines are the timelines of PM crash findings by their index in Report.Findings
	// (package pm/explore's Timeline); a crash finding without one is drawn from its crash
	// state alone (Crash.Lines and Crash.State), with TimelineErrors' message for it, if any.
	Timelines      map[int]*CrashTimeline
	TimelineErrors map[int]string
	// ReadFile reads the source files of the excerpts (nil: os.ReadFile).
	ReadFile func(path string) ([]byte, error)
}

// Bounds of the HTML report's source excerpts: lines shown before and after each named line,
// files read per report (bytes), excerpt locations per finding.
const (
	ExcerptContext  = 3
	MaxExcerptBytes = 8 << 20
	MaxExcerptLocs  = 24
)

// WriteHTML writes the report as one self-contained HTML page (inline CSS and SVG, no script;
// docs/html-report.md): the summary table of the text report, then per finding its message,
// locations and source excerpts around them (the named lines highlighted and labelled with their
// roles; a file that cannot be read is named, not fatal), and for a crash finding the crash
// point and state, a timeline of the state's cache lines drawn as SVG (opts.Timelines), the
// differing bytes, the output diffs and the replay and reproduce commands; for a file-system
// finding its crash directory's operations. Errors: a write error.
func WriteHTML(w io.Writer, r *Report, opts HTMLOptions) error {
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	v := htmlReport{Trace: r.Trace, Events: r.Events, Warnings: r.Warnings, Stats: r.Stats, Witnesses: r.Witnesses}
	v.Title, v.Rows, v.More = summaryTable(r)
	v.Totals = fmt.Sprintf("%s, %s", plural(r.Count(Correctness), "correctness finding", "correctness findings"),
		plural(r.Count(Performance), "performance finding", "performance findings"))
	if n := r.Count(Unconfirmed); n > 0 {
		v.Totals += ", " + plural(n, "unconfirmed finding", "unconfirmed findings") + " (warnings)"
	}
	v.Totals += " in " + plural(int(r.Events), "event", "events")
	if n := r.SuppressedTotal(); n > 0 {
		v.Totals += fmt.Sprintf(" (%d suppressed)", n)
	}
	src := &sources{read: opts.ReadFile, files: map[string]*sourceFile{}}
	for i := range r.Findings {
		v.Findings = append(v.Findings, htmlFinding(i, &r.Findings[i], src, opts, r.ProfilesText(&r.Findings[i])))
	}
	bw := bufio.NewWriter(w)
	if err := htmlTemplate.Execute(bw, v); err != nil {
		return err
	}
	return bw.Flush()
}

// htmlReport is the template's data.
type htmlReport struct {
	Title    string
	Rows     []summaryRow
	More     int
	Totals   string
	Trace    string
	Events   uint64
	Warnings []string
	Stats    *Stats
	// Witnesses are the schedule witnesses the check ran (Report.Witnesses).
	Witnesses []Witness
	Findings  []findingView
}

type findingView struct {
	N         int
	F         *Finding
	Where     string
	Stack     []Frame
	Excerpts  []excerpt
	Crash     *crashView
	FS        *FSCrash
	Dynamic   []string
	FSDiffs   []diffView
	Unconfirm bool
	Profiles  string // under which persistency profiles it occurs (Report.ProfilesText)
}

type crashView struct {
	C        *Crash
	Schedule string // the finding's thread schedule (Finding.Schedule)
	Order    string
	InFlight string
	Ops      string
	Diffs    []diffView
	Timeline *svgTimeline
	Note     string // why the timeline shows the crash state alone
	Bytes    []byteView
	Omitted  int
}

type diffView struct {
	Name  string
	Lines []diffLine
}

type diffLine struct {
	Class, Text string
}

type byteView struct {
	Addr, Offset, Fate, Where string
	Store                     uint64
	Image, Other              []hexByte
}

type hexByte struct {
	Hex  string
	Diff bool
}

func htmlFinding(i int, f *Finding, src *sources, opts HTMLOptions, profiles string) findingView {
	fv := findingView{N: i + 1, F: f, Where: pos(f.Location.File, f.Location.Line, f.Location.Column), Unconfirm: f.Evidence == EvidenceTrace, Profiles: profiles}
	if len(f.Stack) > 1 || len(f.Stack) == 1 && f.Stack[0].Location() != f.Location {
		fv.Stack = f.Stack
	}
	named := []namedLoc{{string(f.Kind), f.Location}}
	for _, rel := range f.Related {
		named = append(named, namedLoc{string(rel.Role), rel.Location()})
	}
	if tl := opts.Timelines[i]; tl != nil {
		// The flushes and fences of the crash state's lines are named by their instruction.
		for _, l := range tl.Lines {
			for _, e := range l.Events {
				if e.Kind == "flush" {
					named = append(named, namedLoc{e.What, e.Location})
				}
			}
		}
		for _, e := range tl.Fences {
			named = append(named, namedLoc{e.What, e.Location})
		}
	}
	fv.Excerpts = src.excerpts(named)
	if c := f.Crash; c != nil {
		cv := &crashView{C: c, Schedule: f.Schedule, Order: "a program-order prefix"}
		if !c.Prefix {
			cv.Order = "not a program-order prefix"
		}
		var ops []string
		for _, o := range c.InFlight {
			ops = append(ops, fmt.Sprintf("%d %q", o.Index, o.Text))
		}
		cv.InFlight = strings.Join(ops, ", ")
		ops = nil
		for _, o := range c.Operations {
			ops = append(ops, strconv.FormatUint(o, 10))
		}
		cv.Ops = strings.Join(ops, ", ")
		cv.Diffs = diffViews([]namedDiff{{"committed", c.DiffCommitted}, {"rolled back", c.DiffRolledBack}, {"closest (" + c.Closest + ")", c.DiffClosest}})
		if tl := opts.Timelines[i]; tl != nil {
			cv.Timeline = drawTimeline(tl, c.PointKind)
			cv.Bytes = byteViews(tl.Bytes)
			cv.Omitted = tl.Omitted
		} else {
			cv.Timeline = drawState(c)
			cv.Note = opts.TimelineErrors[i]
		}
		fv.Crash = cv
	}
	if c := f.FS; c != nil {
		fv.FS = c
		for _, d := range c.Dynamic {
			if d.A == d.B {
				fv.Dynamic = append(fv.Dynamic, fmt.Sprintf("%d %s", d.A, d.CallA))
			} else {
				fv.Dynamic = append(fv.Dynamic, fmt.Sprintf("%d %s → %d %s", d.A, d.CallA, d.B, d.CallB))
			}
		}
		fv.FSDiffs = diffViews([]namedDiff{{"committed", c.DiffCommitted}, {"rolled back", c.DiffRolledBack}})
	}
	return fv
}

// diffViews returns the non-empty diffs, each line classed by its unified-diff prefix.
func diffViews(ds []namedDiff) []diffView {
	var out []diffView
	for _, d := range ds {
		if d.diff == "" {
			continue
		}
		dv := diffView{Name: d.name}
		for _, l := range strings.Split(strings.TrimSuffix(d.diff, "\n"), "\n") {
			class := "ctx"
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
				class = "hdr"
			case strings.HasPrefix(l, "+"):
				class = "add"
			case strings.HasPrefix(l, "-"):
				class = "del"
			}
			dv.Lines = append(dv.Lines, diffLine{class, l})
		}
		out = append(out, dv)
	}
	return out
}

func byteViews(bs []ByteDiff) []byteView {
	var out []byteView
	for _, b := range bs {
		bv := byteView{Addr: fmt.Sprintf("%#x", b.Addr), Offset: "?", Fate: b.Fate, Store: b.Store, Where: b.Location.String()}
		if b.Offset >= 0 {
			bv.Offset = fmt.Sprintf("%#x", b.Offset)
		}
		for j := range b.Image {
			diff := j >= len(b.Other) || b.Other[j] != b.Image[j]
			bv.Image = append(bv.Image, hexByte{fmt.Sprintf("%02x", b.Image[j]), diff})
			if j < len(b.Other) {
				bv.Other = append(bv.Other, hexByte{fmt.Sprintf("%02x", b.Other[j]), diff})
			}
		}
		out = append(out, bv)
	}
	return out
}
