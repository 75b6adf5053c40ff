// Package examples_test checks scry against the example programs in this directory
// (docs/examples.md). Each examples/<name>/ holds either a twin, buggy.c (its expected findings
// marked on their lines with `// want "kind"` comments, read by internal/testenv as the other
// tests that build programs read theirs) and fixed.c (its corrected twin, on which
// scry must report nothing), or a correct-only program, correct.c alone (a correct program that a
// looser analysis would flag: scry must report nothing). A finding's class is its kind's (or, for
// an inferred property's breach in a crash-only example that expects a crash finding,
// correctness) unless the comment gives it: `// want "kind:unconfirmed"` expects a warning, the
// only finding a fixed or correct-only program may have (a claim the crashes did not confirm).
// Header comments tell how a program is run:
//
//	// scry: args {pool}            the command-line arguments; {pool} is replaced by a fresh pool path
//	// scry: pm *.pool              a --pm glob, resolved in the pool's directory
//	// scry: workload workload.txt  a crash-only example: the file (in the example's directory) is
//	                                the workload, one operation per line on standard input, and
//	                                scry runs in crash mode (it substitutes {pool} itself)
//	// scry: output-filter REGEX    with workload: passed as --output-filter REGEX
//	// scry: client CMD ARGS...     with workload: the program is a server driven by the client
//	                                CMD (a file of the example's directory, run by bash) with
//	                                ARGS ({port} among them): passed as --client (docs/servers.md);
//	                                the program's args have {port} too
//	// scry: strategy S[,S...]      with workload: passed as --strategy (crash-state strategies)
//	// scry: persistency P[,P...]   passed as --persistency (persistency profiles: adr, eadr, all)
//	// scry: concurrent-operations  with workload: the trace must have two operations of
//	                                different threads in flight at once
//	// scry: schedule-witness       with workload: the program with want comments has its
//	                                inter-thread-inconsistency findings shown first under a
//	                                schedule witness the report lists ("witnesses"), at
//	                                the witness's dependent store; the other twin has none
//	// scry: op-markers B E         calls of B and E mark the operations (--op-begin B --op-end E)
//	// scry: opt -O0 -O2            the optimisation levels to build and check it at, each a test of
//	                                its own named with the level (default -O0): findings at the
//	                                same lines whether helpers are inlined or called
//	// scry: exact-properties R...  `scry infer` must list no property of rules R... (MPB, MPA,
//	                                RO1, RO2, RO3, RA1) other than those marked (below)
//	// scry: checker DIR            the program is checked by a custom checker (package
//	                                cli.Main): the Go main package in the subdirectory
//	                                DIR of the example, built with `go build`, runs `check` in
//	                                place of scry; want comments may name the kinds it adds
//
// An example directory holds no subdirectory but the checker DIR its programs name (both twins
// name the same one): examples/custom-oracle has buggy.c, fixed.c and oracle/, a main package
// calling cli.Main with a custom oracle.
//
// examples/include is no example: it holds example.h, which the programs include for what their
// main functions share that has nothing to do with persistence (checking the command line,
// opening the pool); every build adds it to the include path (cflags).
//
// A `// profiles P[,P...]` clause on a line asserts that every finding reported on that line
// occurs under exactly those persistency profiles (its JSON "profiles"), e.g. `// want
// "unpersisted-store"; profiles adr` for a missing flush, which eADR does not need.
//
// A `// related ROLE` comment on a line asserts that some finding names that line as a related
// location of that role (e.g. `related recovery-load` on the load a persistency race's
// re-execution reads the torn bytes with).
//
// Inferred properties are asserted by source line: `// property RULE ROLE "TAG"` on a store's
// line, where RULE is one rule or several separated by commas. For an ordering rule (MPB, RO1,
// RO2, RO3) ROLE is before or after: for every line marked before and every line marked after
// with the same rule and tag, `scry infer --format json --rules both TRACE` must list a property
// of that rule whose before side is on the first line and whose after side is on the second. For
// an atomicity rule (MPA, RA1) ROLE is member: a property of that rule must have a member side on
// every line so marked (one line is enough when the property relates instances of one store, as
// WITCHER's AP(token[j], token[k])). Clauses on one line are separated by semicolons, e.g.
// `// want "mpb-violation"; property MPB after "slot"`.
//
// TestExamples builds each program with `build/bin/scry cc` (or $SCRY_BIN), runs `scry check --format json`
// (the example's custom checker's `check`, with a checker directive) and compares the (file, line,
// kind) set of the findings with the want comments, then runs
// `scry infer` on the trace check kept and compares its properties with the property comments. It
// is skipped when build/bin/scry is missing or cannot compile (run `make` first), or when a
// custom checker cannot be built (no go command), and fails instead in strict mode
// (internal/testenv: SCRY_REQUIRE_BUILD, SCRY_EXAMPLES_STRICT or CI, as `make test` sets). Every
// part of scry an example's directives use (crash mode, strategies, inferred kinds, `scry infer`,
// concurrent operations in the trace) is used as it is, never probed for first: what scry lacks
// is a failure. With SCRY_EXAMPLES_KEEP=DIR, every report is also copied to
// DIR/<example>_<variant>.json (to compare the findings of two builds of scry).
package examples_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
)

// Kinds are the stable finding names of scry's trace oracles, by class.
var kinds = map[string]string{
	"unpersisted-store":       "correctness",
	"overwritten-unpersisted": "correctness",
	"tx-unlogged-store":       "correctness",
	"redundant-flush":         "performance",
	"redundant-fence":         "performance",
	"redundant-tx-add":        "performance",
	// A lock word in PM (pm/oracle's pm-lock-word): unconfirmed until a crash that leaves it
	// held makes the program fail.
	"pm-lock-word": "unconfirmed",
	// Crash-image findings (output equivalence on crash images), located at the crash point.
	"ordering-violation":   "correctness",
	"atomicity-violation":  "correctness",
	"durability-violation": "correctness",
	// A plain store persisted in part by a crash (the torn strategy), located at the store.
	"persistency-race": "correctness",
	// A durability-violation whose lost bytes recovery read and acted on, located at the
	// recovery's load.
	"cross-failure-read": "correctness",
	// Violations of properties inferred from the trace (must-persist-before, must-persist-
	// atomically; dissertation ch. 5), located at a store of the property: unconfirmed until a
	// crash image confirms them.
	"mpb-violation": "unconfirmed",
	"mpa-violation": "unconfirmed",
	// A thread's store derived from another thread's store that is not durable yet (PMRace's
	// inter-thread inconsistency), located at the derived store: unconfirmed until a crash image
	// that keeps it and loses the other confirms it.
	"inter-thread-inconsistency": "unconfirmed",
}

