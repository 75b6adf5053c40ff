package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// CoveragePage is what WriteCoverageHTML shows of a coverage-guided workload search (scry
// workload fuzz): the coverage over time, the workload written, the minimised corpus and the PM
// store sites no workload reached; or, without Samples, of the coverage of given workloads (scry
// workload cover): each workload's, all together, and the PM store sites none reached.
type CoveragePage struct {
	Command string // the program, as given after --
	// Samples are the coverage over time, in order (the first at the start of the search).
	Samples []CoverageSample
	Runs    int // runs of the program
	Slow    int // runs stopped at the run time limit
	// Best is the workload that covers most (its Name the file it was written to, "" none),
	// nil when there is none.
	Best *CoverageWorkload
	// Corpus is the minimised corpus.
	Corpus []CoverageWorkload
	// Workloads are the workloads of scry workload cover and Together what they cover together
	// (Ops: their operations).
	Workloads []CoverageWorkload
	Together  *CoverageWorkload
	// Unreached are the PM store sites no workload reached.
	Unreached []Location
	Stopped   string // why the search stopped early ("" it ran to its budget)
}

// CoverageSample is the coverage of the corpus at one moment of a search.
type CoverageSample struct {
	Elapsed    time.Duration
	Runs       int
	Corpus     int // workloads in the corpus
	StoreSites int // PM store sites reached by some workload
	Features   int
}

// CoverageWorkload is one workload and what it covers.
type CoverageWorkload struct {
	Name       string // its file
	Ops        int    // operations
	StoreSites int    // PM store sites reached
	Features   int
	Result     string // how the program ended (workload cover)
}

var coverageTemplate = template.Must(template.New("coverage.html.tmpl").Funcs(template.FuncMap{
	"css":  reportCSS,
	"head": func() template.HTML { return template.HTML(htmlHead) },
	"add":  func(a, b int) int { return a + b },
}).ParseFS(htmlFS, "templates/coverage.html.tmpl"))

// Geometry of the coverage charts (SVG user units, pixels at 100 %).
const (
	chartW, chartH   = 760, 230
	chartL, chartR   = 64, 24 // the y axis' labels; room for the last x label
	chartT, chartB   = 30, 40 // the y axis' title above the plot; the x axis' labels and title below
	chartMarksMax    = 200    // samples drawn as hoverable points, at most
	chartTicksWanted = 5
)

// chart is one coverage-over-time plot laid out for the template: a step line through the
// samples (a value holds until the next sample shows it changed).
type chart struct {
	ID, Title, YTitle string
	Width, Height     int
	Left, Right       int // the plot area's x bounds
	Top, Bottom       int // the plot area's y bounds
	Path              string
	XTicks, YTicks    []chartTick
	Points            []chartPoint
}

type chartTick struct {
	Pos   string // x for an x tick, y for a y tick
	Label string
}

type chartPoint struct {
	X, Y  string
	Title string
}

// coverageView is the template's data.
type coverageView struct {
	P      *CoveragePage
	Charts []*chart
	Last   CoverageSample
}

// WriteCoverageHTML writes the report of a coverage-guided workload search as one self-contained
// HTML page (inline CSS and SVG, no script; docs/workloads.md): the search's figures, the PM
// store sites and the features reached over time as two SVG step plots (time in seconds on the
// x axis) and as a table, the workload written, the minimised corpus, and the PM store sites never
// reached (file:line, function). A page without samples shows the workloads of scry workload
// cover instead of the search. Errors: a write error.
func WriteCoverageHTML(w io.Writer, p *CoveragePage) error {
	v := coverageView{P: p}
	if n := len(p.Samples); n > 0 {
		v.Last = p.Samples[n-1]
		v.Charts = []*chart{
			coverageChart("sites", "PM store sites reached", "PM store sites", p.Samples,
				func(s CoverageSample) int { return s.StoreSites }),
			coverageChart("features", "Coverage features reached", "features", p.Samples,
				func(s CoverageSample) int { return s.Features }),
		}
	}
	bw := bufio.NewWriter(w)
	if err := coverageTemplate.Execute(bw, v); err != nil {
		return err
	}
	return bw.Flush()
}

// coverageChart lays out the samples' values of one measure (value) over their elapsed time.
func coverageChart(id, title, ytitle string, samples []CoverageSample, value func(CoverageSample) int) *chart {
	c := &chart{ID: id, Title: title, YTitle: ytitle, Width: chartW, Height: chartH,
		Left: chartL, Right: chartW - chartR, Top: chartT, Bottom: chartH - chartB}
	maxT, maxV := 0.0, 0
	for _, s := range samples {
		maxT = math.Max(maxT, s.Elapsed.Seconds())
		maxV = max(maxV, value(s))
	}
	xStep := niceSeconds(maxT)
	xMax := math.Max(xStep, math.Ceil(maxT/xStep)*xStep)
	yStep := niceStep(float64(maxV))
	yMax := math.Max(yStep, math.Ceil(float64(maxV)/yStep)*yStep)
	x := func(t float64) float64 { return float64(c.Left) + t/xMax*float64(c.Right-c.Left) }
	y := func(v float64) float64 { return float64(c.Bottom) - v/yMax*float64(c.Bottom-c.Top) }
	for t := 0.0; t <= xMax+xStep/2; t += xStep {
		c.XTicks = append(c.XTicks, chartTick{Pos: coord(x(t)), Label: durationLabel(time.Duration(t) * time.Second)})
	}
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		c.YTicks = append(c.YTicks, chartTick{Pos: coord(y(v)), Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	path, lastY, lastX, moved := "", "", "", false
	for i, s := range samples {
		px, py := coord(x(s.Elapsed.Seconds())), coord(y(float64(value(s))))
		switch {
		case i == 0:
			path = "M" + px + " " + py
		case py != lastY:
			path += " H" + px + " V" + py
			moved = true
		default:
			moved = false
		}
		lastX, lastY = px, py
		if len(samples) <= chartMarksMax {
			c.Points = append(c.Points, chartPoint{X: px, Y: py, Title: fmt.Sprintf("%s: %d %s; %d runs, %d workloads in the corpus",
				s.Elapsed, value(s), ytitle, s.Runs, s.Corpus)})
		}
	}
	if !moved {
		path += " H" + lastX // the last value holds up to the last sample
	}
	c.Path = path
	return c
}

// niceStep returns a tick step for an axis from 0 to max: 1, 2 or 5 times a power of ten, giving
// about chartTicksWanted ticks (1 when max is 0).
func niceStep(max float64) float64 {
	if max <= 0 {
		return 1
	}
	raw := max / chartTicksWanted
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return math.Max(1, m*mag)
		}
	}
	return math.Max(1, 10*mag)
}

// niceSeconds returns a tick step for a time axis from 0 to max seconds: a round number of
// seconds, minutes or hours giving at most about chartTicksWanted+1 ticks.
func niceSeconds(max float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200} {
		if max/s <= chartTicksWanted+1 {
			return s
		}
	}
	return 86400 * niceStep(max/86400)
}

// durationLabel writes d without its zero trailing units: 30s, 1m30s, 2m, 1h.
func durationLabel(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// coord formats a coordinate with one decimal, the same on every platform.
func coord(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64) }
