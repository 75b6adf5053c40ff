package px86

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is the platform whose persistence contract the model applies: which part of the
// machine survives a power failure. The rules of package doc are those of ADR; a profile is a
// parameter of the one model (Config.Profile, and Of.Visible for a model kept under ADR), not a
// second model.
//
//   - ADR (Asynchronous DRAM Refresh, the default): the memory controller's write-pending
//     queues are in the power-fail protected domain, the CPU caches are not. A store is durable
//     once a flush of its line (clflush, or clflushopt / clwb and a later fence of the flushing
//     thread) has written it back, or once the line is evicted. Intel, "Intel 64 and IA-32
//     Architectures Optimization Reference Manual" and SNIA NVM Programming Model v1.2 §10
//     (flush to the persistence domain); PMDK's libpmem(7).
//   - EADR (extended ADR): the CPU caches are in the protected domain too, so flushes are not
//     needed for durability (Intel, "eADR: New Opportunities for Persistent Memory
//     Applications", 2021); fences still are, for ordering (PMDK's libpmem2(7), GRANULARITY:
//     "barriers might still be required for ordering"). The model takes a store to write-back
//     memory as durable once it is globally visible: x86-TSO makes a thread's stores visible in
//     program order through its store buffer, so cached stores become durable in store order,
//     and a fence (sfence, mfence, locked read-modify-write) drains the store buffer, making
//     every earlier store of its thread durable. CHOICE: non-temporal stores are treated as
//     under ADR (durable only at the thread's next fence, unordered with other stores): they
//     bypass the caches through write-combining buffers, for which we found no statement of
//     coverage, and PMDK fences after them on every platform. Flush instructions make nothing
//     durable (they only cost time). Library writes the runtime cannot see inside count as
//     cached stores. PMDK's pmem_has_auto_flush(3) reports eADR when every region's
//     persistence_domain is "cpu_cache"; PMEM_NO_FLUSH=1 (libpmem(7)) makes libpmem skip its
//     flushes and keep its fences, which is correct exactly under this profile.
//   - GPF names EADR. CXL Global Persistent Flush (CXL 2.0 §9.8) writes the host's caches back
//     to the device before the device flushes its own buffers on a power failure, so software
//     on a platform that does so sees the eADR contract. A platform may leave the host caches
//     out, and Linux reports CXL persistent-memory regions with persistence_domain
//     "memory_controller" (PMDK then keeps flushing): check such a platform under ADR.
//   - ARM: an Armv8.2 (or later) machine whose point of persistence (PoP) is beyond its caches,
//     for the traces of aarch64 programs (trace.HeaderAArch64). The rules are those of the
//     package doc with Arm's instructions in place of x86's (Raad, Wickerson and Vafeiadis, Weak
//     Persistency Semantics from the Ground Up: Formalising the Persistency Semantics of ARMv8
//     and Transactional Models, OOPSLA'19, §3 "PARMv8"; Arm Architecture Reference Manual for
//     A-profile, DC CVAP, DSB, DMB): a store is durable once a DC CVAP (or DC CVADP, to the
//     point of deep persistence) of its line has completed, which a later DSB of the cleaning
//     thread guarantees (the clflushopt/clwb + sfence pattern; DSB's option does not matter but
//     for the load-only ones, as Linux's pmem_wmb, a DSB ST, relies on); stores to one line
//     persist in order (a line is written back whole); a DMB orders the thread's earlier
//     cleans before its later stores without completing them (Barrier). CHOICE: DC CVAC and
//     DC CIVAC (clean to the point of coherence) count as cleans to the PoP: the architecture
//     makes DC CVAP act as DC CVAC on a system that identifies no PoP, and PMDK's aarch64 code
//     cleans with DC CVAC where DC CVAP is missing; on a system whose PoP lies beyond its PoC
//     they would not persist. Atomics (exclusive pairs, LSE) are no barrier for cache
//     maintenance. Arm's weak memory model lets stores of one thread become visible out of
//     order; the model does not need that order (no Arm profile with persistent caches exists
//     here), so ARM has no eADR counterpart.
type Profile uint8

// Profiles.
const (
	ADR  Profile = 0
	EADR Profile = 1
	ARM  Profile = 2
)

// AllProfiles lists every x86 profile in the order reports list them ("all"; ARM is the
// profile of aarch64 traces alone: ForTrace).
var AllProfiles = []Profile{ADR, EADR}

func (p Profile) String() string {
	switch p {
	case ADR:
		return "adr"
	case EADR:
		return "eadr"
	case ARM:
		return "arm"
	}
	return fmt.Sprintf("Profile(%d)", uint8(p))
}

// Doc is a one-line description of the profile for help texts and reports.
func (p Profile) Doc() string {
	switch p {
	case ADR:
		return "x86 with ADR: a store is durable once its cache line is flushed and fenced (or evicted)"
	case EADR:
		return "x86 with eADR or CXL GPF: the caches are persistent; a store is durable once globally visible, in store order (non-temporal stores still need a fence)"
	case ARM:
		return "Armv8.2 (aarch64 programs): a store is durable once a DC CVAP of its line has completed (a later DSB); a DMB orders the clean before later stores"
	}
	return ""
}

// ParseProfiles parses a comma-separated list of profile names ("adr", "eadr", "gpf" for EADR,
// "arm", "all" for every x86 profile) and returns the profiles in order, each once.
// Errors: an empty list or an unknown name (the error lists the names).
func ParseProfiles(s string) ([]Profile, error) {
	var out []Profile
	for _, name := range strings.Split(s, ",") {
		var ps []Profile
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "adr":
			ps = []Profile{ADR}
		case "eadr", "gpf":
			ps = []Profile{EADR}
		case "arm", "armv8":
			ps = []Profile{ARM}
		case "all":
			ps = AllProfiles
		case "":
			continue
		default:
			return nil, fmt.Errorf("unknown persistency profile %q (known: adr, eadr, gpf (an alias of eadr), arm, all)", strings.TrimSpace(name))
		}
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no persistency profile in %q (known: adr, eadr, gpf, arm, all)", s)
	}
	slices.Sort(out)
	return out, nil
}

// ProfileNames returns the names of ps, in order.
func ProfileNames(ps []Profile) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// ForTrace returns the profiles a trace is checked under: ps (nil: the trace's default) fitted
// to the trace's architecture. An x86 trace defaults to ADR and cannot be checked under ARM; an
// aarch64 trace (trace.HeaderAArch64) is checked under ARM alone, and asking it for ADR or EADR
// together with "all" (every x86 profile) means ARM. Errors: an x86 profile asked for an aarch64
// trace, or ARM for an x86 trace, each naming the trace's architecture.
func ForTrace(ps []Profile, aarch64 bool) ([]Profile, error) {
	if !aarch64 {
		if slices.Contains(ps, ARM) {
			return nil, fmt.Errorf("persistency profile arm needs the trace of an aarch64 program (this trace is x86-64's: use adr or eadr)")
		}
		return ps, nil
	}
	if len(ps) == 0 || slices.Equal(ps, []Profile{ARM}) || slices.Equal(ps, AllProfiles) {
		return []Profile{ARM}, nil
	}
	var x86 []string
	for _, p := range ps {
		if p != ARM {
			x86 = append(x86, p.String())
		}
	}
	return nil, fmt.Errorf("persistency profile %s is x86's, and this trace is an aarch64 program's: use arm", strings.Join(x86, ","))
}
