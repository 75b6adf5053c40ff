package pipeline

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// TestVerdictKey: the key changes with every input it names and with nothing else (the order of
// the options), and a program's ELF build id names it.
func TestVerdictKey(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	src := filepath.Join(dir, "p.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	cc := testenv.Tool(t, "gcc")
	if out, err := exec.Command(cc, "-Wl,--build-id=sha1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wl := filepath.Join(dir, "ops.txt")
	os.WriteFile(wl, []byte("set 1 1\n"), 0o644)
	supp := filepath.Join(dir, "supp.txt")
	os.WriteFile(supp, []byte("# none\n"), 0o644)
	base := VerdictInputs{Program: prog, Args: []string{"{pool}"}, Workload: wl, Options: []string{"a=1", "b=2"}, Dir: dir, Files: []string{supp}}
	key := func(in VerdictInputs) string {
		t.Helper()
		k, lines, err := VerdictKey(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 64 || !strings.HasPrefix(lines[1], "program build-id:") {
			t.Fatalf("key %q, lines %q", k, lines)
		}
		return k
	}
	k0 := key(base)
	same := base
	same.Options = []string{"b=2", "a=1"}
	if key(same) != k0 {
		t.Error("the order of the options changed the key")
	}
	changes := map[string]func(*VerdictInputs){
		"args":    func(in *VerdictInputs) { in.Args = []string{"{pool}", "x"} },
		"options": func(in *VerdictInputs) { in.Options = []string{"a=1", "b=3"} },
		"dir":     func(in *VerdictInputs) { in.Dir = "/" },
		"no workload": func(in *VerdictInputs) {
			in.Workload = ""
		},
	}
	for name, change := range changes {
		in := base
		change(&in)
		if name == "no workload" {
			if fi, err := os.Stdin.Stat(); err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeNamedPipe != 0) {
				if _, _, err := VerdictKey(in); err == nil || !strings.Contains(err.Error(), "--workload FILE") {
					t.Errorf("standard input a file or pipe: error %v", err)
				}
				continue
			}
		}
		if key(in) == k0 {
			t.Errorf("changing %s kept the key", name)
		}
	}
	os.WriteFile(wl, []byte("set 1 2\n"), 0o644)
	if key(base) == k0 {
		t.Error("changing the workload's contents kept the key")
	}
	os.WriteFile(supp, []byte("unpersisted-store test.c:1\n"), 0o644)
	k1 := key(base)
	if out, err := exec.Command(cc, "-O2", "-Wl,--build-id=sha1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if key(base) == k1 {
		t.Error("rebuilding the program differently kept the key")
	}
	if _, _, err := VerdictKey(VerdictInputs{Program: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing program gave a key")
	}
}

// TestVerdictStore: a stored report is loaded back with its trace's copy, a corrupt entry is an
// error, and a file scry did not write is never replaced.
func TestVerdictStore(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	tr := filepath.Join(dir, "run.trace")
	os.WriteFile(tr, []byte("SCRYTRC\x00rest"), 0o644)
	key := strings.Repeat("ab", 32)
	rep, _, err := LoadVerdict(cache, key)
	if rep != nil || err != nil {
		t.Fatalf("empty cache: %v, %v", rep, err)
	}
	in := &report.Report{Trace: tr, Events: 42, Findings: []report.Finding{{Kind: report.UnpersistedStore, Class: report.Correctness, Message: "m"}}}
	for i := 0; i < 2; i++ { // the second store replaces scry's own entry
		if err := StoreVerdict(cache, key, []string{"program x"}, in); err != nil {
			t.Fatal(err)
		}
	}
	got, when, err := LoadVerdict(cache, key)
	if err != nil || got == nil || when.IsZero() {
		t.Fatalf("load: %v, %v", got, err)
	}
	if got.Events != 42 || len(got.Findings) != 1 || got.Trace != filepath.Join(cache, key+".trace") {
		t.Errorf("loaded %+v", got)
	}
	if b, _ := os.ReadFile(got.Trace); string(b) != "SCRYTRC\x00rest" {
		t.Errorf("trace copy %q", b)
	}
	os.WriteFile(filepath.Join(cache, key+".json"), []byte("{not json"), 0o644)
	if _, _, err := LoadVerdict(cache, key); err == nil {
		t.Error("a corrupt entry loaded")
	}
	other := strings.Repeat("cd", 32)
	os.WriteFile(filepath.Join(cache, other+".json"), []byte("the user's notes\n"), 0o644)
	if err := StoreVerdict(cache, other, nil, in); err == nil {
		t.Error("a file scry did not write was replaced")
	}
	if b, _ := os.ReadFile(filepath.Join(cache, other+".json")); string(b) != "the user's notes\n" {
		t.Errorf("the user's file is now %q", b)
	}
}

// FuzzBuildIDNote: any note section's bytes give a build id or "", never a panic, and a
// well-formed note gives its descriptor.
func FuzzBuildIDNote(f *testing.F) {
	note := func(desc []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, 4)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, 3)
		return append(append(b, "GNU\x00"...), desc...)
	}
	f.Add(note([]byte{0xde, 0xad, 0xbe, 0xef}))
	f.Add(note(nil))
	f.Add([]byte("short"))
	f.Add(append(note([]byte{1, 2}), 9, 9, 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := buildIDNote(b, binary.LittleEndian)
		if len(id)%2 != 0 {
			t.Fatalf("odd hex %q", id)
		}
		if len(b) >= 16 && binary.LittleEndian.Uint32(b[8:]) != 3 && id != "" {
			t.Fatalf("a note of another type gave %q", id)
		}
	})
	if got := buildIDNote(note([]byte{0xde, 0xad}), binary.LittleEndian); got != "dead" {
		f.Errorf("well-formed note: %q", got)
	}
}