// The layouts of an example directory: a twin (buggy.c and fixed.c, or buggy.cpp and fixed.cpp
// for C++) or a correct-only program (correct.c alone), as file names in the directory.
var (
	twin        = []string{"buggy.c", "fixed.c"}
	twinCXX     = []string{"buggy.cpp", "fixed.cpp"}
	correctOnly = []string{"correct.c"}
)

// isCXX reports whether the program at path is C++ (built with `scry c++`, clang++).
func isCXX(path string) bool { return filepath.Ext(path) == ".cpp" }

// isBuggy reports whether the program at path is a twin's buggy program.
func isBuggy(path string) bool {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) == "buggy"
}

// driver returns the scry subcommand that builds the program at path: cc, or c++ for C++.
func driver(path string) string {
	if isCXX(path) {
		return "c++"
	}
	return "cc"
}

// ruleKinds maps the inference rules a property comment may name to their kind of property.
var ruleKinds = map[string]string{
	"MPB": "ordering", "RO1": "ordering", "RO2": "ordering", "RO3": "ordering",
	"MPA": "atomicity", "RA1": "atomicity",
}

// relatedWant is a `related ROLE` clause: some finding names the clause's line with that role.
type relatedWant struct {
	line int
	role string
}

// poolName is the file name {pool} stands for, in a fresh directory per run.
const poolName = "test.pool"

// program is one example source file and what the harness needs to run and judge it.
type program struct {
	name string // "<example>/<variant>", e.g. "missing-fence/buggy.c" (with " -O2" at a level but -O0)
	opt  string // the optimisation level it is built at (the opt directive; -O0)
	// target is the clang target triple of a program built for another architecture (the target
	// directive: aarch64-linux-gnu, run under qemu-aarch64), "" for the host's.
	target string
	path   string   // absolute path of the source
	args   []string // arguments, with {pool} still unreplaced
	pm     []string // --pm globs, relative to the pool's directory
	// workload is the absolute path of the workload file of a crash-only example ("" for the
	// others); outputFilter its --output-filter regular expression, if any.
	workload     string
	outputFilter string
	// client is the --client command of a server example (its program made absolute), "" none.
	client      string
	strategies  []string // --strategy values (crash-only examples)
	persistency string   // the --persistency value ("" none)
	// profiles are the `profiles` clauses: the profiles every finding on a line has, by line.
	profiles map[int][]string
	// concurrent: the trace must have operations of two threads in flight at once.
	concurrent bool
	// witness: the schedule-witness directive (below).
	witness bool
	want    []finding
	// related are the lines some finding must name with a role (`related ROLE` clauses).
	related []relatedWant
	// classes are the classes want comments give explicitly (`want "kind:class"`), by finding.
	classes map[finding]string
	// props are the property comments, by rule and tag; exact the rules whose properties must all
	// be marked (exact-properties).
	props map[propKey]*propGroup
	exact []string
	opts  []string // the opt directive's levels
	// markers are the op-markers directive's functions: begin, end.
	markers []string
	// checker is the absolute path of the Go main package of the example's custom checker
	// (the checker directive), "" for scry itself.
	checker string
}

// propKey names a group of property comments: one rule and one tag.
type propKey struct{ Rule, Tag string }

// propGroup is the lines of one group, by role.
type propGroup struct{ Before, After, Member []int }

// finding is what the harness compares: where (source base name and line) and which kind.
type finding struct {
	File string
	Line int
	Kind string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Kind) }

var (
	directiveRE = regexp.MustCompile(`^\s*//\s*scry:\s*([\w-]+)\s*(.*?)\s*$`)
	relatedRE   = regexp.MustCompile(`^related\s+([a-z-]+)$`)
	profilesRE  = regexp.MustCompile(`^profiles\s+([a-z]+(?:\s*,\s*[a-z]+)*)$`)
	propertyRE  = regexp.MustCompile(`^property\s+(\w+(?:\s*,\s*\w+)*)\s+(before|after|member)\s+"([^"]+)"$`)
)

// loadPrograms reads every example program, sorted by directory name: buggy.c and fixed.c of a
// twin, or correct.c of a correct-only example.
func loadPrograms(t *testing.T) []program {
	t.Helper()
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var progs []program
	for _, d := range dirs {
		// fs/ holds file-system mode's examples, one directory deeper (fs_examples_test.go).
		// include/ holds example.h, the header the programs share (cflags).
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "fs" || d.Name() == "include" {
			continue
		}
		files, err := layout(d.Name())
		if err != nil {
			t.Fatal(err)
		}
		var checkers []string
		for _, v := range files {
			p, err := parseProgram(filepath.Join(d.Name(), v))
			if err != nil {
				t.Fatal(err)
			}
			checkers = append(checkers, p.checker)
			for _, opt := range p.opts {
				q := p
				q.opt = opt
				if opt != "-O0" {
					q.name += " " + opt
				}
				progs = append(progs, q)
			}
		}
		if err := subdirs(d.Name(), checkers); err != nil {
			t.Fatal(err)
		}
	}
	if len(progs) == 0 {
		t.Fatal("no examples found")
	}
	return progs
}

// layout returns the program files of example directory dir: the twin's or correct.c, and an
// error when the directory holds neither layout completely or mixes the two.
func layout(dir string) ([]string, error) {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	count := func(files []string) int {
		n := 0
		for _, f := range files {
			if has(f) {
				n++
			}
		}
		return n
	}
	nc, nx := count(twin), count(twinCXX)
	switch {
	case has(correctOnly[0]) && nc+nx == 0:
		return correctOnly, nil
	case has(correctOnly[0]):
		return nil, fmt.Errorf("%s: correct.c is a correct-only example and cannot have a buggy or fixed program", dir)
	case nc == len(twin) && nx == 0:
		return twin, nil
	case nx == len(twinCXX) && nc == 0:
		return twinCXX, nil
	default:
		return nil, fmt.Errorf("%s: an example is buggy.c and fixed.c, buggy.cpp and fixed.cpp, or correct.c alone", dir)
	}
}

