// Package trace defines scry's trace: the versioned binary stream of PM events that the
// instrumented program writes and every analysis reads. docs/trace-format.md is the normative
// specification; this file declares the event kinds and flags once, for Go and (through
// `go generate`, see gen_header.go) for the C runtime.
package trace

//go:generate go run ./internal/genheader -o ../native/include/scry_trace_format.h

// Magic is the first 8 bytes of every trace file.
const Magic = "SCRYTRC\x00"

// Version is the format version this package writes. Version 2 added the branch site kind and
// the DEPS and FRAME records (static dependence facts and call-frame identity, for inference);
// version 3 added the WARNING record (the runtime degraded: results are incomplete); version 4
// added the inlined site kind and each site's inlined-at field (the call the compiler inlined the
// site's code into); version 5 added the return site kind (a function's returned value, whose
// dependence facts carry guards through calls); version 6 added the FS_OP and OUTPUT records of
// file-system mode (a program's file-system system calls and its own output, recorded by the
// strace front end of package fsmode).
const Version = 6

// MinVersion is the oldest format version this package reads (version 1 traces have no DEPS or
// FRAME records, which version 2 added, no WARNING, which version 3 added, sites without the
// inlined-at field, which version 4 added, no return sites, which version 5 added, and no
// FS_OP or OUTPUT records, which version 6 added; everything else is unchanged).
const MinVersion = 1

// HeaderSize is the size of the fixed file header in bytes.
const HeaderSize = 16

// Kind is the one-byte code that starts every record.
type Kind uint8

// Record kinds, in the order of docs/trace-format.md.
const (
	KindSites         Kind = 0x01 // static instruction sites
	KindThread        Kind = 0x02 // following records belong to this thread
	KindRegionMap     Kind = 0x03 // a PM region is mapped
	KindRegionUnmap   Kind = 0x04 // a PM region is unmapped or its pool closed
	KindStore         Kind = 0x05 // a store (or range store) to PM, with the new bytes
	KindNTStore       Kind = 0x06 // a non-temporal store to PM
	KindLoad          Kind = 0x07 // a load from PM, with the value read
	KindFlush         Kind = 0x08 // a cache-line flush
	KindFence         Kind = 0x09 // a fence
	KindExternalWrite Kind = 0x0A // PM bytes changed by uninstrumented code
	KindTxBegin       Kind = 0x0B // a PMDK transaction begins
	KindTxAdd         Kind = 0x0C // a range is added to the innermost transaction
	KindTxCommit      Kind = 0x0D // the innermost transaction commits
	KindTxAbort       Kind = 0x0E // the innermost transaction aborts
	KindTxEnd         Kind = 0x0F // the innermost transaction ends
	KindAlloc         Kind = 0x10 // a PM object is allocated
	KindFree          Kind = 0x11 // a PM object is freed
	KindOpBegin       Kind = 0x12 // a workload operation begins
	KindOpEnd         Kind = 0x13 // a workload operation ends
	KindStack         Kind = 0x14 // defines a call-stack node
	KindContext       Kind = 0x15 // the current thread's call stack changed
	KindEnd           Kind = 0x16 // the trace is complete
	KindDeps          Kind = 0x17 // static dependence facts between sites (version 2)
	KindFrame         Kind = 0x18 // the current thread's activations changed (version 2)
	KindWarning       Kind = 0x19 // the runtime degraded: what follows is incomplete (version 3)
	KindFSOp          Kind = 0x1A // a file-system system call (file-system mode, version 6)
	KindOutput        Kind = 0x1B // the program wrote to its standard output or error (version 6)

	// KindLast is the highest record kind of this version.
	KindLast = KindOutput
)

// FlushKind is the instruction of a FLUSH record (low 7 bits of its kind byte).
type FlushKind uint8

// Flush instructions.
const (
	FlushCLFLUSH    FlushKind = 1
	FlushCLFLUSHOPT FlushKind = 2
	FlushCLWB       FlushKind = 3
)

// FenceKind is the instruction of a FENCE record (low 7 bits of its kind byte).
type FenceKind uint8

// Fence instructions.
const (
	FenceSFENCE FenceKind = 1
	FenceMFENCE FenceKind = 2
	FenceLocked FenceKind = 3 // a locked read-modify-write instruction
)

// InternalBit marks a FLUSH or FENCE performed by a library for its own metadata.
const InternalBit = 0x80

// Flag bits of the flags byte of the records that carry one.
const (
	RegionCreated = 1 << 0 // REGION_MAP: the file was created by this call

	ExternalPersisted = 1 << 0 // EXTERNAL_WRITE: made durable by the library before returning
	ExternalInitial   = 1 << 1 // EXTERNAL_WRITE: the region's content when it was mapped

	TxAddNoSnapshot = 1 << 0 // TX_ADD: POBJ_XADD_NO_SNAPSHOT
	TxAddNoFlush    = 1 << 1 // TX_ADD: POBJ_XADD_NO_FLUSH

	AllocInTx    = 1 << 0 // ALLOC, FREE: inside a transaction
	AllocZeroed  = 1 << 1 // ALLOC: the object was zeroed
	AllocReserve = 1 << 2 // ALLOC: a reservation (pmemobj_reserve), allocated only when published; FREE: a reservation cancelled
)

// FSOpKind is the system call of an FS_OP record (docs/trace-format.md, "FS_OP"): what the
// program asked of the file system, with file descriptors already resolved to the open file
// they name (Event.Handle) and paths made absolute.
type FSOpKind uint8

