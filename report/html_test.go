package report

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// sourceOf returns a ReadFile serving files of n numbered lines ("line 1", ...), and failing for
// any other path as os.ReadFile does for a missing file.
func sourceOf(files map[string]int) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		n, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "\tline %d\n", i)
		}
		return []byte(b.String()), nil
	}
}

func crashSample() *Report {
	return &Report{Events: 40, Findings: []Finding{{
		Kind: OrderingViolation, Class: Correctness, Message: "a crash before the fence <b>&</b>",
		Location: Location{File: "kv.c", Line: 51, Column: 4, Function: "main"},
		Related: []Related{{Role: RoleCrashPoint, File: "kv.c", Line: 51}, {Role: RolePersisted, File: "kv.c", Line: 48},
			{Role: RoleUnpersisted, File: "kv.c", Line: 47}, {Role: RoleEarlierStore, File: "kv.c", Line: 30}},
		Count: 1, FirstEvent: 14,
		Crash: &Crash{FailingState: FailingState{ID: "c0123456789ab", CrashPoint: 0, Symptom: "output",
			ImageCommand: "scry replay r.json c0123456789ab --out crash.img", Reproduce: "./kv crash.img < w"},
			PointKind: "fence", Event: 14, State: []int{0, 1}, Lines: []CrashLine{{Addr: 0x1000, Units: 1}, {Addr: 0x1040, Units: 2}},
			DiffCommitted: "--- want\n+++ got\n@@ -1 +1 @@\n-1 = 10\n+1 = 0\n"},
	}}}
}

func crashTimeline() *CrashTimeline {
	at := func(line int) Location { return Location{File: "kv.c", Line: line, Function: "main"} }
	return &CrashTimeline{Start: 9, Crash: 14,
		Lines: []TimelineLine{
			{Addr: 0x1000, Offset: 0x80, Events: []TimelineEvent{
				{Event: 8, Kind: "store", Addr: 0x1010, Size: 16, Fate: FateTorn, Units: 2, Kept: 1, Location: at(45)},
				{Event: 10, Kind: "store", Addr: 0x1000, Size: 8, Fate: FateLost, Units: 1, Location: at(47)},
				{Event: 12, Kind: "flush", What: "clwb", Addr: 0x1000, Location: at(49)}}},
			{Addr: 0x1040, Offset: 0xc0, Events: []TimelineEvent{
				{Event: 9, Kind: "store", Addr: 0x1040, Size: 8, Fate: FateDurable, Location: at(46)},
				{Event: 11, Kind: "store", Addr: 0x1040, Size: 8, Fate: FateKept, Units: 1, Kept: 1, Location: at(48)},
				{Event: 12, Kind: "store", Addr: 0x1048, Size: 8, Fate: FateLost, Units: 1, Location: at(48)}}},
		},
		Fences: []TimelineEvent{{Event: 13, Kind: "fence", What: "sfence", Location: at(50)}},
		Bytes:  []ByteDiff{{Addr: 0x1000, Offset: 0x80, Fate: FateLost, Image: []byte{0, 0}, Other: []byte{0x0a, 0}, Store: 10, Location: at(47)}},
	}
}

