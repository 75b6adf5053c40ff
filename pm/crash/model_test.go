package crash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// randomTrace builds a random trace of stores (random sizes, some spanning lines), non-temporal
// stores, the three flushes and fences over a few cache lines, by one or two threads, and returns it with the ops as
// they must be applied to a plain px86 model: ops[i] is b.Events[i+1], the record with event
// index i+2 (the SITES record is 0, the map 1). Each store writes bytes distinct from every
// other store's.
func randomTrace(rng *rand.Rand, nops int) (*analysistest.Builder, []func(m *px86.Model, id uint64)) {
	b := analysistest.New().Map(1, base, 1<<12)
	var ops []func(m *px86.Model, id uint64)
	lines := 1 + rng.IntN(5)
	threads := 1 + rng.IntN(2) // two threads in half the traces: fences order their own flushes
	for i := 0; i < nops; i++ {
		site := uint32(i + 1)
		tid := uint32(rng.IntN(threads))
		b.Thread(tid)
		switch k := rng.IntN(100); {
		case k < 55:
			addr := base + uint64(rng.IntN(lines*64))
			size := uint64(1 + rng.IntN(24))
			data := make([]byte, size)
			for j := range data {
				data[j] = byte(i*7 + j + 1)
			}
			nt := rng.IntN(12) == 0
			if nt {
				b.NTStore(site, addr, size)
				b.Events[len(b.Events)-1].Data = data
			} else {
				storeBytes(b, site, addr, data)
			}
			ops = append(ops, func(m *px86.Model, id uint64) {
				fl := uint8(0)
				if nt {
					fl = px86.NT
				}
				m.Store(id, px86.Origin{Site: site, Thread: tid}, addr, size, fl)
			})
		case k < 85:
			addr := base + uint64(rng.IntN(lines*64))
			kind := trace.FlushKind(1 + rng.IntN(3))
			b.Flush(site, kind, addr)
			ops = append(ops, func(m *px86.Model, id uint64) { m.Flush(uint8(kind), addr, px86.Origin{Thread: tid}) })
		default:
			b.Fence(site, trace.FenceKind(1+rng.IntN(2)))
			ops = append(ops, func(m *px86.Model, id uint64) { m.Fence(tid) })
		}
	}
	return b.Exit(0), ops
}

