package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// unit is a .debug_info compilation unit header of version v (32-bit DWARF, or 64-bit when
// dwarf64), followed by n bytes of body.
func unit(v int, n int, dwarf64 bool) []byte {
	body := make([]byte, 2+n)
	body[0], body[1] = byte(v), byte(v>>8)
	if dwarf64 {
		h := []byte{0xff, 0xff, 0xff, 0xff, byte(len(body)), 0, 0, 0, 0, 0, 0, 0}
		return append(h, body...)
	}
	return append([]byte{byte(len(body)), 0, 0, 0}, body...)
}

func TestMaxUnitVersion(t *testing.T) {
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"empty", nil, 0},
		{"one DWARF 4 unit", unit(4, 10, false), 4},
		{"DWARF 4 then 5", cat(unit(4, 10, false), unit(5, 3, false)), 5},
		{"64-bit DWARF 5", unit(5, 7, true), 5},
		{"5 then 4", cat(unit(5, 1, false), unit(4, 1, false)), 5},
		{"truncated header", []byte{10, 0, 0}, 0},
		{"length past the end", append([]byte{200, 0, 0, 0}, 4, 0), 4},
	}
	for _, tt := range tests {
		if got := maxUnitVersion(tt.in); got != tt.want {
			t.Errorf("%s: maxUnitVersion = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestCheckBinaryNotELF(t *testing.T) {
	// A script or any file that is not ELF is left to Valgrind: no error.
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckBinary(p); err != nil {
		t.Errorf("CheckBinary(script) = %v, want nil", err)
	}
}

func TestBlackBoxToolMissing(t *testing.T) {
	t.Setenv("SCRY_VALGRIND_LIB", t.TempDir())
	_, err := toolDir()
	if !errors.Is(err, ErrBlackBox) {
		t.Fatalf("toolDir with an empty SCRY_VALGRIND_LIB: %v, want ErrBlackBox", err)
	}
}

func TestBlackBoxGlobs(t *testing.T) {
	for _, tt := range []struct {
		glob string
		ok   bool
	}{
		{"/tmp/*.pool", true},
		{"/tmp/p?.pool", true},
		{"/tmp/[ab].pool", false},
		{`/tmp/\*.pool`, false},
		{"/tmp/a:b.pool", false},
	} {
		_, err := newBlackBox("/bin/true", filepath.Join(t.TempDir(), "t"), Options{PMGlobs: []string{tt.glob}, Args: []string{"/bin/true"}})
		if rejected := errors.Is(err, ErrBlackBox) && bytes.Contains([]byte(err.Error()), []byte("--pm")); rejected == tt.ok {
			t.Errorf("--pm %q: err %v, want accepted %v", tt.glob, err, tt.ok)
		}
	}
}