// subdirs checks the subdirectories of example directory dir against the checkers (absolute
// paths, "" none) its programs name: every program names the same one, and the only
// subdirectory is that checker's.
func subdirs(dir string, checkers []string) error {
	for _, c := range checkers[1:] {
		if c != checkers[0] {
			return fmt.Errorf("%s: its programs name different checkers (%q, %q)", dir, checkers[0], c)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if abs, _ := filepath.Abs(filepath.Join(dir, e.Name())); abs != checkers[0] {
			return fmt.Errorf("%s: subdirectory %s is not the checker its programs name (`// scry: checker %s`)", dir, e.Name(), e.Name())
		}
	}
	return nil
}

// parseProgram reads the scry: directives and the want and property comments of one source file.
func parseProgram(rel string) (program, error) {
	abs, err := filepath.Abs(rel)
	if err != nil {
		return program{}, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return program{}, err
	}
	p := program{name: filepath.ToSlash(rel), path: abs, props: map[propKey]*propGroup{}}
	haveArgs := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := directiveRE.FindStringSubmatch(text); m != nil {
			switch m[1] {
			case "args":
				p.args, haveArgs = strings.Fields(m[2]), true
			case "pm":
				p.pm = append(p.pm, m[2])
			case "target":
				if m[2] != "aarch64-linux-gnu" {
					return p, fmt.Errorf("%s:%d: target %q: the examples know aarch64-linux-gnu", rel, line, m[2])
				}
				p.target = m[2]
			case "workload":
				if m[2] == "" {
					return p, fmt.Errorf("%s:%d: workload names no file", rel, line)
				}
				p.workload = filepath.Join(filepath.Dir(abs), m[2])
			case "client":
				f := strings.Fields(m[2])
				if len(f) == 0 || strings.Contains(f[0], "/") {
					return p, fmt.Errorf("%s:%d: client: want a file of the example's directory and its arguments", rel, line)
				}
				prog := filepath.Join(filepath.Dir(abs), f[0])
				if _, err := os.Stat(prog); err != nil {
					return p, fmt.Errorf("%s:%d: client: %v", rel, line, err)
				}
				p.client = strings.Join(append([]string{"bash", prog}, f[1:]...), " ")
			case "output-filter":
				if _, err := regexp.Compile(m[2]); err != nil {
					return p, fmt.Errorf("%s:%d: output-filter: %v", rel, line, err)
				}
				p.outputFilter = m[2]
			case "strategy":
				p.strategies = append(p.strategies, strings.FieldsFunc(m[2], func(r rune) bool {
					return r == ',' || r == ' ' || r == '\t'
				})...)
				if len(p.strategies) == 0 {
					return p, fmt.Errorf("%s:%d: strategy names no strategy", rel, line)
				}
			case "persistency":
				if m[2] == "" {
					return p, fmt.Errorf("%s:%d: persistency names no profile", rel, line)
				}
				p.persistency = m[2]
			case "concurrent-operations":
				p.concurrent = true
			case "schedule-witness":
				p.witness = true
			case "op-markers":
				p.markers = strings.Fields(m[2])
				if len(p.markers) != 2 {
					return p, fmt.Errorf("%s:%d: op-markers names a begin and an end function", rel, line)
				}
			case "opt":
				for _, o := range strings.Fields(m[2]) {
					if !regexp.MustCompile(`^-O[0-3sz]$`).MatchString(o) {
						return p, fmt.Errorf("%s:%d: opt: %q is not an optimisation level", rel, line, o)
					}
					p.opts = append(p.opts, o)
				}
			case "checker":
				dir := filepath.Join(filepath.Dir(abs), m[2])
				if fi, err := os.Stat(dir); m[2] == "" || strings.Contains(m[2], "/") || err != nil || !fi.IsDir() {
					return p, fmt.Errorf("%s:%d: checker %q: want the name of a subdirectory of the example", rel, line, m[2])
				}
				p.checker = dir
			case "exact-properties":
				rules := strings.Fields(m[2])
				if len(rules) == 0 {
					return p, fmt.Errorf("%s:%d: exact-properties names no rule", rel, line)
				}
				for _, r := range rules {
					if _, ok := ruleKinds[r]; !ok {
						return p, fmt.Errorf("%s:%d: unknown rule %q", rel, line, r)
					}
				}
				p.exact = append(p.exact, rules...)
			default:
				return p, fmt.Errorf("%s:%d: unknown directive %q", rel, line, m[1])
			}
			continue
		}
		for _, clause := range testenv.Clauses(text) {
			if err := p.addClause(clause, line); err != nil {
				return p, fmt.Errorf("%s:%d: %v", rel, line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("%s: %v", rel, err)
	}
	if !haveArgs {
		return p, fmt.Errorf("%s: no `// scry: args` line", rel)
	}
	// A custom checker's kinds are known once it is built (TestExamples checks them).
	for _, w := range p.want {
		if _, ok := kinds[w.Kind]; !ok && p.checker == "" {
			return p, fmt.Errorf("%s:%d: unknown finding kind %q", rel, w.Line, w.Kind)
		}
	}
	if p.client != "" && p.workload == "" {
		return p, fmt.Errorf("%s: client without a workload line", rel)
	}
	if p.outputFilter != "" && p.workload == "" {
		return p, fmt.Errorf("%s: output-filter without a workload line", rel)
	}
	if len(p.strategies) > 0 && p.workload == "" {
		return p, fmt.Errorf("%s: strategy without a workload line", rel)
	}
	if p.concurrent && p.workload == "" {
		return p, fmt.Errorf("%s: concurrent-operations without a workload line", rel)
	}
	if p.workload != "" {
		if _, err := os.Stat(p.workload); err != nil {
			return p, fmt.Errorf("%s: workload: %v", rel, err)
		}
		if len(p.pm) > 0 {
			return p, fmt.Errorf("%s: a crash-only example cannot use pm lines", rel)
		}
	}
	for k, g := range p.props {
		switch {
		case ruleKinds[k.Rule] == "ordering" && (len(g.Before) == 0 || len(g.After) == 0):
			return p, fmt.Errorf("%s: property %s %q needs a before line and an after line", rel, k.Rule, k.Tag)
		case ruleKinds[k.Rule] == "atomicity" && len(g.Member) == 0:
			return p, fmt.Errorf("%s: property %s %q needs member lines", rel, k.Rule, k.Tag)
		}
	}
	if len(p.opts) == 0 {
		p.opts = []string{"-O0"}
	}
	return p, nil
}

// addClause records one clause of a want or property comment on line.
func (p *program) addClause(clause string, line int) error {
	wants, ok, err := testenv.ParseWant(filepath.Base(p.path), line, clause)
	if err != nil {
		return err
	}
	if ok {
		for _, w := range wants {
			f := finding{w.File, w.Line, w.Kind}
			p.want = append(p.want, f)
			if w.Class != "" {
				if p.classes == nil {
					p.classes = map[finding]string{}
				}
				p.classes[f] = w.Class
			}
		}
		return nil
	}
	if m := relatedRE.FindStringSubmatch(clause); m != nil {
		p.related = append(p.related, relatedWant{line: line, role: m[1]})
		return nil
	}
	if m := profilesRE.FindStringSubmatch(clause); m != nil {
		if p.profiles == nil {
			p.profiles = map[int][]string{}
		}
		for _, name := range strings.Split(m[1], ",") {
			p.profiles[line] = append(p.profiles[line], strings.TrimSpace(name))
		}
		return nil
	}
	m := propertyRE.FindStringSubmatch(clause)
	if m == nil {
		return fmt.Errorf("malformed clause %q (want: `want \"kind\"`, `related ROLE`, `profiles P,...` or `property RULE before|after|member \"TAG\"`)", clause)
	}
	role, tag := m[2], m[3]
	for _, rule := range strings.Split(m[1], ",") {
		rule = strings.TrimSpace(rule)
		kind, ok := ruleKinds[rule]
		if !ok {
			return fmt.Errorf("unknown rule %q", rule)
		}
		if (kind == "ordering") != (role != "member") {
			return fmt.Errorf("rule %s (%s) cannot take role %s", rule, kind, role)
		}
		g := p.props[propKey{rule, tag}]
		if g == nil {
			g = &propGroup{}
			p.props[propKey{rule, tag}] = g
		}
		switch role {
		case "before":
			g.Before = append(g.Before, line)
		case "after":
			g.After = append(g.After, line)
		default:
			g.Member = append(g.Member, line)
		}
	}
	return nil
}

// TestExamplesWellFormed checks the examples themselves: every buggy program expects at least
// one finding, no fixed or correct-only one does, and together they cover every kind.
func TestExamplesWellFormed(t *testing.T) {
	covered := map[string]bool{}
	for _, p := range loadPrograms(t) {
		buggy := isBuggy(p.path)
		switch {
		case buggy && len(p.want) == 0:
			t.Errorf("%s: no want comment", p.name)
		case !buggy && slices.ContainsFunc(p.want, func(f finding) bool { return p.classes[f] != "unconfirmed" }):
			t.Errorf("%s: a fixed or correct-only program must expect no finding but warnings (kind:unconfirmed), has %v", p.name, p.want)
		}
		if !slices.ContainsFunc(p.args, func(a string) bool { return strings.Contains(a, "{pool}") }) {
			t.Errorf("%s: args %q do not name {pool}", p.name, p.args)
		}
		for _, w := range p.want {
			covered[w.Kind] = true
		}
	}
	for k := range kinds {
		if !covered[k] {
			t.Errorf("no example expects %q", k)
		}
	}
}

// cflags are the flags every example is compiled with (besides -o and the libraries); the
// include directory is that of example.h, the boilerplate of the programs' main functions that
// has nothing to do with persistence (the command line, opening the pool).
var cflags = []string{"-O0", "-g", "-mclflushopt", "-mclwb", "-I" + filepath.Join(testenv.Root(), "examples", "include")}

// withOpt returns cflags with opt as the optimisation level.
func withOpt(opt string) []string {
	f := slices.Clone(cflags)
	f[0] = opt
	return f
}

var libs = []string{"-lpmemobj", "-lpmem", "-lpthread"}

// flags returns the compiler flags of p (withOpt at its level): for another target, the target
// and Armv8.2 (DC CVAP) in place of the x86 flush options.
func (p program) flags() []string {
	f := withOpt(p.opt)
	if p.target == "" {
		return f
	}
	f = slices.DeleteFunc(f, func(a string) bool { return strings.HasPrefix(a, "-mcl") })
	return append(f, "--target="+p.target, "-march=armv8.2-a")
}

// libs returns the libraries p links: PMDK's for the host, none but pthreads for another target
// (Debian has no aarch64 PMDK here; those examples map their pool with mmap).
func (p program) libs() []string {
	if p.target != "" {
		return []string{"-lpthread"}
	}
	return libs
}

// TestExamplesNative compiles every example with plain clang-14 and runs it, without scry: the
// programs must work (exit 0) on their own, so that a finding is never about a broken program.
func TestExamplesNative(t *testing.T) {
	cc := map[bool]string{false: testenv.Tool(t, "clang-14"), true: testenv.Tool(t, "clang++-14")}
	// scry.h is included as <scry.h>: `scry cc` adds build/include/scry, here its source dir.
	inc := filepath.Join(testenv.Root(), "native", "include")
	for _, p := range loadPrograms(t) {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := filepath.Join(dir, "prog")
			args := append(append(p.flags(), "-I"+inc, "-o", bin, p.path), p.libs()...)
			var env []string
			if p.target != "" {
				// qemu-user (7.2) implements no DC CVAP: a plain aarch64 build dies of SIGILL at
				// its first clean under it. Linked with scry's aarch64 runtime left inert (no
				// pass, no trace), which only steps over the instruction as a CPU would complete
				// it, the program otherwise runs on its own.
				rt := testenv.Built(t, "lib/scry/aarch64/libscry_rt.a")
				args = append(args, "-Wl,--whole-archive", rt, "-Wl,--no-whole-archive", "-ldl")
				env = []string{"SCRY_INERT=1"}
			}
			if out, err := exec.Command(cc[isCXX(p.path)], args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", filepath.Base(cc[isCXX(p.path)]), strings.Join(args, " "), err, out)
			}
			run, err := scryexec.Command([]string{bin})
			if err != nil {
				t.Fatal(err)
			}
			// A crash-only example reads its workload, and must also reopen its pool and go
			// on (which is how it recovers from a crash image): it runs twice on one pool.
			runs := 1
			if p.workload != "" {
				runs = 2
			}
			for i := 0; i < runs && p.client != ""; i++ {
				if out, err := serveNative(bin, poolArgs(p.args, dir), p.client, p.workload); err != nil {
					t.Fatalf("%s (run %d): %v\n%s", p.name, i+1, err, out)
				}
			}
			for i := 0; i < runs && p.client == ""; i++ {
				cmd := exec.Command(run[0], append(run[1:], poolArgs(p.args, dir)...)...)
				cmd.Env = append(append(os.Environ(), "PMEM_IS_PMEM_FORCE=1"), env...)
				if p.workload != "" {
					f, err := os.Open(p.workload)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					cmd.Stdin = f
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s (run %d): %v\n%s", p.name, i+1, err, out)
				}
			}
		})
	}
}

// poolArgs replaces {pool} in args by the pool path in dir.
func poolArgs(args []string, dir string) []string {
	pool := filepath.Join(dir, poolName)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{pool}", pool)
	}
	return out
}

