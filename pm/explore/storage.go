package explore

import (
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// firstRegionBytes returns the length in bytes of the first PM region the trace at path maps
// (as package replay maps regions; looked for among its first 100 000 records), or 0.
func firstRegionBytes(path string) uint64 {
	r, err := trace.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	m, err := replay.New[struct{}](r, replay.Options[struct{}]{})
	if err != nil {
		return 0
	}
	for i := 0; i < 100000; i++ {
		ev, err := r.Next()
		if err != nil {
			return 0
		}
		m.Apply(ev, replay.Nop{})
		if m.Mapped > 0 {
			return m.Regions.All()[0].Len
		}
	}
	return 0
}
