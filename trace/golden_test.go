package trace

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./trace -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the code produces (run go test ./trace -update if the change is intended)\n got:\n%s\nwant:\n%s",
			path, got, want)
	}
}

// TestGolden checks that the Writer's encoding of the sample trace is byte-for-byte
// testdata/small.trace, and that its dump and statistics are testdata/small.dump and
// testdata/small.stats.
func TestGolden(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	golden(t, "small.trace", data)

	r, err := Open(filepath.Join("testdata", "small.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	if err := Dump(&out, r, DumpOptions{SiteTable: true, Stacks: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "small.dump", out.Bytes())

	r2, _ := NewReader(bytes.NewReader(data))
	st, err := ComputeStats(r2)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := st.Write(&out); err != nil {
		t.Fatal(err)
	}
	golden(t, "small.stats", out.Bytes())
}

func TestDumpTruncated(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	r, _ := NewReader(bytes.NewReader(data[:len(data)-2])) // END cut in the middle
	var out bytes.Buffer
	err := Dump(&out, r, DumpOptions{})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "# truncated: ") {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(lines[len(lines)-2], "SCHEDULE") {
		t.Errorf("line before the truncation: %q", lines[len(lines)-2])
	}
}

func TestDumpLimit(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	r, _ := NewReader(bytes.NewReader(data))
	var out bytes.Buffer
	if err := Dump(&out, r, DumpOptions{Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 4 {
		t.Errorf("%d lines, want 4:\n%s", n, out.String())
	}
}

func TestStatsTruncated(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	r, _ := NewReader(bytes.NewReader(data[:len(data)-3]))
	st, err := ComputeStats(r)
	if !errors.Is(err, ErrTruncated) || st == nil {
		t.Fatalf("stats %v, error %v", st, err)
	}
	if st.Complete || st.PerKind[KindStore] != 2 || st.BytesStored != 48+4 {
		t.Errorf("stats %+v", st)
	}
}

func TestNames(t *testing.T) {
	for k := Kind(0); k < 0x80; k++ {
		if s := k.String(); k.Valid() == strings.HasPrefix(s, "KIND(") {
			t.Errorf("Kind(%#x) = %q, Valid %v", uint8(k), s, k.Valid())
		}
	}
	if FlushCLWB.String() != "clwb" || FenceLocked.String() != "locked" || SiteNTStore.String() != "nt-store" ||
		FlushKind(9).String() != "flush(9)" || EndSignal.String() != "signal" {
		t.Error("names")
	}
}
