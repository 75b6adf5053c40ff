package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scry-pm/scry/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func sample() *Report {
	r := &Report{
		Trace:  "run.trace",
		Events: 1234,
		Rules: []Rule{
			{Kind: "unpersisted-store", Class: Correctness, Doc: "a store is not durable"},
			{Kind: "redundant-flush", Class: Performance, Doc: "a flush of a clean line"},
		},
		Warnings: []string{"trace truncated after 1234 events"},
		Findings: []Finding{
			{Kind: "redundant-flush", Class: Performance, Message: "clwb of the cache line at pool+0x40 is redundant",
				Location: Location{File: "btree.c", Line: 88, Column: 3, Function: "persist_node"},
				Stack: []Frame{{Function: "clwb_line", File: "pm.h", Line: 12, Column: 2, Inlined: true},
					{Function: "persist_node", File: "btree.c", Line: 88, Column: 3}, {Function: "main", File: "main.c", Line: 11, Column: 2}},
				Count: 7, FirstEvent: 99},
			{Kind: "unpersisted-store", Class: Correctness, Message: "store of 8 bytes to pool+0x100 is not durable when the program exits",
				Location: Location{File: "btree.c", Line: 42, Column: 9, Function: "insert"},
				Stack:    []Frame{{Function: "insert", File: "btree.c", Line: 42, Column: 9}, {Function: "insert", File: "btree.c", Line: 120, Column: 5}, {Function: "main", File: "main.c", Line: 10, Column: 2}},
				Related:  []Related{{Role: RoleFlush, File: "btree.c", Line: 44, Column: 3, Function: "insert"}},
				Count:    2, FirstEvent: 17, Operation: &Operation{Index: 3, Text: "insert 5 \"x\""}},
		},
	}
	r.Sort()
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestWriters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"report.txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"report.json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
		{"report.sarif", func(b *bytes.Buffer, r *Report) error { return WriteSARIF(b, r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, sample()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestJSONShape(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, &Report{}); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v["findings"].([]any); !ok {
		t.Errorf("findings is not an array: %s", b.String())
	}
	if _, ok := v["warnings"].([]any); !ok {
		t.Errorf("warnings is not an array: %s", b.String())
	}
	b.Reset()
	WriteJSON(&b, sample())
	for _, key := range []string{`"first_event"`, `"operation"`, `"related"`, `"role"`, `"stack"`, `"column"`, `"function"`, `"summary"`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestOrder(t *testing.T) {
	r := sample()
	if r.Findings[0].Class != Correctness || !r.HasCorrectness() {
		t.Errorf("correctness findings must come first: %+v", r.Findings)
	}
	r.Findings = r.Findings[1:]
	if r.HasCorrectness() {
		t.Error("HasCorrectness with only performance findings")
	}
}

func TestSuppressions(t *testing.T) {
	s, err := ParseSuppressions(strings.NewReader(`
# comment
redundant-flush btree.c   # trailing comment
unpersisted-store */main.c:insert*
* vendor/*
`), "supp")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d", s.Len())
	}
	r := sample()
	r.Findings = append(r.Findings, Finding{Kind: "unpersisted-store", Class: Correctness, Location: Location{File: "src/main.c", Function: "insert_all"}},
		Finding{Kind: "tx-unlogged-store", Class: Correctness, Location: Location{File: "vendor/lib.c", Function: "f"}})
	if n := s.Filter(r); n != 3 {
		t.Errorf("Filter removed %d, want 3", n)
	}
	if len(r.Findings) != 1 || r.Findings[0].Location.File != "btree.c" || r.Findings[0].Kind != "unpersisted-store" {
		t.Errorf("kept %+v", r.Findings)
	}
	if r.SuppressedTotal() != 3 || r.Suppressed["redundant-flush"] != 1 {
		t.Errorf("suppressed %v", r.Suppressed)
	}
	if u := s.Unused(); len(u) != 0 {
		t.Errorf("unused %v", u)
	}
	var nilS *Suppressions
	if nilS.Filter(r) != 0 {
		t.Error("nil suppressions removed findings")
	}
}

// TestSuppressionRelative: reports name files by absolute path, so a relative glob with a
// slash also matches the path relative to the current directory at load time.
func TestSuppressionRelative(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSuppressions(strings.NewReader("* vendor/*\n"), "supp")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		want bool
	}{
		{filepath.Join(wd, "vendor", "lib.c"), true},
		{"vendor/lib.c", true},
		{filepath.Join(wd, "src", "lib.c"), false},
		{filepath.Join(wd, "vendor", "deep", "lib.c"), false}, // * does not cross /
		{"/elsewhere/vendor/lib.c", false},
	}
	for _, tt := range tests {
		if got := s.Match(&Finding{Kind: "redundant-flush", Location: Location{File: tt.file}}); got != tt.want {
			t.Errorf("%s: suppressed %v, want %v", tt.file, got, tt.want)
		}
	}
}

func TestSuppressionErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redundant-flush", "supp:1: want"},
		{"\n\nBad_Kind x.c", "supp:3: bad kind"},
		{"redundant-flush x.c:", "supp:1: empty function pattern"},
		{"redundant-flush [x.c", "supp:1: bad file pattern"},
		{"redundant-flush a b", "supp:1: want"},
	} {
		_, err := ParseSuppressions(strings.NewReader(tc.in), "supp")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := LoadSuppressions(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestSarifURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/work/src/btree.c", "file:///work/src/btree.c"},
		{"/tmp/a b.c", "file:///tmp/a%20b.c"},
		{"src/map.c", "src/map.c"},
		{"<unknown>", "%3Cunknown%3E"},
	}
	for _, tt := range tests {
		if got := sarifURI(tt.in); got != tt.want {
			t.Errorf("sarifURI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSummary: from SummaryMin findings the text report starts with a table of at most
// SummaryRows rows.
func TestSummary(t *testing.T) {
	for _, n := range []int{SummaryMin - 1, SummaryMin, SummaryRows + 5} {
		r := &Report{}
		for i := 0; i < n; i++ {
			r.Findings = append(r.Findings, Finding{Kind: "redundant-flush", Class: Performance, Message: "m",
				Location: Location{File: "a.c", Line: i + 1, Function: "f"}, Count: i + 1})
		}
		var b strings.Builder
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		has := strings.HasPrefix(out, fmt.Sprintf("scry: %d findings (0 correctness, %d performance):\n", n, n))
		if has != (n >= SummaryMin) {
			t.Errorf("%d findings: summary %v:\n%s", n, has, out)
		}
		if more := regexp.MustCompile(`(?m)^  \.\.\.\s+5 more\s*$`).MatchString(out); more != (n == SummaryRows+5) {
			t.Errorf("%d findings: overflow row %v:\n%s", n, more, out)
		}
		if n >= SummaryMin && !regexp.MustCompile(`(?m)^  2\s+redundant-flush\s+a\.c:2 \(f\)\s+2$`).MatchString(out) {
			t.Errorf("%d findings: no row for finding 2:\n%s", n, out)
		}
	}
}

// TestLocClean: an absolute file path is cleaned lexically (libstdc++'s headers as clang names
// them), a relative one is kept as the trace gives it.
func TestLocClean(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/atomic_base.h", "/usr/include/c++/12/bits/atomic_base.h"},
		{"/src/./kv//map.cpp", "/src/kv/map.cpp"},
		{"/src/kv/map.cpp", "/src/kv/map.cpp"},
		{"../include/kv.h", "../include/kv.h"},
		{"", ""},
	} {
		if got := Loc(trace.Site{File: tc.file}).File; got != tc.want {
			t.Errorf("Loc(%q).File = %q, want %q", tc.file, got, tc.want)
		}
	}
}

// TestShortFunction: template arguments and parameter lists become "…"; operators keep their
// brackets; C names are unchanged.
func TestShortFunction(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"insert", "insert"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<…>::push_back(…)"},
		{"pmem::obj::concurrent_hash_map<int, int, std::hash<int>, std::equal_to<int>, void, 8ul>::internal_insert<std::pair<int const, int> const&>(std::pair<int const, int> const&, bool (*)(int))",
			"pmem::obj::concurrent_hash_map<…>::internal_insert<…>(…)"},
		{"bool operator<<(std::ostream&, Key const&)", "bool operator<<(…)"},
		{"Key::operator()(int) const", "Key::operator()(…) const"},
		{"Key::operator<(Key const&) const", "Key::operator<(…) const"},
		{"(anonymous namespace)::persist(void*)", "(anonymous namespace)::persist(…)"},
		{"f(int", "f(…"},
	} {
		if got := ShortFunction(tc.in); got != tc.want {
			t.Errorf("ShortFunction(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSummaryWidth: a table of C++ findings with very long names and paths stays within
// SummaryWidth, and the per-finding section keeps the full name.
func TestSummaryWidth(t *testing.T) {
	long := "pmem::obj::concurrent_hash_map<" + strings.Repeat("std::basic_string<char, std::char_traits<char>, std::allocator<char> >, ", 40) + "8ul>::insert(int)"
	path := "/home/user/" + strings.Repeat("very-long-directory-name/", 12) + "concurrent_hash_map.hpp"
	r := &Report{}
	for i, fn := range []string{long, "main", long + "::" + long} {
		r.Findings = append(r.Findings, Finding{Kind: "overwritten-unpersisted", Class: Correctness, Message: "m",
			Location: Location{File: path, Line: 1000 + i, Function: fn}, Count: 123456})
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	table, _, _ := strings.Cut(out, "\n\n")
	for _, line := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(line); n > SummaryWidth {
			t.Errorf("summary line of %d characters (> %d): %s", n, SummaryWidth, line)
		}
	}
	if !strings.Contains(table, "concurrent_hash_map<…>::insert(…)") || !strings.Contains(table, "concurrent_hash_map.hpp:1000") {
		t.Errorf("summary does not show the short name and the file's end:\n%s", table)
	}
	if !strings.Contains(out, "    in function "+long+"\n") {
		t.Errorf("per-finding section lost the full name")
	}
}
