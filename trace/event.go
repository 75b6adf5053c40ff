package trace

// Site is one static instruction or call in the program under test (docs/trace-format.md,
// "Sites"). ID 0 means "unknown".
type Site struct {
	ID       uint32
	Kind     SiteKind
	Function string // enclosing function
	File     string // source file as the compiler saw it
	Line     uint32
	Column   uint32
	Callee   string // called function, for SiteLibCall, SiteCall and SiteInlined
	// InlinedAt is the SiteInlined site of the call whose inlining brought this site's code into
	// the function that holds it (0: the site is in its own function's body). Following it gives
	// the inlined call chain, innermost first (version 4; 0 in older traces).
	InlinedAt uint32
	// Access is how the site accesses memory: plain, volatile, or atomic with its memory order
	// (version 9; 0, unknown, in older traces and for sites that are no memory access).
	Access SiteAccess
}

// Dep is one static dependence fact of a DEPS record (docs/trace-format.md, "DEPS"): site From
// depends on site To in the way Kind says. Control: From is directly control dependent on the
// branch site To (from post-dominators, within one function). Value and Address: the value From
// uses (a store's stored value, a branch's condition) or the address it accesses depends, at
// register level within one function, on the value To produces (a load, an atomic
// read-modify-write, or a call's returned value).
type Dep struct {
	From, To uint32
	Kind     DepKind
}

// Event is one decoded record. Which fields are meaningful depends on Kind:
//
//	Store, NTStore, Load, ExternalWrite: Site, Addr, Size, Data (Size bytes), Flags
//	Flush: Site, Addr, Flush, Internal
//	Fence: Site, Fence, Internal
//	RegionMap: Region, Addr (base), Size (length), FileOffset, Path, Site, Flags
//	RegionUnmap: Region, Site
//	TxBegin, TxCommit, TxEnd: Site; TxAbort: Site, Errnum
//	TxAdd, Alloc: Site, Addr, Size, Flags; Free: Site, Addr, Flags
//	OpBegin: Op, Text; OpEnd: Op
//	Warning: Text (what the runtime could not do; the trace is incomplete from there on)
//	Stack: Stack (node id), Parent, Site; Context: Stack
//	End: How, Status
//	Sites: Sites (the new sites; also added to the reader's table)
//	Deps: Deps (the new facts; also added to the reader's table)
//	Frame: Frames (the thread's new activations)
//	Thread: Thread
//	FSOp: Site, FS, FSFlags, Handle, FileOffset, Size, Result, Path, Path2, Data (version 6)
//	Output: Site, Handle (the file descriptor: 1 standard output, 2 standard error), Data (version 6)
//	Schedule: Text (the SCRY_SCHED value), Policy, Seed, Depth, Steps, Flags (SchedEnd,
//	SchedDeadlock), Points, Switches, Threads, Timed (version 8; Reader.Schedule keeps the last)
//	Sync: Sync (the operation), Object (the lock's, barrier's or word's address, or for
//	SyncCreate and SyncJoin the other thread's trace id), Site (version 9)
//
// Every event carries Index, its 0-based position among ALL records of the trace (SITES,
// THREAD, CONTEXT, STACK and END included), Thread (the current thread: for a THREAD record,
// the new one) and Context (the current call-stack node of that thread: for a CONTEXT record,
// the new one), and Frames (the activation serials of that thread's active calls, outermost
// first, as the thread's last FRAME record named them; empty before any). Two events of one
// thread with the same Frames length run in the same activation of a function exactly when
// their last serials are equal (both empty: the thread's outermost function). FLUSH and FENCE
// split their kind byte into Flush or Fence and Internal.
//
// Reader.Next reuses one Event: the Event, its Data, Sites, Deps and Frames are valid until the
// next call to Next (Data aliases the reader's input window). Copy what you keep.
type Event struct {
	Kind    Kind
	Index   uint64 // position of the record among all records of the trace, counting from 0
	Thread  uint32
	Context uint32 // call-stack node current for Thread

	Site       uint32
	Addr       uint64 // virtual address (bytes)
	Size       uint64 // bytes
	Data       []byte
	Flags      uint8
	Flush      FlushKind
	Fence      FenceKind
	Internal   bool // FLUSH/FENCE performed by a library for its own metadata
	Region     uint32
	FileOffset uint64
	Path       string
	Errnum     uint64
	Op         uint64
	Text       string
	Stack      uint32
	Parent     uint32
	How        EndHow
	Status     int64
	Sites      []Site
	Deps       []Dep
	Frames     []uint64

	// File-system mode (version 6; docs/trace-format.md, "FS_OP" and "OUTPUT").
	FS      FSOpKind // the system call of an FS_OP record
	FSFlags uint32   // FS_OP flag bits (FSCreate, FSTrunc, ...)
	Handle  uint64   // FS_OP: the open file (a serial per open); OUTPUT: the file descriptor
	Result  int64    // FS_OP: the system call's return value
	Path2   string   // FS_OP: the second path (rename's and link's new name, symlink's link)

	// The controlled scheduler (version 8; docs/trace-format.md, "SCHEDULE").
	Policy   SchedPolicy
	Seed     uint64 // the seed of the schedule's random choices
	Depth    uint32 // PCT's depth: Depth-1 priority change points
	Steps    uint64 // the change points lie among the first Steps scheduling points
	Points   uint64 // scheduling points passed
	Switches uint64 // times the turn passed to another thread
	Threads  uint32 // threads the scheduler ran
	Timed    uint64 // choices that depended on time (0: the run replays from the spec and input)

	// Synchronization (version 9; docs/trace-format.md, "SYNC").
	Sync   SyncOp // the operation of a SYNC record
	Object uint64 // its object: an address, or for SyncCreate and SyncJoin a thread's trace id
}
