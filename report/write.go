package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/scry-pm/scry/internal/safefile"
)

// pos formats file:line:col, leaving out what is unknown.
func pos(file string, line, col int) string {
	if file == "" {
		file = "<unknown>"
	}
	switch {
	case line == 0:
		return file
	case col == 0:
		return file + ":" + strconv.Itoa(line)
	}
	return file + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// WriteText writes the report in the style of compiler diagnostics, after a summary table (kind,
// location, occurrences: at most SummaryRows rows) when there are SummaryMin findings or more:
//
//	file:line:col: kind: message [(N occurrences)]
//	    role: file:line:col (function)
//	    at function file:line:col [(inlined)]  (frames, innermost first: the instruction, the
//	                                            calls it was inlined at, the call stack)
//	    during operation N: text
//
// then the warnings ("warning: ...") and one summary line.
func WriteText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	if len(r.Findings) >= SummaryMin {
		writeSummary(bw, r)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		fmt.Fprintf(bw, "%s: %s: %s", pos(f.Location.File, f.Location.Line, f.Location.Column), f.Kind, f.Message)
		if f.Count > 1 {
			fmt.Fprintf(bw, " (%d occurrences)", f.Count)
		}
		if f.Evidence == EvidenceTrace {
			bw.WriteString(" (not confirmed by a crash)")
		}
		bw.WriteByte('\n')
		if f.Location.Function != "" {
			fmt.Fprintf(bw, "    in function %s\n", f.Location.Function)
		}
		if f.Schedule != "" {
			fmt.Fprintf(bw, "    under schedule SCRY_SCHED=%s\n", f.Schedule)
		}
		if t := r.ProfilesText(f); t != "" {
			fmt.Fprintf(bw, "    persistency profiles: %s\n", t)
		}
		for _, rel := range f.Related {
			fmt.Fprintf(bw, "    %s: %s", rel.Role, pos(rel.File, rel.Line, rel.Column))
			if rel.Function != "" {
				fmt.Fprintf(bw, " (%s)", rel.Function)
			}
			bw.WriteByte('\n')
		}
		if len(f.Stack) > 1 || len(f.Stack) == 1 && f.Stack[0].Location() != f.Location {
			for _, fr := range f.Stack {
				fn := fr.Function
				if fn == "" {
					fn = "?"
				}
				mark := ""
				if fr.Inlined {
					mark = " (inlined)"
				}
				fmt.Fprintf(bw, "    at %s %s%s\n", fn, pos(fr.File, fr.Line, fr.Column), mark)
			}
		}
		if f.Operation != nil {
			fmt.Fprintf(bw, "    during operation %d: %q\n", f.Operation.Index, f.Operation.Text)
		}
		if c := f.Crash; c != nil {
			writeCrashText(bw, i+1, c)
		}
		if c := f.FS; c != nil {
			writeFSText(bw, i+1, c)
		}
	}
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", wmsg)
	}
	fmt.Fprintf(bw, "scry: %s, %s", plural(r.Count(Correctness), "correctness finding", "correctness findings"),
		plural(r.Count(Performance), "performance finding", "performance findings"))
	if n := r.Count(Unconfirmed); n > 0 {
		fmt.Fprintf(bw, ", %s (warnings)", plural(n, "unconfirmed finding", "unconfirmed findings"))
	}
	fmt.Fprintf(bw, " in %s", plural(int(r.Events), "event", "events"))
	if n := r.SuppressedTotal(); n > 0 {
		fmt.Fprintf(bw, " (%d suppressed)", n)
	}
	bw.WriteByte('\n')
	if r.Scope != nil {
		fmt.Fprintf(bw, "scry: %s\n", r.Scope.Summary())
	}
	if s := r.Stats; s != nil {
		sampled := ""
		if s.Reused > 0 {
			sampled = fmt.Sprintf(" (%d judged by the run of an identical image)", s.Reused)
		}
		if s.Sampled > 0 {
			sampled += fmt.Sprintf(" (%d more left out by sampling: their findings had failed often enough, or their operation had many states in one window)", s.Sampled)
		}
		images := ""
		if s.Images != "" {
			images = ", " + s.Images
		}
		if s.Runs != "" {
			images += ", " + s.Runs
		}
		fmt.Fprintf(bw, "scry: crash states: %d crash points, %d states tested%s, %d failed, %d inconclusive, in %.1fs with %d jobs%s\n",
			s.CrashPoints, s.StatesTested, sampled, s.Failures, s.Inconclusive, s.ElapsedSeconds, s.Jobs, images)
		if s.Schedules > 1 {
			fmt.Fprintf(bw, "scry: the program was recorded and explored under %d thread schedules: the operating system's and %d controlled ones (SCRY_SCHED; --schedules)\n", s.Schedules, s.Schedules-1)
		}
		for _, w := range r.Witnesses {
			fmt.Fprintf(bw, "scry: schedule witness %s: the store at %s may persist before the store at %s it depends on (its load at %s reads that value before it is durable); %s shown first under it\n",
				w.Schedule, w.Dependent, w.Store, w.Load, plural(w.Findings, "finding", "findings"))
		}
		if s.StoppedEarly > 0 {
			fmt.Fprintf(bw, "scry: %s stopped at their first output line that matched neither legal outcome, about %.1fs of runs and %d output lines saved\n",
				plural(s.StoppedEarly, "run on a crash image", "runs on crash images"), s.StoppedEarlySeconds, s.StoppedEarlyLines)
		}
		if s.Converged > 0 {
			fmt.Fprintf(bw, "scry: %s stopped at their first operation, their pool equal to a legal outcome's, about %.1fs of runs saved\n",
				plural(s.Converged, "run on a crash image", "runs on crash images"), s.ConvergedSeconds)
		}
		if s.StoppedAgain > 0 {
			fmt.Fprintf(bw, "scry: %s stopped on a line that varies between identical runs, and run again to the end\n",
				plural(s.StoppedAgain, "run on a crash image was", "runs on crash images were"))
		}
		if s.VaryingOutcomes > 0 {
			are := "are"
			if s.VaryingLines == 1 {
				are = "is"
			}
			fmt.Fprintf(bw, "scry: %s between identical runs and %s not compared where they vary (%d of the %d legal outcomes run a second time printed something else)\n",
				plural(s.VaryingLines, "output line varies", "output lines vary"), are, s.VaryingOutcomes, s.RepeatRuns)
		}
		if s.LazyRuns > 0 || len(s.LazyFallbacks) > 0 {
			fmt.Fprintf(bw, "scry: lazy exploration: %s, %s judged, %s crash states covered%s\n",
				plural(s.LazyRuns, "run", "runs"), plural(s.LazyLeaves, "leaf", "leaves"), cmp.Or(s.LazyStates, "0"), lazyFallbacks(s.LazyFallbacks))
		}
		if s.PrepRuns > 0 || s.SkippedConcurrent > 0 {
			fmt.Fprintf(bw, "scry: concurrent operations: %d oracle runs on %d prepared images, %d crash points skipped (too many operations in flight)\n",
				s.OracleRuns, s.PrepRuns, s.SkippedConcurrent)
		}
	}
	return bw.Flush()
}

