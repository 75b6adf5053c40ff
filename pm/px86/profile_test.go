package px86

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseProfiles(t *testing.T) {
	tests := []struct {
		in   string
		want []Profile
		err  string
	}{
		{in: "adr", want: []Profile{ADR}},
		{in: "eadr", want: []Profile{EADR}},
		{in: "gpf", want: []Profile{EADR}},
		{in: "eadr,adr", want: []Profile{ADR, EADR}},
		{in: "all", want: []Profile{ADR, EADR}},
		{in: " ADR , gpf,eadr", want: []Profile{ADR, EADR}},
		{in: "", err: "no persistency profile"},
		{in: ",", err: "no persistency profile"},
		{in: "adr,arm", err: `unknown persistency profile "arm"`},
	}
	for _, tt := range tests {
		got, err := ParseProfiles(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseProfiles(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseProfiles(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if got := strings.Join(ProfileNames(AllProfiles), ","); got != "adr,eadr" {
		t.Errorf("ProfileNames(AllProfiles) = %q", got)
	}
}

// TestProfileRules runs one program under each profile and checks every store's final state
// (d dirty, p flush-pending, P persisted) and, for the model kept under ADR, which unpersisted
// stores eADR makes durable (Visible).
func TestProfileRules(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		adr   string // final states of the stores, in order
		eadr  string
		// visible lists the stores Visible reports in the ADR model at the end.
		visible string
	}{
		{name: "no flush", steps: []step{st("a", A), st("b", B)}, adr: "dd", eadr: "pp"},
		{name: "no flush then fence", steps: []step{st("a", A), st("b", B), fe("sfence")}, adr: "dd", eadr: "PP", visible: "ab"},
		{name: "store after fence", steps: []step{st("a", A), fe("mfence"), st("b", B)}, adr: "dd", eadr: "Pp", visible: "a"},
		{name: "locked rmw drains", steps: []step{st("a", A), fe("rmw")}, adr: "d", eadr: "P", visible: "a"},
		{name: "clwb without fence", steps: []step{st("a", A), fl("clwb", A)}, adr: "p", eadr: "p"},
		{name: "clflush persists only under adr", steps: []step{st("a", A), st("b", B), fl("clflush", B)}, adr: "dP", eadr: "pp"},
		{name: "flush and fence", steps: []step{st("a", A), fl("clwb", A), fe("sfence")}, adr: "P", eadr: "P"},
		{name: "nt needs a fence everywhere", steps: []step{nt("a", A)}, adr: "p", eadr: "p"},
		{name: "nt fenced", steps: []step{nt("a", A), fe("sfence"), st("b", B)}, adr: "Pd", eadr: "Pp"},
		{name: "nt is never visible", steps: []step{nt("a", A), st("b", B), fe("sfence")}, adr: "Pd", eadr: "PP", visible: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range AllProfiles {
				m, _ := NewOf(64, Config[NoPayload]{Profile: p})
				var names []string
				ids := map[string]StoreID{}
				addrs := map[string]uint64{}
				for i, s := range tt.steps {
					switch s.op {
					case "st", "nt":
						var flags uint8
						if s.op == "nt" {
							flags = NT
						}
						m.Store(StoreID(i), Origin{Site: uint32(i)}, s.addr, s.size, flags)
						names = append(names, s.name)
						ids[s.name], addrs[s.name] = StoreID(i), s.addr
					case "clflush", "clflushopt", "clwb":
						m.Flush(flushKinds[s.op], s.addr, Origin{})
					case "sfence", "mfence", "rmw":
						m.Fence(0)
					}
				}
				var got strings.Builder
				for _, n := range names {
					got.WriteByte(map[State]byte{Dirty: 'd', Pending: 'p', Persisted: 'P'}[m.StateOf(ids[n], addrs[n])])
				}
				want := tt.adr
				if p == EADR {
					want = tt.eadr
				}
				if got.String() != want {
					t.Errorf("%v: states %s, want %s", p, got.String(), want)
				}
				if p != ADR {
					continue
				}
				var vis strings.Builder
				m.ForEachUnpersisted(func(s StoreState) bool {
					if m.Visible(s) {
						vis.WriteString(names[s.ID])
					}
					return true
				})
				if vis.String() != tt.visible {
					t.Errorf("visible %q, want %q", vis.String(), tt.visible)
				}
			}
		})
	}
}

// TestLockedStore: a locked read-modify-write's store drains its thread's store buffer: under
// eADR it and every earlier store of the thread are durable at once; under ADR they stay dirty,
// and Visible says eADR would make them durable.
func TestLockedStore(t *testing.T) {
	for _, p := range AllProfiles {
		m, _ := NewOf(64, Config[NoPayload]{Profile: p})
		m.Store(1, Origin{Thread: 1}, A, 8, 0)
		m.Store(2, Origin{Thread: 2}, B+64, 8, 0) // another thread's, another line: not drained by it
		m.Store(3, Origin{Thread: 1}, B, 8, Locked)
		want := map[Profile][3]State{ADR: {Dirty, Dirty, Dirty}, EADR: {Persisted, Pending, Persisted}}[p]
		for i, id := range []StoreID{1, 2, 3} {
			addr := map[StoreID]uint64{1: A, 2: B + 64, 3: B}[id]
			if got := m.StateOf(id, addr); got != want[i] {
				t.Errorf("%v: store %d %v, want %v", p, id, got, want[i])
			}
		}
		if p == ADR {
			var vis []StoreID
			m.ForEachUnpersisted(func(s StoreState) bool {
				if m.Visible(s) {
					vis = append(vis, s.ID)
				}
				return true
			})
			if fmt.Sprint(vis) != "[1 3]" {
				t.Errorf("visible %v, want [1 3]", vis)
			}
		}
	}
}
