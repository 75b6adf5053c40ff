package repair

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

var update = flag.Bool("update", false, "rewrite the golden patches in testdata/")

// A test case is a C source, the sites of its instructions (a pattern of the source and the
// text inside it where the compiler puts the instruction's column), a trace of those sites
// written with trace.Writer, and the findings of a report on it. Fix's patch is compared with
// testdata/NAME.patch and must apply with git apply.

type siteSpec struct {
	name    string
	kind    trace.SiteKind
	fn      string
	pattern string // the first line holding it
	at      string // the column: where this text starts in the pattern
	callee  string
}

type evSpec struct {
	kind   trace.Kind
	site   string
	addr   uint64 // offset in the pool
	size   uint64
	flush  trace.FlushKind
	stack  uint32
	frames []uint64
}

type findingSpec struct {
	kind    string
	site    string   // where it is reported
	stack   []string // its frames, innermost first (sites); default: site
	event   int      // index in the events of its first occurrence
	related []relatedSpec
}

// relatedSpec is a related location of a finding: its role and its site.
type relatedSpec struct {
	role report.Role
	site string
}

type fixCase struct {
	name     string
	src      string
	sites    []siteSpec
	stacks   [][3]uint32 // STACK records: id, parent, call site index in sites (+1)
	events   []evSpec
	findings []findingSpec
	// reason, when set, is a word the reason of the first finding's failure contains (no
	// repair wanted).
	reason string
}

const poolBase = 0x100000

func st(site string, off uint64) evSpec {
	return evSpec{kind: trace.KindStore, site: site, addr: off, size: 8}
}
func fl(site string, k trace.FlushKind, off uint64) evSpec {
	return evSpec{kind: trace.KindFlush, site: site, addr: off, flush: k}
}
func fe(site string) evSpec { return evSpec{kind: trace.KindFence, site: site} }

