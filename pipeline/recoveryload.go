package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// recoveryLoadTimeout bounds the traced run on a crash image that looks for a recovery load.
const recoveryLoadTimeout = 30 * time.Second

// recoveryLoads names in each persistency-race finding the load that read the torn bytes after
// the crash (Yashme, ASPLOS'22, §3: a persistency race is a post-crash read of a torn store): the
// finding's crash image is rebuilt, the program runs on it with the rest of the workload under
// the recording runtime (loads traced, the image a PM file), and the first load of the re-run
// overlapping the torn unit's bytes is added as a related location (report.RoleRecoveryLoad)
// and in the message. What fails is a warning, and the finding stays as it is. assume are the
// stores the exploration assumed durable (explore.Rebuild).
func recoveryLoads(ctx context.Context, rep *report.Report, x Exploration, target []string, w workload.Workload, assume []px86.StoreState) {
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Kind != report.PersistencyRace || f.Crash == nil || f.Crash.Tear == nil {
			continue
		}
		loc, err := recoveryLoad(ctx, f.Crash, x, target, w, assume)
		switch {
		case err != nil:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("persistency race %s: the re-execution's read of the torn bytes was not located: %v", f.Crash.ID, err))
		case loc == nil:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("persistency race %s: no instrumented load of the re-execution read the torn bytes (a library, or a copy through libc, read them)", f.Crash.ID))
		default:
			f.Related = append(f.Related, loc.Related(report.RoleRecoveryLoad))
			f.Message += fmt.Sprintf("; the re-execution reads the torn bytes first at %s", loc)
		}
	}
}

// recoveryLoad runs the program on crash c's image (recoveryLoads) and returns the location of
// its first load of the torn bytes, nil when none of its traced loads read them.
func recoveryLoad(ctx context.Context, c *report.Crash, x Exploration, target []string, w workload.Workload, assume []px86.StoreState) (*report.Location, error) {
	if !c.AssumeFixed {
		assume = nil
	}
	off, size, err := explore.TornRange(c, assume)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "scry-recovery-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	img := filepath.Join(dir, "crash.img")
	if err := explore.Rebuild(c, img, false, assume); err != nil {
		return nil, err
	}
	args := make([]string, len(target))
	for i, a := range target {
		args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, img)
	}
	tracePath := filepath.Join(dir, "recovery.trace")
	// Input is the workload line of the first operation the re-execution runs (1-based).
	after := max(c.Input-2, -1)
	if _, err := record.Run(ctx, record.Options{
		Trace: tracePath, PMGlobs: append([]string{img}, x.pmGlobs...), Args: args, Env: x.Env,
		Stdin: bytes.NewReader(w.Suffix(after)), Timeout: recoveryLoadTimeout,
	}); err != nil {
		return nil, err
	}
	return firstLoad(tracePath, img, off, size)
}

// firstLoad returns the location of the first LOAD in the trace at path that reads a byte of
// [off, off+size) of the file img (through any mapping of it), nil when none does.
func firstLoad(path, img string, off int64, size int) (*report.Location, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type mapping struct{ base, length, fileOff uint64 }
	maps := map[uint32]mapping{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			if errors.Is(err, trace.ErrTruncated) {
				return nil, nil
			}
			return nil, err
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
				lo := m.fileOff + (e.Addr - m.base)
				if lo < uint64(off)+uint64(size) && uint64(off) < lo+e.Size {
					loc := report.UserAt(r, e.Site, e.Context)
					return &loc, nil
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
