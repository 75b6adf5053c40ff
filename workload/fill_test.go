package workload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/shlex"

	"github.com/scry-pm/scry/internal/testenv"
)

func TestClassOf(t *testing.T) {
	tests := map[string]string{
		"file": ClassFile, "FILE": ClassFile, "pathspec": ClassFile, "source": ClassFile, "f": ClassFile,
		"file2": ClassFile, "input-file": ClassFile, "source_file": ClassFile,
		"name": ClassName, "dest": ClassName, "new-name": ClassName, "output": ClassName,
		"number": ClassNumber, "n": ClassNumber, "key": ClassNumber, "count": ClassNumber, "max-count": ClassNumber,
		"commit": ClassCommit, "tree-ish": ClassCommit, "branch": ClassCommit,
		"directory": ClassDirectory, "dir": ClassDirectory, "option": ClassOption, "OPTIONS": ClassOption,
		"mode": ClassWord, "msg": ClassWord, "keydef": ClassWord, "": ClassWord, "-": ClassWord,
	}
	for name, want := range tests {
		if got := classOf(name); got != want {
			t.Errorf("classOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseValues(t *testing.T) {
	v, err := ParseValues([]string{"key=1..10,42", "<MODE>=all,no", "key=x", "empty=", "neg=-5..-1"})
	if err != nil {
		t.Fatal(err)
	}
	if l := v["key"]; !slices.Equal(l.Lits, []string{"42", "x"}) || len(l.Ranges) != 1 || l.Ranges[0] != [2]int64{1, 10} {
		t.Errorf("key: %+v", l)
	}
	if l := v["mode"]; !slices.Equal(l.Lits, []string{"all", "no"}) {
		t.Errorf("mode: %+v", l)
	}
	if l := v["empty"]; !slices.Equal(l.Lits, []string{""}) {
		t.Errorf("empty: %+v", l)
	}
	if l := v["neg"]; len(l.Ranges) != 1 || l.Ranges[0] != [2]int64{-5, -1} {
		t.Errorf("neg: %+v", l)
	}
	for _, bad := range []struct{ arg, want string }{
		{"novalue", "not NAME=V1,V2"},
		{"=1,2", "no placeholder name"},
		{"k=5..1", "is empty"},
		{"k=1..99999999999999999999", "out of the 64-bit integers"},
		{"k=a\nb", "line break"},
	} {
		if _, err := ParseValues([]string{bad.arg}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseValues(%q) = %v, want %q", bad.arg, err, bad.want)
		}
	}
}

// TestShellWord: every word, however odd, reads back as itself in a POSIX shell's word
// splitting (shlex) and in sh itself.
func TestShellWord(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"", "plain", "a b", "it's", `"q"`, "$HOME", "*", "~x", "#c", "a;b", "é", "HEAD^", "--key=a b", "-"}
	for range 300 {
		words = append(words, newName(r, true))
	}
	var line []string
	for _, w := range words {
		q := shellWord(w)
		got, err := shlex.Split(q)
		if err != nil || len(got) != 1 && w != "" || len(got) == 1 && got[0] != w {
			t.Errorf("shellWord(%q) = %q, which splits into %q (%v)", w, q, got, err)
		}
		line = append(line, q)
	}
	testenv.Tool(t, "sh")
	// sh reads the words as one command line.
	cmd := exec.Command("sh")
	cmd.Stdin = strings.NewReader("printf '%s\\0' " + strings.Join(line, " ") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, words) {
		t.Errorf("sh read the quoted words as\n%q\nwant\n%q", got, words)
	}
}

func TestNewName(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	long := 0
	for _, shell := range []bool{false, true} {
		for range 5000 {
			n := newName(r, shell)
			if n == "" || n == "." || n == ".." || strings.HasPrefix(n, "-") || strings.ContainsAny(n, "/\n\r\x00") || len(n) > 210 {
				t.Fatalf("newName(shell %v) = %q", shell, n)
			}
			if !shell && !shellSafe.MatchString(n) {
				t.Fatalf("newName(shell false) = %q needs quoting", n)
			}
			if len(n) >= 100 {
				long++
			}
		}
	}
	if long == 0 {
		t.Error("no long name in 10000")
	}
}

// checksums returns the SHA-256 of every file under dir (of a symbolic link's target name).
func checksums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[p] = sha256.Sum256([]byte("link " + target))
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreateFiles(t *testing.T) {
	create := func(dir string, seed uint64, n int, shell bool) *Env {
		env := &Env{Shell: shell}
		if err := env.ScanDir(dir); err != nil {
			t.Fatal(err)
		}
		if err := env.CreateFiles(context.Background(), n, 1<<20, rand.New(rand.NewPCG(seed, 0))); err != nil {
			t.Fatal(err)
		}
		return env
	}
	a, b := t.TempDir(), t.TempDir()
	ea, eb := create(a, 9, 20, true), create(b, 9, 20, true)
	if !slices.Equal(ea.Created, eb.Created) || len(ea.Created) != 20 {
		t.Fatalf("created %q and %q: want the same 20 names for the same seed", ea.Created, eb.Created)
	}
	var sizes []int64
	for _, name := range ea.Created {
		x, err1 := os.ReadFile(filepath.Join(a, name))
		y, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s: contents differ between two runs of the same seed (%v %v)", name, err1, err2)
		}
		sizes = append(sizes, int64(len(x)))
		if !slices.Contains(ea.Files, name) {
			t.Errorf("created %q is not in Files", name)
		}
	}
	slices.Sort(sizes)
	if sizes[0] != 0 || sizes[len(sizes)-1] <= 65536 || sizes[len(sizes)-1] > 1<<20 {
		t.Errorf("sizes %v: want an empty file and one over 64 KiB, none over 1 MiB", sizes)
	}
	// The first five files cover every size class.
	e := create(t.TempDir(), 3, 5, false)
	var classes []int
	for _, name := range e.Created {
		fi, err := os.Stat(filepath.Join(e.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for c, rg := range sizeClasses {
			if fi.Size() >= rg.lo && fi.Size() <= rg.hi {
				classes = append(classes, c)
			}
		}
	}
	slices.Sort(classes)
	if !slices.Equal(classes, []int{0, 1, 2, 3, 4}) {
		t.Errorf("size classes of 5 files: %v, want one of each", classes)
	}
}

// TestCreateFilesNeverOverwrites: the names a seed draws are taken by the user's files (and a
// symbolic link, and a directory) before the run: those stay as they were, other names are
// drawn.
func TestCreateFilesNeverOverwrites(t *testing.T) {
	first := &Env{}
	if err := first.ScanDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := first.CreateFiles(context.Background(), 6, 4096, rand.New(rand.NewPCG(4, 0))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, name := range first.Created {
		p := filepath.Join(dir, name)
		var err error
		switch i {
		case 0:
			err = os.Symlink(filepath.Join(dir, "elsewhere"), p) // dangling
		case 1:
			err = os.Mkdir(p, 0o755)
		default:
			err = os.WriteFile(p, []byte("the user's "+name), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	before := checksums(t, dir)
	env := &Env{}
	if err := env.ScanDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := env.CreateFiles(context.Background(), 6, 4096, rand.New(rand.NewPCG(4, 0))); err != nil {
		t.Fatal(err)
	}
	after := checksums(t, dir)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Error("a file was written through the symbolic link")
	}
	if len(env.Created) != 6 || len(after) != len(before)+6 {
		t.Errorf("created %d files (%d files in all, %d before), want 6 new ones", len(env.Created), len(after), len(before))
	}
	for _, name := range env.Created {
		if slices.Contains(first.Created, name) {
			t.Errorf("created %q, a name that existed", name)
		}
	}
}

// stopAfter is a context whose Err is nil for its first n calls and err after: cancelled at a
// chosen point between two files, deterministically.
type stopAfter struct {
	context.Context
	n   int
	err error
}

func (c *stopAfter) Err() error {
	if c.n > 0 {
		c.n--
		return nil
	}
	return c.err
}

// TestCreateFilesErrors: files that cannot be created are an error naming the path (the
// directory scanned is gone, or is a regular file now), and a cancellation between two files
// stops with its cause, naming the files created before it, which stay. No case depends on
// permission bits, which do not stop root.
func TestCreateFilesErrors(t *testing.T) {
	stop := errors.New("interrupted by the test")
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string) // after the scan
		ctx     context.Context
		wantErr string // in the error
		isStop  bool   // the error wraps stop
		created int    // files created before the error
	}{
		{
			name:   "directory removed",
			change: func(t *testing.T, dir string) { mustRemove(t, dir) },
			ctx:    context.Background(), wantErr: "no such file or directory",
		},
		{
			name: "directory replaced by a regular file",
			change: func(t *testing.T, dir string) {
				mustRemove(t, dir)
				if err := os.WriteFile(dir, []byte("a file\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			ctx: context.Background(), wantErr: "not a directory",
		},
		{
			name: "cancelled before the first file",
			ctx:  &stopAfter{Context: context.Background(), err: stop}, wantErr: stop.Error(), isStop: true,
		},
		{
			name: "cancelled after the first file",
			ctx:  &stopAfter{Context: context.Background(), n: 1, err: stop}, wantErr: "created before the error, kept: ", isStop: true, created: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			env := &Env{}
			if err := env.ScanDir(dir); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, dir)
			}
			err := env.CreateFiles(tc.ctx, 3, 100, rand.New(rand.NewPCG(1, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, stop) != tc.isStop {
				t.Fatalf("error %v, want one containing %q (wrapping the cancellation's cause: %v)", err, tc.wantErr, tc.isStop)
			}
			if len(env.Created) != tc.created {
				t.Fatalf("created %q, want %d files", env.Created, tc.created)
			}
			for _, name := range env.Created {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %v does not name %s, created before it", err, name)
				}
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s, created before the error, is gone: %v", name, err)
				}
			}
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				if ents, _ := os.ReadDir(dir); len(ents) != tc.created {
					t.Errorf("%d files in the directory, want %d", len(ents), tc.created)
				}
			}
		})
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func TestScanDir(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a", "sub/b", "sub/deeper/c d", ".git/HEAD", "sub/.git", "bad\nname"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	env := &Env{}
	if err := env.ScanDir(dir); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "link", "sub/b", "sub/deeper/c d"}; !slices.Equal(env.Files, want) {
		t.Errorf("Files = %q, want %q", env.Files, want)
	}
	if want := []string{"sub", "sub/deeper"}; !slices.Equal(env.Dirs, want) {
		t.Errorf("Dirs = %q, want %q", env.Dirs, want)
	}
	if len(env.Notes) != 1 || !strings.Contains(env.Notes[0], "line break") {
		t.Errorf("Notes = %q, want one about the name with a line break", env.Notes)
	}
	for _, bad := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "missing")} {
		if err := (&Env{}).ScanDir(bad); err == nil {
			t.Errorf("ScanDir(%s): no error", bad)
		}
	}
}

func TestReadCommits(t *testing.T) {
	testenv.Tool(t, "git")
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=scry", "-c", "user.email=scry@example.org"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "f")
		git("commit", "-q", "-m", fmt.Sprint("c", i))
	}
	git("branch", "side")
	hashes := strings.Fields(git("rev-list", "--all"))
	env := &Env{Dir: dir}
	env.ReadCommits(context.Background(), rand.New(rand.NewPCG(1, 1)))
	want := append(hashes, "main", "side", "HEAD", "HEAD^", "HEAD~1", "HEAD~2")
	if !slices.Equal(env.Commits, want) || len(env.Notes) != 0 {
		t.Errorf("Commits = %q (notes %q), want %q", env.Commits, env.Notes, want)
	}
	// Not a repository: the fallback, with a note.
	env = &Env{Dir: t.TempDir()}
	env.ReadCommits(context.Background(), rand.New(rand.NewPCG(1, 1)))
	if len(env.Commits) != 4 || env.Commits[0] != "HEAD" || len(env.Commits[3]) != 40 || len(env.Notes) != 1 || !strings.Contains(env.Notes[0], "not a git repository") {
		t.Errorf("outside a repository: Commits %q, notes %q", env.Commits, env.Notes)
	}
}

// TestPrepareGrammarFills: the commands name the files of the directory by relative and
// absolute path, <name> sometimes an existing file, and --value lists; no file is touched.
func TestPrepareGrammarFills(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := checksums(t, dir)
	vals, err := ParseValues([]string{"mode=fast,slow", "key=5..6"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := PrepareGrammar(context.Background(), GrammarOptions{
		Usages: mustUsages(t, "sort <file> -o <name>", "x --mode=<mode> <key> <number>"),
		Seed:   1, Dir: dir, Files: 3, Values: vals,
	})
	if err != nil {
		t.Fatal(err)
	}
	after := checksums(t, dir)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
	if len(f.Env.Created) != 3 || len(after) != 4 {
		t.Fatalf("created %q, %d files in all", f.Env.Created, len(after))
	}
	seen := map[string]bool{}
	for range 400 {
		cmds, _, err := f.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			w, err := shlex.Split(c.Text)
			if err != nil {
				t.Fatal(err)
			}
			switch w[0] {
			case "sort":
				if strings.HasPrefix(w[1], dir+"/") {
					seen["absolute"] = true
				} else if slices.Contains(f.Env.Files, w[1]) {
					seen["relative"] = true
				} else {
					t.Errorf("%q: %q is not a file of the directory", c.Text, w[1])
				}
				if w[3] == w[1] {
					seen["in place"] = true
				}
				if slices.Contains(f.Env.Files, w[3]) && w[3] != w[1] {
					seen["existing name"] = true
				}
			case "x":
				if w[1] != "--mode=fast" && w[1] != "--mode=slow" || w[2] != "5" && w[2] != "6" {
					t.Errorf("%q: values not from --value", c.Text)
				}
				seen["number "+map[bool]string{true: "zero", false: "other"}[w[3] == "0"]] = true
			}
		}
	}
	for _, want := range []string{"absolute", "relative", "in place", "existing name", "number zero", "number other"} {
		if !seen[want] {
			t.Errorf("no command with %s", want)
		}
	}
}

// TestRelative: with Relative, every path the fuzzer writes (files found and created, in
// subdirectories too, directories, new names, a file named earlier in the command) is relative
// to the directory, never absolute and never climbing out of it with .., and every file and
// directory found is still offered. Without it, absolute paths appear (the same check fails).
func TestRelative(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sub", "sub/deeper", "a b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"top.txt", "sub/in.txt", "sub/deeper/x", "a b/it's"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	usages := mustUsages(t, "cp <file> <name>", "ls <directory>", "sort -o <output> <path>...", "git mv <source> <destination>",
		"mkdir <dir>", "tar -cf <name> <pathspec>...")
	for _, relative := range []bool{true, false} {
		f, err := PrepareGrammar(context.Background(), GrammarOptions{Usages: usages, Seed: 3, Dir: dir, Files: 4, Shell: true, Relative: relative})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		absolute := 0
		for range 1500 {
			cmds, _, err := f.Next()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cmds {
				words, err := shlex.Split(c.Text)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range words[1:] {
					if w == "</dev/null" || strings.HasPrefix(w, "-") {
						continue
					}
					seen[w] = true
					if filepath.IsAbs(w) || strings.Contains(w, dir) {
						absolute++
						if relative {
							t.Errorf("%q: %q is absolute", c.Text, w)
						}
					}
					if w == ".." || strings.HasPrefix(w, "../") || strings.Contains(w, "/../") || strings.HasSuffix(w, "/..") {
						t.Errorf("%q: %q climbs out of the directory", c.Text, w)
					}
				}
			}
		}
		if !relative {
			if absolute == 0 {
				t.Error("without Relative, no absolute path was written: the check cannot fail")
			}
			continue
		}
		for _, p := range append(append([]string{}, f.Env.Files...), f.Env.Dirs...) {
			if !seen[p] {
				t.Errorf("%q, under the directory, was never offered", p)
			}
		}
	}
}

// TestShellWorkloadRuns: a --shell workload run by sh line by line executes every command with
// exactly the arguments the grammar chose, even for commands that read standard input.
func TestShellWorkloadRuns(t *testing.T) {
	testenv.Tool(t, "sh")
	dir := t.TempDir()
	f, err := PrepareGrammar(context.Background(), GrammarOptions{
		Usages: mustUsages(t, `printf '%s\0' <file> <name> [<word>]`, "cat"),
		Seed:   2, Dir: dir, Files: 4, Shell: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var script bytes.Buffer
	var want []string
	for script.Len() == 0 || len(want) < 60 {
		cmds, lines, err := f.Next()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cmds {
			script.WriteString(lines[i])
			if !strings.HasSuffix(lines[i], " </dev/null\n") {
				t.Fatalf("line %q does not read /dev/null", lines[i])
			}
			w, err := shlex.Split(c.Text)
			if err != nil {
				t.Fatal(err)
			}
			if w[0] == "printf" {
				want = append(want, w[2:]...)
			}
		}
	}
	cmd := exec.Command("sh")
	cmd.Dir = dir
	cmd.Stdin = &script
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, want) {
		t.Errorf("sh printed\n%q\nwant\n%q", got, want)
	}
}