// report is the part of `scry check --format json` output the harness reads.
type report struct {
	Findings []reportFinding `json:"findings"`
	Stats    *struct {
		StatesTested int `json:"states_tested"`
	} `json:"stats"` // crash mode only
	Witnesses []reportWitness `json:"witnesses"`
}

// reportFinding is a finding of the JSON report, as far as the harness reads it.
type reportFinding struct {
	Kind     string `json:"kind"`
	Class    string `json:"class"`
	Message  string `json:"message"`
	Location struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Function string `json:"function"`
	} `json:"location"`
	Related  []reportRelated `json:"related"`
	Profiles []string        `json:"profiles"`
	Schedule string          `json:"schedule"`
}

// reportWitness is a schedule witness of the JSON report's stats, as far as the harness reads it.
type reportWitness struct {
	Schedule  string `json:"schedule"`
	Dependent struct {
		Line int `json:"line"`
	} `json:"dependent"`
	Findings int `json:"findings"`
}

// checkWitnesses checks the schedule-witness directive on rep: with want comments, every
// inter-thread-inconsistency finding was shown first under a schedule witness of the report
// whose dependent store is on its line; without, the report lists no witness.
func checkWitnesses(t *testing.T, p program, rep report) {
	t.Helper()
	if len(p.want) == 0 {
		if len(rep.Witnesses) > 0 {
			t.Errorf("%s: schedule witnesses %+v, want none", p.name, rep.Witnesses)
		}
		return
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Kind != "inter-thread-inconsistency" {
			continue
		}
		n++
		if !slices.ContainsFunc(rep.Witnesses, func(w reportWitness) bool {
			return w.Schedule == f.Schedule && w.Dependent.Line == f.Location.Line && w.Findings > 0
		}) {
			t.Errorf("%s:%d: %s shown first under schedule %q, not under a schedule witness of its store (witnesses: %+v)", p.name, f.Location.Line, f.Kind, f.Schedule, rep.Witnesses)
		}
	}
	if n == 0 {
		t.Errorf("%s: no inter-thread-inconsistency finding to check against the schedule witnesses", p.name)
	}
}