// jsonReport is the top-level JSON object (docs/findings-json.md).
type jsonReport struct {
	Findings []Finding  `json:"findings"`
	Warnings []string   `json:"warnings"`
	Summary  jsonSummry `json:"summary"`
	Stats    *Stats     `json:"stats,omitempty"`
	Check    *Check     `json:"check,omitempty"`
	Shard    *Shard     `json:"shard,omitempty"`
	Profiles []string   `json:"profiles,omitempty"`
	Scope    *Scope     `json:"scope,omitempty"`
	// Witnesses: Report.Witnesses.
	Witnesses []Witness `json:"witnesses,omitempty"`
}

type jsonSummry struct {
	Trace       string       `json:"trace"`
	Events      uint64       `json:"events"`
	Findings    int          `json:"findings"`
	Correctness int          `json:"correctness"`
	Performance int          `json:"performance"`
	Unconfirmed int          `json:"unconfirmed"`
	Suppressed  int          `json:"suppressed"`
	ByKind      map[Kind]int `json:"by_kind"`
}

// WriteJSON writes the report as one JSON object {"findings":[...],"warnings":[...],
// "summary":{...}}, indented, with empty arrays (never null). docs/findings-json.md is the schema.
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{
		Findings: make([]Finding, len(r.Findings)),
		Warnings: r.Warnings,
		Summary: jsonSummry{
			Trace: r.Trace, Events: r.Events, Findings: len(r.Findings),
			Correctness: r.Count(Correctness), Performance: r.Count(Performance), Unconfirmed: r.Count(Unconfirmed),
			Suppressed: r.SuppressedTotal(), ByKind: map[Kind]int{},
		},
		Stats:     r.Stats,
		Check:     r.Check,
		Shard:     r.Shard,
		Profiles:  r.Profiles,
		Scope:     r.Scope,
		Witnesses: r.Witnesses,
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for i, f := range r.Findings {
		if f.Stack == nil {
			f.Stack = []Frame{}
		}
		if f.Related == nil {
			f.Related = []Related{}
		}
		out.Findings[i] = f
		out.Summary.ByKind[f.Kind]++
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// ToolName and ToolURI identify scry in SARIF output.
const (
	ToolName = "scry"
	ToolURI  = "https://github.com/scry-pm/scry"
)

// sarifURI turns a source path into an artifact URI: absolute paths become file:// URIs (SARIF
// 2.1.0 §3.10: a uri is an RFC 3986 URI reference), relative ones stay relative references.
func sarifURI(file string) string {
	if strings.HasPrefix(file, "/") {
		return (&url.URL{Scheme: "file", Path: file}).String()
	}
	return (&url.URL{Path: file}).String()
}

func sarifLocation(file string, line, col int, fn, text string) *sarif.Location {
	loc := sarif.NewLocation()
	if file != "" {
		reg := sarif.NewRegion()
		if line > 0 {
			reg.WithStartLine(line)
			if col > 0 {
				reg.WithStartColumn(col)
			}
		}
		pl := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(sarifURI(file)))
		if line > 0 {
			pl.WithRegion(reg)
		}
		loc.WithPhysicalLocation(pl)
	}
	if fn != "" {
		kind := "function"
		name := fn
		loc.AddLogicalLocations(&sarif.LogicalLocation{Name: &name, Kind: &kind})
	}
	if text != "" {
		loc.WithMessage(sarif.NewTextMessage(text))
	}
	return loc
}

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run: one rule per kind (id = kind,
// with its one-line doc), one result per finding (level "error" for correctness, "warning" for
// performance), the finding's location, its related locations (message = role), its call stack
// as a SARIF stack, and the count and first event in the result's properties.
func WriteSARIF(w io.Writer, r *Report) error {
	log, err := sarif.New(sarif.Version210, true)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI(ToolName, ToolURI)
	ruleIndex := map[Kind]int{}
	addRule := func(kind Kind, class Class, doc string, custom bool) {
		if _, ok := ruleIndex[kind]; ok {
			return
		}
		ruleIndex[kind] = len(ruleIndex)
		rule := run.AddRule(string(kind)).WithName(string(kind))
		if doc != "" {
			// The kind's one doc text (the catalogue of package pipeline); docs/oracles.md has
			// examples and fixes.
			rule.WithShortDescription(sarif.NewMultiformatMessageString(doc))
			if custom {
				rule.WithTextHelp(doc)
			} else {
				rule.WithTextHelp(doc + " (see docs/oracles.md, section " + string(kind) + ")")
			}
		}
		level := "warning"
		if class == Correctness {
			level = "error"
		}
		rule.WithDefaultConfiguration(&sarif.ReportingConfiguration{Level: level})
		rule.WithProperties(sarif.Properties{"class": string(class)})
	}
	for _, rl := range r.Rules {
		addRule(rl.Kind, rl.Class, rl.Doc, rl.Custom)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		addRule(f.Kind, f.Class, "", false)
		level := "warning"
		if f.Class == Correctness {
			level = "error"
		}
		res := run.CreateResultForRule(string(f.Kind)).
			WithRuleIndex(ruleIndex[f.Kind]).
			WithLevel(level).
			WithMessage(sarif.NewTextMessage(sarifMessage(f)))
		res.AddLocation(sarifLocation(f.Location.File, f.Location.Line, f.Location.Column, f.Location.Function, ""))
		for j, rel := range f.Related {
			res.AddRelatedLocation(sarifLocation(rel.File, rel.Line, rel.Column, rel.Function, string(rel.Role)).WithId(j + 1))
		}
		if len(f.Stack) > 0 {
			st := &sarif.Stack{Message: sarif.NewTextMessage("frames, innermost first (the instruction, the calls it was inlined at, the call stack)")}
			flow := sarif.NewThreadFlow()
			for j, fr := range f.Stack {
				role := ""
				if fr.Inlined {
					role = "inlined"
				}
				sf := &sarif.StackFrame{Location: sarifLocation(fr.File, fr.Line, fr.Column, fr.Function, role)}
				st.Frames = append(st.Frames, sf)
				// The code flow runs from the outermost call to the instruction.
				fl := f.Stack[len(f.Stack)-1-j]
				tfl := sarif.NewThreadFlowLocation().WithLocation(sarifLocation(fl.File, fl.Line, fl.Column, fl.Function, "")).
					WithNestingLevel(j)
				if fl.Inlined {
					tfl.WithKinds([]string{"call", "inlined"})
				} else if j < len(f.Stack)-1 {
					tfl.WithKinds([]string{"call"})
				}
				flow.AddLocation(tfl)
			}
			res.AddStack(st)
			res.AddCodeFlow(sarif.NewCodeFlow().WithThreadFlows([]*sarif.ThreadFlow{flow}))
		}
		props := sarif.Properties{"class": string(f.Class), "count": f.Count, "first_event": f.FirstEvent}
		if f.Evidence != "" {
			props["evidence"] = f.Evidence
		}
		if f.Schedule != "" {
			props["schedule"] = f.Schedule
		}
		if len(f.Profiles) > 0 {
			props["persistency_profiles"] = f.Profiles
		}
		if c := f.Crash; c != nil {
			props["crash_id"] = c.ID
			props["crash_symptom"] = c.Symptom
			props["crash_state"] = c.State
			props["crash_reproduce"] = c.Reproduce
			if len(c.Invariants) > 0 {
				props["crash_invariants"] = c.Invariants
			}
			if len(c.InFlight) > 0 {
				props["crash_in_flight"] = c.InFlight
			}
		}
		if c := f.FS; c != nil {
			props["crash_id"] = c.ID
			props["crash_symptom"] = c.Symptom
			props["fs_apm"] = c.APM
			if len(c.Models) > 0 {
				props["fs_models"] = c.Models
			}
			props["fs_strategy"] = c.Strategy
			dyn := make([]FSVulnerability, len(c.Dynamic))
			for i, d := range c.Dynamic {
				dyn[i] = FSVulnerability{A: d.A, B: d.B, CallA: d.CallA, CallB: d.CallB} // the pairs, not the states
			}
			props["fs_dynamic"] = dyn
			if c.Reproduce != "" {
				props["crash_reproduce"] = c.Reproduce
			}
		}
		if f.Operation != nil {
			props["operation_index"] = f.Operation.Index
			props["operation_text"] = f.Operation.Text
		}
		res.Properties = props
		oc := uint(f.Count)
		res.OccurrenceCount = &oc
		res.WithPartialFingerPrints(map[string]interface{}{"scryKindLocation/v1": strings.Join(
			[]string{string(f.Kind), f.Location.File, strconv.Itoa(f.Location.Line), strconv.Itoa(f.Location.Column), f.Location.Function}, ":")})
	}
	if run.Results == nil {
		run.Results = []*sarif.Result{}
	}
	log.AddRun(run)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// writeCrashText prints the crash part of finding number n (1-based, the number `scry replay`
// takes).
func writeCrashText(bw *bufio.Writer, n int, c *Crash) {
	order := "a program-order prefix"
	if !c.Prefix {
		order = "not a program-order prefix"
	}
	fmt.Fprintf(bw, "    crash: point %d (before %s, event %d), state %v (%s, strategy %s)\n",
		c.CrashPoint, c.PointKind, c.Event, c.State, order, c.Strategy)
	fmt.Fprintf(bw, "    symptom: %s: %s\n", c.Symptom, c.Detail)
	for _, iv := range c.Invariants {
		fmt.Fprintf(bw, "    violates: %s\n", iv)
	}
	if len(c.InFlight) > 0 {
		var ops []string
		for _, o := range c.InFlight {
			ops = append(ops, fmt.Sprintf("%d %q", o.Index, o.Text))
		}
		fmt.Fprintf(bw, "    in flight: %s (%d legal outcomes)\n", strings.Join(ops, ", "), c.Oracles)
	}
	if c.Variants > 1 {
		fmt.Fprintf(bw, "    variants: %d distinct crash-point stacks and store sets fail this way\n", c.Variants)
	}
	if len(c.Operations) > 1 {
		var ops []string
		for _, o := range c.Operations {
			ops = append(ops, strconv.FormatUint(o, 10))
		}
		fmt.Fprintf(bw, "    in operations: %s\n", strings.Join(ops, ", "))
	}
	writeDiffs(bw, []namedDiff{{"committed", c.DiffCommitted}, {"rolled back", c.DiffRolledBack}, {"closest (" + c.Closest + ")", c.DiffClosest}})
	fmt.Fprintf(bw, "    replay: %s   (finding %d, id %s)\n", c.ImageCommand, n, c.ID)
	if c.Reproduce != "" {
		fmt.Fprintf(bw, "    then:   %s\n", c.Reproduce)
	}
	if m := c.Minimal; m != nil && m.Crash != nil {
		fmt.Fprintf(bw, "    minimal: %s\n", m.Summary())
		for _, op := range m.Ops {
			fmt.Fprintf(bw, "      %s\n", op)
		}
		fmt.Fprintf(bw, "    replay: %s   (id %s)\n", m.Crash.ImageCommand, m.Crash.ID)
		if m.Crash.Reproduce != "" {
			fmt.Fprintf(bw, "    then:   %s\n", m.Crash.Reproduce)
		}
	}
}

// Summary says in one line how small the reproducer is and how it was found: "2 of 2000
// operations in WORKLOAD (1-minimal, 14 workloads checked in 3.2 s; confirmed)".
func (m *Minimal) Summary() string {
	how := "1-minimal"
	if !m.Complete {
		how = "the search's time share ended first, so it may not be minimal"
	}
	conf := "failed again when checked from scratch"
	if !m.Confirmed {
		conf = "not confirmed"
		if m.Note != "" {
			conf += ": " + m.Note
		}
	}
	return fmt.Sprintf("%d of %d operations in %s (%s; %d workloads checked in %.1f s; %s)", m.Operations, m.Of, m.Crash.Workload, how, m.Tests, m.Seconds, conf)
}

// namedDiff is a diff of a run's output against the legal outcome Name.
type namedDiff struct{ name, diff string }

// writeDiffs prints the non-empty diffs of a crash finding, indented.
func writeDiffs(bw *bufio.Writer, ds []namedDiff) {
	for _, d := range ds {
		if d.diff == "" {
			continue
		}
		fmt.Fprintf(bw, "    output vs %s:\n", d.name)
		for _, l := range strings.SplitAfter(strings.TrimSuffix(d.diff, "\n"), "\n") {
			fmt.Fprintf(bw, "      %s", strings.TrimSuffix(l, "\n"))
			bw.WriteByte('\n')
		}
	}
}

// Formats lists the report formats Write accepts.
var Formats = []string{"text", "json", "sarif", "html"}

// CheckFormat returns an error naming the known formats when format is not one of Formats.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown --format %q: want text, json, sarif or html", format)
}

// Write writes the report in format ("text", "json", "sarif" or "html": WriteHTML without
// HTMLOptions). Errors: an unknown format, a write error.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "text":
		return WriteText(w, r)
	case "json":
		return WriteJSON(w, r)
	case "sarif":
		return WriteSARIF(w, r)
	case "html":
		return WriteHTML(w, r, HTMLOptions{})
	}
	return CheckFormat(format)
}

