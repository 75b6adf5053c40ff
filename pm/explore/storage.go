package explore

import (
	"path/filepath"
	"strconv"
	"sync"

	"github.com/scry-pm/scry/internal/exec"
)

// workCopies are the files the runs on crash images and consistent images work on: one per
// run in progress, reused from run to run. Before each run the file is made equal to the
// image's source (a consistent image of the period) by writing only what differs
// (exec.ResetFile; the source's data read once, exec.Sources), then the crash state's patches are written over it: a pool of 160 MiB with
// 3 MiB of data then costs the pages the previous run and the patches touched, not a copy of
// its data and a new file. A run never sees a previous run's bytes (ResetFile compares every
// byte of the source's data and punches the rest). Safe for concurrent use.
type workCopies struct {
	mu      sync.Mutex
	free    []string
	n       int
	sources *exec.Sources // the sources' data, read once (made on first use)
}

// sourceBytes bounds the sources' data workCopies keeps in memory (exec.Sources): the
// consistent images the crash images of the operations in flight start from.
const sourceBytes = 256 << 20

// reset makes the working copy dst a copy of src (exec.Sources.Reset).
func (w *workCopies) reset(dst, src string) error {
	w.mu.Lock()
	if w.sources == nil {
		w.sources = exec.NewSources(sourceBytes)
	}
	s := w.sources
	w.mu.Unlock()
	return s.Reset(dst, src)
}

// get returns a free working copy's path (a new name in dir when none is free).
func (w *workCopies) get(dir string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := len(w.free); k > 0 {
		p := w.free[k-1]
		w.free = w.free[:k-1]
		return p
	}
	w.n++
	return filepath.Join(dir, "work-"+strconv.Itoa(w.n)+".img")
}

// put gives a working copy back once its run ended.
func (w *workCopies) put(p string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.free = append(w.free, p)
}
