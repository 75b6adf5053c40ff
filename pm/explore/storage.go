package explore

import (
	"github.com/scry-pm/scry/trace"
)

// firstRegionBytes returns the length in bytes of the first PM region the trace at path maps
// (looked for among its first 100 000 records), or 0.
func firstRegionBytes(path string) uint64 {
	r, err := trace.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	for i := 0; i < 100000; i++ {
		ev, err := r.Next()
		if err != nil {
			return 0
		}
		if ev.Kind == trace.KindRegionMap {
			return ev.Size
		}
	}
	return 0
}
