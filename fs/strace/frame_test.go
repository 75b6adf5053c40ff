package strace

import (
	"fmt"
	"strings"
	"testing"
)

// frameCases are frame lines strace 6.1 (Debian bookworm, built with libunwind and demangling)
// printed under -k, for C, C++ (leveldb's library, templates, lambdas, operator(),
// std::function, the anonymous namespace), Python, a deleted executable and a failed unwind;
// the last cases are the forms strace prints without demangling (mangled names).
var frameCases = []struct {
	line     string
	want     rawFrame
	file, fn string // the location of the frame (every binary here is stripped or absent)
}{
	{
		line: "/usr/lib/x86_64-linux-gnu/libc.so.6(__open64+0x51) [0xf8011]",
		want: rawFrame{Binary: "/usr/lib/x86_64-linux-gnu/libc.so.6", Symbol: "__open64", SymOff: 0x51, Addr: 0xf8011},
		file: "/usr/lib/x86_64-linux-gnu/libc.so.6", fn: "__open64+0x51",
	},
	{
		line: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0(leveldb::Status::ToString[abi:cxx11]() const+0x857) [0x3c367]",
		want: rawFrame{Binary: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", Symbol: "leveldb::Status::ToString[abi:cxx11]() const", SymOff: 0x857, Addr: 0x3c367},
		file: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", fn: "leveldb::Status::ToString[abi:cxx11]() const+0x857",
	},
	{
		line: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0(leveldb::Snapshot::~Snapshot()+0x1755) [0xff15]",
		want: rawFrame{Binary: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", Symbol: "leveldb::Snapshot::~Snapshot()", SymOff: 0x1755, Addr: 0xff15},
		file: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", fn: "leveldb::Snapshot::~Snapshot()+0x1755",
	},
	{
		line: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0(leveldb::DB::Open(leveldb::Options const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, leveldb::DB**)+0x5c) [0x1540c]",
		want: rawFrame{Binary: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", Symbol: "leveldb::DB::Open(leveldb::Options const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, leveldb::DB**)", SymOff: 0x5c, Addr: 0x1540c},
		file: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", fn: "leveldb::DB::Open(leveldb::Options const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, leveldb::DB**)+0x5c",
	},
	{
		line: "/tmp/fsrec/cxx/ldb0((anonymous namespace)::Writer::operator()(char const*)+0x26) [0x2310]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/ldb0", Symbol: "(anonymous namespace)::Writer::operator()(char const*)", SymOff: 0x26, Addr: 0x2310},
		file: "/tmp/fsrec/cxx/ldb0", fn: "(anonymous namespace)::Writer::operator()(char const*)+0x26",
	},
	{
		line: "/tmp/fsrec/cxx/ldb0(std::function<void (int)>::operator()(int) const+0x48) [0x3128]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/ldb0", Symbol: "std::function<void (int)>::operator()(int) const", SymOff: 0x48, Addr: 0x3128},
		file: "/tmp/fsrec/cxx/ldb0", fn: "std::function<void (int)>::operator()(int) const+0x48",
	},
	{
		line: "/tmp/fsrec/cxx/ldb0((anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}::operator()(int) const+0x97) [0x259b]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/ldb0", Symbol: "(anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}::operator()(int) const", SymOff: 0x97, Addr: 0x259b},
		file: "/tmp/fsrec/cxx/ldb0", fn: "(anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}::operator()(int) const+0x97",
	},
	{
		line: "/tmp/fsrec/cxx/ldb0(std::_Function_handler<void (int), (anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)+0x37) [0x275c]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/ldb0", Symbol: "std::_Function_handler<void (int), (anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)", SymOff: 0x37, Addr: 0x275c},
		file: "/tmp/fsrec/cxx/ldb0", fn: "std::_Function_handler<void (int), (anonymous namespace)::Writer::put<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >(leveldb::DB*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)+0x37",
	},
	{
		line: "/usr/bin/python3.11(_PyEval_EvalFrameDefault+0x48d1) [0x12f9c1]",
		want: rawFrame{Binary: "/usr/bin/python3.11", Symbol: "_PyEval_EvalFrameDefault", SymOff: 0x48d1, Addr: 0x12f9c1},
		file: "/usr/bin/python3.11", fn: "_PyEval_EvalFrameDefault+0x48d1",
	},
	{ // no symbol: the file offset is the function
		line: "/usr/bin/dash() [0xd5aa]",
		want: rawFrame{Binary: "/usr/bin/dash", Addr: 0xd5aa},
		file: "/usr/bin/dash", fn: "0xd5aa",
	},
	{ // no symbol, as strace prints it after execve
		line: "/usr/bin/dash(+0x0) [0x79a0]",
		want: rawFrame{Binary: "/usr/bin/dash", Addr: 0x79a0},
		file: "/usr/bin/dash", fn: "0x79a0",
	},
	{ // the executable deleted while it ran
		line: "/tmp/fsrec/cxx/del1 (deleted)() [0x11cf]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/del1 (deleted)", Addr: 0x11cf},
		file: "/tmp/fsrec/cxx/del1 (deleted)", fn: "0x11cf",
	},
	{
		line: "/tmp/fsrec/cxx/del1 (deleted)(main+0x26) [0x11cf]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/del1 (deleted)", Symbol: "main", SymOff: 0x26, Addr: 0x11cf},
		file: "/tmp/fsrec/cxx/del1 (deleted)", fn: "main+0x26",
	},
	{ // strace could not unwind further
		line: "unexpected_backtracing_error [0x7ffd11495ab8]",
		want: rawFrame{Binary: "unexpected_backtracing_error", Addr: 0x7ffd11495ab8},
		file: "unexpected_backtracing_error", fn: "0x7ffd11495ab8",
	},
	{ // mangled: strace built without demangling
		line: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0(_ZNK7leveldb6Status8ToStringB5cxx11Ev+0x857) [0x3c367]",
		want: rawFrame{Binary: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", Symbol: "leveldb::Status::ToString[abi:cxx11]() const", SymOff: 0x857, Addr: 0x3c367},
		file: "/usr/lib/x86_64-linux-gnu/libleveldb.so.1.23.0", fn: "leveldb::Status::ToString[abi:cxx11]() const+0x857",
	},
	{
		line: "/tmp/fsrec/cxx/ldb0(_ZNKSt8functionIFviEEclEi+0x48) [0x3128]",
		want: rawFrame{Binary: "/tmp/fsrec/cxx/ldb0", Symbol: "std::function<void (int)>::operator()(int) const", SymOff: 0x48, Addr: 0x3128},
		file: "/tmp/fsrec/cxx/ldb0", fn: "std::function<void (int)>::operator()(int) const+0x48",
	},
	{ // not a valid mangled name: kept as printed
		line: "/lib/x(_Zfoo+0x1) [0x2]",
		want: rawFrame{Binary: "/lib/x", Symbol: "_Zfoo", SymOff: 1, Addr: 2},
		file: "/lib/x", fn: "_Zfoo+0x1",
	},
}

