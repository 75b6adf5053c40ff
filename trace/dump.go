package trace

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DumpOptions tunes Dump.
type DumpOptions struct {
	// MaxBytes is how many bytes of a record's data are printed in hex before "..." (0: 32).
	MaxBytes int
	// SiteTable lists the sites of each SITES record, one indented line per site.
	SiteTable bool
	// Stacks appends the call stack (outermost call first) to every record whose Context is
	// not the empty stack.
	Stacks bool
	// Limit stops after that many records (0: no limit).
	Limit uint64
}

// Dump prints the records of r to w, one human-readable line per record:
//
//	index  thread  KIND  fields  site=id file:line function
//
// with addresses in hex, sizes in bytes, data in hex and flags by name. It starts with a
// comment line giving the header. Dump returns nil after a complete trace (END read); when the
// trace is cut short it prints every complete record, then a "# truncated" line, and returns
// the error wrapping ErrTruncated; on corruption it prints a "# error" line and returns the
// error; write errors of w are returned as well.
func Dump(w io.Writer, r *Reader, opts DumpOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	max := opts.MaxBytes
	if max <= 0 {
		max = 32
	}
	h := r.Header()
	fmt.Fprintf(bw, "# scry trace version %d, flags %#x, cache line %d bytes\n", h.Version, h.Flags, h.LineSize)
	var line []byte
	var n uint64
	for opts.Limit == 0 || n < opts.Limit {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				break
			}
			if errors.Is(err, ErrTruncated) {
				fmt.Fprintf(bw, "# truncated: %v\n", err)
			} else {
				fmt.Fprintf(bw, "# error: %v\n", err)
			}
			if ferr := bw.Flush(); ferr != nil {
				return ferr
			}
			return err
		}
		n++
		line = AppendEvent(line[:0], r, ev, max)
		if opts.Stacks && ev.Context != 0 && ev.Kind != KindContext && ev.Kind != KindThread {
			line = append(line, " stack="...)
			for i, id := range r.StackOf(ev.Context) {
				if i > 0 {
					line = append(line, " > "...)
				}
				line = appendSiteRef(line, r, id)
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
		if opts.SiteTable && ev.Kind == KindSites {
			for _, s := range ev.Sites {
				fmt.Fprintf(bw, "\tsite %d %v %s %s:%d:%d", s.ID, s.Kind, s.Function, s.File, s.Line, s.Column)
				if s.Callee != "" {
					fmt.Fprintf(bw, " callee=%s", s.Callee)
				}
				if s.InlinedAt != 0 {
					fmt.Fprintf(bw, " inlined-at=%d", s.InlinedAt)
				}
				if s.Access != AccessUnknown {
					fmt.Fprintf(bw, " access=%v", s.Access)
				}
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

// AppendEvent appends the one-line description of ev that Dump prints (without the newline)
// to b and returns the extended slice; r resolves site ids. Data is printed up to maxBytes
// bytes (0: 32).
func AppendEvent(b []byte, r *Reader, ev *Event, maxBytes int) []byte {
	if maxBytes <= 0 {
		maxBytes = 32
	}
	b = fmt.Appendf(b, "%6d t%-6d %-14s", ev.Index, ev.Thread, ev.Kind)
	b = appendFields(b, r, ev, maxBytes)
	if ev.Context != 0 && ev.Kind != KindContext && ev.Kind != KindThread {
		b = fmt.Appendf(b, " ctx=%d", ev.Context)
	}
	return b
}

// appendSitesFields appends the fields of a SITES record: the number of sites and their ids
// (Dump's SiteTable lists them).
func appendSitesFields(b []byte, ev *Event) []byte {
	b = fmt.Appendf(b, " n=%d", len(ev.Sites))
	if len(ev.Sites) > 0 {
		b = fmt.Appendf(b, " ids=%d..%d", ev.Sites[0].ID, ev.Sites[len(ev.Sites)-1].ID)
	}
	return b
}

// appendDepsFields appends the fields of a DEPS record: the number of facts and the first 8.
func appendDepsFields(b []byte, ev *Event) []byte {
	b = fmt.Appendf(b, " n=%d", len(ev.Deps))
	for i, d := range ev.Deps {
		if i == 8 {
			return append(b, " ..."...)
		}
		b = fmt.Appendf(b, " %d->%d:%s", d.From, d.To, d.Kind)
	}
	return b
}

// appendFrameFields appends the fields of a FRAME record: the depth and the innermost
// activation.
func appendFrameFields(b []byte, ev *Event) []byte {
	b = fmt.Appendf(b, " depth=%d", len(ev.Frames))
	if n := len(ev.Frames); n > 0 {
		b = fmt.Appendf(b, " activation=%d", ev.Frames[n-1])
	}
	return b
}

// appendSiteField appends the site field of a record, " site=" and its reference (appendSiteRef).
func appendSiteField(b []byte, r *Reader, id uint32) []byte {
	return appendSiteRef(append(b, " site="...), r, id)
}

// appendSiteRef appends "id file:line function" (or just the id for site 0 or an unknown site).
func appendSiteRef(b []byte, r *Reader, id uint32) []byte {
	b = strconv.AppendUint(b, uint64(id), 10)
	if id == 0 || r == nil {
		return b
	}
	s, ok := r.Site(id)
	if !ok {
		return append(b, "(undefined)"...)
	}
	b = fmt.Appendf(b, " %s:%d %s", s.File, s.Line, s.Function)
	if s.Callee != "" {
		b = fmt.Appendf(b, "->%s", s.Callee)
	}
	return b
}

// appendData appends " data=HEX" with at most maxBytes bytes ("..." when cut).
func appendData(b []byte, data []byte, maxBytes int) []byte {
	b = append(b, " data="...)
	d := data
	if len(d) > maxBytes {
		d = d[:maxBytes]
	}
	b = hex.AppendEncode(b, d)
	if len(d) < len(data) {
		b = append(b, "..."...)
	}
	return b
}

// appendFlags appends " flags=a|b" naming the bits of f (bit i is names[i]; others in hex),
// or nothing when f is 0.
func appendFlags(b []byte, f uint64, names []string) []byte {
	if f == 0 {
		return b
	}
	var parts []string
	for i, n := range names {
		if n != "" && f&(1<<i) != 0 {
			parts = append(parts, n)
			f &^= 1 << i
		}
	}
	if f != 0 {
		parts = append(parts, fmt.Sprintf("%#x", f))
	}
	return append(append(b, " flags="...), strings.Join(parts, "|")...)
}
