package explore

import (
	"fmt"
	"os"
	"slices"

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

// isCrashPoint reports whether cp (of a walk with crash.Options.OpBoundaries when c's crash point
// is an operation boundary, CrashPoint -1) is crash finding c's crash point: the same index (the
// OP_BEGIN at c's event). Errors: the index matches but not the event or the state space (the
// trace is not the one the report was made from).
func isCrashPoint(cp *crash.CrashPoint, c *report.Crash) (bool, error) {
	if boundary := c.CrashPoint < 0; boundary && (cp.Kind != crash.OpBegin || cp.Event != c.Event) || !boundary && cp.Index != c.CrashPoint {
		return false, nil
	}
	if cp.Event != c.Event || len(cp.Space.Lines) != len(c.State) {
		return false, fmt.Errorf("crash point %d of %s is at event %d with %d lines, the report says event %d with %d lines: the trace is not the one the report was made from",
			cp.Index, c.Trace, cp.Event, len(cp.Space.Lines), c.Event, len(c.State))
	}
	return true, nil
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
	opts := crash.Options{AfterStores: c.AfterStores, AssumeDurable: assume, AssumeLate: c.AssumeLate, OpBoundaries: c.CrashPoint < 0}
	_, err = crash.Walk(r, opts, func(cp *crash.CrashPoint) error {
		if ok, err := isCrashPoint(cp, c); !ok || err != nil {
			return err
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

// Lost is what a crash state left different from the fully applied image of its crash point, in
// the pool file: the byte ranges (Offset: bytes from the file's start; Size: bytes) and, for
// each, the store whose bytes the state did not persist there (the latest unit in program order
// that wrote them; for a persistency race, the torn store; zero when none is known).
type Lost struct {
	Offset int64
	Size   int
	Store  report.Location
}

// RebuildLost writes the crash image of each PM crash finding cs[i] (one trace, one exploration:
// the same AfterStores and AssumeLate) to images[i] (created, replaced only when it is a file scry
// made: see Rebuild) and returns what its state left different (Lost), sorted by offset, with
// the trace's reader closed. One walk of the trace serves every finding. assume are the stores
// the exploration assumed durable (Rebuild); tf, when not nil, is the findings' trace already
// open (its reader reads the open file again, as the exploration's walks do), else it is opened
// at the crash findings' Trace. full, when not nil (one path per finding, "" for none), is
// where the same crash point's image with every pending store persisted (crash.Space.FullState)
// is written too: the image the failing state differs from by exactly its Lost bytes. Errors:
// those of Rebuild, for the first finding that has one; the images written so far stay.
func RebuildLost(tf *trace.File, cs []*report.Crash, images, full []string, assume []px86.StoreState) ([][]Lost, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if len(images) != len(cs) || full != nil && len(full) != len(cs) {
		return nil, fmt.Errorf("%d images and %d full images for %d crash findings", len(images), len(full), len(cs))
	}
	var r *trace.Reader
	var err error
	if tf != nil {
		r, err = tf.Reader()
	} else {
		r, err = trace.Open(cs[0].Trace)
	}
	if err != nil {
		return nil, fmt.Errorf("the findings' trace: %w", err)
	}
	defer r.Close()
	out := make([][]Lost, len(cs))
	done := make([]bool, len(cs))
	left := len(cs)
	c0 := cs[0]
	opts := crash.Options{AfterStores: c0.AfterStores, AssumeDurable: assume, AssumeLate: c0.AssumeLate, OpBoundaries: true}
	_, err = crash.Walk(r, opts, func(cp *crash.CrashPoint) error {
		for i, c := range cs {
			if done[i] {
				continue
			}
			if ok, err := isCrashPoint(cp, c); err != nil {
				return err
			} else if !ok {
				continue
			}
			st := StateOf(c)
			if err := cp.WriteImage(images[i], c.Region, st); err != nil {
				return err
			}
			if full != nil && full[i] != "" {
				if err := cp.WriteImage(full[i], c.Region, cp.Space.FullState()); err != nil {
					return err
				}
			}
			lost, err := lostOf(r, cp, c.Region, st)
			if err != nil {
				return err
			}
			out[i], done[i] = lost, true
			left--
		}
		if left == 0 {
			return crash.ErrStop
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	for i, c := range cs {
		if !done[i] {
			return out, fmt.Errorf("%s has no crash point %d at event %d: the trace is not the one the report was made from", c.Trace, c.CrashPoint, c.Event)
		}
	}
	return out, nil
}

// lostOf returns what state st of cp leaves different in region's pool file (Lost), sorted by
// offset: its patches, each split by the store that wrote its bytes last among the units the
// state did not persist (a torn state: its torn unit).
func lostOf(r *trace.Reader, cp *crash.CrashPoint, region uint32, st crash.State) ([]Lost, error) {
	ps, err := cp.RegionPatches(region, st)
	if err != nil {
		return nil, err
	}
	var units []crash.Unit
	if t := st.Tear; t != nil {
		units = []crash.Unit{cp.Space.Lines[t.Line].Units[st.K[t.Line]]}
	} else {
		units = cp.Space.Unpersisted(st)
	}
	latest := func(addr uint64) *crash.Unit { // the latest lost unit that wrote the byte at addr
		var who *crash.Unit
		for j := range units {
			u := &units[j]
			if u.Addr <= addr && addr < u.Addr+uint64(u.Size) && (who == nil || u.Seq > who.Seq) {
				who = u
			}
		}
		return who
	}
	var out []Lost
	for _, p := range ps {
		for b := 0; b < len(p.Data); {
			who := latest(p.Addr + uint64(b))
			e := b + 1
			for e < len(p.Data) && latest(p.Addr+uint64(e)) == who {
				e++
			}
			l := Lost{Offset: p.Offset + int64(b), Size: e - b}
			if who != nil {
				l.Store = report.UserAt(r, who.Site, who.Stack)
			}
			out = append(out, l)
			b = e
		}
	}
	slices.SortFunc(out, func(a, b Lost) int { return int(a.Offset - b.Offset) })
	return out, nil
}
