package explore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"slices"

	"github.com/scry-pm/scry/pm/crash"
)

// Never running the same image twice (issue "Crash exploration at the speed of the program
// itself"). A crash image is its period's consistent image (the base) with patches; many states
// give byte-identical images: the state that persists nothing of an operation is the consistent
// image itself, and a state at one crash point often equals one at the next (what a flush made
// durable in between is what the earlier state persisted). Such images, run with the same rest of
// the workload, end the same way, so each distinct image runs once per batch: the key of an image
// is its net difference from the base (the bytes where they differ, which the base file gives),
// and a state whose image is the base itself is judged by the rolled-back outcome's run.

// maxNetDelta bounds the bytes a crash point's pages differ from the base by for its states to
// be keyed (a point with more runs its states without deduplication: keying them would cost more
// than it saves).
const maxNetDelta = 4096

// netDelta returns the bytes of delta (pages of the base's region written since the base was
// taken, with their bytes at the crash point) that differ from the base file, as runs, or false
// when they exceed maxNetDelta or the base cannot be read.
func netDelta(base string, delta []crash.Patch) ([]crash.Patch, bool) {
	f, err := os.Open(base)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var out []crash.Patch
	total := 0
	buf := make([]byte, 0, 4096)
	for _, p := range delta {
		buf = slices.Grow(buf[:0], len(p.Data))[:len(p.Data)]
		n, _ := f.ReadAt(buf, p.Offset)
		clear(buf[n:]) // past the file's end: zero
		for i := 0; i < len(p.Data); {
			if p.Data[i] == buf[i] {
				i++
				continue
			}
			j := i
			for j < len(p.Data) && p.Data[j] != buf[j] {
				j++
			}
			total += j - i
			if total > maxNetDelta {
				return nil, false
			}
			out = append(out, crash.Patch{Offset: p.Offset + int64(i), Data: slices.Clone(p.Data[i:j])})
			i = j
		}
	}
	return out, true
}

// imageKey returns the key of the image base + net + ps (the state's patches, written last) for
// a run from workload line next, and whether the image is the base itself. Equal keys mean
// byte-identical images and the same input.
func imageKey(base string, net, ps []crash.Patch, next int) (string, bool) {
	diff := map[int64]byte{}
	for _, r := range net {
		for i, b := range r.Data {
			diff[r.Offset+int64(i)] = b
		}
	}
	if len(ps) > 0 {
		f, err := os.Open(base)
		if err != nil {
			return "", false
		}
		buf := make([]byte, 0, 64)
		for _, p := range ps {
			buf = slices.Grow(buf[:0], len(p.Data))[:len(p.Data)]
			n, _ := f.ReadAt(buf, p.Offset)
			clear(buf[n:])
			for i, b := range p.Data {
				o := p.Offset + int64(i)
				if b != buf[i] {
					diff[o] = b
				} else {
					delete(diff, o)
				}
			}
		}
		f.Close()
	}
	if len(diff) == 0 {
		return "", true
	}
	offs := make([]int64, 0, len(diff))
	for o := range diff {
		offs = append(offs, o)
	}
	slices.Sort(offs)
	h := sha256.New()
	h.Write([]byte(base))
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(next))
	h.Write(b[:8])
	for _, o := range offs {
		binary.LittleEndian.PutUint64(b[:8], uint64(o))
		b[8] = diff[o]
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)), false
}