// textStart matches the first line of a text report: a finding, a warning or the summary.
var textStart = regexp.MustCompile(`\A(\S+: [a-z]+(-[a-z]+)*: |warning: |scry: \d+ correctness finding)`)

// Recognize tells whether head, the first bytes of a file (safefile.HeadSize), is a report scry
// wrote in one of its formats, or empty: such a file may be replaced by a new report.
func Recognize(head []byte) bool {
	s := string(head)
	switch {
	case strings.TrimSpace(s) == "":
		return true
	case strings.HasPrefix(s, "{\n  \"findings\": ["):
		return true
	case strings.HasPrefix(s, "{\n  \"version\": \"2.1.0\"") && strings.Contains(s, `"name": "`+ToolName+`"`):
		return true
	case strings.HasPrefix(s, htmlHead):
		return true
	}
	return textStart.MatchString(s)
}

// Policy is the rule for an existing file at a report's path (-o): a report scry wrote is
// replaced, anything else only with force.
func Policy(force bool) safefile.Policy {
	return safefile.Policy{What: "the report", Ours: Recognize, Force: force}
}

// SummaryMin is the number of findings from which the text report starts with a summary table;
// SummaryRows bounds its rows (one screen); SummaryWidth bounds the width of its lines
// (characters), which long C++ names would otherwise stretch to thousands.
const (
	SummaryMin   = 3
	SummaryRows  = 20
	SummaryWidth = 200
)

