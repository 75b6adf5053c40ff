package pipeline

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/report"
)

// VerdictInputs is what a check's verdict depends on, as far as scry can name it: the key of the
// verdict cache (--verdict-cache, docs/ci.md). A check whose inputs are all equal to an earlier
// one's reuses its report instead of running: an unchanged shard of a CI job is skipped.
type VerdictInputs struct {
	// Program is the program's path (resolved on $PATH like the recording resolves it) and Args
	// its arguments ({pool} and {port} as written).
	Program string
	Args    []string
	// Workload is the workload file ("": none; the program's standard input must then not be a
	// file or pipe scry cannot read twice).
	Workload string
	// Options are the check's flags as NAME=VALUE, those that do not change the verdict left out
	// (where the report goes and in which format).
	Options []string
	// Dir is the working directory the program runs in.
	Dir string
	// Files are more files whose contents the verdict depends on (--suppressions).
	Files []string
}

// verdictEnv are the prefixes of the environment variables of scry's own environment, which
// the program inherits, that the key covers: PMDK's, scry's runtime's, the dynamic loader's, the
// C library's tunables and qemu's library root.
var verdictEnv = []string{"PMEM_", "PMEMOBJ_", "SCRY_", "LD_", "GLIBC_TUNABLES=", "QEMU_"}

// VerdictKey returns the cache key of in (64 hexadecimal digits) and the lines it hashed, which
// name every input: scry's own executable (its SHA-256: another scry may judge otherwise), the
// program (its ELF build id, else the SHA-256 of the file), its arguments, the workload's
// SHA-256, the options, the SHA-256 of in.Files, the working directory and the environment
// variables of verdictEnv. It does not cover the shared libraries the program loads (a libpmem
// upgrade keeps the key), nor files the program or a --client command reads besides its pool and
// workload. Errors: a program or workload that
// cannot be read, or a standard input that is a file or pipe (with no workload).
func VerdictKey(in VerdictInputs) (key string, lines []string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("--verdict-cache: scry's own executable: %w", err)
	}
	selfSum, err := fileSum(self)
	if err != nil {
		return "", nil, fmt.Errorf("--verdict-cache: scry's own executable: %w", err)
	}
	prog := in.Program
	if !strings.Contains(prog, "/") {
		if prog, err = osexec.LookPath(prog); err != nil {
			return "", nil, fmt.Errorf("--verdict-cache: program %q: %w", in.Program, err)
		}
	}
	id, err := programID(prog)
	if err != nil {
		return "", nil, fmt.Errorf("--verdict-cache: program %s: %w", prog, err)
	}
	lines = []string{"scry sha256:" + selfSum, "program " + id, "args " + strings.Join(in.Args, "\x00")}
	switch {
	case in.Workload != "":
		sum, err := fileSum(in.Workload)
		if err != nil {
			return "", nil, fmt.Errorf("--verdict-cache: --workload %s: %w", in.Workload, err)
		}
		lines = append(lines, "workload sha256:"+sum)
	default:
		if fi, err := os.Stdin.Stat(); err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeNamedPipe != 0) {
			return "", nil, errors.New("--verdict-cache: the program's input comes from scry's standard input, which scry cannot read twice to key it: give it with --workload FILE")
		}
		lines = append(lines, "workload none")
	}
	opts := slices.Clone(in.Options)
	slices.Sort(opts)
	for _, o := range opts {
		lines = append(lines, "option "+o)
	}
	for _, f := range in.Files {
		sum, err := fileSum(f)
		if err != nil {
			return "", nil, fmt.Errorf("--verdict-cache: %w", err)
		}
		lines = append(lines, "file "+f+" sha256:"+sum)
	}
	lines = append(lines, "dir "+in.Dir)
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		for _, p := range verdictEnv {
			if strings.HasPrefix(kv, p) {
				lines = append(lines, "env "+kv)
				break
			}
		}
	}
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), lines, nil
}

// programID names a program's build: "build-id:HEX" from its ELF NT_GNU_BUILD_ID note (the
// linker's hash of the code), else "sha256:HEX" of the file (a script, a binary without one).
func programID(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if id := buildID(f); id != "" {
			return "build-id:" + id, nil
		}
	}
	sum, err := fileSum(path)
	if err != nil {
		return "", err
	}
	return "sha256:" + sum, nil
}

