package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// Recovery loads: where the program, run again after a crash, reads what the crash did not
// persist (XFDetector, Liu et al., ASPLOS'20, §3: a post-failure read of a location the
// pre-failure run did not make durable, a cross-failure read; Yashme, ASPLOS'22, §3: a
// post-crash read of a torn store, a persistency race).
//
// A crash finding of PM crash exploration names the crash point and the stores its failing state
// did not persist; the re-execution that failed read some of those bytes, and where it read them
// first is what a developer looks at next (the recovery that trusted them, or the operation that
// met them). recoveryLoads rebuilds each finding's failing image (one walk of the trace for all,
// explore.RebuildLost), runs the program on it with the rest of the workload under the recording
// runtime (loads traced, the image registered as PM), and names the first traced load that reads
// a byte the state left different from what the program wrote (report.RoleRecoveryLoad), with the
// store that wrote it, in the finding's related locations and message. Loads by uninstrumented
// code (libpmemobj's own reads of its pool) are not traced: a finding whose failing run read the
// bytes only there gets no recovery load, and a warning says so.

// recoveryLoadTimeout bounds each traced run on a crash image: recoveryLoadFactor times what
// bounded the exploration's runs (explore.Result.RunBound; tracing slows the program), within
// [minRecoveryLoadTimeout, maxRecoveryLoadTimeout]. A run past it (a failing state that hangs)
// is stopped and its trace so far searched.
func recoveryLoadTimeout(runBound time.Duration) time.Duration {
	return min(max(recoveryLoadFactor*runBound, minRecoveryLoadTimeout), maxRecoveryLoadTimeout)
}

const (
	recoveryLoadFactor     = 4
	minRecoveryLoadTimeout = 2 * time.Second
	maxRecoveryLoadTimeout = 30 * time.Second
)

// MaxRecoveryLoads bounds the findings of one exploration whose recovery load is looked for (one
// traced run each), in report order.
const MaxRecoveryLoads = 32

// recoveryLoads adds the recovery load of each PM crash finding of rep (above), read from the
// trace tf (open: one more pass over the file the exploration read); target is the
// program with {pool}, w the workload, assume the stores the exploration assumed durable,
// runBound what bounded its runs (recoveryLoadTimeout). What fails is a warning, and the findings
// stay as they are.
func recoveryLoads(ctx context.Context, rep *report.Report, tf *trace.File, x Exploration, target []string, w workload.Workload, assume []px86.StoreState, runBound time.Duration) {
	var idx []int
	var cs []*report.Crash
	for i := range rep.Findings {
		f := &rep.Findings[i]
		switch f.Kind {
		case report.OrderingViolation, report.AtomicityViolation, report.DurabilityViolation, report.PersistencyRace:
		default:
			continue
		}
		if f.Crash == nil || f.Crash.Trace == "" || len(cs) == MaxRecoveryLoads {
			continue
		}
		idx, cs = append(idx, i), append(cs, f.Crash)
	}
	if len(cs) == 0 || ctx.Err() != nil {
		return
	}
	// Under a time budget the traced runs use what the exploration left of it (its reserve for
	// the report, budget.ScheduleEnd), each run at most the rest, none started in its last
	// minRecoveryLoadTimeout.
	var deadline time.Time
	if x.TimeBudget > 0 {
		start := x.Start
		if start.IsZero() {
			start = time.Now()
		}
		deadline = start.Add(x.TimeBudget)
	}
	left := func() time.Duration {
		if deadline.IsZero() {
			return maxRecoveryLoadTimeout
		}
		return time.Until(deadline)
	}
	if left() < minRecoveryLoadTimeout {
		rep.Warnings = append(rep.Warnings, "recovery loads were not looked for: the time budget is spent")
		return
	}
	if exec.NoLazy(exec.Target{Args: target}) != "" {
		return // not built with scry cc: its loads cannot be traced
	}
	dir, err := os.MkdirTemp("", "scry-recovery-")
	if err != nil {
		rep.Warnings = append(rep.Warnings, "recovery loads were not looked for: "+err.Error())
		return
	}
	defer os.RemoveAll(dir)
	images := make([]string, len(cs))
	for i := range cs {
		images[i] = filepath.Join(dir, fmt.Sprintf("crash-%d.img", i))
	}
	if !cs[0].AssumeFixed {
		assume = nil // the exploration placed its crash points with the literal model
	}
	lost, err := explore.RebuildLost(tf, cs, images, assume)
	if err != nil {
		rep.Warnings = append(rep.Warnings, "recovery loads were not looked for: "+err.Error())
		return
	}
	failed := 0
	for j, c := range cs {
		if ctx.Err() != nil {
			return
		}
		if left() < minRecoveryLoadTimeout {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("recovery loads: %d of %d crash findings not looked at, the time budget is spent", len(cs)-j, len(cs)))
			return
		}
		f := &rep.Findings[idx[j]]
		if len(lost[j]) == 0 {
			continue
		}
		load, store, err := recoveryLoad(ctx, c, images[j], filepath.Join(dir, fmt.Sprintf("recovery-%d.trace", j)), lost[j], x, target, w, min(recoveryLoadTimeout(runBound), left()))
		switch {
		case err != nil:
			failed++
			if failed == 1 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("crash finding %s: the re-execution's reads of what the crash did not persist were not located: %v", c.ID, err))
			}
		case load == nil:
		default:
			f.Related = append(f.Related, load.Related(report.RoleRecoveryLoad))
			if f.Kind == report.PersistencyRace {
				f.Message += fmt.Sprintf("; the re-execution reads the torn bytes first at %s", load)
			} else {
				f.Message += fmt.Sprintf("; the re-execution first reads bytes the crash did not persist at %s (a cross-failure read of the store at %s)", load, store)
			}
		}
	}
}

