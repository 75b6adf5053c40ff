package workload

import (
	"bufio"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Random names, words, numbers and file contents for the grammar fuzzer. Barowsky et al.,
// Improving Application Crash Consistency with Symbolic Execution and Fuzzing (2021) §7 found
// that fuzzed workloads revealed more bugs than hand-written ones because they involved large
// files, slightly malformed inputs and unusual bytes; these generators aim for that variety.

const (
	nameChars  = "abcdefghijklmnopqrstuvwxyz0123456789"
	innerChars = "._-+ABCXYZ"
	// shellChars are drawn only for workloads run by a shell (--shell), which receives them
	// quoted: they test the program's handling of names a careless script would split or expand.
	shellChars = " '\"$*?&;()\\#!~`é日"
)

var extensions = []string{"", "", "", ".txt", ".dat", ".csv", ".log", ".bak", ".tmp"}

// newName returns a random file name: never empty, "." or "..", never starting with '-' (so a
// created file can be named on any command line), without '/' or line breaks. Lengths are
// mostly 1-12 characters, sometimes up to 40, rarely 100-200. With shell, it may hold spaces,
// quotes, glob and other shell characters and non-ASCII letters.
func newName(r *rand.Rand, shell bool) string {
	var n int
	switch p := r.IntN(100); {
	case p < 80:
		n = 1 + r.IntN(12)
	case p < 95:
		n = 13 + r.IntN(28)
	default:
		n = 100 + r.IntN(101)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch p := r.IntN(100); {
		case shell && p < 8 && i > 0:
			c := []rune(shellChars)
			b.WriteRune(c[r.IntN(len(c))])
		case p < 15 && i > 0:
			b.WriteByte(innerChars[r.IntN(len(innerChars))])
		default:
			b.WriteByte(nameChars[r.IntN(len(nameChars))])
		}
	}
	name := b.String()
	// At most 200 bytes (file names may have 255), cut at a character boundary.
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name + extensions[r.IntN(len(extensions))]
}

// randomWord returns a random lower-case word of 1-10 letters, sometimes a number or, for a
// shell workload, a word with shell characters.
func randomWord(r *rand.Rand, shell bool) string {
	switch p := r.IntN(100); {
	case p < 10:
		return strconv.Itoa(r.IntN(1000))
	case shell && p < 20:
		return newName(r, true)
	}
	n := 1 + r.IntN(10)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// smallNumber is 1-100; largeNumber spreads over every magnitude up to 2^64-1.
func smallNumber(r *rand.Rand) string { return strconv.Itoa(1 + r.IntN(100)) }
func largeNumber(r *rand.Rand) string {
	return strconv.FormatUint(r.Uint64()>>r.IntN(57)|128, 10)
}

// randomOption returns an option-like word: -x or --word.
func randomOption(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return "-" + string(rune('a'+r.IntN(26)))
	}
	return "--" + randomWord(r, false)
}

// Kinds of file content.
const (
	contentText    = iota // lines of words and numbers, some repeated
	contentUnusual        // text with NUL, CR, invalid UTF-8, tabs, long lines
	contentBinary         // random bytes
)

// writeContent writes exactly size random bytes of one kind of content (drawn from r).
func writeContent(w *bufio.Writer, size int64, r *rand.Rand) error {
	kind := r.IntN(10)
	switch {
	case kind < 5:
		kind = contentText
	case kind < 8:
		kind = contentUnusual
	default:
		kind = contentBinary
	}
	var written int64
	put := func(s string) error {
		if rest := size - written; int64(len(s)) > rest {
			s = s[:rest]
		}
		n, err := w.WriteString(s)
		written += int64(n)
		return err
	}
	if kind == contentBinary {
		var buf [8]byte
		for written < size {
			v := r.Uint64()
			for i := range buf {
				buf[i] = byte(v >> (8 * i))
			}
			if err := put(string(buf[:])); err != nil {
				return err
			}
		}
		return nil
	}
	unusual := []string{"\x00", "\r\n", "\r", "\xff\xfe", "\x80", "é", "日本語", "\t", "\x1b[0m", " "}
	var prev []string
	for written < size {
		var line string
		switch p := r.IntN(100); {
		case p < 15 && len(prev) > 0:
			line = prev[r.IntN(len(prev))] // a repeated line: sort -u and uniq have work
		case p < 30:
			line = strconv.FormatInt(r.Int64N(1_000_000)-1000, 10)
		default:
			words := make([]string, 1+r.IntN(8))
			for i := range words {
				words[i] = randomWord(r, false)
			}
			line = strings.Join(words, " ")
		}
		if kind == contentUnusual {
			switch p := r.IntN(100); {
			case p < 40:
				at := r.IntN(len(line) + 1)
				line = line[:at] + unusual[r.IntN(len(unusual))] + line[at:]
			case p < 43:
				line = strings.Repeat(line+" ", 200+r.IntN(2000)) // a long line
			}
		}
		if len(prev) < 64 {
			prev = append(prev, line)
		}
		if err := put(line + "\n"); err != nil {
			return err
		}
	}
	return nil
}
