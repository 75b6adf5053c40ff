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
		{in: "arm", want: []Profile{ARM}},
		{in: "armv8,adr", want: []Profile{ADR, ARM}},
		{in: "adr,ppc", err: `unknown persistency profile "ppc"`},
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

// TestArmRules runs Arm programs under the ARM profile (Profile, Barrier) and checks every
// store's final state (d dirty, p flush-pending, P persisted); "t2:" steps are thread 2's.
func TestArmRules(t *testing.T) {
	tests := []struct {
		name  string
		steps []string
		want  string
	}{
		{name: "no clean", steps: []string{"st a A", "st b B", "dsb"}, want: "dd"},
		{name: "cvap alone", steps: []string{"st a A", "dc-cvap A"}, want: "p"},
		{name: "cvap and dsb", steps: []string{"st a A", "dc-cvap A", "dsb"}, want: "P"},
		{name: "cvadp cvac civac clean too", steps: []string{"st a A", "st b B", "st c C", "dc-cvadp A", "dc-cvac B", "dc-civac C", "dsb"}, want: "PPP"},
		{name: "dmb does not complete", steps: []string{"st a A", "dc-cvap A", "dmb"}, want: "p"},
		{name: "dmb orders the clean before the next store", steps: []string{"st a A", "dc-cvap A", "dmb", "st b B"}, want: "Pd"},
		{name: "no barrier: unordered", steps: []string{"st a A", "dc-cvap A", "st b B"}, want: "pd"},
		{name: "clean after the dmb is not ordered", steps: []string{"st a A", "dc-cvap A", "dmb", "st b B", "dc-cvap B", "st c C"}, want: "Ppd"},
		{name: "a clean between dmb and store stays pending", steps: []string{"st a A", "dc-cvap A", "dmb", "st b B", "dc-cvap B", "dmb", "dc-cvap C", "st c C"}, want: "PPd"},
		{name: "later store to the line stays dirty", steps: []string{"st a A", "dc-cvap A", "st b A+8", "dsb"}, want: "Pd"},
		{name: "another thread's store does not apply the dmb", steps: []string{"st a A", "dc-cvap A", "dmb", "t2:st b B"}, want: "pd"},
		{name: "another thread's dsb completes nothing", steps: []string{"st a A", "dc-cvap A", "t2:dsb"}, want: "p"},
		{name: "atomics are no barrier", steps: []string{"st a A", "dc-cvap A", "rmw", "stlocked b B"}, want: "pd"},
		{name: "dsb after dmb completes", steps: []string{"st a A", "dc-cvap A", "dmb", "dsb", "st b B"}, want: "Pd"},
	}
	addrs := map[string]uint64{"A": A, "B": B, "C": B + 128, "A+8": A + 8}
	kinds := map[string]uint8{"dc-cvap": 4, "dc-cvadp": 5, "dc-cvac": 6, "dc-civac": 7}
	fences := map[string]uint8{"sfence": 1, "rmw": 3, "dsb": 4, "dmb": 5}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := NewOf(64, Config[NoPayload]{Profile: ARM})
			var names []string
			ids := map[string]StoreID{}
			for i, step := range tt.steps {
				thread := uint32(1)
				if rest, ok := strings.CutPrefix(step, "t2:"); ok {
					step, thread = rest, 2
				}
				f := strings.Fields(step)
				o := Origin{Thread: thread, Site: uint32(i)}
				switch {
				case f[0] == "st" || f[0] == "stlocked":
					var flags uint8
					if f[0] == "stlocked" {
						flags = Locked
					}
					m.Store(StoreID(i), o, addrs[f[2]], 8, flags)
					names = append(names, f[1]+" "+f[2])
					ids[f[1]] = StoreID(i)
				case kinds[f[0]] != 0:
					m.Flush(kinds[f[0]], addrs[f[1]], o)
				case fences[f[0]] != 0:
					m.Barrier(fences[f[0]], thread)
				default:
					t.Fatalf("bad step %q", step)
				}
			}
			var got strings.Builder
			for _, n := range names {
				name, addr, _ := strings.Cut(n, " ")
				got.WriteByte(map[State]byte{Dirty: 'd', Pending: 'p', Persisted: 'P'}[m.StateOf(ids[name], addrs[addr])])
			}
			if got.String() != tt.want {
				t.Errorf("states %s, want %s", got.String(), tt.want)
			}
		})
	}
}

// TestBarrierEffects: what Barrier reports, the input of the redundant-fence oracle.
func TestBarrierEffects(t *testing.T) {
	m, _ := NewOf(64, Config[NoPayload]{Profile: ARM})
	if eff := m.Barrier(5, 1); eff != (FenceEffect{}) {
		t.Errorf("dmb with nothing cleaned: %+v", eff)
	}
	m.Store(1, Origin{Thread: 1}, A, 8, 0)
	m.Flush(4, A, Origin{Thread: 1})
	if eff := m.Barrier(5, 1); eff != (FenceEffect{Ordered: 1, Lines: 1}) {
		t.Errorf("dmb after a clean: %+v", eff)
	}
	if eff := m.Barrier(4, 1); eff != (FenceEffect{Persisted: 1, Lines: 1}) {
		t.Errorf("dsb after the dmb: %+v", eff)
	}
	if eff := m.Barrier(3, 1); eff != (FenceEffect{}) {
		t.Errorf("locked under ARM: %+v", eff)
	}
}

func TestForTrace(t *testing.T) {
	tests := []struct {
		ps      []Profile
		aarch64 bool
		want    []Profile
		err     string
	}{
		{ps: nil, want: nil},
		{ps: []Profile{ADR, EADR}, want: []Profile{ADR, EADR}},
		{ps: []Profile{ARM}, err: "needs the trace of an aarch64 program"},
		{ps: nil, aarch64: true, want: []Profile{ARM}},
		{ps: AllProfiles, aarch64: true, want: []Profile{ARM}},
		{ps: []Profile{ARM}, aarch64: true, want: []Profile{ARM}},
		{ps: []Profile{EADR}, aarch64: true, err: "persistency profile eadr is x86's"},
		{ps: []Profile{ADR, ARM}, aarch64: true, err: "persistency profile adr is x86's"},
	}
	for _, tt := range tests {
		got, err := ForTrace(tt.ps, tt.aarch64)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ForTrace(%v, %v) error %v, want %q", tt.ps, tt.aarch64, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ForTrace(%v, %v) = %v, %v; want %v", tt.ps, tt.aarch64, got, err, tt.want)
		}
	}
}
