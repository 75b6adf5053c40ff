package trace

import "strconv"

var kindNames = [...]string{
	KindSites: "SITES", KindThread: "THREAD", KindRegionMap: "REGION_MAP", KindRegionUnmap: "REGION_UNMAP",
	KindStore: "STORE", KindNTStore: "NT_STORE", KindLoad: "LOAD", KindFlush: "FLUSH", KindFence: "FENCE",
	KindExternalWrite: "EXTERNAL_WRITE", KindTxBegin: "TX_BEGIN", KindTxAdd: "TX_ADD",
	KindTxCommit: "TX_COMMIT", KindTxAbort: "TX_ABORT", KindTxEnd: "TX_END", KindAlloc: "ALLOC",
	KindFree: "FREE", KindOpBegin: "OP_BEGIN", KindOpEnd: "OP_END", KindStack: "STACK",
	KindContext: "CONTEXT", KindEnd: "END", KindDeps: "DEPS", KindFrame: "FRAME",
	KindWarning: "WARNING", KindFSOp: "FS_OP", KindOutput: "OUTPUT",
}

var fsOpNames = [...]string{
	FSOpen: "open", FSWrite: "write", FSTruncate: "truncate", FSFallocate: "fallocate", FSRename: "rename",
	FSLink: "link", FSSymlink: "symlink", FSUnlink: "unlink", FSRmdir: "rmdir", FSMkdir: "mkdir",
	FSFsync: "fsync", FSFdatasync: "fdatasync", FSSync: "sync", FSSyncfs: "syncfs",
	FSSyncFileRange: "sync_file_range", FSMsync: "msync", FSClose: "close", FSMmap: "mmap",
}

// String returns the operation's name ("open", "write", "rename", ...), or "fsop(N)" for an
// unknown value.
func (k FSOpKind) String() string {
	if int(k) < len(fsOpNames) && fsOpNames[k] != "" {
		return fsOpNames[k]
	}
	return "fsop(" + strconv.Itoa(int(k)) + ")"
}

// fsFlagNames names the FS_OP flag bits, bit i at index i.
var fsFlagNames = []string{"create", "trunc", "append", "excl", "directory", "noreplace", "exchange",
	"keep_size", "punch_hole", "zero_range", "write"}

// String returns the record kind's name as docs/trace-format.md spells it ("STORE",
// "NT_STORE", ...), or "KIND(0xNN)" for an unknown code.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "KIND(0x" + strconv.FormatUint(uint64(k), 16) + ")"
}

// Valid reports whether k is a record kind of the format version this package writes.
func (k Kind) Valid() bool { return int(k) < len(kindNames) && kindNames[k] != "" }

// String returns "clflush", "clflushopt" or "clwb", or "flush(N)" for an unknown value.
func (f FlushKind) String() string {
	switch f {
	case FlushCLFLUSH:
		return "clflush"
	case FlushCLFLUSHOPT:
		return "clflushopt"
	case FlushCLWB:
		return "clwb"
	}
	return "flush(" + strconv.Itoa(int(f)) + ")"
}

// String returns "sfence", "mfence" or "locked", or "fence(N)" for an unknown value.
func (f FenceKind) String() string {
	switch f {
	case FenceSFENCE:
		return "sfence"
	case FenceMFENCE:
		return "mfence"
	case FenceLocked:
		return "locked"
	}
	return "fence(" + strconv.Itoa(int(f)) + ")"
}

// String returns the site kind's name: "load", "store", "nt-store", "range", "flush",
// "fence", "rmw", "libcall", "call", "branch", "inlined", "return", or "site(N)" for an unknown value.
func (k SiteKind) String() string {
	switch k {
	case SiteLoad:
		return "load"
	case SiteStore:
		return "store"
	case SiteNTStore:
		return "nt-store"
	case SiteRange:
		return "range"
	case SiteFlush:
		return "flush"
	case SiteFence:
		return "fence"
	case SiteRMW:
		return "rmw"
	case SiteLibCall:
		return "libcall"
	case SiteCall:
		return "call"
	case SiteBranch:
		return "branch"
	case SiteInlined:
		return "inlined"
	case SiteReturn:
		return "return"
	}
	return "site(" + strconv.Itoa(int(k)) + ")"
}

// String returns "control", "value" or "address", or "dep(N)" for an unknown value.
func (k DepKind) String() string {
	switch k {
	case DepControl:
		return "control"
	case DepValue:
		return "value"
	case DepAddress:
		return "address"
	}
	return "dep(" + strconv.Itoa(int(k)) + ")"
}

// String returns "exit" or "signal", or "end(N)" for an unknown value.
func (h EndHow) String() string {
	switch h {
	case EndExit:
		return "exit"
	case EndSignal:
		return "signal"
	}
	return "end(" + strconv.Itoa(int(h)) + ")"
}
