package strace

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// encodeMarker is the shim's encoding (native/fsshim/fsshim.c, emit).
func encodeMarker(m marker) []byte {
	b := make([]byte, markerHeader, markerHeader+len(m.Data))
	copy(b, markerMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], m.Kind)
	le.PutUint32(b[12:], m.PID)
	le.PutUint64(b[16:], m.Serial)
	le.PutUint64(b[24:], m.A)
	le.PutUint64(b[32:], m.B)
	return append(b, m.Data...)
}

func TestDecodeMarker(t *testing.T) {
	data := encodeMarker(marker{Kind: markData, PID: 7, Serial: 7<<32 | 1, A: 4096, B: 3, Data: []byte("abc")})
	for _, tc := range []struct {
		name    string
		in      []byte
		ok, err bool
		want    marker
	}{
		{"data", data, true, false, marker{Kind: markData, PID: 7, Serial: 7<<32 | 1, A: 4096, B: 3, Data: []byte("abc")}},
		{"hello", encodeMarker(marker{Kind: markHello, PID: 9}), true, false, marker{Kind: markHello, PID: 9}},
		{"sync", encodeMarker(marker{Kind: markSync, Serial: 2, A: 0, B: 8192}), true, false, marker{Kind: markSync, Serial: 2, B: 8192}},
		{"not a marker", []byte("hello world"), false, false, marker{}},
		{"short header", data[:20], true, true, marker{}},
		{"data shorter than said", data[:len(data)-1], true, true, marker{}},
		{"data on a map marker", append(encodeMarker(marker{Kind: markMap}), 'x'), true, true, marker{}},
		{"unknown kind", encodeMarker(marker{Kind: 99}), true, true, marker{}},
		{"range overflows", encodeMarker(marker{Kind: markData, A: ^uint64(0), B: 1, Data: []byte("x")}), true, true, marker{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok, err := decodeMarker(tc.in)
			if ok != tc.ok || (err != nil) != tc.err {
				t.Fatalf("ok %v, err %v; want ok %v, error %v", ok, err, tc.ok, tc.err)
			}
			if ok && err == nil && (m.Kind != tc.want.Kind || m.PID != tc.want.PID || m.Serial != tc.want.Serial || m.A != tc.want.A ||
				m.B != tc.want.B || !bytes.Equal(m.Data, tc.want.Data)) {
				t.Errorf("decoded %+v, want %+v", m, tc.want)
			}
		})
	}
}

// FuzzDecodeMarker: any buffer decodes without panicking, and a marker that decodes encodes
// back to the same bytes.
func FuzzDecodeMarker(f *testing.F) {
	f.Add(encodeMarker(marker{Kind: markData, Serial: 1, A: 8192, B: 2, Data: []byte("hi")}))
	f.Add(encodeMarker(marker{Kind: markMap, Serial: 1, A: 0x7f0000000000, B: 8192}))
	f.Add([]byte(markerMagic))
	f.Add([]byte("write"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok, err := decodeMarker(b)
		if !ok || err != nil {
			return
		}
		if got := encodeMarker(m); !bytes.Equal(got, b) {
			t.Errorf("decoded %+v re-encodes to %x, not %x", m, got, b)
		}
	})
}

// TestShimEnv: the shim goes first in LD_PRELOAD, ahead of the last LD_PRELOAD the environment
// sets; an install without the shim adds nothing.
func TestShimEnv(t *testing.T) {
	home := t.TempDir()
	lib := filepath.Join(home, "lib", "scry")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCRY_HOME", home)
	if got := shimEnv(nil); got != nil {
		t.Errorf("without the shim: %q, want nothing", got)
	}
	shim := filepath.Join(lib, ShimName)
	if err := os.WriteFile(shim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "LD_PRELOAD=" + shim},
		{[]string{"LD_PRELOAD="}, "LD_PRELOAD=" + shim},
		{[]string{"LD_PRELOAD=/a.so", "X=1", "LD_PRELOAD=/b.so"}, "LD_PRELOAD=" + shim + ":/b.so"},
	} {
		if got := shimEnv(tc.env); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("shimEnv(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
