package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/workload"
)

// mapcliMaps are every map PMDK's mapcli offers.
var mapcliMaps = []string{"btree", "ctree", "rbtree", "rtree", "hashmap_tx", "hashmap_atomic", "hashmap_rp", "skiplist"}

// TestMapcliTraces drives PMDK's mapcli, built with `scry cc`, with a generated workload for every
// map; the trace must be complete, replay to the pool file byte for byte (`scry trace verify`),
// and give no correctness finding on this mature code (docs/pmdk-examples.md), while the program
// prints exactly what the uninstrumented build prints.
func TestMapcliTraces(t *testing.T) {
	scry := scryBin(t)
	mapcli := need(t, "mapcli/mapcli")
	native := need(t, "mapcli/mapcli.native")
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
			rep := filepath.Join(dir, "report.json")
			r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--trace", tr, "--workload", ops, "--", mapcli, m, pool, "1")
			js, _ := os.ReadFile(rep)
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
