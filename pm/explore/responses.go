package explore

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// What completed operations returned.
//
// Durable linearizability (Izraelevitz, Mendes, Scott, DISC'16, §3) asks more of a linearization
// than to explain the state recovery shows: it must also agree with what each operation that
// completed before the crash returned. A read-only operation that printed a value which a crash
// then lost passes an oracle that only looks at the state: the linearization without the write
// the read saw explains the crash image, although the completed read returned that write's
// value. So, where operations overlap, a linearization whose completed operations print something
// else in it than they printed in the recorded run is no legal outcome.
//
// What an operation printed is what the runtime recorded as OUTPUT records while the recorded run
// ran (standard output through puts, fputs, printf, fprintf and dprintf, in the printing
// thread), attributed to the operation in flight on that thread (outputCollector), read once with
// the plan. What it prints in a linearization is read the same way from a recording of the
// linearization's prep run (OutputRunner: pm/record with the runtime tracing, instead of an inert
// run), whose operations are the sequence's (by their text, in the order they began: byLine). Both sides come from the same hooks of the same
// binary, so what the runtime does not see (putchar, fwrite, write(2)) is missing from both, and
// each side's lines go through the output filter first.
//
// Only the prep runs of periods of several operations are recorded, and only when the recorded
// run's operations printed something (a program whose operations print nothing, such as one that
// prints its state once at the end, has no response to check). A linearization is checked on the
// operations of D it applies (those ended before a transaction cut are in its image, in the order
// they ran, with the responses they had). When no linearization of a crash point agrees (a program
// whose responses vary between runs: times, random values), none is left out, with a warning.

// OutputRunner is a Runner that can also tell what each operation of a run printed: the outcome
// of running the target on image with stdin, and the standard output each operation (in the
// order they began) printed through the calls the runtime records (nil when it cannot tell).
type OutputRunner interface {
	TargetOutputs(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) (exec.Outcome, map[int][]byte)
}

// TargetOutputs records the target's run on image (pm/record, with the runtime tracing: no fork
// server) into dir and reads the OUTPUT records of its trace, by operation. The run's standard
// output is not kept (a prep run's is never compared).
func (r ProcessRunner) TargetOutputs(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) (exec.Outcome, map[int][]byte) {
	if r.Prog.Client != nil {
		// A session's requests come one at a time: what each printed is not told apart.
		return r.Target(ctx, image, stdin, dir, timeout), nil
	}
	abs, err := filepath.Abs(image)
	if err != nil {
		return exec.Outcome{ExitCode: -1, Err: err}, nil
	}
	args := make([]string, len(r.Prog.Args))
	for i, a := range r.Prog.Args {
		args[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, abs)
	}
	if timeout <= 0 {
		timeout = r.Prog.Timeout
	}
	tr := filepath.Join(dir, "prep.trace")
	defer os.Remove(tr)
	var stderr bytes.Buffer
	// Under the runtime's ops policy the operations run one at a time in the order they began,
	// which is the order of their lines for the drivers docs/concurrency.md describes: a prep
	// run applies the linearization it stands for even where the program runs operations in
	// threads at once (a get beside an insert of its key prints what the order says).
	env := slices.DeleteFunc(slices.Clone(r.Prog.Env), func(e string) bool { return strings.HasPrefix(e, record.ScheduleEnv+"=") })
	env = append(env, record.ScheduleEnv+"=ops:1")
	res, err := record.Run(ctx, record.Options{
		Trace: tr, PMGlobs: []string{abs}, NoLoads: true, OpBegin: r.OpBegin, OpEnd: r.OpEnd,
		Args: args, Env: env, Stdin: bytes.NewReader(stdin), Stderr: &stderr, Timeout: timeout,
	})
	if err != nil {
		return exec.Outcome{ExitCode: -1, Err: err}, nil
	}
	o := exec.Outcome{ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut > 0, Stderr: stderr.Bytes()}
	if res.Failed() {
		return o, nil
	}
	h, err := opOutputsOf(tr)
	if err != nil {
		return o, nil
	}
	return o, filtered(h.byLine(stdin), r.Prog.OutputFilter)
}

// outputCollector is a replay handler collecting what each operation printed on its standard
// output (OUTPUT records of fd 1, by the operation in flight on the printing thread: output of a
// thread running no operation, such as a main thread printing while its workers run theirs,
// belongs to none), and each operation's text.
type outputCollector struct {
	replay.Nop
	ops   *replay.Ops
	outs  map[int][]byte
	texts map[int]string
}

func (h *outputCollector) OpBegan(_ *trace.Event, op replay.Op) {
	if h.texts == nil {
		h.texts = map[int]string{}
	}
	h.texts[int(op.Index)] = op.Text
}

func (h *outputCollector) Output(ev *trace.Event) {
	if ev.Handle != 1 {
		return
	}
	for _, op := range h.ops.InFlight() {
		if op.Thread != ev.Thread {
			continue
		}
		if h.outs == nil {
			h.outs = map[int][]byte{}
		}
		h.outs[int(op.Index)] = append(h.outs[int(op.Index)], ev.Data...)
		return
	}
}

// byLine returns the outputs by the position of their operation's line in stdin: a program's
// threads may begin their operations in another order than the lines, so the operations with a
// text are given the lines with that text in the order they began; one whose text is no line
// keeps its index.
func (h *outputCollector) byLine(stdin []byte) map[int][]byte {
	at := map[string][]int{}
	for i, l := range strings.Split(strings.TrimSuffix(string(stdin), "\n"), "\n") {
		at[l] = append(at[l], i)
	}
	out := map[int][]byte{}
	for _, op := range slices.Sorted(maps.Keys(h.texts)) {
		pos := op
		if ps := at[h.texts[op]]; len(ps) > 0 {
			pos, at[h.texts[op]] = ps[0], ps[1:]
		}
		if o, ok := h.outs[op]; ok {
			out[pos] = o
		}
	}
	return out
}

// filtered returns the outputs with the lines filter matches left out (as outputs are compared).
func filtered(outs map[int][]byte, filter *regexp.Regexp) map[int][]byte {
	if filter == nil {
		return outs
	}
	for k, o := range outs {
		var b bytes.Buffer
		for _, l := range bytes.SplitAfter(o, []byte("\n")) {
			if len(l) > 0 && !filter.Match(bytes.TrimSuffix(l, []byte("\n"))) {
				b.Write(l)
			}
		}
		outs[k] = b.Bytes()
	}
	return outs
}

// opOutputsOf reads what each operation of the trace at path printed (outputCollector).
func opOutputsOf(path string) (*outputCollector, error) {
	f, err := trace.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	m, err := replay.New(r, replay.Options[struct{}]{})
	if err != nil {
		return nil, err
	}
	h := &outputCollector{ops: &m.Ops}
	if err := m.Run(h); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, err
	}
	return h, nil
}

// agrees reports whether linearization l's prep run (what its operation i, seq[i], printed:
// outs) gives the operations of done it applies the responses they had in the recorded run
// (e.recorded); true when nothing can be told (no prep run, or it could not say).
func (e *explorer) agrees(l linearization, done []int, outs map[int][]byte) bool {
	if outs == nil {
		return true
	}
	for i, op := range l.seq {
		for _, d := range done {
			if d == op && !bytes.Equal(outs[i], e.plan.outputs[op]) {
				return false
			}
		}
	}
	return true
}
