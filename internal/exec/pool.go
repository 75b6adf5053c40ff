package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// ShuffleSeed seeds the permutation in which Map hands items to workers. It is fixed so that
// runs are reproducible; results do not depend on it.
const ShuffleSeed = 0x5c7e_c4a5

// Pool runs work over many items (crash images) in parallel; see Map.
type Pool struct {
	// Jobs is the number of workers; <= 0 means runtime.NumCPU() (the CLI's --jobs).
	Jobs int
	// Dir is the parent of the run's temporary directory; "" means os.TempDir().
	Dir string
	// Progress, if non-nil, counts the runs (one Progress may span several Map calls).
	Progress *Progress
	// Ordered hands the items out in their order instead of the shuffled one: for a caller
	// that ordered them itself (file-system mode's time budget spreads its first runs over the
	// whole program run).
	Ordered bool
	// First items are handed out before the others, in their order: runs that others are
	// compared with and that must start no later than them (pm/explore's legal outcomes, for
	// a program that seeds its output with the time).
	First int
}

// Worker is one of a Pool's workers, handed to each call of the work function it runs.
type Worker struct {
	// Index is the worker's number, 0 to Jobs-1.
	Index int
	// Dir is the worker's private directory, under the run's temporary directory. Map empties
	// it before each item, so every item starts in an empty directory: put the run's pool copy
	// there and use it as the working directory. It is removed when Map returns.
	Dir string
}

// reset empties the worker's directory.
func (w *Worker) reset() error {
	if err := os.RemoveAll(w.Dir); err != nil {
		return err
	}
	return os.Mkdir(w.Dir, 0o755)
}

// Map calls work on every item with p.Jobs workers and returns the results in the order of
// items, so that they do not depend on the number of jobs (as long as work depends only on its
// item). Items are handed out from one queue in a fixed pseudo-random order (ShuffleSeed; in their
// own order with Pool.Ordered):
// neighbouring crash images tend to cost alike (the thousands of images inside a pool's
// initialisation recover quickly, later ones slowly), so shuffling spreads the expensive ones
// over all workers and over the whole run, which keeps the workers evenly loaded and the
// progress bar's ETA honest (the thesis shuffles its snapshots across recovery threads for the
// same reason: Fernandes's thesis, Automatic Testing of PM Applications, 2022, §5.1.4).
//
// Map makes a temporary directory under p.Dir holding one directory per worker (Worker.Dir)
// and removes it before returning, whatever happens. When ctx is cancelled (SignalContext turns
// Ctrl-C into that) no further item starts, the running calls see the cancelled context (runs
// started with it are killed: Target.Run), Map waits for them, removes the directory and returns
// ctx's error. A panic in work is recovered: no further item starts and the error names the
// item and carries the stack. In every case the results of the items that completed are
// returned (the others are zero values).
func Map[T, R any](ctx context.Context, p Pool, items []T, work func(ctx context.Context, w *Worker, item T) R) ([]R, error) {
	results := make([]R, len(items))
	if err := ctx.Err(); err != nil {
		return results, err
	}
	if len(items) == 0 {
		return results, nil
	}
	jobs := p.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = min(jobs, len(items))
	parent := p.Dir
	if parent == "" {
		parent = os.TempDir()
	}
	runDir, err := os.MkdirTemp(parent, "scry-exec-*")
	if err != nil {
		return results, fmt.Errorf("creating the run directory: %w", err)
	}
	var errs []error
	defer func() {
		// Every path that started workers waits for them (wg.Wait) before returning.
		if err := os.RemoveAll(runDir); err != nil {
			fmt.Fprintf(os.Stderr, "scry: removing %s: %v\n", runDir, err)
		}
	}()

	workers := make([]*Worker, jobs)
	for i := range workers {
		workers[i] = &Worker{Index: i, Dir: filepath.Join(runDir, fmt.Sprintf("w%d", i))}
		if err := os.Mkdir(workers[i].Dir, 0o755); err != nil {
			return results, fmt.Errorf("creating a worker directory: %w", err)
		}
	}

	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	bar := p.Progress
	bar.Plan(len(items))
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		done int
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel()
	}
	queue := make(chan int)
	for _, w := range workers {
		wg.Go(func() {
			for idx := range queue {
				if inner.Err() != nil {
					continue // drain
				}
				if err := w.reset(); err != nil {
					fail(fmt.Errorf("emptying %s: %w", w.Dir, err))
					continue
				}
				r, err := call(inner, w, idx, items[idx], work)
				if err != nil {
					fail(err)
					continue
				}
				results[idx] = r
				mu.Lock()
				done++
				mu.Unlock()
				bar.Done()
			}
		})
	}
	order := rand.New(rand.NewPCG(ShuffleSeed, uint64(len(items)))).Perm(len(items))
	if p.Ordered {
		for i := range order {
			order[i] = i
		}
	}
	if p.First > 0 {
		first := make([]int, 0, len(order))
		for i := range min(p.First, len(items)) {
			first = append(first, i)
		}
		for _, i := range order {
			if i >= p.First {
				first = append(first, i)
			}
		}
		order = first
	}