// TestCrashStatesFollowPx86 checks, for 3000 random traces of up to 400 operations, that the
// crash states the engine allows before every fence are exactly what an independent px86 model
// (without units or payloads, fed the same operations) says may or may not be durable there:
//
//   - a store the model holds persisted has no unit in the space (every crash state has it);
//   - every store the model holds unpersisted has units, and its units are flush-pending in the
//     space exactly when the model holds it flush-pending;
//   - the crash image that persists no unit holds, byte for byte, the values of the persisted
//     stores only, and the one that persists every unit holds every store: what rolling units
//     back gives is what px86 calls durable.
func TestCrashStatesFollowPx86(t *testing.T) {
	for seed := uint64(0); seed < 3000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		nops := 1 + rng.IntN(400)
		b, ops := randomTrace(rng, nops)
		idx := eventIndices(t, b)
		m, _ := px86.New(64)
		m.AddRange(base, 1<<12)
		next := 0 // the next op to apply to m: b.Events[next+1], record idx[next+1]
		apply := func(upto uint64) {
			for ; next < len(ops) && idx[next+1] < upto; next++ {
				ops[next](m, idx[next+1])
			}
		}
		_, err := Walk(b.Reader(t), Options{}, func(cp *CrashPoint) error {
			if cp.Kind != BeforeFence {
				return nil
			}
			apply(cp.Event)
			if err := compareWithModel(cp, m, b, idx); err != nil {
				return fmt.Errorf("seed %d, %d ops, crash point %d (event %d): %w", seed, nops, cp.Index, cp.Event, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// eventIndices returns the record index of every event of b in its encoded trace: the writer
// adds SITES first and a THREAD record wherever the thread changes.
func eventIndices(t *testing.T, b *analysistest.Builder) []uint64 {
	r := b.Reader(t)
	defer r.Close()
	var idx []uint64
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch ev.Kind {
		case trace.KindSites, trace.KindThread:
			continue
		}
		idx = append(idx, ev.Index)
	}
	if len(idx) != len(b.Events) {
		t.Fatalf("%d records for %d events", len(idx), len(b.Events))
	}
	return idx
}

func compareWithModel(cp *CrashPoint, m *px86.Model, b *analysistest.Builder, idx []uint64) error {
	// What the model holds unpersisted, by store, with its state; merged entries stand for
	// every store from First to ID on their line.
	type key struct{ id, line uint64 }
	want := map[key]px86.State{}
	m.ForEachUnpersisted(func(s px86.StoreState) bool {
		want[key{s.ID, s.Addr &^ 63}] = s.State
		return true
	})
	got := map[key]px86.State{}
	type span struct {
		first, last uint64
		st          px86.State
	}
	merged := map[uint64][]span{} // by line: the stores merged units stand for
	for _, l := range cp.Space.Lines {
		for j, u := range l.Units {
			st := px86.Dirty
			if j < l.Pending {
				st = px86.Pending
			}
			if u.First != u.Store {
				merged[l.Addr] = append(merged[l.Addr], span{u.First, u.Store, st})
			}
			k := key{u.Store, l.Addr}
			if old, ok := got[k]; ok && old != st {
				return fmt.Errorf("store %d has units in two states on line %#x", u.Store, l.Addr)
			}
			got[k] = st
		}
	}
	for k, st := range want {
		if got[k] == 0 && slices.ContainsFunc(merged[k.line], func(s span) bool { return s.first <= k.id && k.id <= s.last && s.st == st }) {
			continue // merged in the crash space (units reach the per-line bound first)
		}
		if got[k] != st {
			return fmt.Errorf("store %d on line %#x: the model says %v, the crash space %v", k.id, k.line, st, got[k])
		}
	}
	for k, st := range got {
		if want[k] == 0 {
			// A store merged away in the crash space (units reach the per-line bound before
			// the model's entries do) is acceptable only inside an entry that stands for it.
			found := false
			m.ForEachOverlapping(k.line, 64, func(s px86.StoreState) bool {
				if s.First <= k.id && k.id <= s.ID && s.State == st {
					found = true
					return false
				}
				return true
			})
			if !found {
				return fmt.Errorf("store %d on line %#x is %v in the crash space, persisted in the model", k.id, k.line, st)
			}
		}
	}
	// Images: nothing persisted = the durable stores only; everything = every store.
	mem := make([]byte, 1<<12)
	durable := make([]byte, 1<<12)
	for j, ev := range b.Events {
		ev.Index = idx[j]
		if ev.Index >= cp.Event || (ev.Kind != trace.KindStore && ev.Kind != trace.KindNTStore) {
			continue
		}
		copy(mem[ev.Addr-base:], ev.Data)
		for a := ev.Addr; a < ev.Addr+ev.Size; { // line by line: a store may persist on one line only
			end := min(ev.Addr+ev.Size, a&^63+64)
			if m.StateOf(ev.Index, a) == px86.Persisted {
				copy(durable[a-base:end-base], ev.Data[a-ev.Addr:end-ev.Addr])
			}
			a = end
		}
	}
	for _, tc := range []struct {
		name string
		st   State
		want []byte
	}{
		{"nothing persisted", State{K: make([]int, len(cp.Space.Lines))}, durable},
		{"everything persisted", cp.Space.FullState(), mem},
	} {
		img := slices.Clone(mem)
		ps, err := cp.Patches(tc.st)
		if err != nil {
			return err
		}
		for _, p := range ps {
			copy(img[p.Addr-base:], p.Data)
		}
		if i := firstDiff(img, tc.want); i >= 0 {
			return fmt.Errorf("%s: crash image byte %#x is %#x, want %#x", tc.name, base+i, img[i], tc.want[i])
		}
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
