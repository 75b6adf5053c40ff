package crash

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"math/big"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/trace"
)

// recordBtree records mapcli btree on a workload of ops operations into dir, or skips (fails,
// strictly: internal/testenv) when scry or mapcli is not built. It returns the trace and the
// pool file.
func recordBtree(tb testing.TB, dir string, ops string) (tracePath, pool string) {
	scry, mapcli := testenv.Scry(tb), testenv.Built(tb, "mapcli/mapcli")
	work := filepath.Join(dir, "ops.txt")
	tracePath, pool = filepath.Join(dir, "b.trace"), filepath.Join(dir, "b.pool")
	if out, err := exec.Command(scry, "workload", "kv", "--ops", ops, "--seed", "1", "-o", work).CombinedOutput(); err != nil {
		tb.Fatalf("workload: %v\n%s", err, out)
	}
	if out, err := exec.Command(scry, "record", "--trace", tracePath, "--workload", work, "--", mapcli, "btree", pool, "1").CombinedOutput(); err != nil {
		tb.Fatalf("record: %v\n%s", err, out)
	}
	return tracePath, pool
}

// TestMapcliImages checks, on a real trace, that at every crash point the image with every
// unit persisted is the replayed image and the image with none persisted differs from it
// exactly by the rolled-back bytes, through both image writers; and that the last crash
// point's fully persisted image is the pool file on disk.
func TestMapcliImages(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program")
	}
	dir := t.TempDir()
	tp, pool := recordBtree(t, dir, "300")
	r, err := trace.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	img, inc := filepath.Join(dir, "img"), NewImageWriter(filepath.Join(dir, "work"))
	defer inc.Close()
	var lastAll []byte
	checked := 0
	_, err = Walk(r, Options{}, func(cp *CrashPoint) error {
		sp := cp.Space
		none, all := State{K: make([]int, len(sp.Lines))}, State{K: make([]int, len(sp.Lines))}
		for i, l := range sp.Lines {
			all.K[i] = len(l.Units)
		}
		if ps, _ := cp.Patches(all); len(ps) != 0 {
			t.Fatalf("point %d: all persisted has %d patches", cp.Index, len(ps))
		}
		nonePs, err := cp.Patches(none)
		if err != nil {
			return err
		}
		rs, _ := cp.regions()
		if len(rs) == 0 || cp.Index%50 != 0 && cp.Kind != BeforeUnmap {
			return nil
		}
		g := rs[len(rs)-1]
		want := make([]byte, g.FileOffset+g.Length)
		g.ReadAt(want[g.FileOffset:], 0)
		if err := cp.WriteImage(img, g.ID, all); err != nil {
			return err
		}
		if got, _ := os.ReadFile(img); !bytes.Equal(got, want) {
			t.Fatalf("point %d: all-persisted image differs from the replayed image", cp.Index)
		}
		lastAll = want
		for _, p := range nonePs {
			copy(want[p.Offset:], p.Data)
		}
		for _, w := range []func() (string, error){
			func() (string, error) { return img, cp.WriteImage(img, g.ID, none) },
			func() (string, error) { return inc.Path(), inc.Write(cp, g.ID, none) },
		} {
			path, err := w()
			if err != nil {
				return err
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
				t.Fatalf("point %d: none-persisted image (%s) differs from the durable state", cp.Index, path)
			}
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(pool)
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 || !bytes.Equal(disk, lastAll) {
		t.Errorf("checked %d points; last image equals the pool file: %v", checked, bytes.Equal(disk, lastAll))
	}
}

// benchTrace returns a recorded mapcli btree trace: $SCRY_BENCH_TRACE, or a fresh recording of
// 2000 operations.
func benchTrace(b *testing.B) string {
	if p := os.Getenv("SCRY_BENCH_TRACE"); p != "" {
		return p
	}
	tp, _ := recordBtree(b, b.TempDir(), "2000")
	return tp
}

// BenchmarkWalk measures crash points and states counted (all strategies) per second.
func BenchmarkWalk(b *testing.B) {
	tp := benchTrace(b)
	var points int
	var states float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := trace.Open(tp)
		if err != nil {
			b.Fatal(err)
		}
		s, err := Summarize(r, Strategies(), Options{})
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		points += s.Points
		for _, c := range s.Strategies {
			f, _ := new(bigFloat).SetInt(c.Tested).Float64()
			states += f
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(points)/sec, "points/s")
	b.ReportMetric(states/sec, "states/s")
}

// BenchmarkImage measures writing one crash image of the btree pool at the END crash point:
// whole sparse files (WriteImage) and the incremental working copy (ImageWriter), moving
// between two states.
func BenchmarkImage(b *testing.B) {
	tp := benchTrace(b)
	dir := b.TempDir()
	for _, mode := range []string{"full", "incremental"} {
		b.Run(mode, func(b *testing.B) {
			r, err := trace.Open(tp)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			inc := NewImageWriter(filepath.Join(dir, "work"))
			defer inc.Close()
			_, err = Walk(r, Options{}, func(cp *CrashPoint) error {
				if cp.Kind != BeforeUnmap {
					return nil
				}
				rs, _ := cp.regions()
				g := rs[len(rs)-1]
				sts := []State{{K: make([]int, len(cp.Space.Lines))}, {K: make([]int, len(cp.Space.Lines))}}
				for i, l := range cp.Space.Lines {
					sts[1].K[i] = len(l.Units)
				}
				b.ReportMetric(float64(len(g.TouchedPages())*image.PageSize)/(1<<20), "MiB-data")
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var err error
					if mode == "full" {
						err = cp.WriteImage(filepath.Join(dir, "img"), g.ID, sts[i%2])
					} else {
						err = inc.Write(cp, g.ID, sts[i%2])
					}
					if err != nil {
						return err
					}
				}
				return ErrStop
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

type bigFloat = big.Float
