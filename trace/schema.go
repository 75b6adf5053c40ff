package trace

//go:generate go run ./internal/gentrace -root ..

// The declaration of the trace format (see the package documentation for what is generated
// from it). A field's Go target and its encoding decide the generated checks; the docs texts
// are Markdown, the Short texts one line for code comments.

// Encoding is how one field is written (docs/trace-format.md, "Conventions").
type Encoding uint8

// Field encodings.
const (
	EncU8      Encoding = iota + 1 // one byte
	EncUvarint                     // unsigned LEB128, at most 10 bytes
	EncSvarint                     // zig-zag signed varint, at most 10 bytes
	EncAddr                        // svarint delta from the running last address
	EncStr                         // uvarint length in bytes, then that many bytes, at most MaxString
	EncBytes                       // raw bytes, as many as the count field named by Len says
	EncList                        // elements (Elem), as many as the count field named by Len says
)

// FormatSpec is the whole trace format (Schema).
type FormatSpec struct {
	Magic      string        // first bytes of every trace file
	Version    uint16        // the version this package writes
	MinVersion uint16        // the oldest version this package reads
	Versions   []VersionSpec // what each version after MinVersion added, in order
	Header     []HeaderField // the fixed file header, in order
	Limits     []LimitSpec   // sizes and counts a reader enforces
	Records    []RecordSpec  // record kinds, in code order
	Enums      []EnumSpec    // the enums fields name (EnumSpec.Type)
}

// VersionSpec says what one format version added.
type VersionSpec struct {
	Version uint16
	Added   string // completes "version N added ..." (Markdown)
}

// HeaderField is one fixed-width field of the file header (little-endian).
type HeaderField struct {
	Name string // Go field of Header; "" for the magic
	Size int    // bytes
	Doc  string // Markdown
	// Flags are the bits of a flags field (other bits are reserved: written 0, ignored).
	Flags []FlagSpec
}

// LimitSpec is one limit a reader enforces (a larger value is corruption).
type LimitSpec struct {
	Go, C string
	Value uint64
	Short string // one line, for code comments
}

// RecordSpec is one record kind: its code byte, then its fields in order.
type RecordSpec struct {
	Code   uint8
	Name   string // as docs/trace-format.md and Kind.String spell it
	Go     string // the Kind constant
	Since  uint16 // the version that added it (0: every version)
	Short  string // one line, for code comments
	Doc    string // meaning, for docs/trace-format.md (Markdown; enum and flag values are appended)
	Fields []FieldSpec

	// Hot marks the frequent kinds (memory accesses, flushes, fences): between two hot records
	// the reader clears only the Event fields hot kinds set, not the whole Event.
	Hot bool
	// State marks the kinds whose reading changes the reader's state beyond the running address
	// (current thread, call stacks, activations, dependence facts, end): the reader's
	// hand-written apply runs after their fields are decoded, and may reject them.
	State bool
	// Streamed marks SITES: the reader reads it element by element (readSites), since one record
	// may exceed its window.
	Streamed bool
	// DumpOrder lists the fields in the order Dump prints them when it is not the encoding order
	// (the site always comes last, flag bits split off a byte after the fields).
	DumpOrder []string
	// DumpFunc names the hand-written function that appends the fields of a kind with a list
	// (func(b []byte, ev *Event) []byte), instead of the fields' Dump formats.
	DumpFunc string
}

// FieldSpec is one field of a record or of a list element.
type FieldSpec struct {
	Name  string   // as docs/trace-format.md names it (and error messages)
	Enc   Encoding // how it is written
	Since uint16   // the version that added it (0: every version); older traces lack it
	Doc   string   // meaning (Markdown), for the tables of elements
	// Go is the field of Event (of the element type, for a list's element) the field is read
	// into and written from; its Go type decides the checks (a uint32 field rejects values over
	// 32 bits). "" for a count or length whose Bytes or List field stands for it, and for the
	// single field of a list of scalars (the element itself).
	Go string
	// Max names the limit (LimitSpec.Go) a count may not exceed (a str is at most MaxString
	// bytes).
	Max string
	// Len names the count field of a Bytes or List field.
	Len string
	// Enum names the enum (EnumSpec.Type) of a U8 field: other values are corruption, and so
	// are values added after the trace's version.
	Enum string
	// Bits are bits of a U8 enum field that are flags of their own (FLUSH's internal bit).
	Bits []BitSpec
	// Flags are the flag bits of the field. Bits not named are ignored, unless StrictFlags names
	// the constant of every bit this version defines: then others are corruption.
	Flags       []FlagSpec
	StrictFlags string
	// NonZero gives the reason value 0 is corruption ("" when 0 is allowed).
	NonZero string
	// Elem are the fields of one element of a List; ElemName names an element ("site").
	Elem     []FieldSpec
	ElemName string
	// Dump is how Dump prints the field: a fmt format with one verb applied to its Go value
	// ("addr=%#x", "%-10s"; a count or length prints the length of its Bytes field). "" hides
	// the field. Bytes print as " data=HEX", flags by name.
	Dump string
	// DumpOmitEmpty skips an empty string or byte field in the dump.
	DumpOmitEmpty bool
}

// BitSpec is a bit of an enum byte that is a flag of its own.
type BitSpec struct {
	Mask  uint8
	Name  string // as the docs and the dump spell it
	Go    string // the Event field (bool) it is read into; GoConst/C are the constants of the mask
	Const string
	C     string
	Doc   string // Markdown
}

// FlagSpec is one flag bit of a flags field.
type FlagSpec struct {
	Bit   uint   // bit number
	Name  string // as the docs and the dump spell it
	Go, C string // constants; a flag shared by several fields repeats the same names
	Short string // one line, for code comments
	Doc   string // Markdown; "" for none
}

// EnumSpec is a set of named byte values (a Go type of package trace).
type EnumSpec struct {
	Type    string // Go type
	Short   string // Go doc of the type, after "<Type> is"
	Unknown string // what String returns for an unknown value, with %d or %x for the value
	Last    string // the Go constant naming the highest value ("" none)
	// DocTable names the table of docs/trace-format.md that lists the values ("" when the
	// records table lists them with the field).
	DocTable string
	Values   []EnumValue
}

// EnumValue is one value of an enum.
type EnumValue struct {
	Value uint8
	Name  string // as the docs and String spell it
	Go, C string
	Since uint16 // the version that added it (0: every version)
	Short string // one line, for code comments
	Uses  string // the record fields the value uses (FS_OP operations), for the docs
	Doc   string // Markdown, for the docs
}

// Schema returns the declaration of the trace format, from which `go generate ./trace` writes
// the Go codecs, the C header and the tables of docs/trace-format.md. It must not be modified.
func Schema() *FormatSpec { return &schema }

// siteField is the `uvarint site` field most records start with; addrField the `addr` field
// of the records at an address.
var (
	siteField = FieldSpec{Name: "site", Enc: EncUvarint, Go: "Site"}
	addrField = FieldSpec{Name: "addr", Enc: EncAddr, Go: "Addr", Dump: "addr=%#x"}
)