// reportRelated is a related location of a finding.
type reportRelated struct {
	Role string `json:"role"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// wantClass returns the class a finding of kind must have in p's report (false for a kind the
// harness does not know): its kind's, except that the breach of an inferred property, unconfirmed
// unless crash exploration confirmed it, is a correctness finding in a crash-only example whose
// want comments expect an ordering or atomicity violation (a crash image that breaks the
// property, which confirms its breach: there it must be confirmed).
func wantClass(p program, known map[string]string, f finding) (string, bool) {
	if c, ok := p.classes[f]; ok {
		return c, true
	}
	class, ok := known[f.Kind]
	if ok && class == "unconfirmed" && p.workload != "" && slices.ContainsFunc(p.want, func(f finding) bool {
		return f.Kind == "ordering-violation" || f.Kind == "atomicity-violation"
	}) && f.Kind != "unpersisted-store" && f.Kind != "overwritten-unpersisted" {
		class = "correctness"
	}
	return class, ok
}

// TestExamples runs scry on every example and compares its findings with the want comments and
// the properties `scry infer` lists with the property comments.
func TestExamples(t *testing.T) {
	scry := testenv.Scry(t)
	// Probe the compiler wrapper once, so a missing runtime or pass is one clear message.
	probeDir := t.TempDir()
	probe := filepath.Join(probeDir, "probe.c")
	if err := os.WriteFile(probe, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(scry, "cc", "-o", filepath.Join(probeDir, "probe"), probe).CombinedOutput(); err != nil {
		testenv.Missing(t, "`scry cc` cannot build a program (runtime or pass missing? run `make`): %v\n%s", err, out)
	}
	progs := loadPrograms(t)
	checkers := buildCheckers(t, progs)

	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := filepath.Join(dir, "prog")
			args := append([]string{driver(p.path)}, p.flags()...)
			args = append(append(args, "-o", bin, p.path), p.libs()...)
			if out, err := exec.Command(scry, args...).CombinedOutput(); err != nil {
				t.Fatalf("scry %s: %v\n%s", strings.Join(args, " "), err, out)
			}

			check := checkArgs(p, dir, bin)
			checker, known := scry, kinds
			if p.checker != "" {
				checker, known = checkers[p.checker].bin, checkers[p.checker].kinds
				for _, w := range p.want {
					if _, ok := known[w.Kind]; !ok {
						t.Fatalf("%s:%d: want %q: not a kind of scry or of its checker %s", p.name, w.Line, w.Kind, p.checker)
					}
				}
			}
			cmd := exec.Command(checker, check...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("scry %s: %v", strings.Join(check, " "), err)
				}
				code = ee.ExitCode()
			}
			cmdline := filepath.Base(checker) + " " + strings.Join(check, " ")
			if code != 0 && code != 1 {
				t.Fatalf("%s: exit status %d (error)\nstderr:\n%s", cmdline, code, stderr.String())
			}
			// The report goes to a file: a traced program's own output is on standard output.
			repJSON, err := os.ReadFile(filepath.Join(dir, "report.json"))
			if err != nil {
				t.Fatalf("%s: no report: %v\nstdout:\n%s\nstderr:\n%s", cmdline, err, stdout.String(), stderr.String())
			}
			if keep := os.Getenv("SCRY_EXAMPLES_KEEP"); keep != "" {
				// A copy of every report, for comparing the findings of two builds of scry.
				name := strings.NewReplacer("/", "_", " ", "").Replace(p.name) + ".json"
				if err := os.MkdirAll(keep, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(keep, name), repJSON, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var rep report
			if err := json.Unmarshal(repJSON, &rep); err != nil {
				t.Fatalf("%s: output is not the JSON report: %v\nreport:\n%s\nstderr:\n%s",
					cmdline, err, repJSON, stderr.String())
			}

			var got []finding
			correctness := false
			for _, f := range rep.Findings {
				got = append(got, finding{filepath.Base(f.Location.File), f.Location.Line, f.Kind})
				if f.Class == "correctness" {
					correctness = true
				}
				if want, ok := wantClass(p, known, finding{filepath.Base(f.Location.File), f.Location.Line, f.Kind}); ok && f.Class != want {
					t.Errorf("%s:%d: %s has class %q, want %q",
						f.Location.File, f.Location.Line, f.Kind, f.Class, want)
				}
			}
			for line, want := range p.profiles {
				n := 0
				for _, f := range rep.Findings {
					if f.Location.Line != line || filepath.Base(f.Location.File) != filepath.Base(p.path) {
						continue
					}
					n++
					if !slices.Equal(f.Profiles, want) {
						t.Errorf("%s:%d: %s occurs under profiles %v, want %v", p.name, line, f.Kind, f.Profiles, want)
					}
				}
				if n == 0 {
					t.Errorf("%s:%d: no finding on this line to check its profiles %v", p.name, line, want)
				}
			}
			for _, w := range p.related {
				if !slices.ContainsFunc(rep.Findings, func(f reportFinding) bool {
					return slices.ContainsFunc(f.Related, func(r reportRelated) bool {
						return r.Role == w.role && r.Line == w.line && filepath.Base(r.File) == filepath.Base(p.path)
					})
				}) {
					t.Errorf("%s:%d: no finding names this line as its %s\nfull report:\n%s", p.name, w.line, w.role, repJSON)
				}
			}
			missing, unexpected := diff(p.want, got)
			if len(missing) > 0 || len(unexpected) > 0 {
				t.Errorf("%s: findings differ from the want comments\nmissing:\n%s\nunexpected:\n%s\nfull report:\n%s",
					p.name, list(missing), list(unexpected), repJSON)
			}
			if wantCode := map[bool]int{false: 0, true: 1}[correctness]; code != wantCode {
				t.Errorf("%s: exit status %d, want %d (correctness findings: %v)",
					cmdline, code, wantCode, correctness)
			}

			if p.workload != "" && (rep.Stats == nil || rep.Stats.StatesTested == 0) {
				t.Errorf("%s: crash exploration tested no crash state (report stats: %+v)", p.name, rep.Stats)
			}
			if p.witness {
				checkWitnesses(t, p, rep)
			}
			if p.concurrent {
				n, err := concurrentOps(filepath.Join(dir, "trace"))
				if err != nil {
					t.Errorf("%s: reading the trace: %v", p.name, err)
				} else if n < 2 {
					t.Errorf("%s: no two operations of different threads are in flight at once in the trace (the runtime ends every open operation at any thread's scry_op_begin?)", p.name)
				}
			}

			// Inferred properties, from the trace check kept. Every example's trace goes through
			// `scry infer` (it must succeed); the property comments are compared.
			infer := []string{"infer", "--format", "json", "--rules", "both", filepath.Join(dir, "trace")}
			out, err := exec.Command(scry, infer...).Output()
			if err != nil {
				var stderr []byte
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					stderr = ee.Stderr
				}
				t.Fatalf("scry %s: %v\n%s", strings.Join(infer, " "), err, stderr)
			}
			var inf inferReport
			if err := json.Unmarshal(out, &inf); err != nil {
				t.Fatalf("scry %s: output is not the JSON of properties: %v\n%s", strings.Join(infer, " "), err, out)
			}
			if msgs := compareProperties(p, inf); len(msgs) > 0 {
				t.Errorf("%s: inferred properties differ from the property comments:\n  %s\nproperties:\n%s",
					p.name, strings.Join(msgs, "\n  "), describe(inf))
			}
		})
	}
}

// checkerBuild is a custom checker built for the examples that name it, and its kinds with their
// classes (scry's and the ones it adds).
type checkerBuild struct {
	bin   string
	kinds map[string]string
}

// buildCheckers builds, with `go build`, the custom checker of every example that names one and
// reads its kinds from its `check --help`; it skips (or fails, strictly) when there is no go
// command, and fails when a checker does not build or lists no kind.
func buildCheckers(t *testing.T, progs []program) map[string]checkerBuild {
	t.Helper()
	out := map[string]checkerBuild{}
	for _, p := range progs {
		if p.checker == "" || out[p.checker].bin != "" {
			continue
		}
		gocmd, err := exec.LookPath("go")
		if err != nil {
			if gocmd = filepath.Join(runtime.GOROOT(), "bin", "go"); !fileExists(gocmd) {
				testenv.Missing(t, "no go command to build the custom checker %s", p.checker)
			}
		}
		bin := filepath.Join(t.TempDir(), filepath.Base(p.checker))
		build := exec.Command(gocmd, "build", "-o", bin, ".")
		build.Dir = p.checker
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p.checker, err, b)
		}
		help, err := exec.Command(bin, "check", "--help").Output()
		if err != nil {
			t.Fatalf("%s check --help: %v", bin, err)
		}
		ks := helpKinds(string(help))
		if len(ks) == 0 {
			t.Fatalf("%s check --help lists no kind of finding:\n%s", bin, help)
		}
		out[p.checker] = checkerBuild{bin, ks}
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// helpKinds reads the kinds and classes of the "Kinds of findings" table of `check --help`.
func helpKinds(help string) map[string]string {
	out := map[string]string{}
	_, table, ok := strings.Cut(help, "Kinds of findings")
	if !ok {
		return out
	}
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(line, "  ") || !slices.Contains([]string{"correctness", "performance", "unconfirmed"}, f[1]) {
			break
		}
		out[f[0]] = f[1]
	}
	return out
}

// concurrentOps returns the largest number of operations of distinct threads in flight at once
// (between their OP_BEGIN and OP_END records) in the trace at path.
func concurrentOps(path string) (int, error) {
	r, err := trace.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	open := map[uint64]uint32{} // operation -> thread
	most := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return most, nil
		}
		if err != nil {
			return most, err
		}
		switch ev.Kind {
		case trace.KindOpBegin:
			open[ev.Op] = ev.Thread
			threads := map[uint32]bool{}
			for _, th := range open {
				threads[th] = true
			}
			most = max(most, len(threads))
		case trace.KindOpEnd:
			delete(open, ev.Op)
		}
	}
}

// checkArgs is the `scry check` command line (without the program name) for p, built as bin in
// dir, writing the report to dir/report.json and keeping the trace in dir/trace (for `scry infer`). A crash-only example runs in crash mode:
// `--workload FILE [--output-filter REGEX] [--strategy S,...] -- bin ARGS` with {pool} left in
// ARGS for scry to substitute; the others are traced once with {pool} replaced by a fresh path in
// dir.
func checkArgs(p program, dir, bin string) []string {
	check := []string{"check", "--format", "json", "-o", filepath.Join(dir, "report.json"),
		"--trace", filepath.Join(dir, "trace")}
	if p.persistency != "" {
		check = append(check, "--persistency", p.persistency)
	}
	if len(p.markers) == 2 {
		check = append(check, "--op-begin", p.markers[0], "--op-end", p.markers[1])
	}
	if p.workload != "" {
		check = append(check, "--workload", p.workload)
		if p.client != "" {
			check = append(check, "--client", p.client)
		}
		if p.outputFilter != "" {
			check = append(check, "--output-filter", p.outputFilter)
		}
		if len(p.strategies) > 0 {
			check = append(check, "--strategy", strings.Join(p.strategies, ","))
		}
		return append(append(check, "--", bin), p.args...)
	}
	for _, g := range p.pm {
		check = append(check, "--pm", filepath.Join(dir, g))
	}
	return append(append(check, "--", bin), poolArgs(p.args, dir)...)
}

// inferReport is the part of `scry infer --format json` output the harness reads.
type inferReport struct {
	Properties []inferredProperty `json:"properties"`
}

type inferredProperty struct {
	ID    int    `json:"id"`
	Kind  string `json:"kind"`
	Rule  string `json:"rule"`
	Sides []struct {
		Role     string `json:"role"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Function string `json:"function"`
	} `json:"sides"`
}

