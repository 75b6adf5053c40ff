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
//
// Cross-failure reads (report.CrossFailureRead; XFDetector, Liu et al., ASPLOS'20, §3: a
// post-failure read of a pre-failure write not guaranteed durable at the failure point). A
// durability-violation is a crash right before an operation that loses only stores the program
// had not made durable when their operation ended. When its failing run first reads those bytes
// in recovery, before its first operation begins, the recovery trusted bytes the crash left
// undetermined, and whether it behaves differently because of them is one more traced run away:
// the same crash point's image with every pending store persisted (explore.RebuildLost's full
// image, which differs from the failing one by exactly the lost bytes) is run the same way, and
// the two recoveries are compared event by event (recoveryPhase: the loads, stores and flushes
// with their pool offsets, the fences, the outputs, the end of the run; sites in order; not the
// bytes loaded or stored). When they differ, the finding becomes a cross-failure-read reported
// at the recovery's load, naming the store and where the recoveries part; when they do not, the
// recovery read the bytes without acting on them, and the durability-violation stays, its
// recovery load a related location. An ordering or atomicity violation keeps its kind whatever
// reads its bytes: its stores are persisted by the operation, later than the crash, so the
// operation's order of persists is the cause; a durability-violation's store is one the program
// never made durable in time, and recovery reading it is the other half of the bug (either
// persist it or do not trust it: the message says both). The lazy runtime's trap on the first
// access to an undetermined line (--strategy lazy) finds the same access per cache line; the
// traced run finds it per byte, for every strategy.

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

// recoveryLoadReserve is the part of a time budget d (or of a schedule's share of it) that the
// exploration leaves to the traced runs of recoveryLoads, which run up to d: 3 % of d, at least
// 3 s (one traced run of each kind, and the second of a durability-violation whose recovery reads
// what the crash lost), at most an eighth of d. With none, Durinn's CCEH and FAST_FAIR under a
// 2-minute budget of 4 schedules (30 s a share) had no time left for any.
func recoveryLoadReserve(d time.Duration) time.Duration {
	return min(max(d*3/100, 3*time.Second), d/8)
}

// MaxRecoveryLoads bounds the findings of one exploration whose recovery load is looked for (one
// traced run each; a durability-violation whose recovery reads what the crash lost, two), the
// durability-violations first, each kind in report order.
const MaxRecoveryLoads = 32

// recoveryLoads adds the recovery load of each PM crash finding of rep (above), read from the
// trace tf (open: one more pass over the file the exploration read); target is the
// program with {pool}, w the workload, assume the stores the exploration assumed durable,
// runBound what bounded its runs (recoveryLoadTimeout). What fails is a warning, and the findings
// stay as they are.
func recoveryLoads(ctx context.Context, rep *report.Report, tf *trace.File, x Exploration, target []string, w workload.Workload, assume []px86.StoreState, runBound time.Duration) {
	var idx []int
	var cs []*report.Crash
	// The durability-violations first, in report order, then the others: under a time budget,
	// what is left for the traced runs goes first to the findings whose kind they may change.
	for _, durability := range []bool{true, false} {
		for i := range rep.Findings {
			f := &rep.Findings[i]
			switch f.Kind {
			case report.OrderingViolation, report.AtomicityViolation, report.DurabilityViolation, report.PersistencyRace:
			default:
				continue
			}
			if (f.Kind == report.DurabilityViolation) != durability || f.Crash == nil || f.Crash.Trace == "" || len(cs) == MaxRecoveryLoads {
				continue
			}
			idx, cs = append(idx, i), append(cs, f.Crash)
		}
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
	images, full := make([]string, len(cs)), make([]string, len(cs))
	for i := range cs {
		images[i] = filepath.Join(dir, fmt.Sprintf("crash-%d.img", i))
		if rep.Findings[idx[i]].Kind == report.DurabilityViolation {
			full[i] = filepath.Join(dir, fmt.Sprintf("full-%d.img", i))
		}
	}
	if !cs[0].AssumeFixed {
		assume = nil // the exploration placed its crash points with the literal model
	}
	lost, err := explore.RebuildLost(tf, cs, images, full, assume)
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
		tracePath := filepath.Join(dir, fmt.Sprintf("recovery-%d.trace", j))
		load, store, inRecovery, err := recoveryLoad(ctx, c, images[j], tracePath, lost[j], x, target, w, min(recoveryLoadTimeout(runBound), left()))
		switch {
		case err != nil:
			failed++
			if failed == 1 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("crash finding %s: the re-execution's reads of what the crash did not persist were not located: %v", c.ID, err))
			}
		case load == nil:
		case inRecovery && full[j] != "" && left() >= minRecoveryLoadTimeout:
			fullTrace := filepath.Join(dir, fmt.Sprintf("full-%d.trace", j))
			at, err := recoveryDiffers(ctx, c, tracePath, images[j], fullTrace, full[j], x, target, w, min(recoveryLoadTimeout(runBound), left()))
			if err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("crash finding %s: its recovery reads bytes the crash did not persist (at %s), but whether it acts on them was not told: %v", c.ID, load, err))
			}
			if at != "" {
				crossFailureRead(rep, idx[j], *load, *store, at)
				break
			}
			fallthrough
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