// summaryLocationWidth is the widest location (characters) in the summary table: SummaryWidth
// less the other columns at their widest (a row number, the longest kind, a count, the gaps).
const summaryLocationWidth = SummaryWidth - 60

// summaryRow is one row of the summary table: finding N (1-based), its kind, its location cut to
// the table's width and its count.
type summaryRow struct {
	N        int
	Kind     Kind
	Location string
	Count    int
}

// summaryTable returns the summary table of r, the text and the HTML report's: its title ("3
// findings (2 correctness, 1 performance)"), its rows (one per finding in report order, at most
// SummaryRows) and how many findings the rows leave out.
func summaryTable(r *Report) (title string, rows []summaryRow, more int) {
	classes := plural(r.Count(Correctness), "correctness", "correctness") + ", " + plural(r.Count(Performance), "performance", "performance")
	if n := r.Count(Unconfirmed); n > 0 {
		classes += ", " + plural(n, "unconfirmed", "unconfirmed")
	}
	title = plural(len(r.Findings), "finding", "findings") + " (" + classes + ")"
	for i := range r.Findings {
		if i == SummaryRows {
			return title, rows, len(r.Findings) - SummaryRows
		}
		f := &r.Findings[i]
		rows = append(rows, summaryRow{N: i + 1, Kind: f.Kind, Location: f.Location.Short(summaryLocationWidth), Count: f.Count})
	}
	return title, rows, 0
}