// buildID returns the hexadecimal GNU build id of f, "" when it has none.
func buildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	return buildIDNote(b, f.ByteOrder)
}

// buildIDNote reads the build id from the contents b of an ELF note section in byte order o: one
// note of type NT_GNU_BUILD_ID (3) named "GNU", its descriptor the id; "" for anything else.
func buildIDNote(b []byte, o binary.ByteOrder) string {
	if len(b) < 16 {
		return ""
	}
	namesz, descsz, typ := o.Uint32(b), o.Uint32(b[4:]), o.Uint32(b[8:])
	if typ != 3 || namesz != 4 || !bytes.HasPrefix(b[12:], []byte("GNU\x00")) || uint64(descsz) > uint64(len(b)-16) {
		return ""
	}
	return hex.EncodeToString(b[16 : 16+int(descsz)])
}

// fileSum is the SHA-256 of the file at path, in hexadecimal.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verdictEntry is one cached verdict: DIR/KEY.json.
type verdictEntry struct {
	Key    string          `json:"key"`
	Inputs []string        `json:"inputs"` // VerdictKey's lines
	Date   time.Time       `json:"date"`
	Report json.RawMessage `json:"report"`
}

// verdictPolicy lets scry replace only its own cache entries.
func verdictPolicy(what string) safefile.Policy {
	return safefile.Policy{What: what, NoForce: true, Ours: func(head []byte) bool {
		return bytes.HasPrefix(head, []byte(`{"key":`))
	}}
}

// LoadVerdict returns the report cached in dir under key, and when it was made; nil when there is
// none. The report's trace is the copy kept in dir. Errors: an entry that cannot be read or
// decoded (a corrupt entry is an error, not a miss: remove it).
func LoadVerdict(dir, key string) (*report.Report, time.Time, error) {
	path := filepath.Join(dir, key+".json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("--verdict-cache: %w", err)
	}
	var e verdictEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Key != key {
		return nil, time.Time{}, fmt.Errorf("--verdict-cache: %s is not a verdict of this key (remove it): %v", path, err)
	}
	rep, err := report.ReadJSON(e.Report, path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("--verdict-cache: %w", err)
	}
	if t := filepath.Join(dir, key+".trace"); fileExists(t) {
		rep.Trace = t
	}
	return rep, e.Date, nil
}

// StoreVerdict caches rep in dir under key (VerdictKey's lines kept with it, to say what it
// covers), with a copy of its trace when it has one, so that `scry replay` works on a cached
// report. The directory is created if missing; an entry scry wrote earlier is replaced, any
// other file is not. Errors: the directory or the files cannot be written.
func StoreVerdict(dir, key string, lines []string, rep *report.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--verdict-cache: %w", err)
	}
	r := *rep
	if r.Trace != "" && fileExists(r.Trace) {
		t := filepath.Join(dir, key+".trace")
		if err := copyFile(r.Trace, t); err != nil {
			return fmt.Errorf("--verdict-cache: copying the trace: %w", err)
		}
		r.Trace = t
	}
	var rb bytes.Buffer
	if err := report.WriteJSON(&rb, &r); err != nil {
		return fmt.Errorf("--verdict-cache: %w", err)
	}
	b, err := json.Marshal(verdictEntry{Key: key, Inputs: lines, Date: time.Now().UTC(), Report: rb.Bytes()})
	if err != nil {
		return fmt.Errorf("--verdict-cache: %w", err)
	}
	f, err := safefile.Create(filepath.Join(dir, key+".json"), verdictPolicy("the verdict cache's entry"))
	if err != nil {
		return fmt.Errorf("--verdict-cache: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("--verdict-cache: %w", err)
	}
	return f.Close()
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// copyFile copies src to dst, replacing only a trace scry wrote there (the cache's own copy),
// with the project's one copy (exec.CloneFile: a clone where the file system can, holes kept).
func copyFile(src, dst string) error {
	p := safefile.Policy{What: "the verdict cache's trace", NoForce: true, Ours: func(head []byte) bool {
		return bytes.HasPrefix(head, []byte("SCRYTRC\x00"))
	}}
	if err := safefile.Check(dst, p); err != nil {
		return err
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return exec.CloneFile(dst, src, 0o644)
}
