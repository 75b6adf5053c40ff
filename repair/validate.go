package repair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// Validation (the rebuild after PMBugAssist's own check, Huang §4.3.5, which the dissertation
// leaves to inspection): the patched sources are written into a scratch copy of the source
// tree, the build command runs there, and the report's own check (report.Check: the program,
// its options, pools and workload) runs again on the rebuilt program. A repair is kept when
// every finding it repairs is gone and no finding appears that the original report did not
// have at the same place (performance findings included: a repair must not add a redundant
// flush or fence). All repairs are tried together first; when that fails, one at a time, each
// with its next candidates (the search's blocking constraints enumerate them).

// maxTree bounds the bytes of a source tree validation copies.
const maxTree = 1 << 30

// scratch is the copy of the source tree validation builds in.
type scratch struct {
	root    string            // the copy of the source tree
	tmp     string            // pools, traces
	written map[string]string // files overwritten in the copy -> their original content
}

// newScratch copies the tree at src (without .git directories) into a new temporary directory,
// outside src (scratchParents).
func newScratch(src string) (*scratch, error) {
	var dir string
	err := fmt.Errorf("no temporary directory outside the source tree %s to copy it into: set TMPDIR to one", src)
	for _, parent := range scratchParents(src) {
		if dir, err = os.MkdirTemp(parent, "scry-fix-"); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	s := &scratch{root: filepath.Join(dir, "src"), tmp: filepath.Join(dir, "run"), written: map[string]string{}}
	err = exec.CopyTree(s.root, src, exec.TreeOptions{
		Skip:        func(rel string, d fs.DirEntry) bool { return d.IsDir() && d.Name() == ".git" },
		MaxBytes:    maxTree,
		SkipSpecial: true, // sockets, devices, pipes: not part of a build
	})
	if errors.Is(err, exec.ErrTreeTooLarge) {
		err = fmt.Errorf("the source tree %s holds more than %d MiB: run scry fix in the program's own directory (--dir)", src, maxTree>>20)
	}
	if err == nil {
		err = os.MkdirAll(s.tmp, 0o755)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// scratchParents returns where the scratch copy of the source tree src may be made, in order of
// preference: the temporary directory ($TMPDIR), then /var/tmp, /tmp and src's parent, less
// those inside src (a copy made inside the tree it copies would copy itself: TMPDIR set to a
// directory of the source tree).
func scratchParents(src string) []string {
	real := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p
	}
	root := real(src)
	var out []string
	for _, p := range []string{os.TempDir(), "/var/tmp", "/tmp", filepath.Dir(root)} {
		if !under(real(p), root) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func (s *scratch) remove() { os.RemoveAll(filepath.Dir(s.root)) }

// write puts files (paths below src) into the copy, after restoring what earlier attempts
// changed.
func (s *scratch) write(src string, files []fileDiff) error {
	for path, old := range s.written {
		if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
			return err
		}
	}
	s.written = map[string]string{}
	for _, fd := range files {
		rel, err := filepath.Rel(src, fd.path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("%s is outside the source tree %s that --build rebuilds: run scry fix in a directory that holds it", fd.path, src)
		}
		dst := filepath.Join(s.root, rel)
		mode := os.FileMode(0o644)
		if st, err := os.Stat(dst); err == nil {
			mode = st.Mode().Perm()
		}
		s.written[dst] = fd.old
		if err := os.WriteFile(dst, []byte(fd.new), mode); err != nil {
			return err
		}
	}
	return nil
}

// build runs the build command in the copy; the error quotes its output.
func (s *scratch) build(ctx context.Context, cmd string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultBuildTimeout
	}
	c := exec.Checker{Args: []string{"/bin/sh", "-c", cmd}, Timeout: timeout}
	out := c.Run(ctx, s.root, s.root)
	if out.Err != nil {
		return fmt.Errorf("build command %q: %w", cmd, out.Err)
	}
	if out.Failed() {
		msg := strings.TrimSpace(string(out.Stderr))
		if msg == "" {
			msg = strings.TrimSpace(string(out.Stdout))
		}
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return fmt.Errorf("build command %q %s: %s", cmd, out.Describe(), msg)
	}
	return nil
}

// under reports whether path is below (or is) root.
func under(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// rerun runs the recorded check rc again, with every path below srcRoot moved below
// scratchRoot (none when srcRoot is ""), the pools the run created given fresh paths in tmp,
// and the trace kept in tmp. It returns the report and the trace's path. Errors: the check
// cannot run again (pipeline.CheckFromRecord; a pool that existed before the check; a
// program outside srcRoot), or it failed (the program could not run, was killed, or the
// check was interrupted).
func rerun(ctx context.Context, rc *report.Check, srcRoot, scratchRoot, tmp string) (*report.Report, string, error) {
	c, err := pipeline.CheckFromRecord(rc)
	if err != nil {
		return nil, "", err
	}
	mapPath := func(p string) string {
		if srcRoot == "" || !under(p, srcRoot) {
			return p
		}
		rel, _ := filepath.Rel(srcRoot, p)
		return filepath.Join(scratchRoot, rel)
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(rc.Dir, p)
	}
	args := slices.Clone(rc.Args)
	if strings.Contains(args[0], "/") {
		args[0] = abs(args[0])
	} else if rc.Program != "" {
		args[0] = rc.Program
	}
	if srcRoot != "" && !under(args[0], srcRoot) {
		return nil, "", fmt.Errorf("the checked program %s is not below the source tree %s that --build rebuilds: run scry fix in a directory that holds the program and its sources", args[0], srcRoot)
	}
	args[0] = mapPath(args[0])
	crashMode := pipeline.HasPool(args)
	pm := slices.Clone(rc.PM)
	for i, pool := range rc.Pools {
		if crashMode {
			break // scry creates the pool itself
		}
		if !pool.Created {
			return nil, "", fmt.Errorf("the pool %s existed before the check ran: a run again cannot start from the same content (check a program that creates its pool, or use {pool})", pool.Path)
		}
		fresh := filepath.Join(tmp, fmt.Sprintf("pool%d", i), filepath.Base(pool.Path))
		if err := os.MkdirAll(filepath.Dir(fresh), 0o755); err != nil {
			return nil, "", err
		}
		os.Remove(fresh)
		named := false
		for j := 1; j < len(args); j++ {
			if abs(args[j]) == pool.Path {
				args[j], named = fresh, true
			} else if strings.Contains(args[j], pool.Path) {
				args[j], named = strings.ReplaceAll(args[j], pool.Path, fresh), true
			}
		}
		if !named {
			return nil, "", fmt.Errorf("the pool %s is not named in the program's arguments, so a run again cannot be given a fresh one", pool.Path)
		}
		for _, g := range rc.PM {
			if ok, _ := filepath.Match(g, pool.Path); ok {
				pm = append(pm, escapeGlob(fresh))
				break
			}
		}
	}
	for j := 1; j < len(args); j++ {
		if a := abs(args[j]); !strings.Contains(args[j], exec.PoolPlaceholder) && srcRoot != "" && under(a, srcRoot) {
			if _, err := os.Stat(a); err == nil {
				args[j] = mapPath(a)
			}
		}
	}
	c.Recording.Args, c.Recording.PM = args, pm
	c.Recording.Stdout, c.Recording.Stderr = io.Discard, io.Discard
	c.Recording.Trace = filepath.Join(tmp, "run.trace")
	os.Remove(c.Recording.Trace)
	if c.Explore.Pool != "" {
		c.Explore.Pool = filepath.Join(tmp, "crash.pool")
		os.Remove(c.Explore.Pool)
	}
	rep, err := c.Run(ctx)
	var pf *pipeline.ProgramFailed
	if errors.As(err, &pf) {
		return rep, c.Recording.Trace, fmt.Errorf("the program %s", strings.TrimPrefix(pf.Error(), pf.Prog+" "))
	}
	if err != nil {
		return rep, c.Recording.Trace, err
	}
	return rep, c.Recording.Trace, nil
}

// escapeGlob makes a path a glob that matches only itself.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lineMap maps the lines of a file before a repair to the lines after it.
type lineMap struct {
	old, new []string
	m        []int // old line (1-based) -> new line; 0 when deleted
}

// newLineMap maps fd's lines; a deleted line whose text reappears (a moved statement) maps to
// the reappearance nearest its old place.
func newLineMap(fd fileDiff) *lineMap {
	lm := &lineMap{old: strings.SplitAfter(fd.old, "\n"), new: strings.SplitAfter(fd.new, "\n")}
	lm.m = make([]int, len(lm.old)+1)
	// Walk both texts with the changes (sorted by offset): insertions shift, deletions drop.
	off, shift := 0, 0
	ci := 0
	for l := 1; l <= len(lm.old); l++ {
		start := off
		for ci < len(fd.changes) && (fd.changes[ci].off < start || fd.changes[ci].off == start && fd.changes[ci].off == fd.changes[ci].end) {
			c := fd.changes[ci]
			shift += strings.Count(c.text, "\n") - strings.Count(fd.old[c.off:c.end], "\n")
			ci++
		}
		lm.m[l] = l + shift
		for _, c := range fd.changes {
			if c.off < c.end && start >= c.off && start < c.end {
				lm.m[l] = 0
			}
		}
		off += len(lm.old[l-1])
	}
	for l := 1; l < len(lm.m); l++ {
		if lm.m[l] != 0 {
			continue
		}
		text := strings.TrimSpace(lm.old[l-1])
		best := 0
		for n, nl := range lm.new {
			if text != "" && strings.TrimSpace(nl) == text && (best == 0 || abs(n+1-l) < abs(best-l)) {
				best = n + 1
			}
		}
		lm.m[l] = best
	}
	return lm
}

// findingKey identifies a finding across a repair: kind, file, line (after the repair) and
// function.
func findingKey(kind report.Kind, file string, line int, fn string) string {
	return fmt.Sprintf("%s|%s|%d|%s", kind, file, line, fn)
}

func lineKey(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// attempt is the result of validating a set of repairs.
type attempt struct {
	err   error          // the build or the check failed
	rep   *report.Report // the check's report
	gone  map[int]bool   // findings of the original report no longer shown
	added []string       // findings the repaired program shows that the original did not
}

// try validates repairs together: writes them into the copy, builds, runs the check again and
// compares its findings with those of the original report and of base (the check of the
// unchanged copy; nil for that check itself).
func (f *fixer) try(ctx context.Context, sc *scratch, repairs []*Repair, base *report.Report) *attempt {
	files := f.files(repairs)
	a := &attempt{gone: map[int]bool{}}
	if a.err = sc.write(f.o.Dir, files); a.err != nil {
		return a
	}
	if a.err = sc.build(ctx, f.o.Build, f.o.BuildTimeout); a.err != nil {
		return a
	}
	rep, _, err := rerun(ctx, f.rep.Check, f.o.Dir, sc.root, sc.tmp)
	a.rep = rep
	if err == nil && rep == nil {
		err = errors.New("the check gave no report")
	}
	if err != nil {
		a.err = err
		return a
	}
	maps := map[string]*lineMap{}
	for _, fd := range files {
		maps[fd.path] = newLineMap(fd)
	}
	// Findings name files as the compiler saw them: the copy's paths for the rebuilt program.
	fileOf := func(file string) string {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(f.rep.Check.Dir, p)
		}
		if under(p, sc.root) {
			rel, _ := filepath.Rel(sc.root, p)
			p = filepath.Join(f.o.Dir, rel)
		}
		return p
	}
	oldKey := func(fd *report.Finding) string {
		file, line := fileOf(fd.Location.File), fd.Location.Line
		if lm := maps[file]; lm != nil && line < len(lm.m) {
			line = lm.m[line]
		}
		return findingKey(fd.Kind, file, line, fd.Location.Function)
	}
	had := map[string]bool{}
	for i := range f.rep.Findings {
		had[oldKey(&f.rep.Findings[i])] = true
	}
	if base != nil {
		for i := range base.Findings {
			had[oldKey(&base.Findings[i])] = true
		}
	}
	// A crash finding of the repaired program whose lost stores the original report already
	// blames in a finding this attempt does not repair is that bug seen at another crash point
	// (crash findings are placed and clustered by crash point, which a repair moves), not a
	// new one.
	targets := map[int]bool{}
	for _, r := range repairs {
		for _, n := range r.Findings {
			targets[n] = true
		}
	}
	blamed := map[string]bool{}
	for i := range f.rep.Findings {
		fd := &f.rep.Findings[i]
		if targets[i+1] || fd.Class == report.Performance {
			continue
		}
		blamed[lineKey(fileOf(fd.Location.File), fd.Location.Line)] = true
		for _, r := range fd.Related {
			blamed[lineKey(fileOf(r.File), r.Line)] = true
		}
	}
	back := map[string]map[int]int{}
	for path, lm := range maps {
		back[path] = map[int]int{}
		for old, nw := range lm.m {
			if nw > 0 {
				back[path][nw] = old
			}
		}
	}
	known := func(g *report.Finding) bool {
		if g.Crash == nil {
			return false
		}
		for _, r := range g.Related {
			if r.Role != report.RoleUnpersisted {
				continue
			}
			file, line := fileOf(r.File), r.Line
			if b := back[file]; b != nil {
				line = b[line]
			}
			if blamed[lineKey(file, line)] {
				return true
			}
		}
		return false
	}
	now := map[string]bool{}
	for i := range rep.Findings {
		g := &rep.Findings[i]
		k := findingKey(g.Kind, fileOf(g.Location.File), g.Location.Line, g.Location.Function)
		now[k] = true
		if !had[k] && g.Class != report.Unconfirmed && !known(g) {
			a.added = append(a.added, fmt.Sprintf("%s at %s:%d", g.Kind, filepath.Base(g.Location.File), g.Location.Line))
		}
	}
	for i := range f.rep.Findings {
		a.gone[i+1] = !now[oldKey(&f.rep.Findings[i])]
	}
	return a
}

// ok reports whether the attempt shows the findings of repairs gone and nothing new.
func (a *attempt) ok(repairs []*Repair) bool {
	if a.err != nil || len(a.added) > 0 {
		return false
	}
	for _, r := range repairs {
		for _, n := range r.Findings {
			if !a.gone[n] {
				return false
			}
		}
	}
	return true
}

// why says why an attempt failed.
func (a *attempt) why(repairs []*Repair) string {
	switch {
	case a.err != nil:
		return a.err.Error()
	case len(a.added) > 0:
		return "the repaired program has new findings: " + strings.Join(a.added, ", ")
	}
	var left []string
	for _, r := range repairs {
		for _, n := range r.Findings {
			if !a.gone[n] {
				left = append(left, fmt.Sprint(n))
			}
		}
	}
	return "finding(s) " + strings.Join(left, ", ") + " still shown"
}

// validate rebuilds and checks the repairs, keeping those that pass (fixProblem.accepted).
func (f *fixer) validate(ctx context.Context) error {
	if f.rep.Check == nil {
		return errors.New("the report records no check to run again (it was written by scry analyze or scry explore, or by an older scry): validation needs a report of `scry check --format json -o REPORT`")
	}
	if _, err := pipeline.CheckFromRecord(f.rep.Check); err != nil {
		return err
	}
	t0 := time.Now()
	defer func() { f.validateSeconds = time.Since(t0).Seconds() }()
	f.note("copying %s to validate", f.o.Dir)
	sc, err := newScratch(f.o.Dir)
	if err != nil {
		return err
	}
	defer sc.remove()
	start := time.Now()
	// The unchanged program, built and checked again: the check must run, and what it shows
	// is not new.
	f.note("building and checking the unchanged program")
	b := f.try(ctx, sc, nil, nil)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if b.err != nil {
		return fmt.Errorf("validation cannot run: on the unchanged source tree, %w", b.err)
	}
	base := b.rep
	var all []*Repair
	var live []*fixProblem
	for _, fp := range f.problems {
		if fp.current != nil {
			all = append(all, fp.current)
			live = append(live, fp)
		}
	}
	if len(all) == 0 {
		return nil
	}
	f.note("rebuilding and checking %d repair(s) together", len(all))
	a := f.try(ctx, sc, all, base)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	share := time.Since(start).Seconds() / float64(len(all))
	if a.ok(all) {
		for _, fp := range live {
			fp.current.ValidateSeconds += share
			fp.current.Validated = true
			fp.current.gone = a.gone
			fp.accepted = fp.current
		}
		return nil
	}
	f.note("together they fail (%s): one at a time", a.why(all))
	// One at a time, each on top of those already kept.
	var kept []*Repair
	for _, fp := range live {
		for fp.current != nil {
			t0 := time.Now()
			set := append(slices.Clone(kept), fp.current)
			a := f.try(ctx, sc, set, base)
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			fp.current.ValidateSeconds += time.Since(t0).Seconds()
			if a.ok(set) {
				fp.current.Validated = true
				fp.current.gone = a.gone
				fp.accepted = fp.current
				kept = append(kept, fp.current)
				break
			}
			f.note("repair of finding(s) %v (%s) rejected: %s", fp.current.Findings, fp.current.Summary, a.why([]*Repair{fp.current}))
			if fp.tried >= f.o.Alternatives {
				fp.reason = fmt.Sprintf("the rebuilt program still failed the check with each of the %d repairs tried (last: %s)", fp.tried, a.why([]*Repair{fp.current}))
				fp.current = nil
				break
			}
			if _, err := f.nextCandidate(fp); err != nil {
				return err
			}
		}
	}
	return nil
}

// Apply writes a validated patch to the source files it changes (scry fix --apply). Errors:
// the patch is not validated, or a file changed since scry fix read it (nothing is written
// then).
func (r *Result) Apply() error {
	if !r.Validated {
		return errors.New("--apply writes only a validated patch: give --build CMD (and every repair must pass it)")
	}
	for _, fd := range r.files {
		cur, err := os.ReadFile(fd.path)
		if err != nil {
			return err
		}
		if string(cur) != fd.old {
			return fmt.Errorf("%s changed since scry fix read it: nothing applied", fd.path)
		}
	}
	for _, fd := range r.files {
		st, err := os.Stat(fd.path)
		if err != nil {
			return err
		}
		tmp := fd.path + ".scry-fix.tmp"
		if err := os.WriteFile(tmp, []byte(fd.new), st.Mode().Perm()); err != nil {
			return err
		}
		if err := os.Rename(tmp, fd.path); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}
