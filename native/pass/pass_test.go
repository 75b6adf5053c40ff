// Tests of the scry pass plugin: for every installed clang (14, 16) and for -O0 and -O2, the
// programs in testdata are compiled to LLVM IR with -fpass-plugin, the IR is verified, and the
// site table is checked against `// want:` comments in the sources (like go/analysis tests):
//
//	p[0] = v; // want: store
//	pmem_persist(p, 8); // want: libcall=pmem_persist
//	local = 1; // want-none
//
// Each word after "want:" is a site kind (load store nt-store range flush fence rmw libcall call branch),
// optionally with "=callee"; a site of that kind (and callee) must exist at that line. Kinds after
// "want-not:" (on the same line, after want: or alone) must not. want-none says no site may be at
// that line. Per-file patterns check the callbacks' arguments. Finally
// testdata/run_main.c is built at -O0 and -O3 with stub callbacks (testdata/stubs.c), linked and
// run, and linked with the real runtime (build/lib/scry/libscry_rt.a, `make runtime`) and run
// too. A missing clang-N, opt-N or plugin skips the test, or fails it in strict mode (`make
// test`; internal/testenv).
package llvm_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
)

var versions = []string{"14", "16"}

var kindNames = map[string]int{
	"load": 1, "store": 2, "nt-store": 3, "range": 4, "flush": 5, "fence": 6, "rmw": 7,
	"libcall": 8, "call": 9, "branch": 10, "inlined": 11,
}

var buildOnce sync.Once
var buildErr error
var buildOut []byte

// plugin returns the plugin for clang-v, building the plugins once with `make pass`; it skips
// the test (fails it, strictly: internal/testenv) when clang-v is not installed or its plugin
// was not built (LLVM's development headers missing).
func plugin(t *testing.T, v string) string {
	t.Helper()
	testenv.Tool(t, "clang-"+v)
	buildOnce.Do(func() {
		buildOut, buildErr = exec.Command("make", "-C", testenv.Root(), "pass", "BUILD="+testenv.BuildDir()).CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("make pass: %v\n%s", buildErr, buildOut)
	}
	return testenv.Built(t, filepath.Join("lib", "scry", "llvm-"+v, "scry-pass.so"))
}

// site is one entry of a module's site table as found in the IR.
type site struct {
	kind, line, col        int
	access                 trace.SiteAccess // the bits above the kind's byte (scry_abi.h)
	function, file, callee string
	inlinedAt              int // 1 + index of the inlined-call site, 0 none
}

var (
	strDefRE  = regexp.MustCompile(`(?m)^@(\.scry\.str(?:\.\d+)?) = .*constant \[\d+ x i8\] (?:c"(.*)\\00"|zeroinitializer)`)
	tableRE   = regexp.MustCompile(`(?m)^@__scry_sites = .*$`)
	elemRE    = regexp.MustCompile(`i32 (\d+), i32 (\d+), i32 (\d+), i32 (\d+), ([^}]*)\}`)
	strRefRE  = regexp.MustCompile(`@\.scry\.str(?:\.\d+)?\b`)
	hexEscape = regexp.MustCompile(`\\([0-9A-Fa-f]{2})`)
)

// parseSites reads the site table of an instrumented module's textual IR.
func parseSites(t *testing.T, ir string) []site {
	strs := map[string]string{}
	for _, m := range strDefRE.FindAllStringSubmatch(ir, -1) {
		strs[m[1]] = hexEscape.ReplaceAllStringFunc(m[2], func(s string) string {
			b, _ := strconv.ParseUint(s[1:], 16, 8)
			return string(rune(b))
		})
	}
	table := tableRE.FindString(ir)
	if table == "" {
		t.Fatal("no @__scry_sites in the IR")
	}
	var sites []site
	for _, m := range elemRE.FindAllStringSubmatch(table, -1) {
		refs := strRefRE.FindAllString(m[5], -1)
		if len(refs) != 3 {
			t.Fatalf("site %q: want 3 string references", m[0])
		}
		k, _ := strconv.Atoi(m[1])
		l, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		at, _ := strconv.Atoi(m[4])
		sites = append(sites, site{k & 0xff, l, c, trace.SiteAccess(k >> 8), strs[refs[0][1:]], strs[refs[1][1:]], strs[refs[2][1:]], at})
	}
	return sites
}

type want struct {
	line   int
	kind   int
	callee string // "" = any
	none   bool   // no site at all at the line
	not    bool   // no site of this kind (and callee) at the line
}

// parseWants reads the `// want:` and `// want-none` comments of a test source.
func parseWants(t *testing.T, path string) []want {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ws []want
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.Contains(text, "// want-none") {
			ws = append(ws, want{line: line, none: true})
			continue
		}
		i := strings.Index(text, "// want")
		if i < 0 {
			continue
		}
		not := false
		for _, w := range strings.Fields(text[i+len("// "):]) {
			switch w {
			case "want:":
				not = false
				continue
			case "want-not:":
				not = true
				continue
			}
			name, callee, _ := strings.Cut(w, "=")
			k, ok := kindNames[name]
			if !ok {
				t.Fatalf("%s:%d: unknown site kind %q", path, line, name)
			}
			ws = append(ws, want{line: line, kind: k, callee: callee, not: not})
		}
	}
	return ws
}