func TestWriteHTML(t *testing.T) {
	many := &Report{}
	for i := range SummaryRows + 5 {
		many.Findings = append(many.Findings, Finding{Kind: RedundantFlush, Class: Performance, Message: "m",
			Location: Location{File: "a.c", Line: i + 1}, Count: 1})
	}
	fsRep := &Report{Findings: []Finding{{Kind: FSAtomicityViolation, Class: Correctness, Message: "ops 5 to 6",
		Location: Location{File: "kv.c", Line: 45}, Count: 2,
		FS: &FSCrash{FailingState: FailingState{ID: "c43389bbedffb", CrashPoint: 5, Strategy: "prefix", Symptom: "output"}, APM: "default",
			Persisted: []string{`creat("store")`, `append("store", 4)`}, Lost: []string{`trunc("store")`},
			Dynamic: []FSVulnerability{{A: 5, B: 6, CallA: "trunc", CallB: "append"}}, Count: 1}}}}
	witnessed := crashSample()
	witnessed.Witnesses = []Witness{{Schedule: "pct:1:1@2.2", Store: Location{File: "kv.c", Line: 10}, Load: Location{File: "kv.c", Line: 20},
		Dependent: Location{File: "kv.c", Line: 21}, Findings: 1}}
	for _, tc := range []struct {
		name   string
		rep    *Report
		opts   HTMLOptions
		want   []string
		absent []string
	}{
		{"schedule witnesses", witnessed, HTMLOptions{ReadFile: sourceOf(nil)},
			[]string{`<h3>Schedule witnesses</h3>`, `<code>SCRY_SCHED=pct:1:1@2.2</code>: the store at <code>kv.c:21</code> may persist before the store at <code>kv.c:10</code>`},
			nil},
		{"excerpts", sample(), HTMLOptions{ReadFile: sourceOf(map[string]int{"btree.c": 130})},
			[]string{
				`<tr class="hl" data-line="42" data-roles="unpersisted-store">`, `<tr class="hl" data-line="44" data-roles="flush">`,
				`<td class="no">39</td>`, `<td class="no">47</td>`, `<tr class="hl" data-line="88" data-roles="redundant-flush">`,
				`<tr data-finding="1">`, `<tr data-finding="2">`, `id="finding-2" data-index="2" data-kind="redundant-flush" data-class="performance"`,
			},
			// Frames are listed, not excerpted: main.c and pm.h are not read.
			[]string{`data-line="48"`, `<svg class="timeline"`, `<tr class="gap">`, `source not available`, `Schedule witnesses`}},
		{"missing source", sample(), HTMLOptions{ReadFile: sourceOf(nil)},
			[]string{`<div class="missing">source not available: file does not exist</div>`}, []string{`class="hl"`}},
		{"crash state alone", crashSample(), HTMLOptions{ReadFile: sourceOf(map[string]int{"kv.c": 60}), TimelineErrors: map[int]string{0: "the trace is gone"}},
			[]string{`data-exact="false" data-kept="1" data-lost="2"`, `the trace is gone`, `data-roles="ordering-violation crash-point"`,
				`a crash before the fence &lt;b&gt;&amp;&lt;/b&gt;`, `<span class="del">-1 = 10</span>`, `<span class="add">&#43;1 = 0</span>`, `<tr class="gap">`,
				`scry replay r.json c0123456789ab --out crash.img`, `data-crash-id="c0123456789ab"`, `crash (before the fence)`},
			[]string{`<b>&</b>`, `class="flush-ev"`, `<script`}},
		{"timeline", crashSample(), HTMLOptions{ReadFile: sourceOf(map[string]int{"kv.c": 60}), Timelines: map[int]*CrashTimeline{0: crashTimeline()}},
			[]string{`<tr class="hl" data-line="49" data-roles="clwb">`, `<tr class="hl" data-line="50" data-roles="sfence">`, `data-exact="true" data-kept="2" data-lost="3"`, `<g class="store-ev" data-fate="torn" data-event="8"><title>event 8: store of 16 bytes at 0x1010, torn: 1 of its 2 units kept by the crash state`, `<g class="flush-ev" data-event="12">`, `<g class="fence-ev" data-event="13">`,
				`<g class="store-ev" data-fate="durable" data-event="9">`, `<g class="store-ev" data-fate="lost" data-event="10">`,
				`<span class="d">00</span>`, `<span class="d">0a</span>`, `<tr data-fate="lost">`, `>sfence</text>`, `>:47</text>`, `pool&#43;0xc0</text>`},
			nil},
		{"summary rows", many, HTMLOptions{ReadFile: sourceOf(nil)},
			[]string{fmt.Sprintf(`<tr data-finding="%d">`, SummaryRows), `5 more`, fmt.Sprintf(`id="finding-%d"`, SummaryRows+5)},
			[]string{fmt.Sprintf(`<tr data-finding="%d">`, SummaryRows+1)}},
		{"file-system finding", fsRep, HTMLOptions{ReadFile: sourceOf(nil)},
			[]string{`<div data-op="persisted">creat(&#34;store&#34;)</div>`, `<div data-op="lost">trunc(&#34;store&#34;)</div>`,
				`5 trunc → 6 append`, `data-crash-id="c43389bbedffb"`},
			[]string{`<svg class="timeline"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, tc.rep, tc.opts); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !Recognize(b.Bytes()[:min(b.Len(), 512)]) {
				t.Errorf("Recognize does not recognize the page")
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the page has no %s", w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("the page has %s", a)
				}
			}
			if t.Failed() {
				t.Logf("page:\n%s", out)
			}
		})
	}
}

// TestWriteHTMLFormat checks that html is one of the formats and Write writes it.
func TestWriteHTMLFormat(t *testing.T) {
	if err := CheckFormat("html"); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, sample(), "html"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), htmlHead) || !strings.HasSuffix(strings.TrimSpace(b.String()), "</html>") {
		t.Errorf("not one HTML page:\n%s", b.String())
	}
	if Recognize([]byte("<!DOCTYPE html>\n<html><head><title>mine</title>")) {
		t.Errorf("Recognize takes any HTML page for a report of scry")
	}
}

// TestTimelineThreads: a window with events of one thread draws no thread; one with events of
// two says each mark's thread, in its title and its label.
func TestTimelineThreads(t *testing.T) {
	tl := crashTimeline()
	for _, m := range drawTimeline(tl, "before-fence").Marks {
		if strings.Contains(m.Title, "thread") || strings.HasPrefix(m.Label, "T") {
			t.Errorf("one thread: mark %q %q names a thread", m.Title, m.Label)
		}
	}
	tl.Lines[1].Events[1].Thread = 2
	var marked int
	for _, m := range drawTimeline(tl, "before-fence").Marks {
		if strings.Contains(m.Title, "thread 2, store") && strings.HasPrefix(m.Label, "T2 ") {
			marked++
		} else if !strings.Contains(m.Title, "thread 0, ") {
			t.Errorf("two threads: mark %q %q does not name its thread", m.Title, m.Label)
		}
	}
	if marked != 1 {
		t.Errorf("%d marks of thread 2, want 1", marked)
	}
}
