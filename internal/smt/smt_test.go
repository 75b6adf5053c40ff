package smt

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"sat", []string{"sat"}, false},
		{"((x true) (y (- 3)))", []string{"((x true) (y (- 3)))"}, false},
		{`(error "line 1 column 2: unknown ""x""")`, []string{`(error "line 1 column 2: unknown ""x""")`}, false},
		{"; comment\n unsat ()", []string{"unsat", "()"}, false},
		{"(|a b| 1)", []string{"(|a b| 1)"}, false},
		{"(a", nil, true},
		{")", nil, true},
		{`"abc`, nil, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("Parse(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		var strs []string
		for _, s := range got {
			strs = append(strs, s.String())
		}
		if strings.Join(strs, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, strs, tc.want)
		}
	}
}

func TestValues(t *testing.T) {
	s, _ := Parse("(- 12) 7 true false")
	if v, err := s[0].Int(); err != nil || v != -12 {
		t.Errorf("Int((- 12)) = %d, %v", v, err)
	}
	if v, err := s[1].Int(); err != nil || v != 7 {
		t.Errorf("Int(7) = %d, %v", v, err)
	}
	if v, err := s[2].Bool(); err != nil || !v {
		t.Errorf("Bool(true) = %v, %v", v, err)
	}
	if _, err := s[2].Int(); err == nil {
		t.Errorf("Int(true) succeeded")
	}
}

func FuzzSexp(f *testing.F) {
	for _, s := range []string{"sat", "((x true) (y (- 3)))", `(error "a ""b""")`, "(|x| ; c\n 1)", "((", "\"", "|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Parse(%q): unexpected error kind %v", in, err)
			}
			return
		}
		// What was read prints back into text that reads the same.
		var b strings.Builder
		for _, s := range got {
			b.WriteString(s.String())
			b.WriteByte(' ')
		}
		again, err := Parse(b.String())
		if err != nil || len(again) != len(got) {
			t.Fatalf("Parse(%q) printed %q, which reads back as %d expressions, %v", in, b.String(), len(again), err)
		}
		for i := range got {
			if again[i].String() != got[i].String() {
				t.Fatalf("round trip of %q: %s != %s", in, again[i], got[i])
			}
		}
	})
}

func solver(t *testing.T) *Solver {
	t.Helper()
	s, err := Start(context.Background(), Options{})
	if errors.Is(err, ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSolver(t *testing.T) {
	s := solver(t)
	s.Send("(declare-const x Int)", "(declare-const b Bool)", "(assert (and (> x 2) (< x 4)))", "(assert (=> b (> x 5)))")
	if r, err := s.Check(); err != nil || r != Sat {
		t.Fatalf("Check = %v, %v; want sat", r, err)
	}
	xs, err := s.Ints("x", "(- x 10)")
	if err != nil || xs[0] != 3 || xs[1] != -7 {
		t.Fatalf("Ints = %v, %v", xs, err)
	}
	bs, err := s.Bools("b")
	if err != nil || bs[0] {
		t.Fatalf("Bools = %v, %v", bs, err)
	}
	if r, err := s.CheckAssuming("b"); err != nil || r != Unsat {
		t.Fatalf("CheckAssuming(b) = %v, %v; want unsat", r, err)
	}
	s.Push()
	s.Send("(assert (= x 5))")
	if r, _ := s.Check(); r != Unsat {
		t.Fatalf("after push: %v, want unsat", r)
	}
	s.Pop()
	if r, _ := s.Check(); r != Sat {
		t.Fatalf("after pop: %v, want sat", r)
	}
	s.Send("(assert (> y 1))")
	if _, err := s.Check(); err == nil || !strings.Contains(err.Error(), "y") {
		t.Fatalf("undeclared y: error %v", err)
	}
}

func TestSolverCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{})
	if errors.Is(err, ErrNotInstalled) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel()
	s.Send("(declare-const x Int)")
	// The cancellation kills z3 from another goroutine: the checks fail from then on.
	testenv.WaitFor(t, func() bool {
		_, err := s.Check()
		return err != nil
	}, time.Minute, "checks to fail after the context was cancelled")
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{And(), "true"}, {And("a"), "a"}, {And("a", "true", "b"), "(and a b)"},
		{Or("false", "false"), "false"}, {Not("true"), "false"}, {Implies("true", "b"), "b"},
		{Ite("c", "1", "1"), "1"}, {Lt("1", "2"), "true"}, {Le("3", "(- 2)"), "false"}, {Lt("x", "2"), "(< x 2)"},
		{Int(-4), "(- 4)"}, {Quote("pt_3"), "pt_3"}, {Quote("a b"), "|a b|"}, {Quote("3x"), "|3x|"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
