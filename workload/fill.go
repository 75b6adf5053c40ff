package workload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
)

// Filling placeholders (Barowsky et al., Improving Application Crash Consistency with Symbolic
// Execution and Fuzzing (2021) §5.2.1-5.2.2): the fuzzer creates files with random names and
// contents in the directory the commands will run in, and offers every file found there, by
// relative and by absolute path (relative only with Env.Relative); <commit> takes the commits of the git repository there and
// relative ones (HEAD~n); new names, numbers and words are drawn at random.

// Placeholder classes: what a placeholder is filled with, chosen from its name (classOf).
const (
	ClassFile      = "file"      // an existing file, relative or absolute
	ClassName      = "name"      // a new name, or an existing file's (sort in place)
	ClassNumber    = "number"    // 0, small or large
	ClassCommit    = "commit"    // a commit of the repository at the directory, or a relative one
	ClassDirectory = "directory" // an existing directory, or a new name
	ClassOption    = "option"    // an option from the help text's option table
	ClassWord      = "word"      // a random word
)

// classSynonyms maps placeholder names to classes; a name not listed here is looked up again
// without trailing digits (file2) and by its last -/_-separated part (input-file), and is a
// ClassWord when nothing matches.
var classSynonyms = map[string]string{
	"file": ClassFile, "files": ClassFile, "path": ClassFile, "paths": ClassFile, "pathspec": ClassFile,
	"source": ClassFile, "src": ClassFile, "input": ClassFile, "infile": ClassFile, "filename": ClassFile,
	"pathname": ClassFile, "f": ClassFile, "from": ClassFile,

	"name": ClassName, "dest": ClassName, "destination": ClassName, "dst": ClassName, "output": ClassName,
	"outfile": ClassName, "newname": ClassName, "new-name": ClassName, "newfile": ClassName, "to": ClassName,
	"link-name": ClassName, "target": ClassName,

	"number": ClassNumber, "num": ClassNumber, "n": ClassNumber, "count": ClassNumber, "size": ClassNumber,
	"lines": ClassNumber, "bytes": ClassNumber, "depth": ClassNumber, "level": ClassNumber, "seed": ClassNumber,
	"offset": ClassNumber, "length": ClassNumber, "len": ClassNumber, "int": ClassNumber, "integer": ClassNumber,
	"key": ClassNumber, "value": ClassNumber, "nth": ClassNumber, "max": ClassNumber, "min": ClassNumber,

	"commit": ClassCommit, "commit-ish": ClassCommit, "committish": ClassCommit, "rev": ClassCommit,
	"revision": ClassCommit, "tree-ish": ClassCommit, "treeish": ClassCommit, "object": ClassCommit,
	"branch": ClassCommit, "tag": ClassCommit, "ref": ClassCommit, "refname": ClassCommit,
	"upstream": ClassCommit, "start-point": ClassCommit, "newbase": ClassCommit,

	"directory": ClassDirectory, "dir": ClassDirectory, "folder": ClassDirectory, "destdir": ClassDirectory,

	"option": ClassOption, "options": ClassOption, "opt": ClassOption, "opts": ClassOption,
	"flag": ClassOption, "flags": ClassOption,
}

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

// classOf returns the class of a placeholder name (case-insensitive).
func classOf(name string) string {
	key := strings.ToLower(name)
	if c, ok := classSynonyms[key]; ok {
		return c
	}
	if k := trailingDigits.ReplaceAllString(key, ""); k != key && k != "" {
		if c, ok := classSynonyms[k]; ok {
			return c
		}
	}
	if i := strings.LastIndexAny(key, "-_"); i >= 0 && i+1 < len(key) {
		if c, ok := classSynonyms[key[i+1:]]; ok {
			return c
		}
	}
	return ClassWord
}

// UserValues are the values given with --value NAME=V1,V2,...: by lower-case placeholder name,
// the literal values and the integer ranges LO..HI.
type UserValues map[string]*valueList

type valueList struct {
	Lits   []string
	Ranges [][2]int64
}

var rangeValue = regexp.MustCompile(`^(-?[0-9]+)\.\.(-?[0-9]+)$`)

// ParseValues parses --value arguments: NAME=V1,V2,... where NAME is a placeholder's name
// (with or without <>, any case), values are separated by commas (a value cannot hold a comma)
// and LO..HI stands for a random integer from LO to HI. Repeating a name adds values. Errors:
// no '=', an empty name, a value with a line break, a range with LO > HI or out of int64.
func ParseValues(args []string) (UserValues, error) {
	out := UserValues{}
	for _, a := range args {
		name, vals, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("--value %q: not NAME=V1,V2,... (e.g. --value 'key=1..100' or --value 'mode=all,no')", a)
		}
		name = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(name), "<"), ">"))
		if name == "" {
			return nil, fmt.Errorf("--value %q: no placeholder name before '='", a)
		}
		if strings.ContainsAny(vals, "\n\r") {
			return nil, fmt.Errorf("--value %q: a value holds a line break (a workload has one command per line)", a)
		}
		l := out[name]
		if l == nil {
			l = &valueList{}
			out[name] = l
		}
		for _, v := range strings.Split(vals, ",") {
			if m := rangeValue.FindStringSubmatch(v); m != nil {
				lo, err1 := strconv.ParseInt(m[1], 10, 64)
				hi, err2 := strconv.ParseInt(m[2], 10, 64)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("--value %q: range %q is out of the 64-bit integers", a, v)
				}
				if lo > hi {
					return nil, fmt.Errorf("--value %q: range %q is empty (%d > %d)", a, v, lo, hi)
				}
				l.Ranges = append(l.Ranges, [2]int64{lo, hi})
				continue
			}
			l.Lits = append(l.Lits, v)
		}
	}
	return out, nil
}