// memFields are the fields of STORE, NT_STORE and LOAD.
var memFields = []FieldSpec{
	siteField,
	addrField,
	{Name: "size", Enc: EncUvarint, Go: "Size", Max: "MaxPayload", Dump: "size=%d"},
	{Name: "data", Enc: EncBytes, Len: "size", Go: "Data", Dump: "data"},
}

// internalBit is the internal bit of FLUSH and FENCE kinds.
var internalBit = BitSpec{Mask: 0x80, Name: "internal", Go: "Internal", Const: "InternalBit", C: "SCRY_INTERNAL_BIT",
	Doc: "performed by a library for its own metadata (not a user request)"}

var (
	allocInTx   = FlagSpec{Bit: 0, Name: "tx", Go: "AllocInTx", C: "SCRY_ALLOC_IN_TX", Short: "ALLOC, FREE: inside a transaction", Doc: "inside a transaction"}
	allocReserv = FlagSpec{Bit: 2, Name: "reserve", Go: "AllocReserve", C: "SCRY_ALLOC_RESERVE",
		Short: "ALLOC: a reservation (pmemobj_reserve), allocated only when published; FREE: a reservation cancelled"}
)

var schema = FormatSpec{
	Magic:      "SCRYTRC\x00",
	Version:    11,
	MinVersion: 1,
	Versions: []VersionSpec{
		{2, "the `branch` site kind and the `DEPS` and `FRAME` records (static dependence facts and call-frame identity, for inference: docs/inference.md)"},
		{3, "the `WARNING` record (the runtime degraded: results are incomplete)"},
		{4, "the `inlined` site kind and every site's `inlined_at` field (the call the compiler inlined the site's code into)"},
		{5, "the `return` site kind (a function's returned value, whose dependence facts carry guards through calls)"},
		{6, "the `FS_OP` and `OUTPUT` records of file-system mode (a program's file-system system calls and its own output, recorded by the strace front end)"},
		{7, "the `PM_EXCLUDE`, `SET_CLEAN` and `TX_IGNORE` records (pmemcheck's client requests: ranges that are not PM, ranges declared durable, ranges exempt from transaction checks; docs/pmemcheck.md)"},
		{8, "the `SCHEDULE` record (the controlled schedule a run was recorded under, `SCRY_SCHED`)"},
		{9, "every site's `access` field (plain, volatile, or atomic with its memory order) and the `SYNC` record (a thread's synchronization operations once a second thread exists), from which the replay derives happens-before"},
		{10, "the `unit` site kind (a module's main source file and the root of the project it belongs to: what is the program's own code)"},
		{11, "the `aarch64` header flag and the Arm flush and fence kinds (`dc-cvap`, `dc-cvadp`, `dc-cvac`, `dc-civac`, `dsb`, `dmb`): traces of aarch64 programs (docs/persistency-profiles.md)"},
	},
	Header: []HeaderField{
		{"", 8, "magic `SCRYTRC\\x00`", nil},
		{"Version", 2, "format version", nil},
		{"Flags", 2, "flags", []FlagSpec{
			{Bit: 0, Name: "no_flush", Go: "HeaderNoFlush", C: "SCRY_TRACE_NO_FLUSH", Short: "header: libpmem skipped its cache flushes in this run (its and libpmemobj's persists only fenced)",
				Doc: "libpmem skipped its cache flushes in the recorded run (`PMEM_NO_FLUSH=1`, or every NVDIMM region's persistence domain is the CPU cache, as `pmem_has_auto_flush` decides): the persists of libpmem and libpmemobj only fenced, and their bytes are durable only where the caches are persistent (eADR)"},
			{Bit: 1, Name: "aarch64", Go: "HeaderAArch64", C: "SCRY_TRACE_AARCH64", Short: "header: the program is an aarch64 (Armv8) binary: its flushes are DC cache maintenance, its fences DSB and DMB",
				Doc: "the recorded program is an aarch64 (Armv8) binary: its flushes are `DC` cache-maintenance instructions and its fences `DSB` and `DMB`, and the Arm persistency profile applies (docs/persistency-profiles.md)"},
		}},
		{"LineSize", 4, "cache-line size in bytes (64 on x86-64)", nil},
	},
	Limits: []LimitSpec{
		{"MaxPayload", "SCRY_MAX_PAYLOAD", 64 << 20, "bytes in one record's data"},
		{"MaxString", "SCRY_MAX_STRING", 64 << 10, "bytes in one string"},
		{"MaxSites", "SCRY_MAX_SITES", 1 << 24, "sites in one trace"},
		{"MaxDeps", "SCRY_MAX_DEPS", 1 << 26, "dependence facts in one DEPS record"},
		{"MaxDepth", "SCRY_MAX_DEPTH", 1 << 10, "activations in one FRAME record"},
	},
	Records: []RecordSpec{
		{
			Code: 0x01, Name: "SITES", Go: "KindSites", Short: "static instruction sites", Streamed: true,
			Doc: "static instruction sites (below). Emitted when a module registers, before any record that uses its ids: in practice right after the header; a `dlopen`ed module appends more later.",
			Fields: []FieldSpec{
				{Name: "n", Enc: EncUvarint, Max: "MaxSites"},
				{Name: "sites", Enc: EncList, Len: "n", Go: "Sites", ElemName: "site", Elem: []FieldSpec{
					{Name: "id", Enc: EncUvarint, Go: "ID", NonZero: "site 0 means an unknown site", Doc: "unique in the trace"},
					{Name: "kind", Enc: EncU8, Go: "Kind", Enum: "SiteKind"},
					{Name: "function", Enc: EncStr, Go: "Function", Doc: "the enclosing function"},
					{Name: "file", Enc: EncStr, Go: "File", Doc: "the source file as the compiler saw it"},
					{Name: "line", Enc: EncUvarint, Go: "Line"},
					{Name: "column", Enc: EncUvarint, Go: "Column"},
					{Name: "callee", Enc: EncStr, Go: "Callee", Doc: "the called function for kinds 8, 9 and 11, the project root (an absolute directory) for kind 13, else empty"},
					{Name: "inlined_at", Enc: EncUvarint, Go: "InlinedAt", Since: 4, Doc: "the `inlined` site of the call the compiler inlined this site's code at, 0 when the site is in its own function's body"},
					{Name: "access", Enc: EncU8, Go: "Access", Enum: "SiteAccess", Since: 9, Doc: "how the site accesses memory; 0 when unknown (an older pass) or the site is no memory access"},
				}},
			},
			DumpFunc: "appendSitesFields",
		},
		{
			Code: 0x02, Name: "THREAD", Go: "KindThread", Short: "following records belong to this thread", State: true,
			Doc:    "following records belong to thread `tid` (the kernel thread id).",
			Fields: []FieldSpec{{Name: "tid", Enc: EncUvarint, Go: "Thread", Dump: "tid=%d"}},
		},
		{
			Code: 0x03, Name: "REGION_MAP", Go: "KindRegionMap", Short: "a PM region is mapped",
			Doc: "a PM region is mapped: `length` bytes at virtual address `base` stand for the file `path` from `file_offset`. The region's initial content is all zero bytes; its real content at map time follows as `EXTERNAL_WRITE` records with flag `initial`.",
			Fields: []FieldSpec{
				{Name: "region", Enc: EncUvarint, Go: "Region", Dump: "region=%d"},
				{Name: "base", Enc: EncUvarint, Go: "Addr", Dump: "base=%#x"},
				{Name: "length", Enc: EncUvarint, Go: "Size", Dump: "length=%d"},
				{Name: "file_offset", Enc: EncUvarint, Go: "FileOffset", Dump: "file_offset=%d"},
				{Name: "path", Enc: EncStr, Go: "Path", Dump: "path=%q"},
				siteField,
				{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
					{Bit: 0, Name: "created", Go: "RegionCreated", C: "SCRY_REGION_CREATED", Short: "REGION_MAP: the file was created by this call", Doc: "the file was created by this call"},
				}},
			},
		},
		{
			Code: 0x04, Name: "REGION_UNMAP", Go: "KindRegionUnmap", Short: "a PM region is unmapped or its pool closed",
			Doc:    "the region is unmapped or its pool closed.",
			Fields: []FieldSpec{{Name: "region", Enc: EncUvarint, Go: "Region", Dump: "region=%d"}, siteField},
		},
		{
			Code: 0x05, Name: "STORE", Go: "KindStore", Short: "a store (or range store) to PM, with the new bytes", Hot: true,
			Doc:    "an instrumented store (or a range store: memcpy, memmove, memset, libc copy functions) to PM; the bytes are the new contents.",
			Fields: memFields,
		},
		{
			Code: 0x06, Name: "NT_STORE", Go: "KindNTStore", Short: "a non-temporal store to PM", Hot: true,
			Doc:    "a non-temporal store (bypasses the cache; guaranteed durable only at the next fence).",
			Fields: memFields,
		},
		{
			Code: 0x07, Name: "LOAD", Go: "KindLoad", Short: "a load from PM, with the value read", Hot: true,
			Doc:    "an instrumented load from PM, or the PM bytes a hooked libc function read (a copy's source; what `strcmp`, `memcmp`, `strlen` or a printf `%s` read), at the call's site; the bytes are the value read.",
			Fields: memFields,
		},
		{
			Code: 0x08, Name: "FLUSH", Go: "KindFlush", Short: "a cache-line flush", Hot: true,
			Doc: "a cache-line flush of the line containing `addr`.",
			Fields: []FieldSpec{
				siteField,
				{Name: "kind", Enc: EncU8, Go: "Flush", Enum: "FlushKind", Bits: []BitSpec{internalBit}, Dump: "%-10s"},
				addrField,
			},
		},
		{
			Code: 0x09, Name: "FENCE", Go: "KindFence", Short: "a fence", Hot: true,
			Doc: "a fence.",
			Fields: []FieldSpec{
				siteField,
				{Name: "kind", Enc: EncU8, Go: "Fence", Enum: "FenceKind", Bits: []BitSpec{internalBit}, Dump: "%-10s"},
			},
		},
		{
			Code: 0x0A, Name: "EXTERNAL_WRITE", Go: "KindExternalWrite", Short: "PM bytes changed by uninstrumented code", Hot: true,
			Doc: "bytes of PM that changed under code scry did not instrument, found by comparing pages; `site` is the call into that code.",
			Fields: append(append([]FieldSpec(nil), memFields...), FieldSpec{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
				{Bit: 0, Name: "persisted", Go: "ExternalPersisted", C: "SCRY_EXT_PERSISTED", Short: "EXTERNAL_WRITE: made durable by the library before returning", Doc: "the library made them durable before the call returned"},
				{Bit: 1, Name: "initial", Go: "ExternalInitial", C: "SCRY_EXT_INITIAL", Short: "EXTERNAL_WRITE: the region's content when it was mapped", Doc: "the region's content when it was mapped"},
			}}),
		},
		{
			Code: 0x0B, Name: "TX_BEGIN", Go: "KindTxBegin", Short: "a PMDK transaction begins",
			Doc: "a PMDK transaction (or a nested one) begins.", Fields: []FieldSpec{siteField},
		},
		{
			Code: 0x0C, Name: "TX_ADD", Go: "KindTxAdd", Short: "a range is added to the innermost transaction",
			Doc: "a range is added to the innermost transaction (snapshotted to the undo log).",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
				{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
					{Bit: 0, Name: "no_snapshot", Go: "TxAddNoSnapshot", C: "SCRY_TXADD_NO_SNAPSHOT", Short: "TX_ADD: POBJ_XADD_NO_SNAPSHOT", Doc: "`POBJ_XADD_NO_SNAPSHOT`"},
					{Bit: 1, Name: "no_flush", Go: "TxAddNoFlush", C: "SCRY_TXADD_NO_FLUSH", Short: "TX_ADD: POBJ_XADD_NO_FLUSH", Doc: "`POBJ_XADD_NO_FLUSH`"},
				}},
			},
		},
		{
			Code: 0x0D, Name: "TX_COMMIT", Go: "KindTxCommit", Short: "the innermost transaction commits",
			Doc: "the innermost transaction commits.", Fields: []FieldSpec{siteField},
		},
		{
			Code: 0x0E, Name: "TX_ABORT", Go: "KindTxAbort", Short: "the innermost transaction aborts",
			Doc:    "the innermost transaction aborts.",
			Fields: []FieldSpec{siteField, {Name: "errnum", Enc: EncUvarint, Go: "Errnum", Dump: "errnum=%d"}},
		},
		{
			Code: 0x0F, Name: "TX_END", Go: "KindTxEnd", Short: "the innermost transaction ends",
			Doc: "the innermost transaction ends.", Fields: []FieldSpec{siteField},
		},
		{
			Code: 0x10, Name: "ALLOC", Go: "KindAlloc", Short: "a PM object is allocated",
			Doc: "a PM object was allocated (usable size).",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
				{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
					allocInTx,
					{Bit: 1, Name: "zeroed", Go: "AllocZeroed", C: "SCRY_ALLOC_ZEROED", Short: "ALLOC: the object was zeroed"},
					func() FlagSpec {
						f := allocReserv
						f.Doc = "a reservation by `pmemobj_reserve` or `pmemobj_xreserve`: memory the program may fill but that is allocated only when published; publishing it appears as a second `ALLOC` of the same address without `reserve`, with `tx` for `pmemobj_tx_publish`, and cancelling it as a `FREE` with `reserve`"
						return f
					}(),
				}},
			},
		},
		{
			Code: 0x11, Name: "FREE", Go: "KindFree", Short: "a PM object is freed",
			Doc: "a PM object is freed.",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
					allocInTx,
					func() FlagSpec { f := allocReserv; f.Doc = "a reservation is cancelled"; return f }(),
				}},
			},
		},
		{
			Code: 0x12, Name: "OP_BEGIN", Go: "KindOpBegin", Short: "a workload operation begins",
			Doc: "operation `index` (0-based, numbered in the order operations begin) of the workload begins: a line the program read from standard input, a `scry_op_begin` marker, or (a server in client mode, docs/servers.md) a request it read from a socket, named by the request's first line. It ends the operation its thread had open, if any: each thread has at most one open operation, and operations of different threads may overlap.",
			Fields: []FieldSpec{
				{Name: "index", Enc: EncUvarint, Go: "Op", Dump: "op=%d"},
				{Name: "text", Enc: EncStr, Go: "Text", Dump: "text=%q"},
			},
		},
		{
			Code: 0x13, Name: "OP_END", Go: "KindOpEnd", Short: "a workload operation ends",
			Doc:    "operation `index` ends.",
			Fields: []FieldSpec{{Name: "index", Enc: EncUvarint, Go: "Op", Dump: "op=%d"}},
		},
		{
			Code: 0x14, Name: "STACK", Go: "KindStack", Short: "defines a call-stack node", State: true,
			Doc: "defines call-stack node `id` (ids start at 1; 0 is the empty stack): the stack `parent` extended by a call at call site `site`.",
			Fields: []FieldSpec{
				{Name: "id", Enc: EncUvarint, Go: "Stack", NonZero: "node 0 is the empty stack", Dump: "node=%d"},
				{Name: "parent", Enc: EncUvarint, Go: "Parent", Dump: "parent=%d"},
				siteField,
			},
		},
		{
			Code: 0x15, Name: "CONTEXT", Go: "KindContext", Short: "the current thread's call stack changed", State: true,
			Doc:    "the current thread's call stack is now node `stack`.",
			Fields: []FieldSpec{{Name: "stack", Enc: EncUvarint, Go: "Stack", Dump: "stack=%d"}},
		},
		{
			Code: 0x16, Name: "END", Go: "KindEnd", Short: "the trace is complete", State: true,
			Doc: "the trace is complete.",
			Fields: []FieldSpec{
				{Name: "how", Enc: EncU8, Go: "How", Enum: "EndHow", Dump: "%s"},
				{Name: "status", Enc: EncSvarint, Go: "Status", Dump: "status=%d"},
			},
		},
		{
			Code: 0x17, Name: "DEPS", Go: "KindDeps", Since: 2, Short: "static dependence facts between sites", State: true,
			Doc: "static dependence facts between sites (below), emitted right after the `SITES` record of the module that defines them; both sites must be defined.",
			Fields: []FieldSpec{
				{Name: "n", Enc: EncUvarint, Max: "MaxDeps"},
				{Name: "facts", Enc: EncList, Len: "n", Go: "Deps", ElemName: "fact", Elem: []FieldSpec{
					{Name: "from", Enc: EncUvarint, Go: "From"},
					{Name: "kind", Enc: EncU8, Go: "Kind", Enum: "DepKind"},
					{Name: "to", Enc: EncUvarint, Go: "To"},
				}},
			},
			DumpFunc: "appendDepsFields",
		},
		{
			Code: 0x18, Name: "FRAME", Go: "KindFrame", Since: 2, Short: "the current thread's activations changed", State: true,
			Doc: "the current thread's activations: the serial of each active call of its call stack, outermost first (n is the call depth). Emitted before a record whenever the list differs from the one the thread's last `FRAME` named.",
			Fields: []FieldSpec{
				{Name: "n", Enc: EncUvarint, Max: "MaxDepth"},
				{Name: "serials", Enc: EncList, Len: "n", Go: "Frames", ElemName: "serial", Elem: []FieldSpec{
					{Name: "serial", Enc: EncUvarint},
				}},
			},
			DumpFunc: "appendFrameFields",
		},
		{
			Code: 0x19, Name: "WARNING", Go: "KindWarning", Since: 3, Short: "the runtime degraded: what follows is incomplete",
			Doc:    "the runtime degraded and says why (a pool it cannot trace, more PM regions than it can follow, a shadow it cannot allocate, a partial unmap treated as a whole one, a trace write that failed, ...): what the trace holds from there on is incomplete. Belongs to the current thread. The runtime prints the same message on standard error; readers keep each distinct message, and replay reports it as the warning `results incomplete: ` followed by the message, which every report carries.",
			Fields: []FieldSpec{{Name: "message", Enc: EncStr, Go: "Text", Dump: "%q"}},
		},
		{
			Code: 0x1A, Name: "FS_OP", Go: "KindFSOp", Since: 6, Short: "a file-system system call of file-system mode",
			Doc: "a file-system system call of the program (file-system mode, below).",
			Fields: []FieldSpec{
				siteField,
				{Name: "op", Enc: EncU8, Go: "FS", Enum: "FSOpKind", Dump: "%-15s"},
				{Name: "flags", Enc: EncUvarint, Go: "FSFlags", StrictFlags: "FSFlagsAll", Flags: []FlagSpec{
					{Bit: 0, Name: "create", Go: "FSCreate", C: "SCRY_FS_CREATE", Short: "FSOpen: O_CREAT, and the file did not exist before"},
					{Bit: 1, Name: "trunc", Go: "FSTrunc", C: "SCRY_FS_TRUNC", Short: "FSOpen: O_TRUNC"},
					{Bit: 2, Name: "append", Go: "FSAppend", C: "SCRY_FS_APPEND", Short: "FSOpen: O_APPEND; FSWrite: the write went to the end of the file"},
					{Bit: 3, Name: "excl", Go: "FSExcl", C: "SCRY_FS_EXCL", Short: "FSOpen: O_EXCL"},
					{Bit: 4, Name: "directory", Go: "FSDirectory", C: "SCRY_FS_DIRECTORY", Short: "FSOpen: the path is a directory"},
					{Bit: 5, Name: "noreplace", Go: "FSNoReplace", C: "SCRY_FS_NOREPLACE", Short: "FSRename: RENAME_NOREPLACE"},
					{Bit: 6, Name: "exchange", Go: "FSExchange", C: "SCRY_FS_EXCHANGE", Short: "FSRename: RENAME_EXCHANGE"},
					{Bit: 7, Name: "keep_size", Go: "FSKeepSize", C: "SCRY_FS_KEEP_SIZE", Short: "FSFallocate: FALLOC_FL_KEEP_SIZE"},
					{Bit: 8, Name: "punch_hole", Go: "FSPunchHole", C: "SCRY_FS_PUNCH_HOLE", Short: "FSFallocate: FALLOC_FL_PUNCH_HOLE"},
					{Bit: 9, Name: "zero_range", Go: "FSZeroRange", C: "SCRY_FS_ZERO_RANGE", Short: "FSFallocate: FALLOC_FL_ZERO_RANGE"},
					{Bit: 10, Name: "write", Go: "FSWriteOnly", C: "SCRY_FS_WRITE", Short: "FSOpen: opened for writing (O_WRONLY or O_RDWR)"},
					{Bit: 11, Name: "dsync", Go: "FSDataSync", C: "SCRY_FS_DSYNC", Short: "FSWrite: through an O_DSYNC descriptor or with RWF_DSYNC: durable with the metadata to read it back when it returned; FSOpen: O_DSYNC"},
					{Bit: 12, Name: "sync", Go: "FSFileSync", C: "SCRY_FS_SYNC", Short: "FSWrite: through an O_SYNC descriptor or with RWF_SYNC: durable with the file's metadata when it returned; FSOpen: O_SYNC"},
					{Bit: 13, Name: "tmpfile", Go: "FSTmpfile", C: "SCRY_FS_TMPFILE", Short: "FSOpen: O_TMPFILE: Handle is a new file without a name in directory Path"},
				}},
				{Name: "handle", Enc: EncUvarint, Go: "Handle", Dump: "handle=%d"},
				{Name: "offset", Enc: EncUvarint, Go: "FileOffset", Dump: "offset=%d"},
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
				{Name: "result", Enc: EncSvarint, Go: "Result", Dump: "result=%d"},
				{Name: "path", Enc: EncStr, Go: "Path", Dump: "path=%q", DumpOmitEmpty: true},
				{Name: "path2", Enc: EncStr, Go: "Path2", Dump: "path2=%q", DumpOmitEmpty: true},
				{Name: "n", Enc: EncUvarint, Max: "MaxPayload"},
				{Name: "data", Enc: EncBytes, Len: "n", Go: "Data", Dump: "data", DumpOmitEmpty: true},
			},
			DumpOrder: []string{"op", "handle", "offset", "size", "result", "path", "path2", "flags", "data"},
		},
		{
			Code: 0x1B, Name: "OUTPUT", Go: "KindOutput", Since: 6, Short: "the program wrote to its standard output or error",
			Doc: "the program wrote these bytes to its standard output (`fd` 1) or standard error (`fd` 2), or to a descriptor duplicated from them. In file-system mode strace records every such write; in PM mode the runtime records, in the printing thread, what the program prints on its standard output through `puts`, `fputs`, `printf`, `fprintf`, `dprintf`, `fwrite`, `putchar`, `fputc` and `putc` (what each operation printed, for crash exploration's durable linearizability).",
			Fields: []FieldSpec{
				siteField,
				{Name: "fd", Enc: EncUvarint, Go: "Handle", Dump: "fd=%d"},
				{Name: "n", Enc: EncUvarint, Max: "MaxPayload", Dump: "size=%d"},
				{Name: "data", Enc: EncBytes, Len: "n", Go: "Data", Dump: "data"},
			},
		},
		{
			Code: 0x1C, Name: "PM_EXCLUDE", Go: "KindPMExclude", Since: 7, Short: "a range of a PM region is not PM from here on (or, with include, is PM again)",
			Doc: "`size` bytes at `addr`, inside a mapped region, are not PM from this record on (pmemcheck's `VALGRIND_PMC_REMOVE_PMEM_MAPPING`: a field the program keeps volatile on purpose; also a `pmemobj_volatile(3)` variable and its run id, recorded before each call): later stores, non-temporal stores, external writes, loads and flushes there are no PM events (the replay still writes their bytes into the region's image, so that it equals the file) and the persistency model does not see them; stores made before stay as they are. With flag `include`, the range is PM again (`VALGRIND_PMC_REGISTER_PMEM_MAPPING` of an excluded range). Unmapping a region forgets its excluded ranges.",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
				{Name: "flags", Enc: EncU8, Go: "Flags", Flags: []FlagSpec{
					{Bit: 0, Name: "include", Go: "PMInclude", C: "SCRY_PM_INCLUDE", Short: "PM_EXCLUDE: the range is PM again", Doc: "the range is PM again"},
				}},
			},
		},
		{
			Code: 0x1D, Name: "SET_CLEAN", Go: "KindSetClean", Since: 7, Short: "a range is declared durable now",
			Doc: "the program declares that the `size` bytes at `addr` are durable now (pmemcheck's `VALGRIND_PMC_SET_CLEAN`): every unpersisted store to them is persisted, as if flushed and fenced at this point.",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
			},
		},
		{
			Code: 0x1E, Name: "TX_IGNORE", Go: "KindTxIgnore", Since: 7, Short: "stores to a range are exempt from transaction checks",
			Doc: "stores to the `size` bytes at `addr`, by any thread, are exempt from the transaction checks from this record on (pmemcheck's `VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE`): inside a transaction they count as added to it. They stay PM stores for every other check.",
			Fields: []FieldSpec{
				siteField,
				addrField,
				{Name: "size", Enc: EncUvarint, Go: "Size", Dump: "size=%d"},
			},
		},
		{
			Code: 0x1F, Name: "SCHEDULE", Go: "KindSchedule", Since: 8, Short: "the controlled schedule the run was recorded under", State: true,
			Doc: "the program ran under the runtime's controlled scheduler (`SCRY_SCHED`, below): its threads ran one at a time, switching only at scheduling points, in the order the schedule chose. Written twice: first, right after the header, with the schedule as given and zero counts; last, just before `END` (also when a signal ends the run), with flag `end` and the run's counts. A trace without it ran under the operating system's schedule. Belongs to no thread.",
			Fields: []FieldSpec{
				{Name: "spec", Enc: EncStr, Go: "Text", Dump: "spec=%q", Doc: "the value of `SCRY_SCHED` as given: the same value and the same input give the same schedule"},
				{Name: "policy", Enc: EncU8, Go: "Policy", Enum: "SchedPolicy", Dump: "%s", Doc: "the policy"},
				{Name: "seed", Enc: EncUvarint, Go: "Seed", Dump: "seed=%d", Doc: "the seed of every random choice (threads' priorities, change points, `pm`'s switches)"},
				{Name: "depth", Enc: EncUvarint, Go: "Depth", Dump: "depth=%d", Doc: "PCT's depth d, defaults applied: d-1 priority change points"},
				{Name: "steps", Enc: EncUvarint, Go: "Steps", Dump: "steps=%d", Doc: "the scheduling points among whose first `steps` the change points are chosen, defaults applied"},
				{Name: "flags", Enc: EncU8, Go: "Flags", Doc: "what kind of record it is and how the run ended", Flags: []FlagSpec{
					{Bit: 0, Name: "end", Go: "SchedEnd", C: "SCRY_SCHED_END", Short: "SCHEDULE: the run's counts, written before END", Doc: "the record before `END`, with the run's counts"},
					{Bit: 1, Name: "deadlock", Go: "SchedDeadlock", C: "SCRY_SCHED_DEADLOCK", Short: "SCHEDULE: every thread waited on another: the runtime ended the run with SIGABRT", Doc: "every thread waited on an object no running thread could release: the runtime said so in a `WARNING` and ended the run with `SIGABRT`"},
				}},
				{Name: "points", Enc: EncUvarint, Go: "Points", Dump: "points=%d", Doc: "scheduling points passed since the second thread started (0 in the first record)"},
				{Name: "switches", Enc: EncUvarint, Go: "Switches", Dump: "switches=%d", Doc: "times the turn passed from one thread to another"},
				{Name: "threads", Enc: EncUvarint, Go: "Threads", Dump: "threads=%d", Doc: "threads the scheduler ran, the first one included (1 in the first record)"},
				{Name: "timed", Enc: EncUvarint, Go: "Timed", Dump: "timed=%d", Doc: "choices that depended on time: the turn taken from a thread in a system call that did not return within its grace period, or from a thread that passed no scheduling point for seconds. 0: the schedule follows from `spec` and the input alone, and a run with both replays it"},
			},
		},
		{
			Code: 0x20, Name: "SYNC", Go: "KindSync", Since: 9, Short: "a synchronization operation of the current thread",
			Doc: "the current thread performed a synchronization operation (below) on `object`: the address of the mutex, read-write lock, spin lock, semaphore or barrier, or of the memory word of an atomic read-modify-write that is not PM; for `create` and `join` the trace id of the other thread (the child created, the thread joined). `site` is the call's site, 0 when unknown. Written only in a traced run, and only from the creation of the program's second thread on (`create` is the first): a program with one thread has none. A `create` comes before any record of the child; a `join` after the joined thread's last record. A condition-variable wait is an `unlock` of its mutex when it starts waiting and a `lock` when it returns. An atomic read-modify-write on PM is no `SYNC`: it is the `LOAD`, `FENCE` (locked) and `STORE` at its `rmw` site.",
			Fields: []FieldSpec{
				{Name: "op", Enc: EncU8, Go: "Sync", Enum: "SyncOp", Dump: "%-14s"},
				{Name: "object", Enc: EncUvarint, Go: "Object", Dump: "object=%#x"},
				siteField,
			},
		},
	},
	Enums: []EnumSpec{
		{
			Type: "FlushKind", Short: "the instruction of a FLUSH record (low 7 bits of its kind byte)", Unknown: "flush(%d)",
			Values: []EnumValue{
				{Value: 1, Name: "clflush", Go: "FlushCLFLUSH", C: "SCRY_FLUSH_CLFLUSH"},
				{Value: 2, Name: "clflushopt", Go: "FlushCLFLUSHOPT", C: "SCRY_FLUSH_CLFLUSHOPT"},
				{Value: 3, Name: "clwb", Go: "FlushCLWB", C: "SCRY_FLUSH_CLWB"},
				{Value: 4, Name: "dc-cvap", Go: "FlushDCCVAP", C: "SCRY_FLUSH_DC_CVAP", Short: "Arm DC CVAP: clean a line to the point of persistence", Doc: "Arm `DC CVAP`: clean a cache line to the point of persistence (Armv8.2)"},
				{Value: 5, Name: "dc-cvadp", Go: "FlushDCCVADP", C: "SCRY_FLUSH_DC_CVADP", Short: "Arm DC CVADP: clean a line to the point of deep persistence", Doc: "Arm `DC CVADP`: clean a cache line to the point of deep persistence (Armv8.5)"},
				{Value: 6, Name: "dc-cvac", Go: "FlushDCCVAC", C: "SCRY_FLUSH_DC_CVAC", Short: "Arm DC CVAC: clean a line to the point of coherence", Doc: "Arm `DC CVAC`: clean a cache line to the point of coherence"},
				{Value: 7, Name: "dc-civac", Go: "FlushDCCIVAC", C: "SCRY_FLUSH_DC_CIVAC", Short: "Arm DC CIVAC: clean and invalidate a line to the point of coherence", Doc: "Arm `DC CIVAC`: clean and invalidate a cache line to the point of coherence"},
			},
		},
		{
			Type: "FenceKind", Short: "the instruction of a FENCE record (low 7 bits of its kind byte)", Unknown: "fence(%d)",
			Values: []EnumValue{
				{Value: 1, Name: "sfence", Go: "FenceSFENCE", C: "SCRY_FENCE_SFENCE"},
				{Value: 2, Name: "mfence", Go: "FenceMFENCE", C: "SCRY_FENCE_MFENCE"},
				{Value: 3, Name: "locked", Go: "FenceLocked", C: "SCRY_FENCE_LOCKED", Short: "a locked read-modify-write instruction", Doc: "a locked read-modify-write instruction"},
				{Value: 4, Name: "dsb", Go: "FenceDSB", C: "SCRY_FENCE_DSB", Short: "Arm DSB (any option but the load-only ones): waits for earlier cache maintenance to complete", Doc: "Arm `DSB` with any option but the load-only ones (`SY`, `ISH`, `ST`, ...): waits until the thread's earlier `DC` instructions have completed"},
				{Value: 5, Name: "dmb", Go: "FenceDMB", C: "SCRY_FENCE_DMB", Short: "Arm DMB (any option but the load-only ones): orders earlier cache maintenance before later stores", Doc: "Arm `DMB` with any option but the load-only ones, and the barriers the compiler emits for C11 fences: orders the thread's earlier `DC` instructions before its later stores, without waiting for them"},
			},
		},
		{
			Type: "EndHow", Short: "how a traced program ended (the END record)", Unknown: "end(%d)",
			Values: []EnumValue{
				{Value: 1, Name: "exit", Go: "EndExit", C: "SCRY_END_EXIT", Short: "status is the exit code", Doc: "status is the exit code"},
				{Value: 2, Name: "signal", Go: "EndSignal", C: "SCRY_END_SIGNAL", Short: "status is the signal number", Doc: "status is the signal number"},
			},
		},
		{
			Type: "SchedPolicy", Short: "the policy of the controlled scheduler (the SCHEDULE record)", Unknown: "policy(%d)",
			Values: []EnumValue{
				{Value: 1, Name: "pct", Go: "SchedPCT", C: "SCRY_SCHED_PCT", Short: "PCT: random priorities, d-1 priority change points", Doc: "PCT: the runnable thread of highest priority runs; priorities are random, and drop at d-1 random change points"},
				{Value: 2, Name: "pm", Go: "SchedPM", C: "SCRY_SCHED_PM", Short: "PCT, and after a PM store a seeded coin may switch to another thread", Doc: "PCT, and right after each PM store, which is not durable yet, a seeded coin may lower the storing thread below every other"},
				{Value: 3, Name: "ops", Go: "SchedOps", C: "SCRY_SCHED_OPS", Short: "operations one at a time, in the order they began", Doc: "operations one at a time: a thread with a workload operation in flight runs ahead of every thread without, the earliest-begun operation first, so that a run applies its operations in the order of its input (the prep runs that tell what a linearization's operations print)"},
			},
		},
		{
			Type: "SiteKind", Short: "what a static site is", Unknown: "site(%d)", DocTable: "sites",
			Values: []EnumValue{
				{Value: 1, Name: "load", Go: "SiteLoad", C: "SCRY_SITE_LOAD"},
				{Value: 2, Name: "store", Go: "SiteStore", C: "SCRY_SITE_STORE"},
				{Value: 3, Name: "nt-store", Go: "SiteNTStore", C: "SCRY_SITE_NT_STORE"},
				{Value: 4, Name: "range", Go: "SiteRange", C: "SCRY_SITE_RANGE", Short: "mem intrinsic or libc copy function", Doc: "range store (mem intrinsic or libc copy)"},
				{Value: 5, Name: "flush", Go: "SiteFlush", C: "SCRY_SITE_FLUSH"},
				{Value: 6, Name: "fence", Go: "SiteFence", C: "SCRY_SITE_FENCE"},
				{Value: 7, Name: "rmw", Go: "SiteRMW", C: "SCRY_SITE_RMW", Short: "atomic read-modify-write or compare-exchange", Doc: "atomic read-modify-write"},
				{Value: 8, Name: "libcall", Go: "SiteLibCall", C: "SCRY_SITE_LIBCALL", Short: "a library call scry interprets (PMDK, mmap, stdin reads)", Doc: "call (a library call scry interprets; `callee` names it)"},
				{Value: 9, Name: "call", Go: "SiteCall", C: "SCRY_SITE_CALL", Short: "any other call, used in call stacks", Doc: "call (any other call, used in call stacks)"},
				{Value: 10, Name: "branch", Go: "SiteBranch", C: "SCRY_SITE_BRANCH", Since: 2, Short: "a conditional branch or switch: a static fact only, never an event"},
				{Value: 11, Name: "inlined", Go: "SiteInlined", C: "SCRY_SITE_INLINED", Since: 4, Short: "a call the compiler inlined: named by other sites' inlined-at, never an event"},
				{Value: 12, Name: "return", Go: "SiteReturn", C: "SCRY_SITE_RETURN", Since: 5, Short: "a function's return of a value: a static fact only, never an event"},
				{Value: 13, Name: "unit", Go: "SiteUnit", C: "SCRY_SITE_UNIT", Since: 10, Short: "a compilation unit: file is its main source file, callee the root of its project; a static fact only, never an event"},
			},
		},
		{
			Type: "SiteAccess", Short: "how a site accesses memory (the access field of a site): plain, volatile, or atomic with its memory order", Unknown: "access(%d)",
			Values: []EnumValue{
				{Value: 0, Name: "unknown", Go: "AccessUnknown", C: "SCRY_ACCESS_UNKNOWN", Short: "not known: an older pass, or no memory access", Doc: "unknown"},
				{Value: 1, Name: "plain", Go: "AccessPlain", C: "SCRY_ACCESS_PLAIN", Short: "an ordinary (non-atomic, non-volatile) access", Doc: "plain (neither atomic nor volatile)"},
				{Value: 2, Name: "volatile", Go: "AccessVolatile", C: "SCRY_ACCESS_VOLATILE", Short: "a volatile access that is not atomic", Doc: "volatile, not atomic"},
				{Value: 3, Name: "relaxed", Go: "AccessRelaxed", C: "SCRY_ACCESS_RELAXED", Short: "an atomic access with relaxed (or weaker) order", Doc: "atomic relaxed"},
				{Value: 4, Name: "acquire", Go: "AccessAcquire", C: "SCRY_ACCESS_ACQUIRE", Short: "an atomic access with acquire order (consume counts as acquire)", Doc: "atomic acquire (consume too)"},
				{Value: 5, Name: "release", Go: "AccessRelease", C: "SCRY_ACCESS_RELEASE", Short: "an atomic access with release order", Doc: "atomic release"},
				{Value: 6, Name: "acq_rel", Go: "AccessAcqRel", C: "SCRY_ACCESS_ACQ_REL", Short: "an atomic access with acquire-release order", Doc: "atomic acq_rel"},
				{Value: 7, Name: "seq_cst", Go: "AccessSeqCst", C: "SCRY_ACCESS_SEQ_CST", Short: "an atomic access with sequentially consistent order (a locked instruction)", Doc: "atomic seq_cst (also a locked instruction of inline assembly)"},
			},
		},
		{
			Type: "SyncOp", Short: "the synchronization operation of a SYNC record (docs/trace-format.md, \"SYNC\")", Unknown: "sync(%d)",
			Values: []EnumValue{
				{Value: 1, Name: "lock", Go: "SyncLock", C: "SCRY_SYNC_LOCK", Short: "a mutex, a write lock or a spin lock was acquired (also a condition wait's return)", Doc: "a mutex, a read-write lock for writing or a spin lock was acquired; also a condition-variable wait's return, of its mutex"},
				{Value: 2, Name: "rdlock", Go: "SyncRdLock", C: "SCRY_SYNC_RDLOCK", Short: "a read-write lock was acquired for reading", Doc: "a read-write lock was acquired for reading"},
				{Value: 3, Name: "unlock", Go: "SyncUnlock", C: "SCRY_SYNC_UNLOCK", Short: "a mutex, read-write lock or spin lock was released (also a condition wait's start)", Doc: "a mutex, read-write lock or spin lock was released; also a condition-variable wait's start, of its mutex"},
				{Value: 4, Name: "create", Go: "SyncCreate", C: "SCRY_SYNC_CREATE", Short: "the thread created thread Object (before the child's first record)", Doc: "thread `object` was created, by this thread"},
				{Value: 5, Name: "join", Go: "SyncJoin", C: "SCRY_SYNC_JOIN", Short: "the thread joined thread Object (after its last record)", Doc: "a join of thread `object` returned"},
				{Value: 6, Name: "barrier-arrive", Go: "SyncBarrierArrive", C: "SCRY_SYNC_BARRIER_ARRIVE", Short: "the thread arrived at barrier Object", Doc: "`pthread_barrier_wait` was called"},
				{Value: 7, Name: "barrier-leave", Go: "SyncBarrierLeave", C: "SCRY_SYNC_BARRIER_LEAVE", Short: "the thread left barrier Object (every party arrived)", Doc: "that wait returned: every party had arrived"},
				{Value: 8, Name: "rmw", Go: "SyncRMW", C: "SCRY_SYNC_RMW", Short: "an atomic read-modify-write on the word at Object, which is not PM", Doc: "an atomic read-modify-write or compare-exchange on a word that is not PM: an acquire and a release of that word"},
				{Value: 9, Name: "sem-post", Go: "SyncSemPost", C: "SCRY_SYNC_SEM_POST", Short: "the semaphore Object was posted", Doc: "a semaphore was posted"},
				{Value: 10, Name: "sem-wait", Go: "SyncSemWait", C: "SCRY_SYNC_SEM_WAIT", Short: "a wait on semaphore Object succeeded", Doc: "a wait on a semaphore succeeded"},
			},
		},
		{
			Type: "DepKind", Short: "the kind of one static dependence fact of a DEPS record (docs/trace-format.md, \"DEPS\")", Unknown: "dep(%d)", DocTable: "dep-kinds",
			Values: []EnumValue{
				{Value: 1, Name: "control", Go: "DepControl", C: "SCRY_DEP_CONTROL", Short: "From is directly control dependent on branch site To",
					Doc: "`from` (any site, branch sites included) is directly control dependent on branch site `to`: `to` decides whether `from` executes (post-dominator based; the transitive closure goes through the branch sites' own facts). A call site's facts cover everything its callee does."},
				{Value: 2, Name: "value", Go: "DepValue", C: "SCRY_DEP_VALUE", Short: "the value From uses depends, at register level, on the value To produces",
					Doc: "the value `from` uses — a store's value, a branch's condition, a read-modify-write's operand — depends on the value `to` produces: a load, a read-modify-write, or a call's returned value."},
				{Value: 3, Name: "address", Go: "DepAddress", C: "SCRY_DEP_ADDRESS", Short: "the address From accesses depends, at register level, on the value To produces",
					Doc: "the address `from` accesses depends on the value `to` produces."},
			},
		},
		{
			Type: "FSOpKind", Short: "the system call of an FS_OP record (docs/trace-format.md, \"FS_OP\"): what the program asked of the file system, with file descriptors already resolved to the open file they name (Event.Handle) and paths made absolute",
			Unknown: "fsop(%d)", Last: "FSOpLast", DocTable: "fs-ops",
			Values: []EnumValue{
				{Value: 1, Name: "open", Go: "FSOpen", C: "SCRY_FSOP_OPEN", Uses: "handle, path, flags",
					Short: "open/openat/creat: Path opened as Handle (FSCreate, FSTrunc, FSAppend, FSExcl, FSDirectory)",
					Doc:   "`open`, `openat`, `creat`: `path` is now open as `handle`. Flags: `create` (the call created the file), `trunc` (`O_TRUNC`), `append` (`O_APPEND`), `excl`, `directory` (a directory was opened), `write` (opened for writing), `dsync` (`O_DSYNC`), `sync` (`O_SYNC`)."},
				{Value: 2, Name: "write", Go: "FSWrite", C: "SCRY_FSOP_WRITE", Uses: "handle, offset, data",
					Short: "write/pwrite/writev: Data written to Handle at FileOffset (FSAppend: at the end of the file)",
					Doc:   "`write`, `pwrite64`, `writev`, `pwritev`, `pwritev2`: the data (as many bytes as the call returned) went to `offset`, or, with flag `append`, to the end of the file. Flag `dsync`: the write was durable when it returned, with the metadata needed to read it back (an `O_DSYNC` descriptor, `RWF_DSYNC`); `sync`: with all of the file's metadata (`O_SYNC`, `RWF_SYNC`)."},
				{Value: 3, Name: "truncate", Go: "FSTruncate", C: "SCRY_FSOP_TRUNCATE", Uses: "handle or path, size",
					Short: "truncate (Path) or ftruncate (Handle) to Size bytes",
					Doc:   "`ftruncate` (handle) or `truncate` (path, handle 0) to `size` bytes."},
				{Value: 4, Name: "fallocate", Go: "FSFallocate", C: "SCRY_FSOP_FALLOCATE", Uses: "handle, offset, size, flags",
					Short: "fallocate on Handle: FileOffset, Size (FSKeepSize, FSPunchHole, FSZeroRange)",
					Doc:   "`fallocate`: flags `keep_size`, `punch_hole`, `zero_range` (`FALLOC_FL_COLLAPSE_RANGE` and `FALLOC_FL_INSERT_RANGE` are not recorded: a warning says so)."},
				{Value: 5, Name: "rename", Go: "FSRename", C: "SCRY_FSOP_RENAME", Uses: "path, path2, flags",
					Short: "rename/renameat/renameat2: Path to Path2 (FSNoReplace, FSExchange)",
					Doc:   "`rename`, `renameat`, `renameat2`: `path` is renamed `path2` (flags `noreplace`, `exchange`)."},
				{Value: 6, Name: "link", Go: "FSLink", C: "SCRY_FSOP_LINK", Uses: "path, path2, handle",
					Short: "link/linkat: new name Path2 for Path (for Handle when not 0)",
					Doc:   "`link`, `linkat`: `path2` is a new name of `path`; with a `handle` (`linkat` with `AT_EMPTY_PATH`, or of `/proc/self/fd/N`), of that open file (an `O_TMPFILE` file has no name: `path` is what strace showed)."},
				{Value: 7, Name: "symlink", Go: "FSSymlink", C: "SCRY_FSOP_SYMLINK", Uses: "path, path2",
					Short: "symlink/symlinkat: Path2 is created pointing to the text Path",
					Doc:   "`symlink`, `symlinkat`: `path2` is created as a symbolic link holding the text `path`."},
				{Value: 8, Name: "unlink", Go: "FSUnlink", C: "SCRY_FSOP_UNLINK", Uses: "path",
					Short: "unlink/unlinkat: Path removed", Doc: "`unlink`, `unlinkat`."},
				{Value: 9, Name: "rmdir", Go: "FSRmdir", C: "SCRY_FSOP_RMDIR", Uses: "path",
					Short: "rmdir/unlinkat(AT_REMOVEDIR): directory Path removed", Doc: "`rmdir`, `unlinkat(AT_REMOVEDIR)`."},
				{Value: 10, Name: "mkdir", Go: "FSMkdir", C: "SCRY_FSOP_MKDIR", Uses: "path",
					Short: "mkdir/mkdirat: directory Path created", Doc: "`mkdir`, `mkdirat`."},
				{Value: 11, Name: "fsync", Go: "FSFsync", C: "SCRY_FSOP_FSYNC", Uses: "handle", Short: "fsync(Handle)", Doc: "`fsync`."},
				{Value: 12, Name: "fdatasync", Go: "FSFdatasync", C: "SCRY_FSOP_FDATASYNC", Uses: "handle", Short: "fdatasync(Handle)", Doc: "`fdatasync`."},
				{Value: 13, Name: "sync", Go: "FSSync", C: "SCRY_FSOP_SYNC", Short: "sync(): every file system", Doc: "`sync`."},
				{Value: 14, Name: "syncfs", Go: "FSSyncfs", C: "SCRY_FSOP_SYNCFS", Uses: "handle", Short: "syncfs(Handle): the file system of Handle", Doc: "`syncfs`."},
				{Value: 15, Name: "sync_file_range", Go: "FSSyncFileRange", C: "SCRY_FSOP_SYNC_FILE_RANGE", Uses: "handle, offset, size",
					Short: "sync_file_range(Handle, FileOffset, Size)", Doc: "`sync_file_range` with `SYNC_FILE_RANGE_WRITE` and `SYNC_FILE_RANGE_WAIT_AFTER` (size 0: to the end of the file); with other flags the call waits for nothing and is not recorded."},
				{Value: 16, Name: "msync", Go: "FSMsync", C: "SCRY_FSOP_MSYNC", Uses: "handle, offset, size",
					Short: "msync of a shared mapping of Handle: FileOffset, Size bytes of the file",
					Doc:   "`msync` of a range of a shared file mapping: `offset` and `size` in the file."},
				{Value: 17, Name: "close", Go: "FSClose", C: "SCRY_FSOP_CLOSE", Uses: "handle",
					Short: "close(Handle's descriptor); the open file lives on in other descriptors",
					Doc:   "the last descriptor of one process naming `handle` was closed by `close` (or `execve` with close-on-exec)."},
				{Value: 18, Name: "mmap", Go: "FSMmap", C: "SCRY_FSOP_MMAP", Uses: "handle, offset, size",
					Short: "mmap(MAP_SHARED) of Handle writable: FileOffset, Size (writes through it are invisible)",
					Doc:   "a writable shared mapping of the file: its stores are not visible to strace, so the bytes written through it are missing from the trace (a warning says so)."},
				{Value: 19, Name: "copy_file_range", Go: "FSCopyFileRange", C: "SCRY_FSOP_COPY_FILE_RANGE", Uses: "handle, offset, size, result, path, path2",
					Short: "copy_file_range: Result bytes of Path2 from offset Size written to Handle at FileOffset",
					Doc:   "`copy_file_range` between two files of the workload directory: `result` bytes of `path2` from its offset `size` were written to `handle` (`path`) at `offset`; the bytes are the source's as the run left them at that point, which the model knows. A copy from a file outside the directory is a `write` of the bytes that file holds when the trace is written (a warning says so)."},
			},
		},
	},
}