// File-system operations of FS_OP records.
const (
	FSOpen          FSOpKind = 1  // open/openat/creat: Path opened as Handle (FSCreate, FSTrunc, FSAppend, FSExcl, FSDirectory)
	FSWrite         FSOpKind = 2  // write/pwrite/writev: Data written to Handle at FileOffset (FSAppend: at the end of the file)
	FSTruncate      FSOpKind = 3  // truncate (Path) or ftruncate (Handle) to Size bytes
	FSFallocate     FSOpKind = 4  // fallocate on Handle: FileOffset, Size (FSKeepSize, FSPunchHole, FSZeroRange)
	FSRename        FSOpKind = 5  // rename/renameat/renameat2: Path to Path2 (FSNoReplace, FSExchange)
	FSLink          FSOpKind = 6  // link/linkat: new name Path2 for Path
	FSSymlink       FSOpKind = 7  // symlink/symlinkat: Path2 is created pointing to the text Path
	FSUnlink        FSOpKind = 8  // unlink/unlinkat: Path removed
	FSRmdir         FSOpKind = 9  // rmdir/unlinkat(AT_REMOVEDIR): directory Path removed
	FSMkdir         FSOpKind = 10 // mkdir/mkdirat: directory Path created
	FSFsync         FSOpKind = 11 // fsync(Handle)
	FSFdatasync     FSOpKind = 12 // fdatasync(Handle)
	FSSync          FSOpKind = 13 // sync(): every file system
	FSSyncfs        FSOpKind = 14 // syncfs(Handle): the file system of Handle
	FSSyncFileRange FSOpKind = 15 // sync_file_range(Handle, FileOffset, Size)
	FSMsync         FSOpKind = 16 // msync of a shared mapping of Handle: FileOffset, Size bytes of the file
	FSClose         FSOpKind = 17 // close(Handle's descriptor); the open file lives on in other descriptors
	FSMmap          FSOpKind = 18 // mmap(MAP_SHARED) of Handle writable: FileOffset, Size (writes through it are invisible)

	// FSOpLast is the highest FSOpKind of this version.
	FSOpLast = FSMmap
)

// Flag bits of an FS_OP record's flags (Event.FSFlags).
const (
	FSCreate    = 1 << 0  // FSOpen: O_CREAT, and the file did not exist before
	FSTrunc     = 1 << 1  // FSOpen: O_TRUNC
	FSAppend    = 1 << 2  // FSOpen: O_APPEND; FSWrite: the write went to the end of the file
	FSExcl      = 1 << 3  // FSOpen: O_EXCL
	FSDirectory = 1 << 4  // FSOpen: the path is a directory
	FSNoReplace = 1 << 5  // FSRename: RENAME_NOREPLACE
	FSExchange  = 1 << 6  // FSRename: RENAME_EXCHANGE
	FSKeepSize  = 1 << 7  // FSFallocate: FALLOC_FL_KEEP_SIZE
	FSPunchHole = 1 << 8  // FSFallocate: FALLOC_FL_PUNCH_HOLE
	FSZeroRange = 1 << 9  // FSFallocate: FALLOC_FL_ZERO_RANGE
	FSWriteOnly = 1 << 10 // FSOpen: opened for writing (O_WRONLY or O_RDWR)

	// FSFlagsAll are the bits defined by this version.
	FSFlagsAll = 1<<11 - 1
)

// EndHow tells how a traced program ended (the END record).
type EndHow uint8

// Ways a program ends.
const (
	EndExit   EndHow = 1 // status is the exit code
	EndSignal EndHow = 2 // status is the signal number
)

// SiteKind is what a static site is.
type SiteKind uint8

// Site kinds.
const (
	SiteLoad    SiteKind = 1
	SiteStore   SiteKind = 2
	SiteNTStore SiteKind = 3
	SiteRange   SiteKind = 4 // mem intrinsic or libc copy function
	SiteFlush   SiteKind = 5
	SiteFence   SiteKind = 6
	SiteRMW     SiteKind = 7  // atomic read-modify-write or compare-exchange
	SiteLibCall SiteKind = 8  // a library call scry interprets (PMDK, mmap, stdin reads)
	SiteCall    SiteKind = 9  // any other call, used in call stacks
	SiteBranch  SiteKind = 10 // a conditional branch or switch: a static fact only, never an event (version 2)
	SiteInlined SiteKind = 11 // a call the compiler inlined: named by other sites' inlined-at, never an event (version 4)
	SiteReturn  SiteKind = 12 // a function's return of a value: a static fact only, never an event (version 5)
)

// DepKind is the kind of one static dependence fact of a DEPS record.
type DepKind uint8

// Dependence kinds (docs/trace-format.md, "DEPS").
const (
	DepControl DepKind = 1 // From is directly control dependent on branch site To
	DepValue   DepKind = 2 // the value From uses depends, at register level, on the value To produces
	DepAddress DepKind = 3 // the address From accesses depends, at register level, on the value To produces
)

// Limits a reader enforces; larger values are reported as corruption.
const (
	MaxPayload = 64 << 20 // bytes in one record's data
	MaxString  = 64 << 10 // bytes in one string
	MaxSites   = 1 << 24  // sites in one trace
	MaxDeps    = 1 << 26  // dependence facts in one DEPS record
	MaxDepth   = 1 << 10  // activations in one FRAME record
)