var fixCases = []fixCase{
	{
		name: "missing-flush",
		src: `#include <emmintrin.h>
#include <stdint.h>
struct rec { uint64_t data; char pad[56]; uint64_t valid; };
void put(volatile struct rec *r)
{
	r->data = 42;
	r->valid = 1;
	_mm_clflush((void *)&r->valid);
}
`,
		sites: []siteSpec{
			{name: "data", kind: trace.SiteStore, fn: "put", pattern: "r->data = 42", at: "="},
			{name: "valid", kind: trace.SiteStore, fn: "put", pattern: "r->valid = 1", at: "="},
			{name: "flush", kind: trace.SiteFlush, fn: "put", pattern: "_mm_clflush((void *)&r->valid)", at: "_mm"},
		},
		events:   []evSpec{st("data", 0), st("valid", 64), fl("flush", trace.FlushCLFLUSH, 64)},
		findings: []findingSpec{{kind: "unpersisted-store", site: "data", event: 0}},
	},
	{
		name: "missing-fence",
		src: `#include <immintrin.h>
#include <stdint.h>
void put(volatile uint64_t *p)
{
	*p = 7;
	_mm_clwb((void *)p);
	/* missing: a fence */
}
`,
		sites: []siteSpec{
			{name: "store", kind: trace.SiteStore, fn: "put", pattern: "*p = 7", at: "="},
			{name: "clwb", kind: trace.SiteFlush, fn: "put", pattern: "_mm_clwb", at: "_mm"},
		},
		events:   []evSpec{st("store", 0), fl("clwb", trace.FlushCLWB, 0)},
		findings: []findingSpec{{kind: "unpersisted-store", site: "store", event: 0}},
	},
	{
		name: "ordering",
		src: `#include <immintrin.h>
#include <stdint.h>
struct rec { uint64_t value; char pad[56]; uint64_t valid; };
void set(volatile struct rec *r, uint64_t v)
{
	r->value = v;
	r->valid = 1;
	_mm_clwb((void *)&r->value);
	_mm_clwb((void *)&r->valid);
	_mm_sfence();
}
`,
		sites: []siteSpec{
			{name: "value", kind: trace.SiteStore, fn: "set", pattern: "r->value = v", at: "="},
			{name: "valid", kind: trace.SiteStore, fn: "set", pattern: "r->valid = 1", at: "="},
			{name: "clwb1", kind: trace.SiteFlush, fn: "set", pattern: "_mm_clwb((void *)&r->value)", at: "_mm"},
			{name: "clwb2", kind: trace.SiteFlush, fn: "set", pattern: "_mm_clwb((void *)&r->valid)", at: "_mm"},
			{name: "fence", kind: trace.SiteFence, fn: "set", pattern: "_mm_sfence", at: "_mm"},
		},
		events:   []evSpec{st("value", 0), st("valid", 64), fl("clwb1", trace.FlushCLWB, 0), fl("clwb2", trace.FlushCLWB, 64), fe("fence")},
		findings: []findingSpec{{kind: "mpb-violation", site: "valid", event: 1, related: []relatedSpec{{report.RoleEarlierStore, "value"}}}},
	},
	{
		name: "braceless-if",
		src: `#include <immintrin.h>
#include <stdint.h>
struct rec { uint64_t valid; char pad[56]; uint64_t data; };
void put(volatile struct rec *r, int c)
{
	r->valid = 1;
	if (c)
		r->data = 42;
	_mm_clwb((void *)&r->valid);
	_mm_sfence();
}
`,
		sites: []siteSpec{
			{name: "valid", kind: trace.SiteStore, fn: "put", pattern: "r->valid = 1", at: "="},
			{name: "data", kind: trace.SiteStore, fn: "put", pattern: "r->data = 42", at: "="},
			{name: "clwb", kind: trace.SiteFlush, fn: "put", pattern: "_mm_clwb", at: "_mm"},
			{name: "fence", kind: trace.SiteFence, fn: "put", pattern: "_mm_sfence", at: "_mm"},
		},
		events:   []evSpec{st("valid", 0), st("data", 64), fl("clwb", trace.FlushCLWB, 0), fe("fence")},
		findings: []findingSpec{{kind: "unpersisted-store", site: "data", event: 1}},
	},
	{
		// Hippocrates' rule: set() is correct for a(), which persists after it, and misused by
		// b(): the finding is at b's call, so the fix goes there, with the helper's parameter
		// replaced by b's argument.
		name: "helper-caller",
		src: `#include <immintrin.h>
#include <stdint.h>
static void set(volatile uint64_t *p, uint64_t v)
{
	*p = v;
}
void a(volatile uint64_t *x)
{
	set(x, 1);
	_mm_clwb((void *)x);
	_mm_sfence();
}
void b(volatile uint64_t *y)
{
	set(y, 2);
}
int main(void)
{
	a(pool);
	b(pool + 8);
	return 0;
}
`,
		sites: []siteSpec{
			{name: "store", kind: trace.SiteStore, fn: "set", pattern: "*p = v", at: "="},
			{name: "clwb", kind: trace.SiteFlush, fn: "a", pattern: "_mm_clwb", at: "_mm"},
			{name: "fence", kind: trace.SiteFence, fn: "a", pattern: "_mm_sfence", at: "_mm"},
			{name: "call-a", kind: trace.SiteCall, fn: "main", pattern: "a(pool);", at: "a", callee: "a"},
			{name: "call-b", kind: trace.SiteCall, fn: "main", pattern: "b(pool + 8);", at: "b", callee: "b"},
			{name: "set-in-a", kind: trace.SiteCall, fn: "a", pattern: "set(x, 1);", at: "set", callee: "set"},
			{name: "set-in-b", kind: trace.SiteCall, fn: "b", pattern: "set(y, 2);", at: "set", callee: "set"},
		},
		stacks: [][3]uint32{{1, 0, 4}, {2, 1, 6}, {3, 0, 5}, {4, 3, 7}},
		events: []evSpec{
			{kind: trace.KindStore, site: "store", addr: 0, size: 8, stack: 2, frames: []uint64{1, 2}},
			{kind: trace.KindFlush, site: "clwb", addr: 0, flush: trace.FlushCLWB, stack: 1, frames: []uint64{1}},
			{kind: trace.KindFence, site: "fence", stack: 1, frames: []uint64{1}},
			{kind: trace.KindStore, site: "store", addr: 64, size: 8, stack: 4, frames: []uint64{3, 4}},
		},
		findings: []findingSpec{{kind: "unpersisted-store", site: "set-in-b", stack: []string{"store", "set-in-b", "call-b"}, event: 3}},
	},
	{
		name: "overwritten",
		src: `#include <immintrin.h>
#include <stdint.h>
struct entry { uint64_t state; uint64_t payload; };
void log_it(volatile struct entry *e)
{
	e->state = 1;
	e->payload = 99;
	e->state = 2;
	_mm_clflushopt((void *)e);
	_mm_sfence();
}
`,
		sites: []siteSpec{
			{name: "s1", kind: trace.SiteStore, fn: "log_it", pattern: "e->state = 1", at: "="},
			{name: "pl", kind: trace.SiteStore, fn: "log_it", pattern: "e->payload = 99", at: "="},
			{name: "s2", kind: trace.SiteStore, fn: "log_it", pattern: "e->state = 2", at: "="},
			{name: "flush", kind: trace.SiteFlush, fn: "log_it", pattern: "_mm_clflushopt", at: "_mm"},
			{name: "fence", kind: trace.SiteFence, fn: "log_it", pattern: "_mm_sfence", at: "_mm"},
		},
		events:   []evSpec{st("s1", 0), st("pl", 8), st("s2", 0), fl("flush", trace.FlushCLFLUSHOPT, 0), fe("fence")},
		findings: []findingSpec{{kind: "overwritten-unpersisted", site: "s2", event: 2, related: []relatedSpec{{report.RoleUnpersistedStore, "s1"}}}},
	},
	{
		// A TX_ADD in the program's own macro, and the persist after the transaction, which
		// the commit now makes redundant, deleted.
		name: "tx-add",
		src: `#include <libpmemobj.h>
void transfer(PMEMobjpool *pop, TOID(struct bank) root)
{
	TX_BEGIN(pop) {
		TX_ADD_FIELD(root, from);
		D_RW(root)->from -= 10;
		D_RW(root)->to += 10;
	} TX_END
	pmemobj_persist(pop, &D_RW(root)->to, sizeof(D_RW(root)->to));
}
`,
		sites: []siteSpec{
			{name: "begin", kind: trace.SiteLibCall, fn: "transfer", pattern: "TX_BEGIN(pop)", at: "TX_BEGIN", callee: "pmemobj_tx_begin"},
			{name: "add", kind: trace.SiteLibCall, fn: "transfer", pattern: "TX_ADD_FIELD(root, from)", at: "TX_ADD_FIELD", callee: "pmemobj_tx_add_range_direct"},
			{name: "from", kind: trace.SiteStore, fn: "transfer", pattern: "D_RW(root)->from -= 10", at: "-="},
			{name: "to", kind: trace.SiteStore, fn: "transfer", pattern: "D_RW(root)->to += 10", at: "+="},
			{name: "commit", kind: trace.SiteLibCall, fn: "transfer", pattern: "} TX_END", at: "TX_END", callee: "pmemobj_tx_process"},
			{name: "persist", kind: trace.SiteLibCall, fn: "transfer", pattern: "pmemobj_persist", at: "pmemobj_persist", callee: "pmemobj_persist"},
		},
		events: []evSpec{
			{kind: trace.KindTxBegin, site: "begin"},
			{kind: trace.KindTxAdd, site: "add", addr: 0, size: 8},
			st("from", 0), st("to", 64),
			{kind: trace.KindTxCommit, site: "commit"},
			{kind: trace.KindTxEnd, site: "commit"},
			fl("persist", trace.FlushCLWB, 64), fe("persist"),
		},
		findings: []findingSpec{{kind: "tx-unlogged-store", site: "to", event: 3}},
	},
	{
		// No reordering makes two stores on two lines failure-atomic.
		name: "atomicity",
		src: `#include <immintrin.h>
#include <stdint.h>
void move(volatile int64_t *from, volatile int64_t *to, int64_t n)
{
	*from -= n;
	*to += n;
	_mm_clwb((void *)from);
	_mm_clwb((void *)to);
	_mm_sfence();
}
`,
		sites: []siteSpec{
			{name: "debit", kind: trace.SiteStore, fn: "move", pattern: "*from -= n", at: "-="},
			{name: "credit", kind: trace.SiteStore, fn: "move", pattern: "*to += n", at: "+="},
			{name: "f1", kind: trace.SiteFlush, fn: "move", pattern: "_mm_clwb((void *)from)", at: "_mm"},
			{name: "f2", kind: trace.SiteFlush, fn: "move", pattern: "_mm_clwb((void *)to)", at: "_mm"},
			{name: "fence", kind: trace.SiteFence, fn: "move", pattern: "_mm_sfence", at: "_mm"},
		},
		events:   []evSpec{st("debit", 0), st("credit", 64), fl("f1", trace.FlushCLWB, 0), fl("f2", trace.FlushCLWB, 64), fe("fence")},
		findings: []findingSpec{{kind: "atomicity-violation", site: "fence", event: 4, related: []relatedSpec{{report.RoleCrashPoint, "fence"}, {report.RoleUnpersisted, "credit"}}}},
		reason:   "transaction",
	},
}