feed:
	for _, idx := range order {
		select {
		case queue <- idx:
		case <-inner.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if len(errs) > 0 {
		if err := ctx.Err(); err != nil {
			errs = append([]error{err}, errs...)
		}
		return results, errors.Join(errs...)
	}
	return results, ctx.Err()
}

// call runs work on one item, turning a panic into an error that names the item.
func call[T, R any](ctx context.Context, w *Worker, idx int, item T, work func(context.Context, *Worker, T) R) (r R, err error) {
	defer func() {
		if x := recover(); x != nil {
			desc := fmt.Sprintf("%v", item)
			if len(desc) > 100 {
				desc = desc[:100] + "..."
			}
			err = fmt.Errorf("work on item %d (%s) panicked: %v\n%s", idx, desc, x, debug.Stack())
		}
	}()
	return work(ctx, w, item), nil
}

// Progress reports the runs of an exploration across all its Map calls (batches): on a
// terminal, one progress bar whose total grows as batches are planned; elsewhere (CI logs,
// files) a line every Interval. A nil *Progress reports nothing. Safe for concurrent use.
type Progress struct {
	w        io.Writer
	bar      *progressbar.ProgressBar
	mu       sync.Mutex
	planned  int
	done     int
	start    time.Time
	stop     chan struct{}
	finished bool
}

// ProgressInterval is how often a Progress off a terminal prints a line.
const ProgressInterval = 10 * time.Second

// NewProgress returns a Progress writing to w, or nil when w is nil.
func NewProgress(w io.Writer) *Progress {
	return newProgress(w, ProgressInterval)
}

func newProgress(w io.Writer, every time.Duration) *Progress {
	if w == nil {
		return nil
	}
	p := &Progress{w: w, start: time.Now(), stop: make(chan struct{})}
	if f, ok := w.(*os.File); ok && f != nil && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(0,
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription("running"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("runs"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionFullWidth(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(f) }),
		)
		return p
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.line()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

func (p *Progress) line() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished || p.planned == 0 {
		return
	}
	fmt.Fprintf(p.w, "scry: %d of %d runs planned so far done, %.0fs elapsed\n", p.done, p.planned, time.Since(p.start).Seconds())
}

// Plan adds n runs to the total (a batch about to run).
func (p *Progress) Plan(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.planned += n
	if p.bar != nil {
		p.bar.ChangeMax(p.planned)
	}
}

// Done counts one run finished.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// Finish ends the report: the bar is completed (or left where it stopped), the lines stop.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	if p.bar != nil {
		if p.done == p.planned {
			_ = p.bar.Finish()
		} else {
			_ = p.bar.Exit()
		}
		return
	}
	close(p.stop)
}

// Interrupted is the cause of a context SignalContext cancelled: the signal scry received.
// Commands exit with 128 + its number after writing what they found.
type Interrupted struct {
	Signal syscall.Signal
}

func (e *Interrupted) Error() string {
	name := e.Signal.String()
	switch e.Signal {
	case syscall.SIGINT:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	}
	return "interrupted by " + name
}

// SignalContext returns a context cancelled on the first SIGINT (Ctrl-C) or SIGTERM, with an
// *Interrupted as its cause (context.Cause), for Map: the runs are killed and the temporary
// files removed, and the caller reports what it found so far. A second SIGINT or SIGTERM stops
// scry at once. When the first came while runs were alive (crash exploration: a process carrying
// this scry's SCRY_RUN_ID), SignalContext handles the second: it kills every process of the runs
// (KillRuns) and raises the signal again with its default action, so that scry dies by it and
// leaves no run behind. Otherwise (recording: the recorder handles a second signal itself, as
// pm/record does) the two signals get their default action back after the first. Targets run in
// their own process groups, so a Ctrl-C on the terminal reaches scry only, which kills them. stop
// releases the signals (call it when done).
func SignalContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	stopped := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			runs := runsAlive()
			if !runs {
				signal.Stop(ch)
			}
			cancel(&Interrupted{Signal: sig})
			if !runs {
				return
			}
		case <-stopped:
			return
		}
		select {
		case s := <-ch:
			KillRuns()
			signal.Stop(ch)
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			sig, _ := s.(syscall.Signal)
			_ = syscall.Kill(os.Getpid(), sig)
		case <-stopped:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(stopped)
			cancel(context.Canceled)
		})
	}
}
