package schemagen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// genReader writes trace/reader_gen.go: Reader.decode (one record from the window into r.ev),
// the element decoder of the streamed SITES record, and the list scratch of the Reader.
func genReader(s *schema) ([]byte, error) {
	var b buf
	goHeader(&b, "encoding/binary", "math")

	b.p("// decodeHeader decodes the fields of the %d-byte file header b after the magic.\nfunc decodeHeader(b []byte) Header {\n\treturn Header{\n", headerSize(s))
	off := 0
	for _, h := range s.Header {
		switch {
		case h.Name == "":
		case h.Size == 2:
			b.p("\t\t%s: binary.LittleEndian.Uint16(b[%d:]),\n", h.Name, off)
		case h.Size == 4:
			b.p("\t\t%s: binary.LittleEndian.Uint32(b[%d:]),\n", h.Name, off)
		default:
			return nil, fmt.Errorf("header field %s: %d bytes", h.Name, h.Size)
		}
		off += h.Size
	}
	b.p("\t}\n}\n\n")

	// The scratch of the lists decoded inside one record.
	var lists []string
	for i := range s.Records {
		r := &s.Records[i]
		for j := range r.Fields {
			f := &r.Fields[j]
			if f.Enc == trace.EncList && !r.Streamed {
				lists = append(lists, fmt.Sprintf("\t%s []%s\n", lowerFirst(f.Go), typeName(s.fields[f].elem)))
			}
		}
	}
	b.p("// recordLists holds the elements of the list of the record being decoded, reused from\n")
	b.p("// record to record (apply copies what the reader keeps).\ntype recordLists struct {\n%s}\n\n", strings.Join(lists, ""))

	// The fields hot records set.
	var hot []*trace.RecordSpec
	var hotFields []string
	seenHot := map[string]bool{}
	for i := range s.Records {
		r := &s.Records[i]
		if !r.Hot {
			continue
		}
		hot = append(hot, r)
		for j := range r.Fields {
			f := &r.Fields[j]
			names := []string{f.Go}
			for _, bit := range f.Bits {
				names = append(names, bit.Go)
			}
			for _, n := range names {
				if n != "" && !seenHot[n] {
					seenHot[n] = true
					hotFields = append(hotFields, n)
				}
			}
		}
	}
	var hotTest string
	if len(hot) > 0 && int(hot[len(hot)-1].Code)-int(hot[0].Code) == len(hot)-1 {
		hotTest = fmt.Sprintf("k >= %s && k <= %s", hot[0].Go, hot[len(hot)-1].Go)
	} else {
		var tests []string
		for _, r := range hot {
			tests = append(tests, "k == "+r.Go)
		}
		hotTest = strings.Join(tests, " || ")
	}
	var hotNames, hotZeros, hotKinds []string
	for _, n := range hotFields {
		sf, _ := eventType.FieldByName(n)
		hotNames = append(hotNames, "ev."+n)
		hotZeros = append(hotZeros, zero(sf.Type))
	}
	for _, r := range hot {
		hotKinds = append(hotKinds, r.Name)
	}

	b.p(`// decode decodes one record from the window b (starting at its kind byte) into r.ev. It
// returns the bytes consumed (n > 0) on success; need > 0 (the window size that might let the
// record decode) when b ends first; or an error. It changes the reader's state only on success.
// For a SITES record it returns (0, 0, nil): the caller reads it with readSites.
func (r *Reader) decode(b []byte) (n, need int, err error) {
	ev := &r.ev
	k := Kind(b[0])
`)
	for _, r := range s.Records {
		if r.Streamed {
			b.p("\tif k == %s {\n\t\treturn 0, 0, nil\n\t}\n", r.Go)
		}
	}
	b.p("%s", wrap(fmt.Sprintf("Clearing the whole Event costs more than decoding a load or store. After a record of a hot kind (%s), which sets only the fields reset here, a hot record resets just those; every other case clears everything. Either way the Event is exactly as if cleared.",
		strings.Join(hotKinds, ", ")), "\t// ", 100))
	b.p("\thot := %s\n\tif hot && r.lastHot {\n", hotTest)
	b.p("\t\tev.Kind, ev.Thread, ev.Context, ev.Frames = k, r.thread, r.context, r.frames\n")
	b.p("\t\t%s = %s\n", strings.Join(hotNames, ", "), strings.Join(hotZeros, ", "))
	b.p("\t} else {\n\t\t*ev = Event{Kind: k, Thread: r.thread, Context: r.context, Frames: r.frames}\n\t}\n")
	b.p("\tr.lastHot = hot\n\ti := 1\n\tvar v uint64\n\tswitch k {\n")

	var genErr error
	groups := groupBy(s.Records, func(r *trace.RecordSpec) string {
		if r.Streamed {
			return ""
		}
		var c buf
		if r.Since > s.MinVersion {
			c.p("if r.hdr.Version < %d {\nbreak\n}\n", r.Since)
		}
		d := &decoder{s: s, b: &c, kind: "k", hot: r.Hot}
		if err := d.fields(r.Fields, "ev"); err != nil && genErr == nil {
			genErr = fmt.Errorf("record %s: %w", r.Name, err)
		}
		if r.State {
			c.p("return r.apply(i)\n")
		} else {
			c.p("return i, 0, nil\n")
		}
		return c.String()
	})
	if genErr != nil {
		return nil, genErr
	}
	for _, g := range groups {
		b.p("\tcase %s:\n%s", g.caseList(), g.body)
	}
	b.p("\t}\n\treturn 0, 0, r.fail(ErrCorrupt, r.Offset(), \"unknown record kind 0x%%02x\", uint8(k))\n}\n\n")

	// Element decoders of the streamed lists.
	for i := range s.Records {
		r := &s.Records[i]
		if !r.Streamed {
			continue
		}
		list := &r.Fields[len(r.Fields)-1]
		elem := typeName(s.fields[list].elem)
		fn := "decode" + capitalize(list.ElemName)
		b.p("// %s decodes one %s of a %s record at the start of b into *e, with decode's results.\n", fn, list.ElemName, r.Name)
		b.p("func (r *Reader) %s(b []byte, e *%s) (n, need int, err error) {\n\ti := 0\n\tvar v uint64\n", fn, elem)
		d := &decoder{s: s, b: &b, kind: r.Go}
		if err := d.fields(list.Elem, "e"); err != nil {
			return nil, fmt.Errorf("record %s: %w", r.Name, err)
		}
		b.p("\treturn i, 0, nil\n}\n\n")
	}
	return b.Bytes(), nil
}

