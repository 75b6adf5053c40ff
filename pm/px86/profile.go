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
type Profile uint8

// Profiles.
const (
	ADR  Profile = 0
	EADR Profile = 1
)

// AllProfiles lists every profile in the order reports list them.
var AllProfiles = []Profile{ADR, EADR}

func (p Profile) String() string {
	switch p {
	case ADR:
		return "adr"
	case EADR:
		return "eadr"
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
	}
	return ""
}

// ParseProfiles parses a comma-separated list of profile names ("adr", "eadr", "gpf" for EADR,
// "all" for every profile) and returns the profiles in AllProfiles order, each once.
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
		case "all":
			ps = AllProfiles
		case "":
			continue
		default:
			return nil, fmt.Errorf("unknown persistency profile %q (known: adr, eadr, gpf (an alias of eadr), all)", strings.TrimSpace(name))
		}
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no persistency profile in %q (known: adr, eadr, gpf, all)", s)
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