// position returns the line and column of at inside the first line holding pattern.
func position(t *testing.T, src, pattern, at string) (int, int) {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if j := strings.Index(l, pattern); j >= 0 {
			k := strings.Index(l[j:], at)
			if k < 0 {
				t.Fatalf("%q not in %q", at, pattern)
			}
			return i + 1, j + k + 1
		}
	}
	t.Fatalf("pattern %q not in the source", pattern)
	return 0, 0
}

// writeCase writes the case's source, trace and report into dir; it returns the report's path.
func writeCase(t *testing.T, c fixCase, dir string) string {
	t.Helper()
	srcPath := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(srcPath, []byte(c.src), 0o644); err != nil {
		t.Fatal(err)
	}
	ids := map[string]uint32{}
	var sites []trace.Site
	locs := map[string]report.Location{}
	for i, s := range c.sites {
		line, col := position(t, c.src, s.pattern, s.at)
		id := uint32(i + 1)
		ids[s.name] = id
		sites = append(sites, trace.Site{ID: id, Kind: s.kind, Function: s.fn, File: srcPath, Line: uint32(line), Column: uint32(col), Callee: s.callee})
		locs[s.name] = report.Location{File: srcPath, Line: line, Column: col, Function: s.fn}
	}
	tp := filepath.Join(dir, "run.trace")
	f, err := os.Create(tp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.NewWriter(f, 64)
	if err != nil {
		t.Fatal(err)
	}
	write := func(ev trace.Event) {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	write(trace.Event{Kind: trace.KindSites, Sites: sites})
	for _, s := range c.stacks {
		write(trace.Event{Kind: trace.KindStack, Stack: s[0], Parent: s[1], Site: s[2]})
	}
	write(trace.Event{Kind: trace.KindRegionMap, Thread: 1, Region: 1, Addr: poolBase, Size: 4096, Path: filepath.Join(dir, "pool"), Flags: trace.RegionCreated})
	for _, e := range c.events {
		ev := trace.Event{Kind: e.kind, Thread: 1, Site: ids[e.site], Addr: poolBase + e.addr, Size: e.size, Flush: e.flush, Context: e.stack, Frames: e.frames}
		if e.kind == trace.KindStore {
			ev.Data = make([]byte, e.size)
		}
		if e.kind == trace.KindFence {
			ev.Fence = trace.FenceSFENCE
		}
		write(ev)
	}
	write(trace.Event{Kind: trace.KindRegionUnmap, Thread: 1, Region: 1})
	write(trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The record index of each of the case's events.
	r, err := trace.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	var index []uint64
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch ev.Kind {
		case trace.KindStore, trace.KindFlush, trace.KindFence, trace.KindTxBegin, trace.KindTxAdd, trace.KindTxCommit, trace.KindTxEnd:
			index = append(index, ev.Index)
		}
	}
	r.Close()
	rep := &report.Report{Trace: tp}
	for _, fs := range c.findings {
		fd := report.Finding{Kind: report.Kind(fs.kind), Class: report.Correctness, Location: locs[fs.site], FirstEvent: index[fs.event], Count: 1}
		stack := fs.stack
		if stack == nil {
			stack = []string{fs.site}
		}
		for _, s := range stack {
			fd.Stack = append(fd.Stack, locs[s].Frame())
		}
		for _, rel := range fs.related {
			fd.Related = append(fd.Related, locs[rel.site].Related(rel.role))
		}
		if fs.kind == "atomicity-violation" || fs.kind == "ordering-violation" {
			fd.Crash = &report.Crash{FailingState: report.FailingState{ID: "c000000000001"}, Event: index[fs.event], Trace: tp}
		}
		rep.Findings = append(rep.Findings, fd)
	}
	rp := filepath.Join(dir, "r.json")
	rf, err := os.Create(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(rf, rep); err != nil {
		t.Fatal(err)
	}
	rf.Close()
	return rp
}

// TestFix computes the repair of each case and compares its patch with testdata/NAME.patch
// (go test -update rewrites them); the patch must apply with git apply.
func TestFix(t *testing.T) {
	testenv.Tools(t, "z3", "git") // z3 computes the repairs; git checks the patches apply
	for _, c := range fixCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rp := writeCase(t, c, dir)
			res, err := Fix(context.Background(), Options{Report: rp, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c.reason != "" {
				u := res.Unrepaired()
				if len(u) == 0 || !strings.Contains(u[0].Reason, c.reason) {
					t.Fatalf("want no repair with a reason naming %q, got %+v\n%s", c.reason, res.Outcomes, res.Patch)
				}
				return
			}
			if u := res.Unrepaired(); len(u) > 0 {
				t.Fatalf("not repaired: %s", u[0].Reason)
			}
			patch := strings.ReplaceAll(res.Patch, dir, "DIR")
			golden := filepath.Join("testdata", c.name+".patch")
			if *update {
				if err := os.WriteFile(golden, []byte(patch), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if patch != string(want) {
				t.Errorf("patch differs from %s (go test -update rewrites it):\n%s", golden, patch)
			}
			pf := filepath.Join(dir, "fix.patch")
			if err := os.WriteFile(pf, []byte(res.Patch), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "apply", "--check", pf)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("git apply --check: %v\n%s", err, out)
			}
		})
	}
}

// TestFixErrors: bad reports and selections are errors naming the problem.
func TestFixErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("not json"), 0o644)
	noTrace := filepath.Join(dir, "nt.json")
	os.WriteFile(noTrace, []byte(`{"findings":[{"kind":"unpersisted-store","class":"correctness","location":{"file":"x.c","line":1}}],"summary":{"trace":"/nonexistent.trace"}}`), 0o644)
	scoped := filepath.Join(dir, "scoped.json")
	os.WriteFile(scoped, []byte(`{"findings":[],"summary":{"trace":"/nonexistent.trace"},"scope":{"rev":"main"}}`), 0o644)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Report: filepath.Join(dir, "missing.json")}, "no such file"},
		{Options{Report: bad}, "not a JSON report"},
		{Options{Report: noTrace}, "names no trace"},
		{Options{Report: noTrace, Findings: []string{"7"}}, "has 1 findings"},
		{Options{Report: noTrace, Findings: []string{"cdeadbeef"}}, "no finding with that crash id"},
		{Options{Report: scoped, Build: "make"}, "scoped to the change since main"},
	} {
		_, err := Fix(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fix(%+v) = %v, want an error naming %q", tc.o, err, tc.want)
		}
	}
}

