// Package smt drives the z3 SMT solver (Debian's package z3) through its SMT-LIB 2 text
// interface over a pipe: one long-lived `z3 -in` process per Solver, fed declarations and
// assertions, asked (check-sat), (check-sat-assuming ...) and (get-value ...), with push and pop
// for the incremental queries of a counterexample-guided search. It knows nothing of
// persistency: package px86 writes the x86 persistency rules as SMT-LIB constraints and package
// repair builds its repair queries on them (docs/repair.md says why a pipe to the z3 binary and
// not a cgo binding).
//
// The process runs in its own process group and is killed when the Solver is closed or its
// context is cancelled; a query that exceeds Options.Timeout answers Unknown.
package smt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Result is the answer of a satisfiability check.
type Result int

// Results of Check.
const (
	Unknown Result = iota
	Sat
	Unsat
)

func (r Result) String() string {
	switch r {
	case Sat:
		return "sat"
	case Unsat:
		return "unsat"
	}
	return "unknown"
}

// Options configure a Solver.
type Options struct {
	// Path is the z3 binary ("" : z3 from PATH).
	Path string
	// Timeout bounds each check (0: none); a check that runs out answers Unknown.
	Timeout time.Duration
	// Log, if set, receives everything sent to the solver and every answer (as comments), a
	// transcript that `z3 FILE` replays.
	Log io.Writer
}

// Solver is one running z3 process. It is not safe for concurrent use.
type Solver struct {
	cmd    *osexec.Cmd
	in     io.WriteCloser
	buf    bytes.Buffer // commands not sent yet
	out    *Reader
	stderr *bytes.Buffer
	log    io.Writer
	stop   func() bool
	mu     sync.Mutex
	closed bool
	// Checks counts the satisfiability checks made.
	Checks int
}

// ErrNotInstalled is wrapped by Start's error when the z3 binary cannot be found.
var ErrNotInstalled = errors.New("z3 is not installed (Debian package z3: apt-get install z3)")

// Start starts z3 reading SMT-LIB 2 from a pipe. Errors: z3 is not installed (ErrNotInstalled)
// or cannot start.
func Start(ctx context.Context, o Options) (*Solver, error) {
	path := o.Path
	if path == "" {
		p, err := osexec.LookPath("z3")
		if err != nil {
			return nil, ErrNotInstalled
		}
		path = p
	}
	cmd := osexec.Command(path, "-in", "-smt2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Solver{cmd: cmd, in: in, out: NewReader(out), stderr: &bytes.Buffer{}, log: o.Log}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		if errors.Is(err, osexec.ErrNotFound) {
			return nil, ErrNotInstalled
		}
		return nil, fmt.Errorf("starting z3: %w", err)
	}
	s.stop = context.AfterFunc(ctx, s.kill)
	s.Send("(set-option :print-success false)", "(set-option :produce-models true)")
	if o.Timeout > 0 {
		s.Send(fmt.Sprintf("(set-option :timeout %d)", o.Timeout.Milliseconds()))
	}
	return s, nil
}

