package strace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

const sampleStrace = `100 openat(AT_FDCWD<\x2f\x77>, "\x6f\x75\x74", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3<\x2f\x77\x2f\x6f\x75\x74>
 > /lib/x86_64-linux-gnu/libc.so.6(__open64+0x51) [0xf8011]
 > /bin/prog(main+0x26) [0x11ef]
100 write(3<\x2f\x77\x2f\x6f\x75\x74>, "\x68\x69", 2) = 2
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
101 write(3<\x2f\x77\x2f\x6f\x75\x74>, "\x21", 1) = 1
100 <... clone resumed>, child_tidptr=0x7f) = 101
100 lseek(3<\x2f\x77\x2f\x6f\x75\x74>, 0, SEEK_SET) = 0
100 write(3<\x2f\x77\x2f\x6f\x75\x74>, "\x48", 1) = 1
100 fsync(3<\x2f\x77\x2f\x6f\x75\x74>) = 0
100 rename("\x6f\x75\x74", "\x6e\x65\x77") = 0
100 unlink("\x6d\x69\x73\x73\x69\x6e\x67") = -1 ENOENT (No such file or directory)
100 write(1<\x2f\x64\x65\x76\x2f\x70\x74\x73\x2f\x30>, "\x6f\x6b\x0a", 3) = 3
100 writev(3<\x2f\x77\x2f\x6e\x65\x77>, [{iov_base="\x61", iov_len=1}, {iov_base="\x62\x63", iov_len=2}], 2) = 3
100 pwrite64(3<\x2f\x77\x2f\x6e\x65\x77>, "\x79\x79", 2, 4096) = 2
100 pwritev(3<\x2f\x77\x2f\x6e\x65\x77>, [{iov_base="\x7a", iov_len=1}], 1, 512) = 1
100 write(3<\x2f\x77\x2f\x6e\x65\x77>, "\x21", 1) = 1
101 +++ exited with 0 +++
100 exit_group(0) = ?
`

// convertText converts strace output (with the workload's lines input) and renders the
// records: "OP PATH [PATH2] OFFSET [DATA]" for FS_OP, "output DATA", "op K TEXT" for OP_BEGIN.
func convertText(t *testing.T, strace string, input []string) (got, warnings []string) {
	t.Helper()
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, 64)
	_, warnings, err := convert(strings.NewReader(strace), "/w", w, newSymbolizer(), input)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	w.Flush()
	r, _ := trace.NewReader(&buf)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch ev.Kind {
		case trace.KindFSOp:
			line := strings.Join(strings.Fields(strings.Join([]string{ev.FS.String(), ev.Path, ev.Path2, itoa(ev.FileOffset), string(ev.Data)}, " ")), " ")
			if ev.FSFlags&trace.FSDataSync != 0 {
				line += " +dsync"
			}
			if ev.FSFlags&trace.FSFileSync != 0 {
				line += " +sync"
			}
			if ev.FS == trace.FSWrite && ev.FSFlags&trace.FSAppend != 0 {
				line += " +append"
			}
			got = append(got, line)
		case trace.KindOutput:
			got = append(got, "output "+string(ev.Data))
		case trace.KindOpBegin:
			got = append(got, "op "+itoa(ev.Op)+" "+ev.Text)
		}
	}
	return got, warnings
}

