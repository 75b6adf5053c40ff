package explore

import (
	"fmt"
	"os"

	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Rebuild writes the crash image of a crash finding to out (a sparse file, created: an existing
// file is replaced only with force, a link or directory never, see safefile): it walks the trace the finding names, stops at its crash point (same index and
// trace event) and writes the state's image of the pool's region (crash.CrashPoint.WriteImage).
// assume are the stores the exploration assumed durable (report.Crash.AssumeFixed; nil when it
// did not): the crash points are placed as they were.
// Errors: out may not be written, the trace cannot be read (out is then removed), or it has no such crash point or a different state space
// there (the trace changed since the report was written).
func Rebuild(c *report.Crash, out string, force bool, assume []px86.StoreState) error {
	// The image is created before the walk (and filled by WriteImage), so that a path that may
	// not be written fails at once.
	f, err := safefile.Create(out, safefile.Policy{What: "--out", Force: force})
	if err != nil {
		return err
	}
	f.Close()
	created := true
	defer func() {
		if created {
			os.Remove(out) // nothing was written into the file scry created
		}
	}()
	return atCrashPoint(c, assume, func(_ *trace.Reader, cp *crash.CrashPoint) error {
		if err := cp.WriteImage(out, c.Region, StateOf(c)); err != nil {
			return err
		}
		created = false
		return nil
	})
}

// atCrashPoint walks the trace crash finding c names to its crash point (same index and trace
// event; an OP_BEGIN for a durability violation, crash point -1), with the stores the
// exploration assumed durable (assume), and calls at with the trace reader and that crash point.
// Errors: the trace cannot be read, it has no such crash point or a different state space there
// (the trace changed since the report was written), or at's error.
func atCrashPoint(c *report.Crash, assume []px86.StoreState, at func(*trace.Reader, *crash.CrashPoint) error) error {
	r, err := trace.Open(c.Trace)
	if err != nil {
		return fmt.Errorf("the finding's trace: %w", err)
	}
	defer r.Close()
	found := false
	boundary := c.CrashPoint < 0
	opts := crash.Options{AfterStores: c.AfterStores, AssumeDurable: assume, AssumeLate: c.AssumeLate, OpBoundaries: boundary}
	_, err = crash.Walk(r, opts, func(cp *crash.CrashPoint) error {
		if boundary && (cp.Kind != crash.OpBegin || cp.Event != c.Event) || !boundary && cp.Index != c.CrashPoint {
			return nil
		}
		if cp.Event != c.Event || len(cp.Space.Lines) != len(c.State) {
			return fmt.Errorf("crash point %d of %s is at event %d with %d lines, the report says event %d with %d lines: the trace is not the one the report was made from",
				cp.Index, c.Trace, cp.Event, len(cp.Space.Lines), c.Event, len(c.State))
		}
		found = true
		if err := at(r, cp); err != nil {
			return err
		}
		return crash.ErrStop
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s has no crash point %d: the trace is not the one the report was made from", c.Trace, c.CrashPoint)
	}
	return nil
}

// StateOf returns the crash state a crash finding names: its persisted prefix per line and its
// tear, if any.
func StateOf(c *report.Crash) crash.State {
	st := crash.State{K: c.State}
	if t := c.Tear; t != nil {
		st.Tear = &crash.Tear{Line: t.Line, Keep: t.Bytes}
	}
	return st
}

// TornRange returns the bytes of the pool file that persistency-race finding c tore: the torn
// unit's offset in the file (bytes from its start) and size, and the Tear's bytes the state
// persisted (bit b: the unit's byte b). It walks the trace to the finding's crash point as
// Rebuild does (assume as for Rebuild). Errors: c has no tear, or Rebuild's.
func TornRange(c *report.Crash, assume []px86.StoreState) (off int64, size int, err error) {
	if c.Tear == nil {
		return 0, 0, fmt.Errorf("crash state %s tears no store", c.ID)
	}
	err = atCrashPoint(c, assume, func(_ *trace.Reader, cp *crash.CrashPoint) error {
		st := StateOf(c)
		if err := cp.Space.Check(st); err != nil {
			return err
		}
		l := cp.Space.Lines[st.Tear.Line]
		u := l.Units[st.K[st.Tear.Line]]
		g := l.Region
		if g == nil {
			return fmt.Errorf("line %#x of crash state %s is in no region", l.Addr, c.ID)
		}
		off, size = int64(g.FileOffset+u.Addr-g.Base), u.Size
		return nil
	})
	return off, size, err
}