func (s *Solver) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd.Process != nil && !s.closed {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Send queues commands (declarations, assertions, push, pop, options: commands that answer
// nothing); they reach the solver with the next query. A malformed command makes that query
// fail with the solver's error message.
func (s *Solver) Send(cmds ...string) {
	for _, c := range cmds {
		s.buf.WriteString(c)
		s.buf.WriteByte('\n')
	}
}

// Push opens an assertion scope; Pop closes it, dropping what was declared and asserted in it.
func (s *Solver) Push() { s.Send("(push 1)") }

// Pop closes the innermost scope opened by Push.
func (s *Solver) Pop() { s.Send("(pop 1)") }

// flush sends the queued commands.
func (s *Solver) flush() error {
	if s.log != nil {
		s.log.Write(s.buf.Bytes())
	}
	_, err := s.in.Write(s.buf.Bytes())
	s.buf.Reset()
	if err != nil {
		return s.failed(err)
	}
	return nil
}

// failed turns an I/O error with the process into an error quoting its standard error.
func (s *Solver) failed(err error) error {
	msg := strings.TrimSpace(s.stderr.String())
	if msg != "" {
		return fmt.Errorf("z3 failed: %v: %s", err, msg)
	}
	return fmt.Errorf("z3 failed: %w", err)
}

// answer reads the next S-expression the solver prints; an (error "...") answer becomes an
// error.
func (s *Solver) answer() (Sexp, error) {
	e, err := s.out.Next()
	if err != nil {
		return e, s.failed(err)
	}
	if s.log != nil {
		fmt.Fprintf(s.log, "; => %s\n", e)
	}
	if e.IsList && len(e.List) >= 1 && !e.List[0].IsList && e.List[0].Atom == "error" {
		msg := ""
		if len(e.List) > 1 {
			msg = e.List[1].Atom
		}
		return e, fmt.Errorf("z3: %s", msg)
	}
	return e, nil
}

// Check asks whether the assertions are satisfiable. Errors: a command sent before it was
// malformed (the solver's message), or the process died.
func (s *Solver) Check() (Result, error) {
	return s.check("(check-sat)")
}

// CheckAssuming asks whether the assertions are satisfiable together with the Boolean literals
// lits (names or (not name)), without asserting them.
func (s *Solver) CheckAssuming(lits ...string) (Result, error) {
	return s.check("(check-sat-assuming (" + strings.Join(lits, " ") + "))")
}

func (s *Solver) check(cmd string) (Result, error) {
	s.Checks++
	s.Send(cmd)
	if err := s.flush(); err != nil {
		return Unknown, err
	}
	for {
		e, err := s.answer()
		if err != nil {
			return Unknown, err
		}
		if e.IsList {
			continue // an answer of an earlier command (such as echo), skipped
		}
		switch e.Atom {
		case "sat":
			return Sat, nil
		case "unsat":
			return Unsat, nil
		case "unknown", "timeout":
			return Unknown, nil
		}
	}
}

// Values returns the values of terms in the model of the last satisfiable check, in order.
// Errors: no model (the last check was not sat), a term the solver rejects.
func (s *Solver) Values(terms ...string) ([]Sexp, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	s.Send("(get-value (" + strings.Join(terms, " ") + "))")
	if err := s.flush(); err != nil {
		return nil, err
	}
	e, err := s.answer()
	if err != nil {
		return nil, err
	}
	if !e.IsList || len(e.List) != len(terms) {
		return nil, fmt.Errorf("z3: unexpected answer to get-value: %s", e)
	}
	vals := make([]Sexp, len(terms))
	for i, p := range e.List {
		if !p.IsList || len(p.List) != 2 {
			return nil, fmt.Errorf("z3: unexpected pair in get-value: %s", p)
		}
		vals[i] = p.List[1]
	}
	return vals, nil
}

// Bools returns the values of Boolean terms in the model of the last satisfiable check.
func (s *Solver) Bools(terms ...string) ([]bool, error) {
	vals, err := s.Values(terms...)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(vals))
	for i, v := range vals {
		if out[i], err = v.Bool(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Ints returns the values of integer terms in the model of the last satisfiable check.
func (s *Solver) Ints(terms ...string) ([]int64, error) {
	vals, err := s.Values(terms...)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(vals))
	for i, v := range vals {
		if out[i], err = v.Int(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Close ends the solver process.
func (s *Solver) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.in.Write([]byte("(exit)\n"))
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	return nil
}

// Quote returns name as an SMT-LIB symbol: as is when it is a simple symbol, else between bars.
func Quote(name string) string {
	simple := name != ""
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("~!@$%^&*_-+=<>.?/", c) || i > 0 && c >= '0' && c <= '9'
		if !ok {
			simple = false
			break
		}
	}
	if simple {
		return name
	}
	return "|" + strings.ReplaceAll(name, "|", "_") + "|"
}

// Helpers that build SMT-LIB terms.

// And returns the conjunction of terms ("true" for none).
func And(terms ...string) string { return nary("and", "true", terms) }

// Or returns the disjunction of terms ("false" for none).
func Or(terms ...string) string { return nary("or", "false", terms) }

// Sum returns the sum of integer terms ("0" for none).
func Sum(terms ...string) string { return nary("+", "0", terms) }

func nary(op, unit string, terms []string) string {
	var keep []string
	for _, t := range terms {
		if t != unit {
			keep = append(keep, t)
		}
	}
	switch len(keep) {
	case 0:
		return unit
	case 1:
		return keep[0]
	}
	return "(" + op + " " + strings.Join(keep, " ") + ")"
}

// Not returns the negation of t.
func Not(t string) string {
	switch t {
	case "true":
		return "false"
	case "false":
		return "true"
	}
	return "(not " + t + ")"
}

// Implies returns (=> a b).
func Implies(a, b string) string {
	switch {
	case a == "true":
		return b
	case a == "false", b == "true":
		return "true"
	}
	return "(=> " + a + " " + b + ")"
}

// Ite returns (ite c a b).
func Ite(c, a, b string) string {
	switch {
	case c == "true" || a == b:
		return a
	case c == "false":
		return b
	}
	return "(ite " + c + " " + a + " " + b + ")"
}

// Int returns the integer literal of v (negative numbers as (- n)).
func Int(v int64) string {
	if v < 0 {
		return fmt.Sprintf("(- %d)", -v)
	}
	return fmt.Sprint(v)
}

// Bin returns (op a b).
func Bin(op, a, b string) string { return "(" + op + " " + a + " " + b + ")" }

// Lt returns (< a b), folded to true or false when both are integer literals.
func Lt(a, b string) string { return cmpFold("<", a, b) }

// Le returns (<= a b), folded like Lt.
func Le(a, b string) string { return cmpFold("<=", a, b) }

func cmpFold(op, a, b string) string {
	x, ok1 := litInt(a)
	y, ok2 := litInt(b)
	if ok1 && ok2 {
		r := x < y
		if op == "<=" {
			r = x <= y
		}
		if r {
			return "true"
		}
		return "false"
	}
	return Bin(op, a, b)
}

func litInt(t string) (int64, bool) {
	var v int64
	if _, err := fmt.Sscanf(t, "%d", &v); err == nil && fmt.Sprint(v) == t {
		return v, true
	}
	if strings.HasPrefix(t, "(- ") && strings.HasSuffix(t, ")") {
		if _, err := fmt.Sscanf(t[3:len(t)-1], "%d", &v); err == nil {
			return -v, true
		}
	}
	return 0, false
}