// TestConvert checks descriptor resolution, offsets (shared across fork, moved by lseek,
// positional writes), rename paths against the working directory, output, writev and failed
// calls.
func TestConvert(t *testing.T) {
	got, warns := convertText(t, sampleStrace, nil)
	if len(warns) != 0 {
		t.Errorf("warnings %v", warns)
	}
	want := []string{"open /w/out 0", "write /w/out 0 hi", "write /w/out 2 !", "write /w/out 0 H", "fsync /w/out 0",
		"rename /w/out /w/new 0", "output ok\n", "write /w/new 1 abc",
		// positional writes go to their offset argument and leave the file offset alone
		"write /w/new 4096 yy", "write /w/new 512 z", "write /w/new 4 !"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestConvertOperations: with the workload's lines, the read of standard input that returns a
// line's first byte begins its operation (OP_BEGIN), whatever the reads' sizes.
func TestConvertOperations(t *testing.T) {
	const st = `7 read(0, 0x1, 0x2000) = 0x6
7 openat(AT_FDCWD<\x2f\x77>, "\x61", O_WRONLY|O_CREAT, 0644) = 3<\x2f\x77\x2f\x61>
7 read(0, 0x1, 0x1) = 0x1
7 read(0, 0x1, 0x1) = 0x1
7 write(3<\x2f\x77\x2f\x61>, "\x78", 1) = 1
7 read(0, 0x1, 0x2000) = 0x7
7 read(0, 0x1, 0x2000) = 0
`
	// Lines "set a" (6 bytes with its newline), "g" (2, read a byte at a time), "x y z" and "w"
	// (6 and 2: one read of 7 bytes holds the first byte of w, which begins too).
	got, _ := convertText(t, st, []string{"set a", "g", "x y z", "w"})
	want := "op 0 set a|open /w/a 0|op 1 g|write /w/a 0 x|op 2 x y z|op 3 w"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestConvertDurability: the calls whose durability the model needs. Writes through O_DSYNC
// and O_SYNC descriptors and with pwritev2's RWF_DSYNC/RWF_SYNC carry flags dsync and sync
// (open(2), pwritev2(2)); fcntl(F_SETFL) cannot set them (fcntl(2)); pwritev2's RWF_APPEND
// appends and offset -1 writes at the file offset; sync_file_range without
// SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER, and fallocate's COLLAPSE_RANGE and
// INSERT_RANGE, are warned about and not recorded.
func TestConvertDurability(t *testing.T) {
	const st = `5 openat(AT_FDCWD<\x2f\x77>, "\x6d", O_RDWR|O_DSYNC|O_CLOEXEC) = 3<\x2f\x77\x2f\x6d>
5 pwrite64(3<\x2f\x77\x2f\x6d>, "\x4d", 1, 4096) = 1
5 openat(AT_FDCWD<\x2f\x77>, "\x61", O_WRONLY|O_CREAT, 0644) = 4<\x2f\x77\x2f\x61>
5 fcntl(4<\x2f\x77\x2f\x61>, F_SETFL, O_WRONLY|O_SYNC) = 0
5 write(4<\x2f\x77\x2f\x61>, "\x78", 1) = 1
5 pwritev2(4<\x2f\x77\x2f\x61>, [{iov_base="\x79", iov_len=1}], 1, 8, RWF_DSYNC) = 1
5 pwritev2(4<\x2f\x77\x2f\x61>, [{iov_base="\x7a", iov_len=1}], 1, 0, RWF_SYNC|RWF_APPEND) = 1
5 pwritev2(4<\x2f\x77\x2f\x61>, [{iov_base="\x77", iov_len=1}], 1, -1, 0) = 1
5 openat(AT_FDCWD<\x2f\x77>, "\x62", O_WRONLY|O_CREAT|O_SYNC, 0644) = 5<\x2f\x77\x2f\x62>
5 write(5<\x2f\x77\x2f\x62>, "\x71", 1) = 1
5 sync_file_range(4<\x2f\x77\x2f\x61>, 0, 0, SYNC_FILE_RANGE_WRITE) = 0
5 sync_file_range(4<\x2f\x77\x2f\x61>, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER) = 0
5 fallocate(4<\x2f\x77\x2f\x61>, FALLOC_FL_COLLAPSE_RANGE, 0, 4096) = 0
5 fallocate(4<\x2f\x77\x2f\x61>, FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE, 0, 2) = 0
`
	got, warns := convertText(t, st, nil)
	want := []string{"open /w/m 0 +dsync", "write /w/m 4096 M +dsync", "open /w/a 0", "write /w/a 0 x",
		"write /w/a 8 y +dsync", "write /w/a 0 z +sync +append", "write /w/a 1 w", "open /w/b 0 +sync", "write /w/b 0 q +sync",
		"sync_file_range /w/a 0", "fallocate /w/a 0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER") ||
		!strings.Contains(warns[1], "FALLOC_FL_COLLAPSE_RANGE") {
		t.Errorf("warnings %q", warns)
	}
}

// TestConvertTmpfileAndCopy: an O_TMPFILE file is opened in its directory (flag tmpfile) and
// named by linkat with AT_EMPTY_PATH or through /proc/self/fd/N with AT_SYMLINK_FOLLOW (a link
// of its handle); copy_file_range between files of the directory is a copy record (NULL offsets
// the descriptors', which move), and from a file outside a write of that file's bytes, with a
// warning.
func TestConvertTmpfileAndCopy(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(outside, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	hex := func(s string) string {
		var b strings.Builder
		for i := range len(s) {
			fmt.Fprintf(&b, "\\x%02x", s[i])
		}
		return b.String()
	}
	st := `5 openat(AT_FDCWD<\x2f\x77>, "\x2e", O_RDWR|O_CLOEXEC|O_TMPFILE, 0600) = 3<\x2f\x77\x2f\x23\x31\x32>(deleted)
5 write(3<\x2f\x77\x2f\x23\x31\x32>(deleted), "\x61\x62", 2) = 2
5 linkat(3<\x2f\x77\x2f\x23\x31\x32>(deleted), "", AT_FDCWD<\x2f\x77>, "\x6f", AT_EMPTY_PATH) = 0
5 openat(AT_FDCWD<\x2f\x77>, "\x2e", O_WRONLY|O_TMPFILE, 0600) = 4<\x2f\x77\x2f\x23\x31\x33>(deleted)
5 linkat(AT_FDCWD<\x2f\x77>, "\x2f\x70\x72\x6f\x63\x2f\x73\x65\x6c\x66\x2f\x66\x64\x2f\x34", AT_FDCWD<\x2f\x77>, "\x70", AT_SYMLINK_FOLLOW) = 0
5 openat(AT_FDCWD<\x2f\x77>, "\x71", O_WRONLY|O_CREAT, 0644) = 5<\x2f\x77\x2f\x71>
5 copy_file_range(3<\x2f\x77\x2f\x6f>, NULL, 5<\x2f\x77\x2f\x71>, NULL, 1, 0) = 1
5 copy_file_range(3<\x2f\x77\x2f\x6f>, NULL, 5<\x2f\x77\x2f\x71>, [7 => 8], 1, 0) = 1
5 openat(AT_FDCWD<\x2f\x77>, "` + hex(outside) + `", O_RDONLY) = 6<` + hex(outside) + `>
5 copy_file_range(6<` + hex(outside) + `>, [2], 5<\x2f\x77\x2f\x71>, NULL, 3, 0) = 3
`
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, 64)
	_, warns, err := convert(strings.NewReader(st), "/w", w, newSymbolizer(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	w.Flush()
	r, _ := trace.NewReader(&buf)
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == trace.KindFSOp {
			got = append(got, fmt.Sprintf("%s h%d %s %s off=%d size=%d res=%d %q tmp=%v", ev.FS, ev.Handle, ev.Path, ev.Path2,
				ev.FileOffset, ev.Size, ev.Result, ev.Data, ev.FSFlags&trace.FSTmpfile != 0))
		}
	}
	want := []string{
		`open h1 /w  off=0 size=0 res=3 "" tmp=true`,
		`write h1 /w/#12  off=0 size=2 res=2 "ab" tmp=false`,
		`link h1 /w/#12 /w/o off=0 size=0 res=0 "" tmp=false`,
		`open h2 /w  off=0 size=0 res=4 "" tmp=true`,
		`link h2 /w/#13 /w/p off=0 size=0 res=0 "" tmp=false`,
		`open h3 /w/q  off=0 size=0 res=5 "" tmp=false`,
		// the source's offset moved by the write (2), then by the first copy
		`copy_file_range h3 /w/q /w/o off=0 size=2 res=1 "" tmp=false`,
		`copy_file_range h3 /w/q /w/o off=7 size=3 res=1 "" tmp=false`,
		// the destination's offset moved by the first copy only
		`write h3 /w/q  off=1 size=3 res=3 "234" tmp=false`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "outside the workload directory") {
		t.Errorf("warnings %q", warns)
	}
}

func itoa(v uint64) string { return uitoa(v) }

func uitoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

// FuzzParseStrace feeds arbitrary text to the strace parser and the converter: they must
// never panic, and fail only with a *ParseError or a conversion error.
func FuzzParseStrace(f *testing.F) {
	f.Add(sampleStrace)
	f.Add("1 write(1<\\x2f>, \"\\x\", 1) = 1\n")
	f.Add("1 openat(AT_FDCWD, \"a\" <unfinished ...>\n1 <... openat resumed>) = 3\n > /x(y+0x1) [0x2]\n")
	f.Add("12  rename(\"\\x61\", \"\\x62\") = 0\n")
	f.Add("1 openat(AT_FDCWD<\\x2f\\x77>, \"\\x2e\", O_RDWR|O_TMPFILE, 0600) = 3<\\x2f\\x77\\x2f\\x23\\x31>(deleted)\n1 linkat(3, \"\", AT_FDCWD, \"\\x6f\", AT_EMPTY_PATH) = 0\n" +
		"1 linkat(AT_FDCWD, \"\\x2f\\x70\\x72\\x6f\\x63\\x2f\\x31\\x2f\\x66\\x64\\x2f\\x33\", AT_FDCWD, \"\\x70\", AT_SYMLINK_FOLLOW) = 0\n")
	f.Add("1 openat(AT_FDCWD<\\x2f\\x77>, \"\\x61\", O_RDWR|O_DSYNC) = 3\n1 copy_file_range(3, [1 => 2], 3, NULL, 1, 0) = 1\n" +
		"1 pwritev2(3, [{iov_base=\"\\x61\", iov_len=1}], 1, -1, RWF_DSYNC|RWF_APPEND) = 1\n1 fallocate(3, FALLOC_FL_INSERT_RANGE, 0, 4096) = 0\n" +
		"1 sync_file_range(3, 0, 0, SYNC_FILE_RANGE_WRITE) = 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		w, _ := trace.NewWriter(&buf, 64)
		_, _, err := convert(strings.NewReader(s), "/w", w, newSymbolizer(), []string{"a", "bc"})
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