// shellSafe matches a word a POSIX shell reads as itself.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellWord returns s as one shell word: itself when that is safe, else single-quoted.
func shellWord(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return exec.ShellQuote(s)
}

// Env is what placeholders are filled with: the files and directories under the directory
// the commands run in, the commits of its repository, the user's values. The zero Env has
// none (then <file> takes new names and <commit> relative ones).
type Env struct {
	// Dir is the absolute path of the directory the commands run in.
	Dir string
	// Files and Dirs are the paths of the files (anything but a directory) and subdirectories
	// under Dir, relative to it, sorted.
	Files, Dirs []string
	// Commits are the commits of the repository at Dir (newest first), then its branches and
	// tags, then HEAD and relative commits (HEAD^, HEAD~n).
	Commits []string
	// Values are the user's --value lists.
	Values UserValues
	// Shell: names drawn for the workload may hold characters special to the shell.
	Shell bool
	// Relative: every path is written relative to Dir (never absolute; the paths found under
	// Dir never climb out of it with ..), so the workload runs the same in a copy of Dir, as
	// `scry fs check --workload` runs it in crash directories.
	Relative bool
	// Created are the files CreateFiles made, relative to Dir.
	Created []string
	// Notes are remarks for the user (fallbacks taken, limits reached).
	Notes []string
}

// MaxScanned bounds how many files and directories ScanDir records.
const MaxScanned = 10000