// lostStore is how a trace finding confirmed by a crash names the crash finding that confirmed
// it (settleDurability), by its kind (what): "lost the store at LOC right before the next
// operation made the program fail (what)". crossFailureRead rewrites it when that finding
// changes kind.
func lostStore(store report.Location, what string) string {
	return fmt.Sprintf("lost the store at %s right before the next operation made the program fail (%s)", store, what)
}

// crossFailureRead makes durability-violation rep.Findings[i] a cross-failure-read
// (recoveryLoads): reported at the recovery's load, with the store whose bytes it read (its
// related unpersisted location stays) and where the recovery parted from the one on the image
// where they are durable; the trace finding its crash confirmed names it anew.
func crossFailureRead(rep *report.Report, i int, load, store report.Location, at string) {
	f := &rep.Findings[i]
	// The trace finding its crash confirmed (settleDurability) names it by its kind.
	was, now := lostStore(store, string(report.DurabilityViolation)), lostStore(store, string(report.CrossFailureRead)+" at "+load.String())
	for k := range rep.Findings {
		if g := &rep.Findings[k]; g.Kind != report.DurabilityViolation && g.Kind != report.CrossFailureRead {
			g.Message = strings.Replace(g.Message, was, now, 1)
		}
	}
	f.Kind = report.CrossFailureRead
	f.Message = fmt.Sprintf("recovery reads bytes the crash left undetermined, before the first operation: the store at %s was not durable at the crash, and the recovery then runs differently than on the image where it is (%s); persist the store before its operation ends, or do not trust it in recovery (rebuild it): %s", store, at, f.Message)
	f.Location, f.Stack = load, nil
}

// recoveryDiffers runs the program on full, crash c's image with every pending store persisted,
// as recoveryLoad ran it on img (whose trace is at tracePath), with its trace at fullTrace, and
// compares the two recoveries (recoveryPhase): where the run on img first does something else
// ("" when the two do the same).
func recoveryDiffers(ctx context.Context, c *report.Crash, tracePath, img, fullTrace, full string, x Exploration, target []string, w workload.Workload, timeout time.Duration) (string, error) {
	if err := tracedRun(ctx, c, full, fullTrace, x, target, w, timeout); err != nil {
		return "", err
	}
	return comparePhases(tracePath, img, fullTrace, full)
}

// comparePhases compares the recoveries of the traced runs at tracePath, on image img, and at
// fullTrace, on image full (recoveryPhase): where the first does something else than the
// second, "" when they do the same.
func comparePhases(tracePath, img, fullTrace, full string) (string, error) {
	want, whole, err := recoveryPhase(fullTrace, full, nil)
	if err != nil {
		return "", err
	}
	if !whole {
		return "", errors.New("the run on the image with every store persisted was stopped before its recovery ended")
	}
	at, n := "", 0
	_, whole, err = recoveryPhase(tracePath, img, func(r *trace.Reader, i int, ev phaseEvent, site, stack uint32) bool {
		n = i + 1
		if i < len(want) && ev == want[i] {
			return true
		}
		at = "first at " + report.UserAt(r, site, stack).String()
		if ev.kind == trace.KindEnd {
			at = ev.data
		}
		return false
	})
	switch {
	case err != nil:
		return "", err
	case at != "":
		return at, nil
	case !whole:
		// Stopped by its time bound while it still did what the other did: a recovery that
		// hangs is not told from a slow one.
		return "", errors.New("the run on the crash image was stopped before its recovery ended")
	case n < len(want):
		return "it ends sooner", nil // its recovery is a prefix of the other's
	}
	return "", nil
}

// phaseEvent is one event of a recovery as recoveryPhase compares them: its kind and site, the
// offset in the pool file of a PM access (-1 otherwise) and its size, and the bytes an output
// printed (how and status for the run's end).
type phaseEvent struct {
	kind trace.Kind
	site uint32
	off  int64
	size uint64
	data string
}