// recoveryLoad runs the program on crash c's image (recoveryLoads) with its trace at tracePath,
// for at most timeout, and returns the location of its first load of a byte of lost, and of the store that wrote it;
// nil when none of its traced loads reads one.
func recoveryLoad(ctx context.Context, c *report.Crash, img, tracePath string, lost []explore.Lost, x Exploration, target []string, w workload.Workload, timeout time.Duration) (load, store *report.Location, err error) {
	args := make([]string, len(target))
	for i, a := range target {
		args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, img)
	}
	// Input is the workload line of the first operation the re-execution runs (1-based).
	after := max(c.Input-2, -1)
	var client *exec.Client
	if x.Client != "" {
		if client, err = exec.ParseClient(x.Client); err != nil {
			return nil, nil, err
		}
	}
	if _, err := record.Run(ctx, record.Options{
		Trace: tracePath, PMGlobs: append([]string{img}, x.pmGlobs...), Args: args, Env: x.Env,
		Stdin: bytes.NewReader(w.Suffix(after)), Timeout: timeout, Client: client,
	}); err != nil {
		return nil, nil, err
	}
	return firstLoad(tracePath, img, lost)
}

// firstLoad returns the location of the first LOAD in the trace at path that reads a byte of one
// of lost (sorted by offset) in the file img (through any mapping of it), and of the store that
// wrote that byte; nil when none does.
func firstLoad(path, img string, lost []explore.Lost) (load, store *report.Location, err error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	type mapping struct{ base, length, fileOff uint64 }
	maps := map[uint32]mapping{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, trace.ErrTruncated) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch e.Kind {
		case trace.KindRegionMap:
			if same, _ := sameFile(e.Path, img); same {
				maps[e.Region] = mapping{e.Addr, e.Size, e.FileOffset}
			}
		case trace.KindRegionUnmap:
			delete(maps, e.Region)
		case trace.KindLoad:
			for _, m := range maps {
				if e.Addr+e.Size <= m.base || e.Addr >= m.base+m.length {
					continue
				}
				lo := int64(m.fileOff + (e.Addr - m.base))
				hi := lo + int64(e.Size)
				// The first range that ends after lo; it overlaps when it starts before hi.
				k := sort.Search(len(lost), func(i int) bool { return lost[i].Offset+int64(lost[i].Size) > lo })
				if k < len(lost) && lost[k].Offset < hi {
					l, s := report.UserAt(r, e.Site, e.Context), lost[k].Store
					return &l, &s, nil
				}
			}
		}
	}
}

// sameFile reports whether paths a and b name one file.
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
