package integration

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// mapcliMaps are every map PMDK's mapcli offers.
var mapcliMaps = []string{"btree", "ctree", "rbtree", "rtree", "hashmap_tx", "hashmap_atomic", "hashmap_rp", "skiplist"}

// TestMapcliTraces drives PMDK's mapcli, built with `scry cc`, with a generated workload for every
// map; the trace must be complete, replay to the pool file byte for byte (`scry trace verify`),
// and give no correctness finding on this mature code (docs/pmdk-examples.md), while the program
// prints exactly what the uninstrumented build prints.
func TestMapcliTraces(t *testing.T) {
	scry := testenv.Scry(t)
	mapcli := testenv.Built(t, "mapcli/mapcli")
	native := testenv.Built(t, "mapcli/mapcli.native")
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: 1000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	for _, m := range mapcliMaps {
		t.Run(m, func(t *testing.T) {
			dir := t.TempDir()
			ops := filepath.Join(dir, "ops.txt")
			if err := os.WriteFile(ops, wl.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			tr := filepath.Join(dir, m+".trace")
			pool := filepath.Join(dir, m+".pool")
			// The report on standard output, the program's output on standard error (with -o it
			// would not be shown).
			r := run(t, dir, "", scry, "check", "--format", "json", "--trace", tr, "--workload", ops, "--", mapcli, m, pool, "1")
			js := []byte(r.stdout)
			if r.code != 0 {
				t.Fatalf("scry check on mapcli %s: exit %d\nstderr: %s\nreport: %s", m, r.code, r.stderr, js)
			}
			for _, f := range parseFindings(t, string(js)) {
				if f.Class == "correctness" {
					t.Errorf("correctness finding on mapcli %s: %+v", m, f)
				}
			}
			v := run(t, dir, "", scry, "trace", "verify", tr)
			if v.code != 0 || !strings.Contains(v.stdout, "OK:") {
				t.Errorf("scry trace verify on mapcli %s: exit %d\n%s%s", m, v.code, v.stdout, v.stderr)
			}
			npool := filepath.Join(dir, m+".native.pool")
			n := run(t, dir, wl.String(), "env", "PMEM_IS_PMEM_FORCE=1", native, m, npool, "1")
			if n.code != 0 {
				t.Fatalf("native mapcli %s: exit %d: %s", m, n.code, n.stderr)
			}
			// scry check passes the program's standard output to its standard error.
			if got, want := r.stderr, n.stdout; !strings.Contains(got, want) {
				t.Errorf("instrumented mapcli %s printed something else than the native build\n got %q\nwant %q", m, trunc(got), trunc(want))
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestMapcliTrustsLibpmem checks the runtime's fast path for libpmemobj programs (native/runtime/region.c,
// "Trusting libpmem"): pages the program wrote stay writable across libpmemobj calls, which are
// then compared only where the library wrote or flushed through libpmem. Recorded with the fast
// path and without it (SCRY_TRUST_LIBPMEM=0: every call write-protects those pages again, as the
// runtime did before), the same run must change the same pool bytes in every operation, with the
// same values and the same kind of record (the program's store or the library's write), while the
// fast path makes far fewer mprotect calls. Address-space randomisation is turned off (setarch -R)
// so that the pointers libpmemobj stores in the pool are the same in both runs; the maps whose
// runs are deterministic then (the others store uninitialised padding or hash with random seeds)
// are compared. In the pool's first 8 KiB (its header and libpmemobj's pool descriptor, whose
// run-time fields hold pointers to the process's own memory, which still vary from run to run
// now and then) only the kind of record that changes a line is compared (sameChanges).
func TestMapcliTrustsLibpmem(t *testing.T) {
	mapcli := testenv.Built(t, "mapcli/mapcli")
	native := testenv.Built(t, "mapcli/mapcli.native")
	setarch := testenv.Tool(t, "setarch")
	var wl, first bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: 600, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := workload.KV(&first, workload.KVOptions{Ops: 20, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"btree", "rtree", "rbtree", "skiplist"} {
		t.Run(m, func(t *testing.T) {
			dir := t.TempDir()
			base := filepath.Join(dir, "base.pool")
			if r := run(t, dir, first.String(), "env", "PMEM_IS_PMEM_FORCE=1", native, m, base, "1"); r.code != 0 {
				t.Fatalf("native mapcli %s: exit %d: %s", m, r.code, r.stderr)
			}
			record := func(name string, env ...string) (ops []map[opByte]byte, mprotects uint64) {
				pool := filepath.Join(dir, name+".pool")
				data, err := os.ReadFile(base)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(pool, data, 0o600); err != nil {
					t.Fatal(err)
				}
				tr := filepath.Join(dir, name+".trace")
				args := append([]string{"PMEM_IS_PMEM_FORCE=1", "SCRY_RT_STATS=1", "SCRY_TRACE=" + tr}, env...)
				args = append(args, setarch, "-R", mapcli, m, pool, "1")
				r := run(t, dir, wl.String(), "env", args...)
				if r.code != 0 {
					t.Fatalf("%s: mapcli %s: exit %d: %s", name, m, r.code, trunc(r.stderr))
				}
				var windows, trusted uint64
				for _, line := range strings.Split(r.stderr, "\n") {
					if strings.HasPrefix(line, "scry: runtime:") {
						fmt.Sscanf(line, "scry: runtime: %d windows (%d trusting libpmem), %d faults, %d mprotect calls",
							&windows, &trusted, new(uint64), &mprotects)
					}
				}
				if windows == 0 {
					t.Fatalf("%s: no runtime counters (SCRY_RT_STATS) in\n%s", name, trunc(r.stderr))
				}
				if wantTrust := len(env) == 0; (trusted > 0) != wantTrust {
					t.Errorf("%s: %d of %d windows trusted libpmem", name, trusted, windows)
				}
				return changesPerOp(t, tr), mprotects
			}
			fast, fastMP := record("fast")
			slow, slowMP := record("protected", "SCRY_TRUST_LIBPMEM=0")
			if len(fast) != len(slow) {
				t.Fatalf("operations: %d with the fast path, %d without", len(fast), len(slow))
			}
			bad := 0
			for i := range fast {
				if !sameChanges(fast[i], slow[i]) {
					if bad < 3 {
						t.Errorf("operation %d changes other pool bytes with the fast path (%d) than without (%d): %s", i-1, len(fast[i]), len(slow[i]), opDiff(fast[i], slow[i]))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d operations differ", bad, len(fast))
			}
			t.Logf("mprotect calls: %d with the fast path, %d without", fastMP, slowMP)
			if fastMP*3 > slowMP {
				t.Errorf("mprotect calls: %d with the fast path, %d without: expected far fewer", fastMP, slowMP)
			}
		})
	}
}

// opByte is a pool byte (offset in its region) changed by the program's store (ext false) or by
// uninstrumented code (ext true).
type opByte struct {
	off uint64
	ext bool
}

// changesPerOp replays the STORE, NT_STORE and EXTERNAL_WRITE records of a single-region trace and
// returns, per operation (index 0: before the first), the bytes whose value changed and their new
// values.
func changesPerOp(t *testing.T, path string) []map[opByte]byte {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var base uint64
	cur := map[uint64]byte{}
	ops := []map[opByte]byte{{}}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch ev.Kind {
		case trace.KindRegionMap:
			base = ev.Addr
		case trace.KindOpBegin:
			ops = append(ops, map[opByte]byte{})
		case trace.KindStore, trace.KindNTStore, trace.KindExternalWrite:
			m := ops[len(ops)-1]
			for i, b := range ev.Data {
				off := ev.Addr - base + uint64(i)
				if cur[off] == b { // a region's bytes start as zeros (docs/trace-format.md)
					continue
				}
				cur[off] = b
				m[opByte{off, ev.Kind == trace.KindExternalWrite}] = b
			}
		}
	}
	return ops
}

// opDiff describes the first bytes (by offset) on which two operations' changes differ.
func opDiff(a, b map[opByte]byte) string {
	keys := map[opByte]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diff []opByte
	for k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			diff = append(diff, k)
		}
	}
	slices.SortFunc(diff, func(x, y opByte) int { return cmp.Compare(x.off, y.off) })
	var out []string
	for i, k := range diff {
		if i == 8 {
			out = append(out, fmt.Sprintf("... (%d in all)", len(diff)))
			break
		}
		va, oka := a[k]
		vb, okb := b[k]
		out = append(out, fmt.Sprintf("offset %#x external %v: fast %v %#x, protected %v %#x", k.off, k.ext, oka, va, okb, vb))
	}
	return strings.Join(out, "; ")
}

// descriptorBytes is the span at the start of a libpmemobj pool whose values sameChanges does
// not compare: the pool header and the pool descriptor with its run-time pointers.
const descriptorBytes = 8192

// sameChanges reports whether two operations change the same pool bytes by the same kind of
// record, to the same values, outside the first descriptorBytes. Inside them it asks only that
// the same 64-byte lines change by the same kinds of record where both runs change them: whether
// a run-time field's byte changes at all depends on the pointer the run stores there, which
// varies now and then (a CI run saw a descriptor field set and cleared in one run, never set in
// the other).
func sameChanges(a, b map[opByte]byte) bool {
	outside := func(m map[opByte]byte) map[opByte]byte {
		o := map[opByte]byte{}
		for k, v := range m {
			if k.off >= descriptorBytes {
				o[k] = v
			}
		}
		return o
	}
	oa, ob := outside(a), outside(b)
	if len(oa) != len(ob) {
		return false
	}
	for k, va := range oa {
		if vb, ok := ob[k]; !ok || va != vb {
			return false
		}
	}
	lines := func(m map[opByte]byte) map[opByte]bool {
		l := map[opByte]bool{}
		for k := range m {
			if k.off < descriptorBytes {
				l[opByte{k.off &^ 63, k.ext}] = true
			}
		}
		return l
	}
	la, lb := lines(a), lines(b)
	for k := range la {
		if _, other := lb[opByte{k.off, !k.ext}]; other && !lb[k] {
			return false // the line changes by another kind of record in the other run
		}
	}
	return true
}