// cases: the test programs and, per file, patterns the instrumented IR must (or must not) match
// and, when set, the mem intrinsics its __scry_memop calls report, in IR order (memOps).
var cases = []struct {
	file    string
	must    []string
	mustNot []string
	memOps  []string
}{
	{file: "flush.c", must: []string{
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 1\)`,
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 2\)`,
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 3\)`,
		`call void @__scry_fence\(i32 %[\w.]+, i32 1\)`,
		`call void @__scry_fence\(i32 %[\w.]+, i32 2\)`,
		`call void @__scry_nt_store\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8\)`,
		`call void @__scry_nt_store\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 4\)`,
		`call void @__scry_rmw\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8\)`,
		`load i64, (ptr|i64\*) @__scry_pm_lo`,
		`@llvm.global_ctors = appending global .*@__scry_module_ctor`,
		`call i32 @__scry_register_module_deps\(`,
	}, memOps: []string{"memcpy", "memmove", "memset"}},
	{file: "stack.c", must: []string{
		`call void @__scry_load\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 24\)`,
	}},
	{file: "asm.c", must: []string{
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 1\)`,
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 2\)`,
		`call void @__scry_flush\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i32 3\)`,
		`call void @__scry_fence\(i32 %[\w.]+, i32 1\)`,
		`call void @__scry_fence\(i32 %[\w.]+, i32 2\)`,
		`call void @__scry_rmw\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8\)`,
	}},
	{file: "pmdk.c", must: []string{
		`call i32 @__scry_enter\(\)`,
		`call void @__scry_call\(i32 %[\w.]+, i32 %[\w.]+\)`,
		`call void @__scry_ret\(i32 %[\w.]+\)`,
		// PMEMoid result flattened into two i64, then the arguments.
		`call void @__scry_post_pmemobj_root\(i32 %[\w.]+, i64 %[\w.]+, i64 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 72\)`,
		`call void @__scry_pre_pmemobj_root\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 72\)`,
		// PMEMoid argument: as clang passes it, two i64.
		`call void @__scry_pre_pmemobj_tx_add_range\(i32 %[\w.]+, i64 %[\w.]+, i64 %[\w.]+, i64 0, i64 72\)`,
		`call void @__scry_post_pmemobj_tx_add_range\(i32 %[\w.]+, i32 %[\w.]+, i64 %[\w.]+, i64 %[\w.]+, i64 0, i64 72\)`,
		`call void @__scry_pre_pmem_persist\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8\)`,
		`call void @__scry_post_pmem_persist\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8\)`,
		// variadic: fixed parameters only
		`call void @__scry_post_snprintf\(i32 %[\w.]+, i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 8, (ptr|i8\*) .+\)`,
		`call i32 @__scry_ext_pre\(i32 %[\w.]+, (ptr|i8\*) (@ext_fill|bitcast \(void \(i8\*, i32\)\* @ext_fill to i8\*\)), (ptr|i8\*) %[\w.]+, (ptr|i8\*) null, (ptr|i8\*) null, (ptr|i8\*) null\)`,
		`call void @__scry_ext_post\(i32 %[\w.]+, i32 %[\w.]+\)`,
		// a printf-like function also passes its format and variadic arguments on
		`@__scry_format_loads\(i32 %[\w.]+, (ptr|i8\*) .+\)`,
		// a libc read: a hook, never an external call
		`call void @__scry_post_strlen\(i32 %[\w.]+, i64 %[\w.]+, (ptr|i8\*) %[\w.]+\)`,
	}, mustNot: []string{`__scry_ext_pre\(.*@strlen`}},
	{file: "valgrind.c", must: []string{
		`%[\w.]+ = call i64 @__scry_client_request\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 0\)`,
		`call i64 @__scry_client_request\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 7\)`,
	}, mustNot: []string{`xchgq %rbx`, `@__scry_fence\(`}},
	{file: "valgrind.cpp", must: []string{
		`call i64 @__scry_client_request\(i32 %[\w.]+, (ptr|i8\*) %[\w.]+, i64 0\)`,
	}, mustNot: []string{`xchgq %rbx`}},
	{file: "cxx.cpp", must: []string{
		`call void @__scry_post_pmem_persist\(`,
		`call void @__scry_ret\(`,
	}},
}

func compileIR(t *testing.T, v, plug, src, opt, out string) string {
	t.Helper()
	cc := "clang-" + v
	if strings.HasSuffix(src, ".cpp") {
		cc = "clang++-" + v
	}
	args := []string{"-g", opt, "-mclflushopt", "-mclwb", "-fpass-plugin=" + plug, "-S", "-emit-llvm", "-o", out, src}
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
	}
	// clang does not verify the module after the plugin ran; the verifier pass does.
	if b, err := exec.Command(testenv.Tool(t, "opt-"+v), "-passes=verify", "-disable-output", out).CombinedOutput(); err != nil {
		t.Fatalf("verify %s: %v\n%s", out, err, b)
	}
	ir, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(ir)
}

func TestSites(t *testing.T) {
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O2"} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("llvm%s%s/%s", v, opt, c.file), func(t *testing.T) {
					plug := plugin(t, v)
					src, _ := filepath.Abs(filepath.Join("testdata", c.file))
					ir := compileIR(t, v, plug, src, opt, filepath.Join(t.TempDir(), "out.ll"))
					sites := parseSites(t, ir)
					for _, w := range parseWants(t, src) {
						found := false
						for _, s := range sites {
							if s.line != w.line {
								continue
							}
							if w.none {
								t.Errorf("line %d: unexpected site %+v", w.line, s)
								continue
							}
							if w.not {
								if s.kind == w.kind && (w.callee == "" || s.callee == w.callee) {
									t.Errorf("line %d: unexpected site %+v", w.line, s)
								}
								continue
							}
							if s.kind == w.kind && (w.callee == "" || s.callee == w.callee) {
								found = true
								if s.function == "" || !strings.HasSuffix(s.file, "/"+c.file) || s.col == 0 {
									t.Errorf("line %d: bad site %+v", w.line, s)
								}
							}
						}
						if !found && !w.none && !w.not {
							t.Errorf("line %d: no site of kind %d callee %q; sites:\n%v", w.line, w.kind, w.callee, sites)
						}
					}
					for _, p := range c.must {
						if !regexp.MustCompile(p).MatchString(ir) {
							t.Errorf("IR does not match %s", p)
						}
					}
					for _, p := range c.mustNot {
						if regexp.MustCompile(p).MatchString(ir) {
							t.Errorf("IR matches %s", p)
						}
					}
					if c.memOps != nil {
						if got := memOps(ir); !slices.Equal(got, c.memOps) {
							t.Errorf("__scry_memop calls report %q, want %q", got, c.memOps)
						}
					}
				})
			}
		}
	}
}

// memRE matches, in IR order, a call of a mem intrinsic (1 memcpy, memmove or memset; 2 its
// destination, 3 its source, empty for memset; 4 its length) or of __scry_memop with exactly
// four arguments (5 destination, 6 source or null, 7 length).
var memRE = regexp.MustCompile(`call void @(?:llvm\.(memcpy|memmove|memset)\.[\w.]+\((?:ptr|i8\*)[^%,]* (%[\w.]+), ` +
	`(?:(?:ptr|i8\*)[^%,]* (%[\w.]+)|i8 [^,]+), i64 ([^,]+), i1 |` +
	`__scry_memop\(i32 %[\w.]+, (?:ptr|i8\*) (%[\w.]+), (?:ptr|i8\*) (%[\w.]+|null), i64 ([^,)]+)\))`)

// memOps returns, for each __scry_memop call of an instrumented module in IR order, the mem
// intrinsic it reports: the nearest one before it, when the call passes that intrinsic's
// destination, source (null for memset) and length; "?" when it passes other operands or
// follows no intrinsic. The callback does not say which intrinsic it was: its operands tell
// them apart.
func memOps(ir string) []string {
	var ops []string
	var intr []string // the last intrinsic's match
	for _, m := range memRE.FindAllStringSubmatch(ir, -1) {
		if m[1] != "" {
			intr = m
			continue
		}
		op := "?"
		if intr != nil {
			src := intr[3]
			if intr[1] == "memset" {
				src = "null"
			}
			if m[5] == intr[2] && m[6] == src && m[7] == intr[4] {
				op = intr[1]
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// emitIR compiles with clang-v, the pass plugged in, and the arguments args (flags and the
// source) to LLVM IR, and returns its text.
func emitIR(t *testing.T, v string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.ll")
	args = append([]string{"-fpass-plugin=" + plugin(t, v), "-S", "-emit-llvm", "-o", out}, args...)
	if b, err := exec.Command("clang-"+v, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang-%s %s: %v\n%s", v, strings.Join(args, " "), err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGetlineHooked: every call of getline, getdelim and __getdelim (glibc's inline getline when
// optimizing) has its post hook, in C and in C++, unoptimized and optimized: each line read is an
// operation boundary.
func TestGetlineHooked(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join("testdata", "getline.c"))
	for _, v := range versions {
		for _, lang := range []string{"c", "c++"} {
			for _, opt := range []string{"-O0", "-O1", "-O2"} {
				t.Run(fmt.Sprintf("llvm%s/%s%s", v, lang, opt), func(t *testing.T) {
					ir, hooked := emitIR(t, v, "-x", lang, "-g", opt, src), 0
					for _, f := range []string{"getline", "getdelim", "__getdelim"} {
						calls := strings.Count(ir, "call i64 @"+f+"(")
						posts := strings.Count(ir, "call void @__scry_post_"+f+"(")
						if calls != posts {
							t.Errorf("%d calls of %s, %d post hooks", calls, f, posts)
						}
						hooked += posts
					}
					if hooked < 2 {
						t.Errorf("%d hooked reads, want at least the two of the source", hooked)
					}
				})
			}
		}
	}
}

// TestOutputHooked: every call of putchar, fputc, putc and fwrite (what a compiler makes of a
// printf or fprintf of a constant string) has its post hook, unoptimized and optimized, so that
// what it prints is recorded: an operation whose output was left out of the trace would make
// the minimiser's count of output lines wrong (pipeline, opDeps.revealing).
func TestOutputHooked(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join("testdata", "putout.c"))
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O1"} {
			t.Run(fmt.Sprintf("llvm%s%s", v, opt), func(t *testing.T) {
				ir, hooked := emitIR(t, v, "-g", opt, src), 0
				for _, f := range []string{"putchar", "fputc", "putc", "fwrite", "fprintf", "printf"} {
					calls := regexp.MustCompile(`call (i32|i64) (\([^)]*\) )?@`+f+`\(`).FindAllStringIndex(ir, -1)
					posts := strings.Count(ir, "call void @__scry_post_"+f+"(")
					if len(calls) != posts {
						t.Errorf("%d calls of %s, %d post hooks", len(calls), f, posts)
					}
					hooked += posts
				}
				if hooked < 4 {
					t.Errorf("%d hooked output calls, want at least the four of the source", hooked)
				}
			})
		}
	}
}

// TestFunctionNames checks demangled C++ names, and that no __scry_ function is instrumented.
func TestFunctionNames(t *testing.T) {
	for _, v := range versions {
		t.Run("llvm"+v, func(t *testing.T) {
			plug := plugin(t, v)
			src, _ := filepath.Abs("testdata/cxx.cpp")
			ir := compileIR(t, v, plug, src, "-O0", filepath.Join(t.TempDir(), "out.ll"))
			names := map[string]bool{}
			for _, s := range parseSites(t, ir) {
				names[s.function] = true
			}
			for _, n := range []string{"kv::Node::set(long, long)", "kv::update(kv::Node*, long)"} {
				if !names[n] {
					t.Errorf("no site in function %q; have %v", n, names)
				}
			}
			if regexp.MustCompile(`define internal void @__scry_module_ctor\(\) \{\n[^}]*__scry_enter`).MatchString(ir) {
				t.Error("the module constructor is instrumented")
			}
		})
	}
}

// TestInlinedChains: at -O2 the flushes and fences of a persistence helper inlined at two
// callers, themselves inlined into main, carry inlined-at chains naming the helper's call line in
// each caller and the caller's call line in main (kind "inlined" sites, callee the inlined
// function); at -O0 nothing is inlined.
func TestInlinedChains(t *testing.T) {
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				plug := plugin(t, v)
				src, _ := filepath.Abs("testdata/inline.c")
				sites := parseSites(t, compileIR(t, v, plug, src, opt, filepath.Join(t.TempDir(), "out.ll")))
				var chains []string
				for _, s := range sites {
					if s.kind != kindNames["flush"] && s.kind != kindNames["fence"] {
						continue
					}
					chain := fmt.Sprintf("%s:%d", s.function, s.line)
					for at, n := s.inlinedAt, 0; at != 0 && n < 10; n++ {
						in := sites[at-1]
						if in.kind != kindNames["inlined"] {
							t.Fatalf("inlined-at of %+v names a site of kind %d", s, in.kind)
						}
						chain += fmt.Sprintf(" < %s:%d->%s", in.function, in.line, in.callee)
						at = in.inlinedAt
					}
					chains = append(chains, chain)
				}
				want := []string{"persist:7", "persist:7"} // the flush and the fence, once
				if opt == "-O2" {
					want = []string{
						"persist:7 < set_a:10->persist < main:15->set_a", "persist:7 < set_a:10->persist < main:15->set_a",
						"persist:7 < set_b:11->persist < main:16->set_b", "persist:7 < set_b:11->persist < main:16->set_b",
					}
				}
				if !slices.Equal(chains, want) {
					t.Errorf("flush and fence chains\n got %q\nwant %q", chains, want)
				}

				// -mllvm -scry-stats prints every counter, the inlined-call sites among them,
				// with the number of inlined sites the table has.
				inlined := 0
				for _, s := range sites {
					if s.kind == kindNames["inlined"] {
						inlined++
					}
				}
				args := []string{"-g", opt, "-fplugin=" + plug, "-fpass-plugin=" + plug, "-mllvm", "-scry-stats",
					"-S", "-emit-llvm", "-o", filepath.Join(t.TempDir(), "stats.ll"), src}
				b, err := exec.Command("clang-"+v, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("clang-%s %s: %v\n%s", v, strings.Join(args, " "), err, b)
				}
				if n := len(regexp.MustCompile(`(?m)^\s*\d+ scry - `).FindAllIndex(b, -1)); n != 17 {
					t.Errorf("-scry-stats printed %d counters, want all 17:\n%s", n, b)
				}
				re := regexp.MustCompile(`(?m)^\s*` + strconv.Itoa(inlined) + ` scry - inlined-call sites `)
				if !re.Match(b) {
					t.Errorf("-scry-stats does not count the %d inlined-call sites:\n%s", inlined, b)
				}
			})
		}
	}
}

// TestMergedLocation: the store sunk out of both arms of merged.c's if has a debug location of
// line 0 at -O1 (LLVM 14 and 16); its site is given the line of the if's block (10), the other
// store keeps its own line (15). At -O2 LLVM 14 keeps one arm's line (13) instead; no store site
// is ever left at line 0.
func TestMergedLocation(t *testing.T) {
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O1", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				plug := plugin(t, v)
				src, _ := filepath.Abs("testdata/merged.c")
				sites := parseSites(t, compileIR(t, v, plug, src, opt, filepath.Join(t.TempDir(), "out.ll")))
				var lines []int
				for _, s := range sites {
					if s.kind == kindNames["store"] {
						lines = append(lines, s.line)
					}
				}
				slices.Sort(lines)
				want := []int{11, 13, 15} // -O0: one store per arm
				if opt != "-O0" {
					want = []int{10, 15}
				}
				if opt == "-O2" && slices.Equal(lines, []int{13, 15}) {
					want = lines // the merge kept the else arm's line
				}
				if !slices.Equal(lines, want) {
					t.Errorf("store sites at lines %v, want %v", lines, want)
				}
			})
		}
	}
}

// TestAsmOrder checks that an asm string with several instructions gets its callbacks in textual
// order: "clflush (%0); sfence" is a flush, then a fence.
func TestAsmOrder(t *testing.T) {
	for _, v := range versions {
		t.Run("llvm"+v, func(t *testing.T) {
			plug := plugin(t, v)
			src, _ := filepath.Abs("testdata/asm.c")
			ir := compileIR(t, v, plug, src, "-O2", filepath.Join(t.TempDir(), "out.ll"))
			re := regexp.MustCompile(`(?s)call void asm sideeffect "clflush \(\$0\); sfence".*?\n\s*%[\w.]+ = add i32 [^\n]*\n\s*call void @__scry_flush\([^\n]*i32 1\)[^\n]*\n\s*%[\w.]+ = add i32 [^\n]*\n\s*call void @__scry_fence\(i32 %[\w.]+, i32 1\)`)
			if !re.MatchString(ir) {
				t.Error("clflush; sfence asm: want __scry_flush(...,1) then __scry_fence(...,1) right after")
			}
		})
	}
}

// TestArm builds testdata/arm.c for aarch64: each DC clean to memory is a __scry_flush of its
// kind (4 dc-cvap, 5 dc-cvadp, 6 dc-cvac, 7 dc-civac), DSB a __scry_fence of kind 4 and DMB of
// kind 5, load-only barriers and DC CVAU nothing, C11 fences their DMB but an acquire one.
func TestArm(t *testing.T) {
	for _, v := range versions {
		t.Run("llvm"+v, func(t *testing.T) {
			plug := plugin(t, v)
			src, _ := filepath.Abs("testdata/arm.c")
			out := filepath.Join(t.TempDir(), "out.ll")
			args := []string{"--target=aarch64-linux-gnu", "-march=armv8.5-a", "-g", "-O1", "-fpass-plugin=" + plug, "-S", "-emit-llvm", "-o", out, src}
			if b, err := exec.Command("clang-"+v, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang-%s %s: %v\n%s", v, strings.Join(args, " "), err, b)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range regexp.MustCompile(`call void @__scry_(flush|fence)\(.*i32 (\d+)\)`).FindAllStringSubmatch(string(b), -1) {
				got = append(got, m[1]+m[2])
			}
			want := []string{"flush4", "fence4", "flush5", "fence5", "flush6", "flush7", "fence4", "fence5"}
			if !slices.Equal(got, want) {
				t.Errorf("instrumented %v, want %v", got, want)
			}
			for _, re := range []string{
				`call void @__scry_pre_pmemobj_tx_add_range\(i32 %[\w.]+, \[2 x i64\] %[\w.]+, i64 0, i64 8\)`,
				`call void @__scry_post_pmemobj_tx_alloc\(i32 %[\w.]+, \[2 x i64\] %[\w.]+, i64 64, i64 1\)`,
			} {
				if !regexp.MustCompile(re).Match(b) {
					t.Errorf("no %s", re)
				}
			}
		})
	}
}

// runProgram compiles run_main.c instrumented at opt, links it with the given objects or
// libraries and runs it; it returns the output.
func runProgram(t *testing.T, v, plug, opt string, env, progArgs []string, link ...string) string {
	t.Helper()
	dir := t.TempDir()
	src, _ := filepath.Abs("testdata/run_main.c")
	obj := filepath.Join(dir, "main.o")
	if b, err := exec.Command("clang-"+v, "-g", opt, "-mclwb", "-fpass-plugin="+plug, "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, b)
	}
	exe := filepath.Join(dir, "run")
	args := append([]string{"-o", exe, obj}, link...)
	if b, err := exec.Command("clang-"+v, args...).CombinedOutput(); err != nil {
		t.Fatalf("link %v: %v\n%s", args, err, b)
	}
	cmd := exec.Command(exe, progArgs...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return string(out)
}

// TestRunWithStubs links instrumented code at -O0 and -O3 with stub callbacks that check every
// site id against the site table, and runs it.
func TestRunWithStubs(t *testing.T) {
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O3"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				plug := plugin(t, v)
				stubs, _ := filepath.Abs("testdata/stubs.c")
				obj := filepath.Join(t.TempDir(), "stubs.o")
				inc := filepath.Join(testenv.Root(), "native", "include")
				if b, err := exec.Command("clang-"+v, "-O1", "-I"+inc, "-c", "-o", obj, stubs).CombinedOutput(); err != nil {
					t.Fatalf("stubs: %v\n%s", err, b)
				}
				out := runProgram(t, v, plug, opt, nil, nil, obj)
				// The stubs count what the program did: 4 updates of 2 stores each, 4 loads of r[i].b
				// and the copy of r[1] into a local (a load, not a memop), 5 flushes (4 clwb + 1
				// clflush), 4 sfences, 1 nt store, 1 RMW, 1 memcpy within PM, 6 hooked calls (mmap + 4
				// strncpy + printf, whose variadic argument reaches __scry_format_loads), depth back to
				// 0, no bad site.
				want := "load=5 store=8 nt=1 rmw=1 memop=1 flush=5 fence=4"
				if !strings.Contains(out, "sum=20") || !strings.Contains(out, want) ||
					!strings.Contains(out, "hook=6 depth=0 errors=0") {
					t.Errorf("output:\n%s\nwant %q, hook=6 depth=0 errors=0", out, want)
				}
			})
		}
	}
}

// TestRunWithRuntime links with the real runtime (build/lib/scry/libscry_rt.a, brought up to
// date with `make runtime`), runs the program on a pool file that SCRY_PM_GLOBS makes PM, and
// reads the trace back: the stores, flushes and fences of update() and persist() must be there
// with their sites.
func TestRunWithRuntime(t *testing.T) {
	rt := runtimeArchive(t)
	copyLine := sourceLine(t, "testdata/run_main.c", "copy-into-local")
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				plug := plugin(t, v)
				dir := t.TempDir()
				tr := filepath.Join(dir, "run.trace")
				out := runProgram(t, v, plug, opt, []string{"SCRY_TRACE=" + tr, "SCRY_PM_GLOBS=*.pool"},
					[]string{filepath.Join(dir, "x.pool")},
					"-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-lpthread", "-ldl")
				if !strings.Contains(out, "sum=20") {
					t.Errorf("output:\n%s", out)
				}
				r, err := trace.Open(tr)
				if err != nil {
					t.Fatalf("open trace: %v", err)
				}
				defer r.Close()
				counts := map[trace.Kind]int{}
				updateStores, copyLoads, copyStores := 0, 0, 0
				for {
					ev, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("read trace: %v", err)
					}
					counts[ev.Kind]++
					s, ok := r.Site(ev.Site)
					if !ok || !strings.HasSuffix(s.File, "run_main.c") {
						continue
					}
					switch {
					case ev.Kind == trace.KindStore && s.Function == "update":
						updateStores++
					case ev.Kind == trace.KindLoad && int(s.Line) == copyLine && s.Kind == trace.SiteLoad && ev.Size == 64:
						copyLoads++
					case ev.Kind != trace.KindLoad && int(s.Line) == copyLine:
						copyStores++
					}
				}
				t.Logf("events: %v", counts)
				if updateStores < 8 || counts[trace.KindFlush] < 5 || counts[trace.KindFence] < 4 || counts[trace.KindNTStore] < 1 {
					t.Errorf("trace: %d stores in update (want >= 8), counts %v", updateStores, counts)
				}
				// The copy of r[1] (64 bytes) into a local: one load at a load site, nothing else.
				if copyLoads != 1 || copyStores != 0 {
					t.Errorf("trace: the copy at run_main.c:%d gave %d loads of 64 bytes at a load site (want 1) and %d other events (want 0)",
						copyLine, copyLoads, copyStores)
				}
			})
		}
	}
}

// sourceLine: the number of the only line of file holding text.
func sourceLine(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			if n != 0 {
				t.Fatalf("%s: %q on lines %d and %d", file, text, n, i+1)
			}
			n = i + 1
		}
	}
	if n == 0 {
		t.Fatalf("%s: no line holds %q", file, text)
	}
	return n
}

// TestHookTypeMismatch: calls of hooked library functions declared with another type are left
// unhooked (never given hooks that would read the wrong arguments), warned about once per
// function, and counted by the statistics that -mllvm -scry-stats prints.
func TestHookTypeMismatch(t *testing.T) {
	for _, v := range versions {
		t.Run("llvm"+v, func(t *testing.T) {
			plug := plugin(t, v)
			src, _ := filepath.Abs(filepath.Join("testdata", "mismatch.c"))
			out := filepath.Join(t.TempDir(), "out.ll")
			args := []string{"-g", "-O1", "-fplugin=" + plug, "-fpass-plugin=" + plug, "-mllvm", "-scry-stats",
				"-S", "-emit-llvm", "-o", out, src}
			b, err := exec.Command("clang-"+v, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("clang-%s %s: %v\n%s", v, strings.Join(args, " "), err, b)
			}
			stderr := string(b)
			irb, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			ir := string(irb)
			for _, re := range []string{`call void @__scry_pre_pmem_flush\(`, `call void @__scry_post_pmem_flush\(`} {
				if !regexp.MustCompile(re).MatchString(ir) {
					t.Errorf("IR does not match %s", re)
				}
			}
			for _, re := range []string{`__scry_pre_pmem_persist`, `__scry_post_pmem_persist`, `__scry_pre_pmem_drain`, `__scry_post_pmem_drain`} {
				if strings.Contains(ir, re) {
					t.Errorf("IR calls %s: a mistyped declaration was hooked", re)
				}
			}
			for _, want := range []string{
				"'pmem_persist' is called with a type other than the library's",
				"'pmem_drain' is called with a type other than the library's",
				"scry: instrumentation statistics",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("clang's output lacks %q:\n%s", want, stderr)
				}
			}
			stats := map[string]string{
				"library calls not hooked: the callee's type is not scry_hooks.def's": "2",
				"library calls hooked (scry_hooks.def)":                               "1",
			}
			for desc, n := range stats {
				if !regexp.MustCompile(`(?m)^\s*` + n + ` scry - ` + regexp.QuoteMeta(desc) + `$`).MatchString(stderr) {
					t.Errorf("statistics lack %q = %s:\n%s", desc, n, stderr)
				}
			}
			for _, w := range parseWants(t, src) {
				found := false
				for _, s := range parseSites(t, ir) {
					if s.line == w.line && s.kind == w.kind && (w.callee == "" || s.callee == w.callee) {
						found = true
					}
				}
				if !found {
					t.Errorf("line %d: no site of kind %d callee %q", w.line, w.kind, w.callee)
				}
			}
		})
	}
}

// TestAccess checks the access the pass gives the site of each marked line of testdata/access.c
// (plain, volatile, or atomic with its order; a seq_cst store is an rmw site): every site of the
// wanted kind at the line has the wanted access, and there is one.
func TestAccess(t *testing.T) {
	wants := []struct {
		mark   string
		kind   int
		access trace.SiteAccess
	}{
		{"plain-load", 1, trace.AccessPlain},
		{"plain-store", 2, trace.AccessPlain},
		{"volatile-load", 1, trace.AccessVolatile},
		{"volatile-store", 2, trace.AccessVolatile},
		{"relaxed-load", 1, trace.AccessRelaxed},
		{"acquire-load", 1, trace.AccessAcquire},
		{"consume-load", 1, trace.AccessAcquire},
		{"release-store", 2, trace.AccessRelease},
		{"relaxed-store", 2, trace.AccessRelaxed},
		{"seqcst-store", 7, trace.AccessSeqCst},
		{"seqcst-load", 1, trace.AccessSeqCst},
		{"acqrel-rmw", 7, trace.AccessAcqRel},
		{"release-cas", 7, trace.AccessRelease},
		{"relaxed-rmw", 7, trace.AccessRelaxed},
		{"seqcst-rmw", 7, trace.AccessSeqCst},
		{"out-store", 2, trace.AccessPlain},
	}
	src, _ := filepath.Abs(filepath.Join("testdata", "access.c"))
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lineOf := map[string]int{}
	for i, l := range strings.Split(string(text), "\n") {
		if _, c, ok := strings.Cut(l, "/* "); ok {
			lineOf[strings.TrimSuffix(c, " */")] = i + 1
		}
	}
	for _, v := range versions {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run("llvm"+v+opt, func(t *testing.T) {
				plug := plugin(t, v)
				sites := parseSites(t, compileIR(t, v, plug, src, opt, filepath.Join(t.TempDir(), "out.ll")))
				for _, w := range wants {
					line, ok := lineOf[w.mark]
					if !ok {
						t.Fatalf("no line marked %s", w.mark)
					}
					found := false
					for _, s := range sites {
						if s.line != line || s.kind != w.kind {
							continue
						}
						found = true
						if s.access != w.access {
							t.Errorf("%s (line %d): site %+v has access %v, want %v", w.mark, line, s, s.access, w.access)
						}
					}
					if !found {
						t.Errorf("%s (line %d): no site of kind %d; sites:\n%v", w.mark, line, w.kind, sites)
					}
				}
				// Sites that are no memory access keep access 0.
				for _, s := range sites {
					if (s.kind == 9 || s.kind == 8 || s.kind == 10) && s.access != trace.AccessUnknown {
						t.Errorf("site %+v: access %v, want unknown", s, s.access)
					}
				}
			})
		}
	}
}

// TestUnitSite: every module's table ends with one unit site naming its main source file and the
// root of its project: SCRY_PROJECT_ROOT when set, else the nearest directory under version
// control, else the outermost of the enclosing directories that hold a build file, else the
// source's own directory.
func TestUnitSite(t *testing.T) {
	const src = "int g;\nvoid f(int *p) { *p = 1; }\n"
	cases := []struct {
		name  string
		files []string // created empty (directories end in /)
		file  string   // the source, relative to the temporary directory
		env   string   // SCRY_PROJECT_ROOT, relative to the temporary directory
		root  string   // relative to the temporary directory
	}{
		{name: "git", files: []string{"proj/.git/", "proj/src/Makefile"}, file: "proj/src/a.c", root: "proj"},
		{name: "build files", files: []string{"proj/CMakeLists.txt", "proj/src/CMakeLists.txt"}, file: "proj/src/a.c", root: "proj"},
		{name: "source dir without one", files: []string{"proj/Makefile"}, file: "proj/src/a.c", root: "proj"},
		{name: "gap ends the run", files: []string{"top/Makefile", "top/mid/proj/Makefile"}, file: "top/mid/proj/a.c", root: "top/mid/proj"},
		{name: "nothing", file: "lone/a.c", root: "lone"},
		{name: "env", files: []string{"proj/.git/"}, file: "proj/src/a.c", env: "proj/src", root: "proj/src"},
	}
	for _, v := range versions {
		for _, c := range cases {
			t.Run("llvm"+v+"/"+c.name, func(t *testing.T) {
				plug := plugin(t, v)
				dir := t.TempDir()
				for _, f := range append(c.files, c.file) {
					p := filepath.Join(dir, f)
					if strings.HasSuffix(f, "/") {
						if err := os.MkdirAll(p, 0o755); err != nil {
							t.Fatal(err)
						}
						continue
					}
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					body := ""
					if f == c.file {
						body = src
					}
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				env := ""
				if c.env != "" {
					env = filepath.Join(dir, c.env)
				}
				t.Setenv("SCRY_PROJECT_ROOT", env)
				t.Setenv("HOME", "/nonexistent")
				ir := compileIR(t, v, plug, filepath.Join(dir, c.file), "-O0", filepath.Join(dir, "out.ll"))
				var units []site
				for _, s := range parseSites(t, ir) {
					if s.kind == int(trace.SiteUnit) {
						units = append(units, s)
					}
				}
				want := site{kind: int(trace.SiteUnit), file: filepath.Join(dir, c.file), callee: filepath.Join(dir, c.root)}
				if len(units) != 1 || units[0] != want {
					t.Errorf("unit sites %+v, want [%+v]", units, want)
				}
			})
		}
	}
}
