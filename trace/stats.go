package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Stats summarizes a trace (ComputeStats).
type Stats struct {
	Header   Header
	Records  uint64               // records read, every kind
	Bytes    int64                // bytes of the trace consumed (header and complete records)
	PerKind  map[Kind]uint64      // records per kind
	Flushes  map[FlushKind]uint64 // FLUSH records per instruction
	Fences   map[FenceKind]uint64 // FENCE records per instruction
	Internal uint64               // FLUSH and FENCE records marked internal

	BytesStored   uint64 // data bytes of STORE and NT_STORE records
	BytesLoaded   uint64 // data bytes of LOAD records
	BytesExternal uint64 // data bytes of EXTERNAL_WRITE records (initial contents included)
	BytesInitial  uint64 // data bytes of EXTERNAL_WRITE records flagged initial

	LinesWritten uint64 // distinct cache lines written by STORE, NT_STORE or EXTERNAL_WRITE (not initial)
	LinesTouched uint64 // distinct cache lines of those writes, LOAD and FLUSH records

	Regions     uint64    // REGION_MAP records
	RegionBytes uint64    // sum of the mapped lengths in bytes
	Paths       []string  // distinct mapped paths, sorted
	Operations  uint64    // OP_BEGIN records
	Threads     uint64    // distinct threads (thread 0 counts only if a record belongs to it)
	Sites       uint64    // sites defined
	Roots       []string  // the project roots the unit sites name (Reader.ProjectRoots)
	Stacks      uint64    // call-stack nodes defined
	Warnings    []string  // distinct WARNING messages, in the order first written
	Schedule    *Schedule // the last SCHEDULE record (version 8): the controlled schedule of the run
	Complete    bool      // the END record was read
	EndHow      EndHow    // with Complete: how the program ended
	EndStatus   int64     // with Complete: exit code or signal number

	FSOps        map[FSOpKind]uint64 // FS_OP records per operation (version 6)
	BytesWritten uint64              // data bytes of FS_OP write records
	BytesOutput  uint64              // data bytes of OUTPUT records
}

// lineSet is a set of cache-line numbers, stored as 64-line bitmaps: memory is proportional to
// the number of distinct 64-line groups touched.
type lineSet struct {
	m map[uint64]uint64
	n uint64
}

func (s *lineSet) addRange(addr, size uint64, shift uint) {
	if size == 0 {
		size = 1
	}
	first, last := addr>>shift, (addr+size-1)>>shift
	if last < first { // wrapped around the address space
		last = ^uint64(0) >> shift
	}
	for l := first; ; l++ {
		k, bit := l>>6, uint64(1)<<(l&63)
		if w := s.m[k]; w&bit == 0 {
			s.m[k] = w | bit
			s.n++
		}
		if l == last {
			break
		}
	}
}

// ComputeStats reads r to its end and summarizes it. When the trace is cut short it returns the
// statistics of the complete records together with the error wrapping ErrTruncated; on another
// error (corruption, I/O) it returns the statistics so far and that error.
func ComputeStats(r *Reader) (*Stats, error) {
	st := &Stats{
		Header:  r.Header(),
		PerKind: make(map[Kind]uint64),
		Flushes: make(map[FlushKind]uint64),
		Fences:  make(map[FenceKind]uint64),
		FSOps:   make(map[FSOpKind]uint64),
	}
	shift := uint(bits.TrailingZeros32(r.Header().LineSize))
	written := lineSet{m: make(map[uint64]uint64)}
	touched := lineSet{m: make(map[uint64]uint64)}
	threads := map[uint32]bool{}
	paths := map[string]bool{}
	var err error
	for {
		var ev *Event
		ev, err = r.Next()
		if err != nil {
			break
		}
		st.Records++
		st.PerKind[ev.Kind]++
		if ev.Kind != KindThread && ev.Kind != KindSites && ev.Kind != KindStack && ev.Kind != KindSchedule {
			threads[ev.Thread] = true
		}
		switch ev.Kind {
		case KindStore, KindNTStore:
			st.BytesStored += ev.Size
			written.addRange(ev.Addr, ev.Size, shift)
			touched.addRange(ev.Addr, ev.Size, shift)
		case KindExternalWrite:
			st.BytesExternal += ev.Size
			if ev.Flags&ExternalInitial != 0 {
				st.BytesInitial += ev.Size
			} else {
				written.addRange(ev.Addr, ev.Size, shift)
				touched.addRange(ev.Addr, ev.Size, shift)
			}
		case KindLoad:
			st.BytesLoaded += ev.Size
			touched.addRange(ev.Addr, ev.Size, shift)
		case KindFlush:
			st.Flushes[ev.Flush]++
			if ev.Internal {
				st.Internal++
			}
			touched.addRange(ev.Addr, 1, shift)
		case KindFence:
			st.Fences[ev.Fence]++
			if ev.Internal {
				st.Internal++
			}
		case KindRegionMap:
			st.Regions++
			st.RegionBytes += ev.Size
			paths[ev.Path] = true
		case KindFSOp:
			st.FSOps[ev.FS]++
			if ev.FS == FSWrite {
				st.BytesWritten += uint64(len(ev.Data))
			}
		case KindOutput:
			st.BytesOutput += uint64(len(ev.Data))
		case KindOpBegin:
			st.Operations++
		case KindWarning:
			if !slices.Contains(st.Warnings, ev.Text) {
				st.Warnings = append(st.Warnings, ev.Text)
			}
		case KindSchedule:
			s := ScheduleOf(ev)
			st.Schedule = &s
		}
	}
	st.Bytes = r.Offset()
	st.LinesWritten, st.LinesTouched = written.n, touched.n
	st.Threads = uint64(len(threads))
	st.Sites = uint64(len(r.Sites()))
	st.Roots = r.ProjectRoots()
	st.Stacks = uint64(len(r.stacks))
	for p := range paths {
		st.Paths = append(st.Paths, p)
	}
	sort.Strings(st.Paths)
	st.EndHow, st.EndStatus, st.Complete = r.End()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return st, err
}