// writeSummary writes the summary table: one row per finding in report order.
func writeSummary(bw *bufio.Writer, r *Report) {
	title, rows, more := summaryTable(r)
	fmt.Fprintf(bw, "scry: %s:\n", title)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tkind\tlocation\tcount")
	for _, row := range rows {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\n", row.N, row.Kind, row.Location, row.Count)
	}
	if more > 0 {
		fmt.Fprintf(tw, "  ...\t%d more\t\t\n", more)
	}
	tw.Flush()
	bw.WriteByte('\n')
}

// sarifMessage is a finding's message in SARIF: with the text report's label of a correctness
// finding that no crash confirmed.
func sarifMessage(f *Finding) string {
	if f.Evidence == EvidenceTrace {
		return f.Message + " (not confirmed by a crash)"
	}
	return f.Message
}

// lazyFallbacks says which crash points fell back from lazy to eager exploration, by reason:
// "; 3 crash points fell back to eager exploration (2: why; 1: why)".
func lazyFallbacks(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	n, parts := 0, []string(nil)
	for _, r := range slices.Sorted(maps.Keys(m)) {
		n += m[r]
		parts = append(parts, fmt.Sprintf("%d: %s", m[r], r))
	}
	return fmt.Sprintf("; %s fell back to eager exploration (%s)", plural(n, "crash point", "crash points"), strings.Join(parts, "; "))
}
