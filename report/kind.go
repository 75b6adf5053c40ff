package report

// Kind is the stable kebab-case name of a kind of finding (docs/oracles.md). The kinds scry
// itself reports are the constants below; their one doc text lives with the analysis that
// reports them (packages pm/oracle, pm/infer, pm/explore, fs) and the catalogue that lists them
// all is package pipeline's. A custom analyzer (package analysis) reports findings of its own
// kind, its analyzer's name.
type Kind string

// The kinds of scry's own findings.
const (
	// Trace oracles (package pm/oracle).
	UnpersistedStore       Kind = "unpersisted-store"
	OverwrittenUnpersisted Kind = "overwritten-unpersisted"
	TxUnloggedStore        Kind = "tx-unlogged-store"
	RedundantFlush         Kind = "redundant-flush"
	RedundantFence         Kind = "redundant-fence"
	RedundantTxAdd         Kind = "redundant-tx-add"
	PMLockWord             Kind = "pm-lock-word"
	// Checks of inferred persistence properties (package pm/infer).
	MPBViolation Kind = "mpb-violation"
	MPAViolation Kind = "mpa-violation"
	// Checks of concurrent programs (package pm/infer).
	InterThreadInconsistency Kind = "inter-thread-inconsistency"
	// Crash findings of PM crash exploration (package pm/explore).
	OrderingViolation   Kind = "ordering-violation"
	AtomicityViolation  Kind = "atomicity-violation"
	DurabilityViolation Kind = "durability-violation"
	PersistencyRace     Kind = "persistency-race"
	CrossFailureRead    Kind = "cross-failure-read"
	// Crash findings of file-system mode (package fs).
	FSOrderingViolation   Kind = "fs-ordering-violation"
	FSAtomicityViolation  Kind = "fs-atomicity-violation"
	FSDurabilityViolation Kind = "fs-durability-violation"
)

// IsCrash reports whether k is a finding of crash exploration, PM or file-system: one backed by a
// crash image or directory on which the program failed.
func (k Kind) IsCrash() bool {
	switch k {
	case OrderingViolation, AtomicityViolation, DurabilityViolation, PersistencyRace, CrossFailureRead,
		FSOrderingViolation, FSAtomicityViolation, FSDurabilityViolation:
		return true
	}
	return false
}