func TestParseFrame(t *testing.T) {
	sym := newSymbolizer()
	for _, c := range frameCases {
		got := parseFrame(c.line)
		if got != c.want {
			t.Errorf("parseFrame(%q)\n got %+v\nwant %+v", c.line, got, c.want)
			continue
		}
		loc := sym.locate(got, true)
		if loc.File != c.file || loc.Function != c.fn || loc.Line != 0 {
			t.Errorf("locate(%q) = file %q, function %q, line %d; want file %q, function %q", c.line, loc.File, loc.Function, loc.Line, c.file, c.fn)
		}
	}
}

// TestParseStraceFrames: frames are attached to the call printed before them, whole.
func TestParseStraceFrames(t *testing.T) {
	var lines []string
	lines = append(lines, `27942 openat(AT_FDCWD, "\x64\x62\x2f\x4c\x4f\x47", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0644) = 3`)
	for _, c := range frameCases {
		lines = append(lines, " > "+c.line)
	}
	var calls []*straceCall
	if err := parseStrace(strings.NewReader(strings.Join(lines, "\n")+"\n"), func(c *straceCall) error { calls = append(calls, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || len(calls[0].Frames) != len(frameCases) {
		t.Fatalf("got %d calls, want 1 with %d frames", len(calls), len(frameCases))
	}
	for i, c := range frameCases {
		if calls[0].Frames[i] != c.want {
			t.Errorf("frame %d: got %+v, want %+v", i, calls[0].Frames[i], c.want)
		}
	}
}

// FuzzParseFrame: parseFrame never panics, and a frame strace prints for a binary path without
// parentheses and a symbol whose parentheses balance (every demangled C++ name) reads back
// whole.
func FuzzParseFrame(f *testing.F) {
	for _, c := range frameCases {
		f.Add(c.line, c.want.Binary, c.want.Symbol, c.want.SymOff, c.want.Addr)
	}
	f.Fuzz(func(t *testing.T, line, bin, sym string, off, addr uint64) {
		_ = parseFrame(line)
		_ = parseFrame(" > " + line)
		if bin == "" || strings.ContainsAny(bin, "()\n") || bin != strings.TrimSpace(bin) || strings.Contains(bin, " [0x") ||
			!balanced(sym) || strings.Contains(sym, "+0x") || strings.Contains(sym, " [0x") || strings.HasPrefix(sym, "_Z") || strings.HasPrefix(sym, "_R") ||
			sym != strings.TrimSpace(sym) {
			return
		}
		line = fmt.Sprintf("%s(%s+%#x) [%#x]", bin, sym, off, addr)
		want := rawFrame{Binary: bin, Symbol: sym, SymOff: off, Addr: addr}
		if got := parseFrame(line); got != want {
			t.Fatalf("parseFrame(%q) = %+v, want %+v", line, got, want)
		}
	})
}

// balanced reports whether s's parentheses balance.
func balanced(s string) bool {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			d++
		case ')':
			d--
			if d < 0 {
				return false
			}
		}
	}
	return d == 0
}