// recoveryPhase reads the trace at path of a run on the pool file img up to its first OP_BEGIN
// or its first thread's creation (the recovery, before any operation, as one thread runs it)
// and returns its events as phaseEvents, leaving out
// what names no behaviour (site tables, stacks, frames, threads, schedules, the image's content
// as it was mapped: EXTERNAL_WRITE initial) and the bytes loaded and stored: a load's are what
// the recovery read, not what it did, and a store's vary from run to run where they hold
// addresses of DRAM (FAST_FAIR's recovery stores a new mutex's address into each page: with
// the bytes compared, every such recovery differed). So a recovery is told apart by the path it
// takes (sites in order), where it loads, stores and flushes in the pool, what it prints and how
// it ends; one that only copies other values does not differ. With each, when not nil, each
// event is handed over as it is read, with its index, its site and its stack; reading stops at
// the first it answers false for. whole says whether the recovery ended in the trace (an
// OP_BEGIN, a thread's creation or the run's END record), not cut by the run's time bound or a
// truncated trace.
func recoveryPhase(path, img string, each func(r *trace.Reader, i int, ev phaseEvent, site, stack uint32) bool) (events []phaseEvent, whole bool, err error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	type mapping struct{ base, length, fileOff uint64 }
	maps := map[uint32]mapping{}
	offset := func(addr uint64) int64 {
		for _, m := range maps {
			if addr >= m.base && addr < m.base+m.length {
				return int64(m.fileOff + addr - m.base)
			}
		}
		return -1
	}
	var out []phaseEvent
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, trace.ErrTruncated) {
			return out, false, nil
		}
		if err != nil {
			return out, false, err
		}
		ev := phaseEvent{kind: e.Kind, site: e.Site, off: -1}
		switch e.Kind {
		case trace.KindOpBegin:
			return out, true, nil
		case trace.KindRegionMap:
			if same, _ := sameFile(e.Path, img); same {
				maps[e.Region] = mapping{e.Addr, e.Size, e.FileOffset}
			}
		case trace.KindRegionUnmap:
			delete(maps, e.Region)
		case trace.KindExternalWrite:
			if e.Flags&trace.ExternalInitial != 0 {
				continue // the image's content as mapped: what differs by construction
			}
			ev.off, ev.size = offset(e.Addr), e.Size
		case trace.KindStore, trace.KindNTStore, trace.KindLoad:
			ev.off, ev.size = offset(e.Addr), e.Size
		case trace.KindFlush:
			ev.off = offset(e.Addr)
		case trace.KindOutput:
			ev.data = string(e.Data)
		case trace.KindEnd:
			ev.data = fmt.Sprintf("it exits with status %d", e.Status)
			if e.How == trace.EndSignal {
				ev.data = fmt.Sprintf("it is killed by signal %d", e.Status)
			} else if e.How != trace.EndExit {
				ev.data = fmt.Sprintf("it ends (%v, %d)", e.How, e.Status)
			}
		case trace.KindSites, trace.KindDeps, trace.KindStack, trace.KindContext, trace.KindFrame,
			trace.KindThread, trace.KindSchedule, trace.KindWarning:
			continue
		}
		// The run's end ends the recovery, and so does the first thread it starts: from there
		// on the threads' events interleave as the scheduler has them, which two runs need not
		// share (the thread's creation is compared, what follows is not).
		last := e.Kind == trace.KindEnd || e.Kind == trace.KindSync && e.Sync == trace.SyncCreate
		if each != nil && !each(r, len(out), ev, e.Site, e.Context) {
			return out, last, nil
		}
		out = append(out, ev)
		if last {
			return out, true, nil
		}
	}
}

// recoveryLoad runs the program on crash c's image (recoveryLoads) with its trace at tracePath,
// for at most timeout, and returns the location of its first load of a byte of lost, and of the
// store that wrote it, and whether that load came before the run's first operation began (in
// the recovery); nil when none of its traced loads reads one.
func recoveryLoad(ctx context.Context, c *report.Crash, img, tracePath string, lost []explore.Lost, x Exploration, target []string, w workload.Workload, timeout time.Duration) (load, store *report.Location, inRecovery bool, err error) {
	if err := tracedRun(ctx, c, img, tracePath, x, target, w, timeout); err != nil {
		return nil, nil, false, err
	}
	return firstLoad(tracePath, img, lost)
}

// tracedRun runs the program on image img with the workload after crash c's operation, under
// the recording runtime with img as PM, its trace at tracePath, for at most timeout.
func tracedRun(ctx context.Context, c *report.Crash, img, tracePath string, x Exploration, target []string, w workload.Workload, timeout time.Duration) (err error) {
	args := make([]string, len(target))
	for i, a := range target {
		args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, img)
	}
	// Input is the workload line of the first operation the re-execution runs (1-based).
	after := max(c.Input-2, -1)
	var client *exec.Client
	if x.Client != "" {
		if client, err = exec.ParseClient(x.Client); err != nil {
			return err
		}
	}
	_, err = record.Run(ctx, record.Options{
		Trace: tracePath, PMGlobs: append([]string{img}, x.pmGlobs...), Args: args, Env: x.Env,
		Stdin: bytes.NewReader(w.Suffix(after)), Timeout: timeout, Client: client,
	})
	return err
}

// firstLoad returns the location of the first LOAD in the trace at path that reads a byte of one
// of lost (sorted by offset) in the file img (through any mapping of it), and of the store that
// wrote that byte, and whether it came before the trace's first OP_BEGIN; nil when none does.
func firstLoad(path, img string, lost []explore.Lost) (load, store *report.Location, inRecovery bool, err error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer r.Close()
	type mapping struct{ base, length, fileOff uint64 }
	maps := map[uint32]mapping{}
	inRecovery = true
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, trace.ErrTruncated) {
			return nil, nil, false, nil
		}
		if err != nil {
			return nil, nil, false, err
		}
		switch e.Kind {
		case trace.KindOpBegin:
			inRecovery = false
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
					return &l, &s, inRecovery, nil
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
