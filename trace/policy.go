package trace

import (
	"bytes"

	"github.com/scry-pm/scry/internal/safefile"
)

// FilePolicy is the rule for an existing file at a trace path (internal/safefile): an earlier
// trace (it starts with Magic) or an empty file is replaced, anything else is kept and is an
// error. what names the file in that error ("the trace"). Both modes' recordings (pm/record,
// fs/strace) write their traces under it.
func FilePolicy(what string) safefile.Policy {
	return safefile.Policy{What: what, NoForce: true, Ours: func(head []byte) bool {
		return len(head) == 0 || bytes.HasPrefix(head, []byte(Magic))
	}}
}