// Write prints the statistics as aligned "name: value" lines.
func (st *Stats) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(name string, format string, args ...any) {
		fmt.Fprintf(bw, "%-16s "+format+"\n", append([]any{name + ":"}, args...)...)
	}
	p("format", "version %d, cache line %d bytes", st.Header.Version, st.Header.LineSize)
	if st.Complete {
		p("complete", "yes (%v, status %d)", st.EndHow, st.EndStatus)
	} else {
		p("complete", "no (no END record: the program was cut short)")
	}
	p("size", "%d bytes", st.Bytes)
	p("records", "%d", st.Records)
	for k := KindSites; k <= KindLast; k++ {
		if n := st.PerKind[k]; n > 0 {
			fmt.Fprintf(bw, "  %-15s %d\n", k.String()+":", n)
		}
	}
	for k, n := range st.PerKind {
		if !k.Valid() {
			fmt.Fprintf(bw, "  %-15s %d\n", k.String()+":", n)
		}
	}
	if len(st.Flushes) > 0 {
		p("flushes", "%s", kindCounts(st.Flushes))
	}
	if len(st.Fences) > 0 {
		p("fences", "%s", kindCounts(st.Fences))
	}
	p("internal", "%d flushes and fences done by libraries for themselves", st.Internal)
	p("bytes stored", "%d", st.BytesStored)
	p("bytes loaded", "%d", st.BytesLoaded)
	p("bytes external", "%d (%d initial contents)", st.BytesExternal, st.BytesInitial)
	p("lines written", "%d cache lines", st.LinesWritten)
	p("lines touched", "%d cache lines", st.LinesTouched)
	p("regions", "%d mappings, %d bytes", st.Regions, st.RegionBytes)
	for _, path := range st.Paths {
		fmt.Fprintf(bw, "  %s\n", path)
	}
	if len(st.FSOps) > 0 || st.BytesOutput > 0 {
		if len(st.FSOps) > 0 {
			p("fs operations", "%s", kindCounts(st.FSOps))
		}
		p("bytes written", "%d (file-system writes)", st.BytesWritten)
		p("bytes output", "%d (standard output and error)", st.BytesOutput)
	}
	p("operations", "%d", st.Operations)
	p("threads", "%d", st.Threads)
	if st.Schedule != nil {
		p("schedule", "%v", *st.Schedule)
	}
	p("sites", "%d", st.Sites)
	if len(st.Roots) > 0 {
		p("project roots", "%s", strings.Join(st.Roots, ", "))
	}
	p("stack nodes", "%d", st.Stacks)
	if len(st.Warnings) > 0 {
		p("warnings", "%d: the runtime degraded, results are incomplete", len(st.Warnings))
		for _, w := range st.Warnings {
			fmt.Fprintf(bw, "  %s\n", w)
		}
	}
	return bw.Flush()
}

func kindCounts[K interface {
	~uint8
	String() string
}](m map[K]uint64) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %v", m[k], k)
	}
	return s
}
