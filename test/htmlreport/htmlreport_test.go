// Package htmlreport_test renders HTML reports (`--format html`, docs/html-report.md) of example
// programs and loads them in a real browser, Debian's headless Chromium: for every finding of
// the example's JSON report the page must have its section (id, kind, class, crash id), the
// finding's named source lines highlighted, an SVG timeline for a PM crash finding (drawn from
// the trace) and the crash directory's operations for a file-system one; and the page's
// screenshot must not be blank. Chromium, gcc, strace and the build (`make`) are required in
// strict mode (internal/testenv).
package htmlreport_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// example is one program whose report the test renders: a PM example (examples/NAME/buggy.c,
// built with `scry cc`, checked with its workload or, without one, on a pool) or a file-system
// one (examples/fs/NAME, built with gcc, checked with `scry fs check` and its workload). The
// JSON report is rendered through pipeline.WriteReport, as the command does after a check; cli
// also runs the command with `--format html`.
type example struct {
	name     string
	fs       bool
	workload bool
	cli      bool
	// kinds are kinds the report must have (the example's documented findings).
	kinds []report.Kind
}

var examples = []example{
	{name: "ordering", workload: true, kinds: []report.Kind{report.OrderingViolation, report.MPBViolation}},
	{name: "atomicity", workload: true, cli: true, kinds: []report.Kind{report.AtomicityViolation}},
	{name: "late-persist", workload: true, kinds: []report.Kind{report.DurabilityViolation, report.UnpersistedStore, report.RedundantFlush}},
	{name: "missing-fence", kinds: []report.Kind{report.UnpersistedStore}},
	{name: "kv", fs: true, workload: true, cli: true, kinds: []report.Kind{report.FSAtomicityViolation}},
}

// cflags are the examples' compiler flags (examples/examples_test.go's).
var cflags = []string{"-O0", "-g", "-mclflushopt", "-mclwb", "-I" + filepath.Join(testenv.Root(), "examples", "include")}

func TestHTMLReportInChromium(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	testenv.Tools(t, "gcc", "strace")
	scry := testenv.Scry(t)
	testenv.Built(t, "lib/scry/libscry_fsshim.so")
	t.Setenv("SCRY_HOME", testenv.BuildDir())
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			dir := t.TempDir()
			rep, htmlPath := check(t, scry, ex, dir)
			have := map[report.Kind]bool{}
			for _, f := range rep.Findings {
				have[f.Kind] = true
			}
			for _, k := range ex.kinds {
				if !have[k] {
					t.Errorf("the report has no %s finding (the example's documented bug)", k)
				}
			}
			dom := browse(t, chromium, dir, htmlPath, "--dump-dom")
			checkDOM(t, dom, rep)
			browse(t, chromium, dir, htmlPath, "--screenshot="+filepath.Join(dir, "page.png"), "--window-size=1280,2400")
			crash := slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Crash != nil })
			checkScreenshot(t, filepath.Join(dir, "page.png"), crash)
		})
	}
}

// check builds the example and checks it; it returns the JSON report and the HTML report's path.
func check(t *testing.T, scry string, ex example, dir string) (*report.Report, string) {
	t.Helper()
	src := filepath.Join(testenv.Root(), "examples", ex.name)
	if ex.fs {
		src = filepath.Join(testenv.Root(), "examples", "fs", ex.name)
	}
	bin := filepath.Join(dir, "prog")
	build := exec.Command(scry, append(append([]string{"cc"}, cflags...), "-o", bin, filepath.Join(src, "buggy.c"), "-lpmem")...)
	if ex.fs {
		build = exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join(src, "buggy.c"))
	}
	run(t, build)
	jsonPath, htmlPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html")
	var args []string
	switch {
	case ex.fs:
		wd := filepath.Join(dir, "w")
		if err := os.Mkdir(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		args = []string{"fs", "check", "--dir", wd, "--workload", filepath.Join(src, "workload"), "--", bin}
	case ex.workload:
		args = []string{"check", "--workload", filepath.Join(src, "workload.txt"), "--", bin, "{pool}"}
	default:
		args = []string{"check", "--pm", filepath.Join(dir, "*.pool"), "--", bin, filepath.Join(dir, "test.pool")}
	}
	withFormat := func(format, out string) []string {
		i := 1
		if ex.fs {
			i = 2
		}
		return append(append(append([]string{}, args[:i]...), "--format", format, "-o", out), args[i:]...)
	}
	run(t, exec.Command(scry, withFormat("json", jsonPath)...))
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.ReadJSON(data, jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		t.Fatalf("%s has no finding", jsonPath)
	}
	// The page of the saved report, as `scry report` writes it.
	run(t, exec.Command(scry, "report", "--format", "html", "-o", htmlPath, jsonPath))
	if ex.cli {
		// The command's own --format html: a report of scry (which -o may replace) with a
		// section of each kind. Its crash states may be others than the JSON run's (the jobs
		// run in parallel), so only what does not depend on them is compared.
		cliPath := filepath.Join(dir, "cli.html")
		run(t, exec.Command(scry, withFormat("html", cliPath)...))
		b, err := os.ReadFile(cliPath)
		if err != nil {
			t.Fatal(err)
		}
		if !report.Recognize(b[:min(len(b), 512)]) {
			t.Errorf("%s is not recognized as a report of scry:\n%.300s", cliPath, b)
		}
		for _, f := range rep.Findings {
			if !bytes.Contains(b, []byte(`data-kind="`+string(f.Kind)+`"`)) {
				t.Errorf("%s has no %s finding", cliPath, f.Kind)
			}
		}
	}
	return rep, htmlPath
}

