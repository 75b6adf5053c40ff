package schemagen

import (
	"fmt"
	"reflect"

	"github.com/scry-pm/scry/trace"
)

// genWriter writes trace/writer_gen.go: Writer.appendRecord (checks one Event against the
// format, then appends its record's bytes; Writer.encode in writer.go writes them) and the file
// header's encoding.
func genWriter(s *schema) ([]byte, error) {
	var b buf
	goHeader(&b, "encoding/binary", "fmt")

	b.p("// appendHeader appends the %d-byte file header h to b.\nfunc appendHeader(b []byte, h Header) []byte {\n\tb = append(b, Magic...)\n", headerSize(s))
	for _, h := range s.Header {
		switch {
		case h.Name == "":
			continue
		case h.Size == 2:
			b.p("\tb = binary.LittleEndian.AppendUint16(b, h.%s)\n", h.Name)
		case h.Size == 4:
			b.p("\tb = binary.LittleEndian.AppendUint32(b, h.%s)\n", h.Name)
		default:
			return nil, fmt.Errorf("header field %s: %d bytes", h.Name, h.Size)
		}
	}
	b.p("\treturn b\n}\n\n")

	b.p(`// appendRecord checks ev against the format version of w, then appends its record to b and
// returns it; a payload over inlineData bytes is written to w's buffer after the bytes before it
// (Writer.data). Errors: ev is not valid (the error says why; nothing is written then).
func (w *Writer) appendRecord(b []byte, ev *Event) ([]byte, error) {
	switch ev.Kind {
`)
	var genErr error
	groups := groupBy(s.Records, func(r *trace.RecordSpec) string {
		var c buf
		if r.Since > s.MinVersion {
			c.p("if w.version < %d {\nreturn nil, fmt.Errorf(\"trace: %%v records need format version %d or later, not %%d\", ev.Kind, w.version)\n}\n", r.Since, r.Since)
		}
		e := &encoder{s: s, b: &c}
		if err := e.check(r.Fields, "ev", "ev.Kind"); err != nil && genErr == nil {
			genErr = fmt.Errorf("record %s: %w", r.Name, err)
		}
		c.p("b = append(b, byte(ev.Kind))\n")
		e.encode(r.Fields, "ev")
		return c.String()
	})
	if genErr != nil {
		return nil, genErr
	}
	for _, g := range groups {
		b.p("\tcase %s:\n%s", g.caseList(), g.body)
	}
	b.p(`	default:
		return nil, fmt.Errorf("trace: unknown record kind 0x%%02x", uint8(ev.Kind))
	}
	return b, nil
}
`)
	return b.Bytes(), nil
}

// encoder writes the checks and the encoding of fields.
type encoder struct {
	s *schema
	b *buf
}

// value is the Go expression of field f of the struct holder; for a count, the length of what
// it counts (an Event field it also fills must be 0 or that length).
func (e *encoder) value(fields []trace.FieldSpec, f *trace.FieldSpec, holder string) string {
	g := e.s.fields[f]
	if c := countOf(fields, f.Name); c != nil {
		return "len(" + holder + "." + e.s.fields[c].name + ")"
	}
	if g.self {
		return holder
	}
	return holder + "." + g.name
}

// check writes the checks of fields of the struct holder; in is the Go expression naming
// what holds them in messages.
func (e *encoder) check(fields []trace.FieldSpec, holder, in string) error {
	p := e.b.p
	for i := range fields {
		f := &fields[i]
		g := e.s.fields[f]
		x := e.value(fields, f, holder)
		switch {
		case f.Max != "":
			counted := countOf(fields, f.Name)
			if counted.Enc == trace.EncBytes {
				p("if %s > %s {\nreturn nil, fmt.Errorf(\"trace: %%v %s of %%d bytes exceeds %%d\", %s, %s, %s)\n}\n", x, f.Max, counted.Name, in, x, f.Max)
			} else {
				p("if %s > %s {\nreturn nil, fmt.Errorf(\"trace: %%v of %%d %ss exceeds %%d\", %s, %s, %s)\n}\n", x, f.Max, counted.ElemName, in, x, f.Max)
			}
			if g.name != "" {
				y := holder + "." + g.name
				p("if %s != 0 && %s != uint64(%s) {\nreturn nil, fmt.Errorf(\"trace: %%v with %s %%d and %%d bytes of %s\", %s, %s, %s)\n}\n",
					y, y, x, f.Name, counted.Name, in, y, x)
			}
		case f.Enc == trace.EncStr:
			p("if len(%s) > MaxString {\nreturn nil, fmt.Errorf(\"trace: %%v %s of %%d bytes exceeds %%d\", %s, len(%s), MaxString)\n}\n", x, f.Name, in, x)
		case f.Enum != "":
			p("if !%s.validIn(w.version) {\nreturn nil, fmt.Errorf(\"trace: %%v %s %%d out of range\", %s, %s)\n}\n", x, f.Name, in, x)
		case f.StrictFlags != "":
			p("if %s&^%s != 0 {\nreturn nil, fmt.Errorf(\"trace: %%v %s %%#x out of range\", %s, %s)\n}\n", x, f.StrictFlags, f.Name, in, x)
		}
		if f.NonZero != "" {
			p("if %s == 0 {\nreturn nil, fmt.Errorf(\"trace: bad %%v %s 0: %s\", %s)\n}\n", x, f.Name, f.NonZero, in)
		}
		if f.Enc == trace.EncList {
			var c buf
			sub := &encoder{s: e.s, b: &c}
			if err := sub.check(f.Elem, "e", fmt.Sprintf("%q", f.ElemName)); err != nil {
				return err
			}
			if c.Len() > 0 {
				p("for j := range %s {\ne := &%s[j]\n%s}\n", x, x, c.String())
			}
		}
	}
	return nil
}

// encode writes the encoding of fields of the struct holder (the kind byte is written).
func (e *encoder) encode(fields []trace.FieldSpec, holder string) {
	p := e.b.p
	for i := range fields {
		f := &fields[i]
		g := e.s.fields[f]
		x := e.value(fields, f, holder)
		if f.Since > e.s.MinVersion {
			p("if w.version >= %d {\n", f.Since)
		}
		switch f.Enc {
		case trace.EncUvarint:
			if g.typ.Kind() != reflect.Uint64 || countOf(fields, f.Name) != nil {
				x = "uint64(" + x + ")"
			}
			p("b = binary.AppendUvarint(b, %s)\n", x)
		case trace.EncSvarint:
			p("b = binary.AppendVarint(b, %s)\n", x)
		case trace.EncAddr:
			p("b = binary.AppendVarint(b, int64(%s-w.last))\nw.last = %s\n", x, x)
		case trace.EncU8:
			v := "byte(" + x + ")"
			if g.typ.Name() == "uint8" {
				v = x
			}
			for _, bit := range f.Bits {
				v += fmt.Sprintf(" | bitIf(%s.%s, %s)", holder, bit.Go, bit.Const)
			}
			p("b = append(b, %s)\n", v)
		case trace.EncStr:
			p("b = appendStr(b, %s)\n", x)
		case trace.EncBytes:
			p("b = w.data(b, %s)\n", x)
		case trace.EncList:
			if len(f.Elem) == 1 && e.s.fields[&f.Elem[0]].self {
				p("for _, e := range %s {\n", x)
			} else {
				p("for j := range %s {\ne := &%s[j]\n", x, x)
			}
			sub := &encoder{s: e.s, b: e.b}
			sub.encode(f.Elem, "e")
			p("}\n")
		}
		if f.Since > e.s.MinVersion {
			p("}\n")
		}
	}
}