// lines returns the lines of p's sides with role in the file named base (the other sides are
// counted in other).
func (ip inferredProperty) lines(role, base string) (lines []int, other int) {
	for _, s := range ip.Sides {
		if s.Role != role {
			continue
		}
		if filepath.Base(s.File) == base {
			lines = append(lines, s.Line)
		} else {
			other++
		}
	}
	return lines, other
}

// compareProperties checks the properties of inf against p's property comments and its
// exact-properties rules, returning one message per difference.
func compareProperties(p program, inf inferReport) []string {
	base := filepath.Base(p.path)
	var msgs []string
	keys := make([]propKey, 0, len(p.props))
	for k := range p.props {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b propKey) int {
		return strings.Compare(a.Rule+"\x00"+a.Tag, b.Rule+"\x00"+b.Tag)
	})
	// Every marked pair (ordering) or member set (atomicity) is a property.
	for _, k := range keys {
		g := p.props[k]
		if ruleKinds[k.Rule] == "ordering" {
			for _, b := range g.Before {
				for _, a := range g.After {
					if !slices.ContainsFunc(inf.Properties, func(ip inferredProperty) bool {
						return ip.Rule == k.Rule && ip.ordering(base, b, a)
					}) {
						msgs = append(msgs, fmt.Sprintf("missing %s property %q: %s:%d before %s:%d", k.Rule, k.Tag, base, b, base, a))
					}
				}
			}
			continue
		}
		if !slices.ContainsFunc(inf.Properties, func(ip inferredProperty) bool {
			if ip.Rule != k.Rule {
				return false
			}
			members, _ := ip.lines("member", base)
			for _, l := range g.Member {
				if !slices.Contains(members, l) {
					return false
				}
			}
			return true
		}) {
			msgs = append(msgs, fmt.Sprintf("missing %s property %q: %s lines %v atomic", k.Rule, k.Tag, base, g.Member))
		}
	}
	// With exact-properties, every property of those rules is one of the marked ones.
	for _, ip := range inf.Properties {
		if !slices.Contains(p.exact, ip.Rule) || p.marked(ip, base) {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("unexpected %s property (exact-properties): %s", ip.Rule, ip))
	}
	return msgs
}