// decoder writes the decoding of fields.
type decoder struct {
	s    *schema
	b    *buf
	kind string // Go expression of the Kind that holds the fields, for error messages
	hot  bool   // a hot record: uvarints decode their one-byte case inline
}

// fields writes the decoding of fields into the struct named holder ("ev", "e"). The running
// address of an addr field is committed after the last field.
func (d *decoder) fields(fields []trace.FieldSpec, holder string) error {
	addr := ""
	for i := range fields {
		f := &fields[i]
		if f.Enc == trace.EncAddr {
			d.b.p("var delta int64\n")
			addr = holder + "." + f.Go
		}
	}
	for i := range fields {
		f := &fields[i]
		if f.Since > d.s.MinVersion {
			d.b.p("if r.hdr.Version >= %d {\n", f.Since)
		}
		if err := d.field(fields, f, holder); err != nil {
			return err
		}
		if f.Since > d.s.MinVersion {
			d.b.p("}\n")
		}
	}
	if addr != "" {
		d.b.p("%s = r.last + uint64(delta)\nr.last = %s\n", addr, addr)
	}
	return nil
}

func (d *decoder) field(fields []trace.FieldSpec, f *trace.FieldSpec, holder string) error {
	g := d.s.fields[f]
	target := holder
	if g.name != "" {
		target = holder + "." + g.name
	}
	p := d.b.p
	short := fmt.Sprintf("return r.short(b, i, %s, %q)", d.kind, f.Name)
	switch f.Enc {
	case trace.EncUvarint:
		if d.hot {
			p("if uint(i) < uint(len(b)) && b[i] < 0x80 {\nv = uint64(b[i])\ni++\n} else if v, i = uvarintSlow(b, i); i < 0 {\n%s\n}\n", short)
		} else {
			p("if v, i = uvarint(b, i); i < 0 {\n%s\n}\n", short)
		}
		if f.NonZero != "" {
			p("if v == 0 {\nreturn 0, 0, r.zero(%s, %q, %q)\n}\n", d.kind, f.Name, f.NonZero)
		}
		if f.Max != "" {
			counted := countOf(fields, f.Name)
			helper := "overCount"
			if counted != nil && counted.Enc == trace.EncBytes {
				helper = "overBytes"
			}
			p("if v > %s {\nreturn 0, 0, r.%s(%s, %q, v, %s)\n}\n", f.Max, helper, d.kind, f.Name, f.Max)
		}
		switch {
		case f.StrictFlags != "":
			p("if v&^%s != 0 {\nreturn 0, 0, r.badFlags(%s, %q, v)\n}\n", f.StrictFlags, d.kind, f.Name)
		case g.typ.Kind() == reflect.Uint32:
			p("if v > math.MaxUint32 {\nreturn 0, 0, r.over32(%s, %q, v)\n}\n", d.kind, f.Name)
		}
		if countOf(fields, f.Name) != nil {
			p("ln := int(v)\n")
		}
		if g.name != "" || g.self {
			p("%s = %s\n", target, convert(g.typ, "v"))
		}
	case trace.EncSvarint:
		p("if %s, i = svarint(b, i); i < 0 {\n%s\n}\n", target, short)
	case trace.EncAddr:
		p("if delta, i = svarint(b, i); i < 0 {\n%s\n}\n", short)
	case trace.EncU8:
		p("if i >= len(b) {\nreturn 0, i + 1, nil\n}\n")
		switch {
		case f.Enum != "":
			for _, bit := range f.Bits {
				p("%s.%s = b[i]&%s != 0\n", holder, bit.Go, bit.Const)
			}
			val := "b[i]"
			for _, bit := range f.Bits {
				val += "&^" + bit.Const
			}
			p("%s = %s(%s)\ni++\n", target, f.Enum, val)
			p("if !%s.validIn(r.hdr.Version) {\nreturn 0, 0, r.badValue(%s, %q, uint64(%s))\n}\n", target, d.kind, f.Name, target)
		default:
			p("%s = %s\ni++\n", target, convert(g.typ, "b[i]"))
		}
	case trace.EncStr:
		p("if %s, i, need, err = r.str(b, i, %s, %q); i < 0 {\nreturn 0, need, err\n}\n", target, d.kind, f.Name)
	case trace.EncBytes:
		p("if len(b)-i < ln {\nreturn 0, i + ln, nil\n}\n%s = b[i : i+ln]\ni += ln\n", target)
	case trace.EncList:
		scratch := "r.lists." + lowerFirst(f.Go)
		p("lst := %s[:0]\nfor range ln {\nvar e %s\n", scratch, typeName(g.elem))
		sub := &decoder{s: d.s, b: d.b, kind: d.kind, hot: d.hot}
		if err := sub.fields(f.Elem, "e"); err != nil {
			return err
		}
		p("lst = append(lst, e)\n}\n%s = lst\n%s = lst\n", scratch, target)
	default:
		return fmt.Errorf("field %s: encoding %s", f.Name, encName(f.Enc))
	}
	return nil
}

// typeName is the name of t in package trace.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// convert converts the expression x (a uint64 or a byte) to t.
func convert(t reflect.Type, x string) string {
	if (t.Kind() == reflect.Uint64 && x == "v") || (t.Kind() == reflect.Uint8 && t.Name() == "uint8" && x == "b[i]") {
		return x
	}
	return typeName(t) + "(" + x + ")"
}