// ScanDir records the files and directories under dir (recursively, not following symbolic
// links, skipping .git: a repository's internals are not inputs) in env, by path
// relative to dir. Names holding a line break are skipped (a workload line cannot hold them),
// and scanning stops after MaxScanned entries; both are noted. Errors: dir is not a directory
// or cannot be read.
func (env *Env) ScanDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--dir %s is not a directory", dir)
	}
	env.Dir = abs
	env.Files, env.Dirs = nil, nil
	skipped, full := 0, false
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == abs {
				return err
			}
			env.Notes = append(env.Notes, fmt.Sprintf("--dir: skipped %s: %v", p, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == abs {
			return nil
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" { // a repository, or a worktree's link to one
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if strings.ContainsAny(rel, "\n\r") {
			skipped++
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if len(env.Files)+len(env.Dirs) >= MaxScanned {
			full = true
			return fs.SkipAll
		}
		if d.IsDir() {
			env.Dirs = append(env.Dirs, rel)
		} else {
			env.Files = append(env.Files, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	if skipped > 0 {
		env.Notes = append(env.Notes, fmt.Sprintf("--dir: %d names with a line break left out (a workload line cannot hold them)", skipped))
	}
	if full {
		env.Notes = append(env.Notes, fmt.Sprintf("--dir: more than %d files and directories: only the first %d are used", MaxScanned, MaxScanned))
	}
	return nil
}

// gitTimeout bounds each git query.
const gitTimeout = 20 * time.Second

// MaxCommits bounds how many commit hashes ReadCommits records.
const MaxCommits = 1000

// ReadCommits fills env.Commits from the git repository at env.Dir (§5.2.1: the commits of the
// repository the fuzzer runs in, and relative pointers to the previous ones): the hashes of
// `git rev-list --all` (newest first, at most MaxCommits), the branches and tags, HEAD, HEAD^
// and HEAD~n for each earlier commit up to HEAD~20. When env.Dir is not a repository, has no
// commit, or git cannot run, it notes why and falls back to HEAD, HEAD^, HEAD~2 and a random
// 40-digit hash (commands then fail as git fails on a bad revision).
func (env *Env) ReadCommits(ctx context.Context, r *rand.Rand) {
	git := func(args ...string) ([]string, error) {
		o := exec.RunCommand(ctx, append([]string{"git", "-C", env.Dir}, args...), "", gitTimeout)
		if o.Failed() {
			msg := strings.TrimSpace(string(o.Stderr))
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			if msg == "" {
				msg = o.Describe()
			}
			return nil, errors.New(msg)
		}
		var lines []string
		sc := bufio.NewScanner(strings.NewReader(string(o.Stdout)))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				lines = append(lines, l)
			}
		}
		return lines, nil
	}
	hashes, err := git("rev-list", "--all", fmt.Sprintf("--max-count=%d", MaxCommits))
	if err == nil && len(hashes) == 0 {
		err = errors.New("the repository has no commit")
	}
	if err != nil {
		var fake [20]byte
		for i := range fake {
			fake[i] = byte(r.UintN(256))
		}
		env.Commits = []string{"HEAD", "HEAD^", "HEAD~2", fmt.Sprintf("%x", fake)}
		env.Notes = append(env.Notes, fmt.Sprintf("<commit>: no commits from %s (%v): using HEAD, HEAD^, HEAD~2 and a random hash", env.Dir, err))
		return
	}
	env.Commits = append(env.Commits, hashes...)
	if refs, err := git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags"); err == nil {
		for _, ref := range refs {
			if !strings.ContainsAny(ref, "\n\r") {
				env.Commits = append(env.Commits, ref)
			}
		}
	}
	env.Commits = append(env.Commits, "HEAD")
	if len(hashes) > 1 {
		env.Commits = append(env.Commits, "HEAD^")
	}
	for n := 1; n < len(hashes) && n <= 20; n++ {
		env.Commits = append(env.Commits, fmt.Sprintf("HEAD~%d", n))
	}
}

// DefaultMaxFileSize is the default bound on the size of a created file (bytes).
const DefaultMaxFileSize = 1 << 20

// CreateFiles creates n new files directly in env.Dir (ScanDir first) with random names and
// contents (§5.2.2: "we created a random number of files with random filenames and contents"),
// recording them in env.Created and env.Files. Sizes vary over empty, up to 64 bytes, up to
// 4 KiB, up to 64 KiB and up to maxSize bytes (the first five files take one of each, in random
// order, so that large files are there from n = 5 on); contents are text lines (sortable),
// text with unusual bytes (NUL, CR, invalid UTF-8, a last line without newline) or random
// binary. Files are created with O_EXCL through package safefile: an existing file is never
// touched (another name is drawn). Errors: a file cannot be created or written (the file being
// written is removed; the ones before it stay and are named), or ctx is cancelled between two
// files (its cause, e.g. an *exec.Interrupted, is wrapped).
func (env *Env) CreateFiles(ctx context.Context, n int, maxSize int64, r *rand.Rand) error {
	if n <= 0 {
		return nil
	}
	if maxSize <= 0 {
		maxSize = DefaultMaxFileSize
	}
	classes := r.Perm(len(sizeClasses))
	for i := range n {
		class := r.IntN(len(sizeClasses))
		if i < len(classes) {
			class = classes[i]
		}
		size := sizeClasses[class].draw(r, maxSize)
		err := context.Cause(ctx)
		if err == nil {
			err = env.createOne(size, r)
		}
		if err != nil {
			if len(env.Created) > 0 {
				return fmt.Errorf("%w (created before the error, kept: %s)", err, strings.Join(env.Created, ", "))
			}
			return err
		}
	}
	return nil
}

// sizeRange is a range of file sizes in bytes, inclusive.
type sizeRange struct{ lo, hi int64 }

// sizeClasses are the size ranges of created files; the last one ends at the maximum size.
var sizeClasses = []sizeRange{{0, 0}, {1, 64}, {65, 4096}, {4097, 65536}, {65537, 1 << 62}}

// draw returns a size in the range, clipped to maxSize, uniformly on a logarithmic scale so
// that sizes near the low end are as likely as near the high end.
func (c sizeRange) draw(r *rand.Rand, maxSize int64) int64 {
	lo, hi := min(c.lo, maxSize), min(c.hi, maxSize)
	if hi <= lo {
		return lo
	}
	if lo == 0 {
		lo = 1
	}
	// A power of two between lo and hi, then a uniform size within it.
	low, top := bits.Len64(uint64(lo)), bits.Len64(uint64(hi))
	b := low + r.IntN(top-low+1)
	from := max(lo, int64(1)<<(b-1))
	to := min(hi, int64(1)<<b-1)
	if to < from {
		return from
	}
	return from + r.Int64N(to-from+1)
}

func (env *Env) createOne(size int64, r *rand.Rand) error {
	const tries = 100
	for range tries {
		name := newName(r, env.Shell)
		path := filepath.Join(env.Dir, name)
		f, err := safefile.Create(path, safefile.Policy{What: "--files"})
		if errors.Is(err, safefile.ErrExists) {
			continue
		}
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		werr := writeContent(w, size, r)
		if werr == nil {
			werr = w.Flush()
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path) // ours: created with O_EXCL just now
			return fmt.Errorf("--files: writing %s: %w", path, werr)
		}
		env.Created = append(env.Created, name)
		env.Files = insertSorted(env.Files, name)
		return nil
	}
	return fmt.Errorf("--files: %d random names in %s all exist", tries, env.Dir)
}

func insertSorted(list []string, s string) []string {
	i := 0
	for i < len(list) && list[i] < s {
		i++
	}
	if i < len(list) && list[i] == s {
		return list
	}
	list = append(list, "")
	copy(list[i+1:], list[i:])
	list[i] = s
	return list
}
