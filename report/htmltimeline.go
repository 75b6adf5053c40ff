package report

// CrashTimeline is what the HTML report draws of a PM crash finding beyond its JSON fields: the
// cache lines of its crash state with the stores and flushes to them and the fences from the
// first store not yet durable at the crash point to the crash point, which stores the crash
// state kept and which it lost, and the bytes of the crash image that differ from the image
// without the crash. It is not part of the JSON report: package pm/explore's Timeline rebuilds it
// from the trace the finding names (Crash.Trace) when the report is rendered.
type CrashTimeline struct {
	// Start is the trace event index of the window's first event (the earliest store the crash
	// state could lose), Crash the crash point's event (Crash.Event).
	Start, Crash uint64
	// Lines are the cache lines of the crash state in address order (Crash.Lines), at most
	// MaxTimelineLines.
	Lines []TimelineLine
	// Fences are the fences of the window (every thread's), ascending by event, at most
	// MaxTimelineEvents.
	Fences []TimelineEvent
	// Bytes are the byte ranges in which the crash image differs from the image with every
	// store issued so far persisted (a lost store's) or from the image before the store (a kept
	// one's), at most MaxTimelineBytes ranges.
	Bytes []ByteDiff
	// Omitted counts the events, lines and byte ranges left out by the bounds.
	Omitted int
}

// TimelineLine is one cache line of a crash state: its address, its offset in the pool file
// (bytes; -1 when unknown), and its stores and flushes in the window, ascending by event (at most
// MaxTimelineEvents).
type TimelineLine struct {
	Addr   uint64
	Offset int64
	Events []TimelineEvent
}

// TimelineEvent is one store, flush or fence of a CrashTimeline.
type TimelineEvent struct {
	Event uint64 // the trace event index
	// Kind is "store", "nt-store" (non-temporal), "library" (bytes an uninstrumented call
	// wrote), "flush" or "fence"; What the instruction ("clwb", "sfence", ...) for a flush or fence.
	Kind, What string
	Addr, Size uint64 // bytes written or the flushed address (bytes)
	// Fate of a store: "kept" (the crash state persisted it), "lost" (it did not), "torn" (it
	// persisted some of its units, failure-atomic 8-byte pieces, and not others), "durable"
	// (durable before the crash point: flushed and fenced in the window); "" for a flush or fence.
	Fate string
	// Units are the store's units on the line that were not durable at the crash point, Kept
	// how many of them the crash state persisted (0 and 0 for a durable store).
	Units, Kept int
	Location    Location
	// Thread is the trace's id of the thread that issued it (drawn when the window has events
	// of more than one thread).
	Thread uint32
}

// Fates of a TimelineEvent's store.
const (
	FateKept    = "kept"
	FateLost    = "lost"
	FateTorn    = "torn"
	FateDurable = "durable"
)

// ByteDiff is one range of bytes where a crash image differs: Image holds the crash image's
// bytes, Other those of the outcome it is compared with: for a lost store, the image without
// the crash (the store's bytes, as the committed outcome has them); for a kept store, the bytes
// before it (as the rolled-back outcome has them when the store is the operation's).
type ByteDiff struct {
	Addr     uint64 // virtual address of the first byte
	Offset   int64  // bytes from the start of the pool file
	Fate     string // FateLost or FateKept
	Image    []byte
	Other    []byte
	Store    uint64 // the store's trace event index
	Location Location
}

// Bounds of a CrashTimeline (it is drawn, not listed).
const (
	MaxTimelineLines  = 16
	MaxTimelineEvents = 64
	MaxTimelineBytes  = 32
)
