package crash

import (
	"fmt"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

// TestTear checks torn crash states (Yashme's persistency races): which units the torn strategy
// tears (sites the trace says are plain only, 2 to 8 bytes, issued since the last fence, the latest
// MaxTearsPerPoint), the states it yields (without, with, low half, high half), the patches of a
// torn state (the kept bytes of the unit stay new, the rest rolls back, later units roll back
// first) and the tears Space.Check refuses.
func TestTear(t *testing.T) {
	b := analysistest.New().Map(1, base, 1<<16)
	b.Access(3, trace.SiteStore, trace.AccessPlain).Access(4, trace.SiteStore, trace.AccessPlain)
	b.Access(5, trace.SiteStore, trace.AccessRelaxed)
	storeBytes(b, 1, base, []byte{1, 1, 1, 1, 1, 1, 1, 1}).Persist(2, base, 8) // durable: 1s
	storeBytes(b, 3, base, []byte{2, 2, 2, 2, 2, 2, 2, 2})                     // plain, 8 bytes: torn
	storeBytes(b, 4, base+8, []byte{5})                                        // plain, 1 byte: not torn
	storeBytes(b, 5, base+16, []byte{6, 6, 6, 6})                              // atomic: not torn
	storeBytes(b, 3, base+2, []byte{7, 7})                                     // plain, later on the torn word
	storeBytes(b, 3, base+128, []byte{0x34, 0x12, 0, 0, 0, 0, 0, 0})           // a small key over 0: two bytes change
	storeBytes(b, 3, base+192, []byte{5, 0, 0, 0, 0, 0, 0, 0})                 // one byte changes: not torn
	b.Exit(0)
	var states []string
	var patches []string
	var checkErrs []string
	_, err := Walk(b.Reader(t), Options{}, func(cp *CrashPoint) error {
		if cp.Kind != AtEnd {
			return nil
		}
		sp := cp.Space
		s := StrategyByName("torn")
		full, _ := s.Count(sp, Options{})
		if full.Int64() != 12 {
			t.Errorf("count %v, want 12 (three tearable units, four states each)", full)
		}
		for st := range s.States(sp, Options{}) {
			states = append(states, fmt.Sprintf("%v%s", st.K, tearText(st.Tear)))
			if st.Tear != nil && st.Tear.Keep == 0x0f && st.K[0] == 0 {
				ps, err := cp.Patches(st)
				if err != nil {
					return err
				}
				for _, p := range ps {
					patches = append(patches, fmt.Sprintf("%d:%v", p.Offset, p.Data))
				}
			}
		}
		for _, c := range []struct {
			name string
			k    int
			tear Tear
		}{
			{"no such line", 0, Tear{Line: 3, Keep: 1}},
			{"every byte", 0, Tear{Keep: 0xff}},
			{"no byte", 0, Tear{}},
			{"past the unit", 3, Tear{Keep: 0x04}}, // the 2-byte unit
			{"all units persisted", 4, Tear{Keep: 0x01}},
			{"low half", 0, Tear{Keep: 0x0f}},
			{"one byte of two", 3, Tear{Keep: 0x02}},
		} {
			if err := sp.Check(State{K: []int{c.k, 0, 0}, Tear: &c.tear}); err != nil {
				checkErrs = append(checkErrs, c.name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Line 0 holds the units of the 8-byte store, the 1-byte one, the atomic one and the 2-byte
	// one; the torn ones are the 8-byte and the 2-byte stores of site 3 (the 1-byte store cannot
	// tear), then the small key on line 1, split byte by byte; the store on line 2 changes one
	// byte and is not torn.
	want := "[[0 0 0] [1 0 0] [0 0 0] tear 0:0x0f [0 0 0] tear 0:0xf0 [3 0 0] [4 0 0] [3 0 0] tear 0:0x01 [3 0 0] tear 0:0x02 " +
		"[4 0 0] [4 1 0] [4 0 0] tear 1:0x01 [4 0 0] tear 1:0x02]"
	if got := fmt.Sprint(states); got != want {
		t.Errorf("states\n got %s\nwant %s", got, want)
	}
	// Low half of the 8-byte store kept: bytes 0-1 stay as in the fully applied image (2s), 2-3
	// become 2s (the later 2-byte store rolls back first, the torn store keeps them), 4-7 roll
	// back to 1s, 8 and 16-19 to 0.
	if got, want := fmt.Sprint(patches), "[2:[2 2 1 1 1 1 0] 16:[0 0 0 0] 128:[0 0 0 0 0 0 0 0] 192:[0 0 0 0 0 0 0 0]]"; got != want {
		t.Errorf("patches of the low-half tear\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(checkErrs), "[no such line every byte no byte past the unit all units persisted]"; got != want {
		t.Errorf("refused tears %s, want %s", got, want)
	}
}

func tearText(t *Tear) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" tear %d:%#02x", t.Line, t.Keep)
}
