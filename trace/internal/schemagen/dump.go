package schemagen

import (
	"fmt"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// genDump writes trace/dump_gen.go: appendFields, the fields of each kind as Dump prints them.
func genDump(s *schema) ([]byte, error) {
	var b buf
	goHeader(&b, "fmt")
	b.p(`// appendFields appends the fields of ev as Dump prints them: each field's format in the order
// of the record (the site last, with its place when r knows it), then the bits of its enum
// bytes; r resolves site ids; data is printed up to maxBytes bytes.
func appendFields(b []byte, r *Reader, ev *Event, maxBytes int) []byte {
	switch ev.Kind {
`)
	var genErr error
	groups := groupBy(s.Records, func(r *trace.RecordSpec) string {
		body, err := dumpBody(s, r)
		if err != nil && genErr == nil {
			genErr = fmt.Errorf("record %s: %w", r.Name, err)
		}
		if body == "" {
			body = "// no fields\n"
		}
		return body
	})
	if genErr != nil {
		return nil, genErr
	}
	for _, g := range groups {
		b.p("\tcase %s:\n%s", g.caseList(), g.body)
	}
	b.p("\t}\n\treturn b\n}\n")
	return b.Bytes(), nil
}

func dumpBody(s *schema, r *trace.RecordSpec) (string, error) {
	var c buf
	if r.DumpFunc != "" {
		c.p("b = %s(b, ev)\n", r.DumpFunc)
		return c.String(), nil
	}
	order := r.Fields
	if len(r.DumpOrder) > 0 {
		order = nil
		for _, name := range r.DumpOrder {
			order = append(order, *findField(r.Fields, name))
		}
	}
	// Consecutive plain formats go into one Appendf.
	var formats, args []string
	flush := func() {
		if len(formats) > 0 {
			c.p("b = fmt.Appendf(b, %q, %s)\n", " "+strings.Join(formats, " "), strings.Join(args, ", "))
			formats, args = nil, nil
		}
	}
	isSite := func(f *trace.FieldSpec) bool { return f.Name == "site" && f.Go == "Site" }
	for i := range order {
		f := findField(r.Fields, order[i].Name)
		g := s.fields[f]
		switch {
		case isSite(f): // printed last
		case f.Enc == trace.EncList:
			return "", fmt.Errorf("field %s: a list needs a DumpFunc", f.Name)
		case len(f.Flags) > 0:
			flush()
			names := make([]string, 0, len(f.Flags))
			for _, fl := range f.Flags {
				for uint(len(names)) < fl.Bit {
					names = append(names, `""`)
				}
				names = append(names, fmt.Sprintf("%q", fl.Name))
			}
			c.p("b = appendFlags(b, uint64(ev.%s), []string{%s})\n", g.name, strings.Join(names, ", "))
		case f.Dump == "":
		case f.Enc == trace.EncBytes:
			if f.Dump != "data" {
				return "", fmt.Errorf("field %s: bytes print as data", f.Name)
			}
			flush()
			if f.DumpOmitEmpty {
				c.p("if len(ev.%s) > 0 {\nb = appendData(b, ev.%s, maxBytes)\n}\n", g.name, g.name)
			} else {
				c.p("b = appendData(b, ev.%s, maxBytes)\n", g.name)
			}
		default:
			x := "ev." + g.name
			if cnt := countOf(r.Fields, f.Name); cnt != nil && g.name == "" {
				x = "len(ev." + s.fields[cnt].name + ")"
			}
			if f.DumpOmitEmpty {
				flush()
				c.p("if %s != %s {\nb = fmt.Appendf(b, %q, %s)\n}\n", x, zero(g.typ), " "+f.Dump, x)
				continue
			}
			formats = append(formats, f.Dump)
			args = append(args, x)
		}
	}
	flush()
	for i := range r.Fields {
		for _, bit := range r.Fields[i].Bits {
			c.p("if ev.%s {\nb = append(b, %q...)\n}\n", bit.Go, " "+bit.Name)
		}
	}
	if f := findField(r.Fields, "site"); f != nil && isSite(f) {
		c.p("b = appendSiteField(b, r, ev.Site)\n")
	}
	return c.String(), nil
}
