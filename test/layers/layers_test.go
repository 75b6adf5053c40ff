package layers

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is scry's module path: imports under it are scry's own.
const module = "github.com/scry-pm/scry/"

// parseRules reads rules (Rules' form) into each folder's level, from 0 at the bottom. Errors: a
// folder named twice, an empty level, a name that is not a folder name.
func parseRules(rules string) (map[string]int, error) {
	level := map[string]int{}
	var lines []string
	for _, l := range strings.Split(rules, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	for i, lv := range strings.Split(strings.Join(lines, " "), "<") {
		names := strings.Split(lv, ",")
		for _, n := range names {
			n = strings.TrimSpace(n)
			if n == "" || strings.ContainsAny(n, " /\t") {
				return nil, fmt.Errorf("level %d (%q): want folder names separated by commas", i, strings.TrimSpace(lv))
			}
			if _, dup := level[n]; dup {
				return nil, fmt.Errorf("folder %s named twice", n)
			}
			level[n] = i
		}
	}
	return level, nil
}

// folder is the top-level folder of a package path under module ("" outside it).
func folder(path string) string {
	rest, ok := strings.CutPrefix(path, module)
	if !ok {
		return ""
	}
	f, _, _ := strings.Cut(rest, "/")
	return f
}

// violations returns, sorted, the imports that break the layering level: pkg imports dep (both
// scry package paths) where dep's folder is not pkg's and not on a lower level. A folder the
// rules do not name is a violation too, reported once.
func violations(level map[string]int, imports map[string][]string) []string {
	var out []string
	unplaced := map[string]bool{}
	for pkg, deps := range imports {
		from := folder(pkg)
		lf, ok := level[from]
		if !ok {
			unplaced[from] = true
			continue
		}
		for _, dep := range deps {
			to := folder(dep)
			if to == "" || to == from {
				continue
			}
			lt, ok := level[to]
			switch {
			case !ok:
				unplaced[to] = true
			case lt == lf:
				out = append(out, fmt.Sprintf("%s imports %s: %s and %s are on one level and may not import each other", strings.TrimPrefix(pkg, module), strings.TrimPrefix(dep, module), from, to))
			case lt > lf:
				out = append(out, fmt.Sprintf("%s imports %s: %s is above %s and may not be imported by it", strings.TrimPrefix(pkg, module), strings.TrimPrefix(dep, module), to, from))
			}
		}
	}
	for f := range unplaced {
		out = append(out, fmt.Sprintf("folder %s has Go packages but no place in the layering: add it to layers.Rules", f))
	}
	slices.Sort(out)
	return out
}

// treeImports returns the imports of scry's own packages of every package in the source tree at
// root (the packages' own files, not their tests'), by package path. Directories named testdata,
// build or starting with "." or "_" are skipped, as the go command skips them (build is the
// build tree).
func treeImports(root string) (map[string][]string, error) {
	imports := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || name == "build" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkg := module + filepath.ToSlash(rel)
		var deps []string
		for _, i := range p.Imports {
			if strings.HasPrefix(i, module) {
				deps = append(deps, i)
			}
		}
		imports[pkg] = deps
		return nil
	})
	return imports, err
}

// TestLayers: no package of the tree imports a package of a folder above its own or beside it
// (Rules), and every top-level folder with Go packages has its place.
func TestLayers(t *testing.T) {
	level, err := parseRules(Rules)
	if err != nil {
		t.Fatalf("Rules: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root %s: %v", root, err)
	}
	imports, err := treeImports(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("only %d packages found under %s: the walk is broken", len(imports), root)
	}
	for _, v := range violations(level, imports) {
		t.Error(v)
	}
	// Every level's folder exists: a folder moved away leaves no stale rule.
	for f := range level {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("layers.Rules names %s, which is not a folder of the tree", f)
		}
	}
}

// TestViolations: the rules catch an upward import, two folders of one level importing each
// other and a folder they do not place, and accept downward imports and imports inside a folder.
func TestViolations(t *testing.T) {
	level, err := parseRules("a < b, c < d")
	if err != nil {
		t.Fatal(err)
	}
	m := func(s ...string) []string {
		for i := range s {
			s[i] = module + s[i]
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		imports map[string][]string
		want    []string
	}{
		{"downward and inside", map[string][]string{module + "d/x": m("a", "b/y", "c", "d/z"), module + "b": m("a/q", "b/r")}, nil},
		{"upward", map[string][]string{module + "a/x": m("b/y")}, []string{"a/x imports b/y: b is above a and may not be imported by it"}},
		{"same level", map[string][]string{module + "b": m("c")}, []string{"b imports c: b and c are on one level and may not import each other"}},
		{"unplaced", map[string][]string{module + "e/x": m("a")}, []string{"folder e has Go packages but no place in the layering: add it to layers.Rules"}},
		{"others' imports", map[string][]string{module + "a": {"fmt", "github.com/spf13/cobra"}}, nil},
	} {
		if got := violations(level, tc.imports); !slices.Equal(got, tc.want) {
			t.Errorf("%s: violations = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"a < a", "a < < b", "a/b < c", "a b < c"} {
		if _, err := parseRules(bad); err == nil {
			t.Errorf("parseRules(%q) accepted", bad)
		}
	}
}