// ordering reports whether ip has a before side at base:b and an after side at base:a.
func (ip inferredProperty) ordering(base string, b, a int) bool {
	before, _ := ip.lines("before", base)
	after, _ := ip.lines("after", base)
	return slices.Contains(before, b) && slices.Contains(after, a)
}

// marked reports whether property ip is described by one of p's property comments: an ordering
// property whose sides are all on lines of one group's before and after lines, an atomicity
// property whose member lines are exactly one group's.
func (p program) marked(ip inferredProperty, base string) bool {
	for k, g := range p.props {
		if k.Rule != ip.Rule {
			continue
		}
		if ruleKinds[k.Rule] == "ordering" {
			before, ob := ip.lines("before", base)
			after, oa := ip.lines("after", base)
			if ob == 0 && oa == 0 && len(before) > 0 && len(after) > 0 &&
				subset(before, g.Before) && subset(after, g.After) {
				return true
			}
			continue
		}
		members, om := ip.lines("member", base)
		if om == 0 && subset(members, g.Member) && subset(g.Member, members) {
			return true
		}
	}
	return false
}

func subset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func (ip inferredProperty) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s:", ip.ID, ip.Rule, ip.Kind)
	for _, s := range ip.Sides {
		fmt.Fprintf(&b, " %s %s:%d (%s)", s.Role, filepath.Base(s.File), s.Line, s.Function)
	}
	return b.String()
}

// describe lists the properties of inf, one per line, for failure messages.
func describe(inf inferReport) string {
	if len(inf.Properties) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for i, ip := range inf.Properties {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  " + ip.String())
	}
	return b.String()
}

// diff returns the findings of want absent from got and those of got absent from want, each
// sorted and without duplicates (a finding is one per kind and static location).
func diff(want, got []finding) (missing, unexpected []finding) {
	ws, gs := set(want), set(got)
	for _, f := range sorted(ws) {
		if !gs[f] {
			missing = append(missing, f)
		}
	}
	for _, f := range sorted(gs) {
		if !ws[f] {
			unexpected = append(unexpected, f)
		}
	}
	return missing, unexpected
}

func set(fs []finding) map[finding]bool {
	s := map[finding]bool{}
	for _, f := range fs {
		s[f] = true
	}
	return s
}

func sorted(s map[finding]bool) []finding {
	var out []finding
	for f := range s {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out
}

func list(fs []finding) string {
	if len(fs) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  " + f.String())
	}
	return b.String()
}