// run runs cmd; exit status 1 (correctness findings) is success here.
func run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && cmd.Args[1] != "cc" && !strings.HasSuffix(cmd.Args[0], "gcc") {
		return
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// browse loads page in headless Chromium with the mode's flags and returns its standard output.
func browse(t *testing.T, chromium, dir, page string, mode ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + filepath.Join(dir, "chromium")}, mode...)
	cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(mode, " "), err, stderr.String())
	}
	return stdout.String()
}

var sectionRe = regexp.MustCompile(`<section class="finding [a-z]+" id="finding-(\d+)"[^>]*>`)

// checkDOM checks the page as Chromium parsed it against the report.
func checkDOM(t *testing.T, dom string, rep *report.Report) {
	t.Helper()
	if !strings.Contains(dom, `id="summary"`) {
		t.Errorf("the page has no summary table")
	}
	if got, want := strings.Count(dom, `<tr data-finding="`), min(len(rep.Findings), report.SummaryRows); got != want {
		t.Errorf("the summary table has %d rows, want %d", got, want)
	}
	starts := sectionRe.FindAllStringIndex(dom, -1)
	if len(starts) != len(rep.Findings) {
		t.Fatalf("the page has %d finding sections, the report %d findings", len(starts), len(rep.Findings))
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		end := len(dom)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		sec := dom[starts[i][0]:end]
		head := dom[starts[i][0]:starts[i][1]]
		for _, attr := range []string{
			fmt.Sprintf(`id="finding-%d"`, i+1), fmt.Sprintf(`data-kind="%s"`, f.Kind), fmt.Sprintf(`data-class="%s"`, f.Class),
		} {
			if !strings.Contains(head, attr) {
				t.Errorf("finding %d (%s): section %s has no %s", i+1, f.Kind, head, attr)
			}
		}
		// The finding's own line is highlighted, labelled with its kind, and so is every
		// related location's (its role) in the same file.
		want := map[int][]string{f.Location.Line: {string(f.Kind)}}
		for _, r := range f.Related {
			if r.File == f.Location.File && r.Line > 0 {
				want[r.Line] = append(want[r.Line], string(r.Role))
			}
		}
		for line, roles := range want {
			m := regexp.MustCompile(fmt.Sprintf(`<tr class="hl" data-line="%d" data-roles="([^"]*)"`, line)).FindStringSubmatch(sec)
			if m == nil {
				t.Errorf("finding %d (%s): line %d of %s is not highlighted", i+1, f.Kind, line, f.Location.File)
				continue
			}
			for _, role := range roles {
				if !strings.Contains(" "+m[1]+" ", " "+role+" ") {
					t.Errorf("finding %d (%s): line %d is labelled %q, want %s among them", i+1, f.Kind, line, m[1], role)
				}
			}
		}
		switch {
		case f.Crash != nil:
			if !strings.Contains(head, `data-crash-id="`+f.Crash.ID+`"`) {
				t.Errorf("finding %d: no crash id %s", i+1, f.Crash.ID)
			}
			svg := regexp.MustCompile(`<svg class="timeline"[^>]*data-exact="true"[^>]*data-kept="(\d+)" data-lost="(\d+)"`).FindStringSubmatch(sec)
			if svg == nil {
				t.Errorf("finding %d (%s): no timeline drawn from the trace in:\n%s", i+1, f.Kind, sec)
				break
			}
			kept, lost := 0, 0
			for j, k := range f.Crash.State {
				kept += k
				lost += f.Crash.Lines[j].Units - k
			}
			if svg[1] != fmt.Sprint(kept) || svg[2] != fmt.Sprint(lost) {
				t.Errorf("finding %d: the timeline shows %s stores kept and %s lost, the crash state %d and %d", i+1, svg[1], svg[2], kept, lost)
			}
			if !strings.Contains(sec, f.Crash.ImageCommand) && !strings.Contains(sec, htmlEscape(f.Crash.ImageCommand)) {
				t.Errorf("finding %d: no replay command %q", i+1, f.Crash.ImageCommand)
			}
		case f.FS != nil:
			if !strings.Contains(head, `data-crash-id="`+f.FS.ID+`"`) {
				t.Errorf("finding %d: no crash id %s", i+1, f.FS.ID)
			}
			if got, want := strings.Count(sec, `data-op="persisted"`), len(f.FS.Persisted); got != want {
				t.Errorf("finding %d: %d persisted operations shown, want %d", i+1, got, want)
			}
			if got, want := strings.Count(sec, `data-op="lost"`), len(f.FS.Lost); got != want {
				t.Errorf("finding %d: %d lost operations shown, want %d", i+1, got, want)
			}
		default:
			if strings.Contains(sec, `<svg class="timeline"`) {
				t.Errorf("finding %d (%s): a timeline for a finding without a crash", i+1, f.Kind)
			}
		}
	}
}

// htmlEscape escapes s as Chromium serializes text.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// checkScreenshot checks that the screenshot is a page, not a blank: more than one colour, at
// least 2 % of its pixels other than the background (the top-left pixel's colour), and with
// timeline the green of a kept store (the timeline's legend and marks).
func checkScreenshot(t *testing.T, path string, timeline bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	colours := map[[3]uint32]bool{}
	other := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r != br || g != bgc || bl != bb {
				other++
			}
		}
	}
	total := b.Dx() * b.Dy()
	if len(colours) < 2 || other*50 < total {
		t.Errorf("the screenshot looks blank: %d colours, %d of %d pixels not the background", len(colours), other, total)
	}
	if kept := [3]uint32{0x2e, 0x7d, 0x32}; timeline && !colours[kept] {
		t.Errorf("the screenshot has no pixel of a kept store's green #2e7d32: the timeline was not drawn")
	}
}
