package repair

import (
	"strings"
	"testing"
)

const sample = `#include <stdio.h>
#define CLFLUSH(p) asm volatile("clflush %0" \
	: "+m"(*(volatile char *)(p)))
int main(int argc, char *argv[])
{
	r->data = 42; // want "x"
	*(volatile uint64_t *)h->name = 0x6f; /* "hello" */
	if (argc > 1)
		acct[a].balance -= n;
	else
		x++;
	TX_BEGIN(pop) {
		TX_ADD_FIELD(root, from);
		D_RW(root)->to += 10;
	} TX_END
	pmemobj_persist(pop, &D_RW(root)->to,
			sizeof(D_RW(root)->to));
	for (i = 0; i < n; i++) { p[i] = 0; q = "a;b"; }
	a = 1; b = 2;
	do ++count; while (0);
	switch (k) {
	case 1:
		break;
	}
	return 0;
}
`

func TestStatements(t *testing.T) {
	f := parseSource("s.c", []byte(sample))
	for _, tc := range []struct {
		line, col       int
		first, last     int // lines
		kind            stmtKind
		braceless, owns bool
		lvalue          string // "" when not an assignment operator
	}{
		{6, 10, 6, 6, sSimple, false, true, "r->data"},
		{7, 32, 7, 7, sSimple, false, true, "*(volatile uint64_t *)h->name"},
		{8, 2, 8, 11, sControl, false, true, ""},
		{9, 19, 9, 9, sSimple, true, true, "acct[a].balance"},
		{11, 4, 11, 11, sSimple, true, true, "x"},
		{13, 3, 13, 13, sSimple, false, true, ""},
		{14, 18, 14, 14, sSimple, false, true, "D_RW(root)->to"},
		{15, 4, 12, 15, sMacro, false, true, ""},
		{17, 4, 16, 17, sSimple, false, true, ""},
		{18, 33, 18, 18, sSimple, false, false, "p[i]"},
		{19, 4, 19, 19, sSimple, false, false, "a"},
		{20, 5, 20, 20, sSimple, true, false, "count"},
		{22, 2, 22, 22, sLabel, false, true, ""},
	} {
		s := f.stmtAt(tc.line, tc.col)
		if s == nil {
			t.Errorf("%d:%d: no statement", tc.line, tc.col)
			continue
		}
		if f.firstLine(s) != tc.first || f.lastLine(s) != tc.last || s.kind != tc.kind || s.braceless != tc.braceless || f.owns(s) != tc.owns {
			t.Errorf("%d:%d: statement %s lines %d-%d kind %d braceless %v owns %v; want %d-%d kind %d braceless %v owns %v",
				tc.line, tc.col, f.describe(s), f.firstLine(s), f.lastLine(s), s.kind, s.braceless, f.owns(s), tc.first, tc.last, tc.kind, tc.braceless, tc.owns)
		}
		lv, ok := f.lvalueAt(tc.line, tc.col)
		if ok != (tc.lvalue != "") || lv != tc.lvalue {
			t.Errorf("%d:%d: lvalue %q %v, want %q", tc.line, tc.col, lv, ok, tc.lvalue)
		}
	}
	name, args, ok := f.callArgs(16, 2)
	if !ok || name != "pmemobj_persist" || strings.Join(args, "|") != "pop|&D_RW(root)->to|sizeof(D_RW(root)->to)" {
		t.Errorf("callArgs = %q %q %v", name, args, ok)
	}
	if f.lines() != 26 || f.lineText(6) != "\tr->data = 42; // want \"x\"" || f.indent(9) != "\t\t" {
		t.Errorf("lines %d, line 6 %q, indent %q", f.lines(), f.lineText(6), f.indent(9))
	}
}

// TestScopeBodies: the bodies of classes, structs and namespaces are scopes, so the statements
// of a member function defined in a class are top-level bodies' statements, as a C function's
// are; an initializer stays a block.
func TestScopeBodies(t *testing.T) {
	const src = `namespace kv {
template <typename T> struct plog : base {
	std::atomic<uint64_t> count;
	bool append(const T &v) const
	{
		++count;
		return true;
	}
};
}
struct rec r = { 1, 2 };
`
	f := parseSource("s.cpp", []byte(src))
	s := f.stmtAt(6, 3)
	if s == nil || f.firstLine(s) != 6 || f.lastLine(s) != 6 {
		t.Fatalf("6:3: statement %v, want the increment on line 6", s)
	}
	body := s.parent
	if body == nil || body.kind != sCompound || f.firstLine(body) != 5 || f.lastLine(body) != 8 || body.parent != nil {
		t.Fatalf("the increment's block is not the member function's top-level body (lines 5-8): %+v", body)
	}
	if lv, ok := f.lvalueAt(6, 3); !ok || lv != "count" {
		t.Errorf("lvalue %q %v, want count", lv, ok)
	}
	if len(f.top) != 2 || f.firstLine(f.top[1]) != 11 {
		t.Errorf("%d top-level blocks, want the member function's body and the initializer", len(f.top))
	}
}