// TestDiff checks the comparison the harness reports with.
func TestDiff(t *testing.T) {
	a := finding{"buggy.c", 10, "unpersisted-store"}
	b := finding{"buggy.c", 12, "redundant-fence"}
	c := finding{"buggy.c", 12, "redundant-flush"}
	tests := []struct {
		name                string
		want, got           []finding
		missing, unexpected []finding
	}{
		{"equal", []finding{a, b}, []finding{b, a}, nil, nil},
		{"duplicates collapse", []finding{a}, []finding{a, a}, nil, nil},
		{"missing", []finding{a, b}, []finding{a}, []finding{b}, nil},
		{"unexpected", nil, []finding{c, a}, nil, []finding{a, c}},
		{"both", []finding{b}, []finding{c}, []finding{b}, []finding{c}},
	}
	for _, tc := range tests {
		m, u := diff(tc.want, tc.got)
		if !slices.Equal(m, tc.missing) || !slices.Equal(u, tc.unexpected) {
			t.Errorf("%s: diff = %v, %v; want %v, %v", tc.name, m, u, tc.missing, tc.unexpected)
		}
	}
}

// TestPropertyComments checks how property comments are read and compared with `scry infer`'s
// properties.
func TestPropertyComments(t *testing.T) {
	src := `// a whole-line comment is prose: property of the reader
// scry: args {pool}
// scry: exact-properties MPB
	s->key = k;   // property MPB,RO3 before "slot"
	s->value = v; // property MPB before "slot"
	s->token = 1; // want "mpb-violation"; property MPB,RO3 after "slot"; property RA1 member "tokens"
	x = 1; // property MPA member "pair"
	y = 2; // property MPA member "pair"
`
	dir := t.TempDir()
	path := filepath.Join(dir, "buggy.c")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := parseProgram(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []finding{{"buggy.c", 6, "mpb-violation"}}; !slices.Equal(p.want, want) {
		t.Errorf("want = %v, want %v", p.want, want)
	}
	groups := map[propKey]propGroup{
		{"MPB", "slot"}:   {Before: []int{4, 5}, After: []int{6}},
		{"RO3", "slot"}:   {Before: []int{4}, After: []int{6}},
		{"RA1", "tokens"}: {Member: []int{6}},
		{"MPA", "pair"}:   {Member: []int{7, 8}},
	}
	if len(p.props) != len(groups) {
		t.Errorf("groups = %v, want %v", p.props, groups)
	}
	for k, g := range groups {
		if got := p.props[k]; got == nil || !slices.Equal(got.Before, g.Before) ||
			!slices.Equal(got.After, g.After) || !slices.Equal(got.Member, g.Member) {
			t.Errorf("group %v = %+v, want %+v", k, got, g)
		}
	}
	if !slices.Equal(p.exact, []string{"MPB"}) {
		t.Errorf("exact = %v", p.exact)
	}

	type side = struct {
		role, file string
		line       int
	}
	prop := func(rule string, sides ...side) inferredProperty {
		ip := inferredProperty{Rule: rule}
		for _, s := range sides {
			ip.Sides = append(ip.Sides, struct {
				Role     string `json:"role"`
				File     string `json:"file"`
				Line     int    `json:"line"`
				Function string `json:"function"`
			}{s.role, "/src/" + s.file, s.line, "f"})
		}
		return ip
	}
	mpb4 := prop("MPB", side{"before", "buggy.c", 4}, side{"after", "buggy.c", 6})
	mpb5 := prop("MPB", side{"before", "buggy.c", 5}, side{"after", "buggy.c", 6})
	ro3 := prop("RO3", side{"before", "buggy.c", 4}, side{"after", "buggy.c", 6})
	ra1 := prop("RA1", side{"member", "buggy.c", 6})
	mpa := prop("MPA", side{"member", "buggy.c", 7}, side{"member", "buggy.c", 8})
	bogus := prop("MPB", side{"before", "buggy.c", 6}, side{"after", "buggy.c", 4})
	other := prop("RO1", side{"before", "buggy.c", 6}, side{"after", "buggy.c", 4}) // not exact
	elsewhere := prop("MPB", side{"before", "lib.c", 4}, side{"after", "buggy.c", 6})
	tests := []struct {
		name  string
		props []inferredProperty
		msgs  int
	}{
		{"all", []inferredProperty{mpb4, mpb5, ro3, ra1, mpa, other}, 0},
		{"missing pair", []inferredProperty{mpb4, ro3, ra1, mpa}, 1},
		{"missing member", []inferredProperty{mpb4, mpb5, ro3, ra1, prop("MPA", side{"member", "buggy.c", 7})}, 1},
		{"bogus exact", []inferredProperty{mpb4, mpb5, ro3, ra1, mpa, bogus}, 1},
		{"other file", []inferredProperty{mpb4, mpb5, ro3, ra1, mpa, elsewhere}, 1},
		{"none", nil, 5},
	}
	for _, tc := range tests {
		if msgs := compareProperties(p, inferReport{Properties: tc.props}); len(msgs) != tc.msgs {
			t.Errorf("%s: %d messages, want %d:\n%s", tc.name, len(msgs), tc.msgs, strings.Join(msgs, "\n"))
		}
	}

	for _, bad := range []string{
		"x = 1; // property MPB member \"t\"",    // ordering rule, atomicity role
		"x = 1; // property MPA before \"t\"",    // and the reverse
		"x = 1; // property XYZ before \"t\"",    // unknown rule
		"x = 1; // want \"mpb-violation\"; oops", // a clause that is neither
		"x = 1; // property MPB before \"t\"",    // a before without an after
	} {
		if err := os.WriteFile(path, []byte("// scry: args {pool}\n"+bad+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := parseProgram(path); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// serveNative runs a server example natively as scry's client mode does: the server bin with
// args ({port} replaced by a free port), the client command (with {port} too) fed the workload
// once the server listens, then the server stopped. It returns the client's output and an error
// when the server did not listen within 10 s, died, or the client failed.
func serveNative(bin string, args []string, client, workload string) ([]byte, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{port}", port)
	}
	srv := exec.Command(bin, args...)
	srv.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1")
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		_ = srv.Process.Kill()
		<-exited
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-exited:
			exited <- err
			return srvOut.Bytes(), fmt.Errorf("the server exited before it listened: %v", err)
		default:
		}
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return srvOut.Bytes(), errors.New("the server did not listen within 10s")
		}
	}
	f, err := os.Open(workload)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(client, "{port}", port))
	cmd.Stdin = f
	out, err := cmd.CombinedOutput()
	if err != nil {
		return append(out, srvOut.Bytes()...), fmt.Errorf("client: %v", err)
	}
	return out, nil
}
