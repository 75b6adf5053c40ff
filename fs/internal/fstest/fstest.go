// Package fstest holds the helpers the tests of file-system mode's packages share: hand-written
// runs written as a snapshot and a trace (RecordRun) and crash directories rendered as text
// (DescribeDir).
package fstest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// Root is the workload directory's path in the traces of RecordRun.
const Root = "/w"

// RecordRun writes the snapshot (base) and the trace (a file) of a hand-written run: init gives
// the workload directory's files before it ("d/" for a directory), ops its calls, one per string:
//
//	creat P | opentrunc P | append P DATA | write P OFF DATA | trunc P SIZE | fsync P |
//	fdatasync P | sfr P OFF LEN | sync | rename P Q | link P Q | unlink P | mkdir P | rmdir P |
//	falloc P MODE OFF LEN | copy SRC SRCOFF DST DSTOFF N | tmpfile DIR H | fdappend H DATA |
//	fdlink H P | out TEXT
//
// An append or write ending in +dsync or +sync is durable when it returns (an O_DSYNC or O_SYNC
// descriptor: flags dsync, sync). falloc's MODE is alloc, keep (FALLOC_FL_KEEP_SIZE), punch
// (PUNCH_HOLE|KEEP_SIZE), zero (ZERO_RANGE) or zerokeep (ZERO_RANGE|KEEP_SIZE). copy is
// copy_file_range of N bytes. tmpfile opens an O_TMPFILE file in DIR as handle H (a number),
// fdappend appends to it, fdlink names it P (linkat with AT_EMPTY_PATH).
// The calls become the trace records a recorded run has, with paths under Root.
func RecordRun(t testing.TB, init map[string]string, ops []string) (base, tracePath string) {
	t.Helper()
	base = filepath.Join(t.TempDir(), "base")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range init {
			if !yield(k) {
				return
			}
		}
	}) {
		p := filepath.Join(base, strings.TrimSuffix(name, "/"))
		var err error
		if strings.HasSuffix(name, "/") {
			err = os.MkdirAll(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte(init[name]), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const root = Root
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return root + "/" + p }
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("bad number %q", s)
		}
		return v
	}
	for _, op := range ops {
		f := strings.Fields(op)
		ev := &trace.Event{Kind: trace.KindFSOp}
		var syncFlag uint32
		switch f[len(f)-1] {
		case "+dsync":
			syncFlag, f = trace.FSDataSync, f[:len(f)-1]
		case "+sync":
			syncFlag, f = trace.FSFileSync, f[:len(f)-1]
		}
		switch f[0] {
		case "creat":
			ev.FS, ev.FSFlags, ev.Path = trace.FSOpen, trace.FSCreate|trace.FSWriteOnly, abs(f[1])
		case "opentrunc":
			ev.FS, ev.FSFlags, ev.Path = trace.FSOpen, trace.FSTrunc|trace.FSWriteOnly, abs(f[1])
		case "append":
			ev.FS, ev.FSFlags, ev.Path, ev.Data = trace.FSWrite, trace.FSAppend, abs(f[1]), []byte(f[2])
		case "write":
			ev.FS, ev.Path, ev.FileOffset, ev.Data = trace.FSWrite, abs(f[1]), num(f[2]), []byte(f[3])
		case "trunc":
			ev.FS, ev.Path, ev.Size = trace.FSTruncate, abs(f[1]), num(f[2])
		case "fsync":
			ev.FS, ev.Path = trace.FSFsync, abs(f[1])
			if f[1] == "." {
				ev.Path = root
			}
		case "fdatasync":
			ev.FS, ev.Path = trace.FSFdatasync, abs(f[1])
		case "sfr":
			ev.FS, ev.Path, ev.FileOffset, ev.Size = trace.FSSyncFileRange, abs(f[1]), num(f[2]), num(f[3])
		case "sync":
			ev.FS = trace.FSSync
		case "rename":
			ev.FS, ev.Path, ev.Path2 = trace.FSRename, abs(f[1]), abs(f[2])
		case "link":
			ev.FS, ev.Path, ev.Path2 = trace.FSLink, abs(f[1]), abs(f[2])
		case "unlink":
			ev.FS, ev.Path = trace.FSUnlink, abs(f[1])
		case "mkdir":
			ev.FS, ev.Path = trace.FSMkdir, abs(f[1])
		case "rmdir":
			ev.FS, ev.Path = trace.FSRmdir, abs(f[1])
		case "falloc":
			modes := map[string]uint32{"alloc": 0, "keep": trace.FSKeepSize, "punch": trace.FSPunchHole | trace.FSKeepSize,
				"zero": trace.FSZeroRange, "zerokeep": trace.FSZeroRange | trace.FSKeepSize}
			mode, ok := modes[f[2]]
			if !ok {
				t.Fatalf("unknown fallocate mode %q", f[2])
			}
			ev.FS, ev.Path, ev.FSFlags, ev.FileOffset, ev.Size = trace.FSFallocate, abs(f[1]), mode, num(f[3]), num(f[4])
		case "copy":
			ev.FS, ev.Path2, ev.Size, ev.Path, ev.FileOffset = trace.FSCopyFileRange, abs(f[1]), num(f[2]), abs(f[3]), num(f[4])
			ev.Result = int64(num(f[5]))
		case "tmpfile":
			ev.FS, ev.FSFlags, ev.Path, ev.Handle = trace.FSOpen, trace.FSTmpfile|trace.FSWriteOnly, abs(f[1]), num(f[2])
			if f[1] == "." {
				ev.Path = root
			}
		case "fdappend":
			ev.FS, ev.FSFlags, ev.Handle, ev.Path, ev.Data = trace.FSWrite, trace.FSAppend, num(f[1]), abs("#"+f[1]), []byte(f[2])
		case "fdlink":
			ev.FS, ev.Handle, ev.Path, ev.Path2 = trace.FSLink, num(f[1]), abs("#"+f[1]), abs(f[2])
		case "out":
			ev = &trace.Event{Kind: trace.KindOutput, Handle: 1, Data: []byte(f[1])}
		default:
			t.Fatalf("unknown test operation %q", op)
		}
		ev.FSFlags |= syncFlag
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tracePath = filepath.Join(t.TempDir(), "run.trace")
	if err := os.WriteFile(tracePath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return base, tracePath
}

// DescribeDir renders a crash directory and the output printed before the crash: its entries
// sorted, a directory as "d/", a file as "name=content" with zero bytes shown as 0 and garbage
// (bytes with the high bit set) as ?; "-" for an empty directory; then " | " and the output.
func DescribeDir(t *testing.T, dir string, stdout []byte) string {
	t.Helper()
	var parts []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			parts = append(parts, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, c := range b {
			switch {
			case c == 0:
				b[i] = '0'
			case c >= 0x80:
				b[i] = '?'
			}
		}
		parts = append(parts, rel+"="+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = "-"
	}
	if len(stdout) > 0 {
		s += " | " + string(stdout)
	}
	return s
}