// TestExternal: a finding is outside the program's code when the frame it is reported at is
// External; a finding at the program's frame, or whose location is in no frame, is not.
func TestExternal(t *testing.T) {
	lib := report.Frame{Function: "kv_put", File: "/opt/kv/include/kv.h", Line: 9, Column: 2, External: true}
	own := report.Frame{Function: "main", File: "/src/app/main.c", Line: 36, Column: 2}
	for _, tc := range []struct {
		name string
		fd   report.Finding
		want bool
	}{
		{"at the program's call", report.Finding{Location: own.Location(), Stack: []report.Frame{lib, own}}, false},
		{"every frame external", report.Finding{Location: lib.Location(), Stack: []report.Frame{lib}}, true},
		{"no stack", report.Finding{Location: lib.Location()}, false},
	} {
		if got := external(&tc.fd); got != tc.want {
			t.Errorf("%s: external %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSameStoreUnpersisted: an overwritten-unpersisted finding whose store overwrites an earlier
// instance of itself is joined to the selected unpersisted-store finding at the same store (one
// repair for both), and to nothing otherwise.
func TestSameStoreUnpersisted(t *testing.T) {
	count := report.Location{File: "/src/log.c", Line: 57, Column: 14, Function: "main"}
	other := report.Location{File: "/src/log.c", Line: 50, Column: 4, Function: "main"}
	over := func(store, earlier report.Location) report.Finding {
		return report.Finding{Kind: report.OverwrittenUnpersisted, Location: store, Related: []report.Related{earlier.Related(report.RoleUnpersistedStore)}}
	}
	unp := func(store report.Location) report.Finding {
		return report.Finding{Kind: report.UnpersistedStore, Location: store}
	}
	for _, tc := range []struct {
		name     string
		findings []report.Finding
		want     int
	}{
		{"a counter never persisted", []report.Finding{over(count, count), unp(count)}, 2},
		{"overwrites another store", []report.Finding{over(count, other), unp(count)}, 0},
		{"the unpersisted-store is another store's", []report.Finding{over(count, count), unp(other)}, 0},
		{"no unpersisted-store", []report.Finding{over(count, count), {Kind: report.DurabilityViolation, Location: count}}, 0},
	} {
		f := &fixer{rep: &report.Report{Findings: tc.findings}}
		if got := f.sameStoreUnpersisted(&f.rep.Findings[0], []int{1, 2}); got != tc.want {
			t.Errorf("%s: joined to %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCrashAnswers: an atomicity violation scry fix cannot repair is answered with what the
// finding shows (how the re-execution failed, on which state) and why no repair was computed;
// a recovery that crashes on a state that lost nothing points at the recovery first.
func TestCrashAnswers(t *testing.T) {
	crash := func(symptom, detail string) *report.Finding {
		c := &report.Crash{FailingState: report.FailingState{ID: "c1", Symptom: symptom, ImageCommand: "scry replay r.json c1 --out crash.img", Reproduce: "./prog crash.img"}}
		c.Detail = detail
		return &report.Finding{Kind: report.AtomicityViolation, Crash: c}
	}
	for _, tc := range []struct {
		name    string
		got     string
		want    []string
		notWant []string
	}{
		{"recovery crashes", lostNothing(crash("signal", "the run on the crash image killed by signal 11 (segmentation fault)")),
			[]string{"lost nothing", "killed by signal 11", "fix the recovery", "scry replay r.json c1", "./prog crash.img", "no repair was computed"}, nil},
		{"output differs", lostNothing(crash("output", "the output differs")),
			[]string{"lost nothing", "the output differs", "make the recovery handle"}, []string{"crashes or hangs"}},
		{"in a logged transaction", inLoggedTx(crash("output", "the output differs")),
			[]string{"logs every store", "the output differs", "no TX_ADD is missing", "what the transaction does not hold"}, []string{"make the operation a transaction"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, tc.got, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(tc.got, w) {
				t.Errorf("%s: %q has %q", tc.name, tc.got, w)
			}
		}
	}
}
