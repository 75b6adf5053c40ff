// Package schemagen writes, from the declaration of the trace format (trace.Schema), the files
// that follow from it: the Go constants and names, the per-record codecs of the Reader and the
// Writer and the per-record fields of Dump (package trace), the C header of the runtime
// (native/include/scry_trace_format.h: constants and record encoders) and the tables of
// docs/trace-format.md. trace/internal/gentrace writes the files (`go generate ./trace`);
// trace's TestGenerated compares them with the files on disk.
//
// The generator imports package trace (for the table and, through reflection, the Go types of
// Event, Site and Dep), so package trace must compile to regenerate: a change to the
// hand-written code that the generated code calls must keep the old names until the files are
// regenerated.
package schemagen

import (
	"bytes"
	"fmt"
	"go/format"
	"reflect"
	"slices"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// Generator names the generator in the "Code generated" line of every generated file.
const Generator = "trace/internal/gentrace from trace/schema.go"

// File is one generated file.
type File struct {
	Path string // relative to the repository root
	Text []byte
}

// Paths of the generated files, relative to the repository root.
const (
	PathConsts = "trace/schema_gen.go"
	PathReader = "trace/reader_gen.go"
	PathWriter = "trace/writer_gen.go"
	PathDump   = "trace/dump_gen.go"
	PathC      = "native/include/scry_trace_format.h"
	PathDoc    = "docs/trace-format.md"
)

// Generate returns every file generated from trace.Schema(), in the order of the Path
// constants. read returns the current content of a repository file: the hand-written parts of
// docs/trace-format.md are kept. Errors: an inconsistent schema, a docs file without the
// markers of a generated table, or the error of read.
func Generate(read func(path string) ([]byte, error)) ([]File, error) {
	s, err := load(trace.Schema())
	if err != nil {
		return nil, err
	}
	var files []File
	for _, g := range []struct {
		path string
		gen  func(*schema) ([]byte, error)
	}{
		{PathConsts, genConsts},
		{PathReader, genReader},
		{PathWriter, genWriter},
		{PathDump, genDump},
	} {
		src, err := g.gen(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.path, err)
		}
		out, err := format.Source(src)
		if err != nil {
			return nil, fmt.Errorf("%s: generated code does not parse: %w\n%s", g.path, err, src)
		}
		files = append(files, File{g.path, out})
	}
	c, err := genC(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PathC, err)
	}
	files = append(files, File{PathC, c})
	doc, err := read(PathDoc)
	if err != nil {
		return nil, err
	}
	doc, err = genDoc(s, doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PathDoc, err)
	}
	return append(files, File{PathDoc, doc}), nil
}

// schema is trace.Schema() with the Go types of the fields resolved and the checks done.
type schema struct {
	*trace.FormatSpec
	enums  map[string]*trace.EnumSpec
	limits map[string]trace.LimitSpec
	fields map[*trace.FieldSpec]goField // Go target of every field
}

// goField is the Go target of a field: the struct field it is read into, and its type.
type goField struct {
	name string       // struct field, "" for a count or the element of a scalar list
	typ  reflect.Type // its type (for a count: uint64; for a scalar list's element: the element type)
	elem reflect.Type // List: the element type
	self bool         // the single field of a list of scalars: the element itself
}

var eventType = reflect.TypeOf(trace.Event{})

func load(f *trace.FormatSpec) (*schema, error) {
	s := &schema{FormatSpec: f, enums: map[string]*trace.EnumSpec{}, limits: map[string]trace.LimitSpec{},
		fields: map[*trace.FieldSpec]goField{}}
	versionOK := func(v uint16) bool { return v == 0 || v > f.MinVersion && v <= f.Version }
	for i := range f.Enums {
		e := &f.Enums[i]
		s.enums[e.Type] = e
		for j, v := range e.Values {
			if j > 0 && v.Value <= e.Values[j-1].Value {
				return nil, fmt.Errorf("enum %s: values out of order at %s", e.Type, v.Go)
			}
			if !versionOK(v.Since) {
				return nil, fmt.Errorf("enum %s: %s added in unknown version %d", e.Type, v.Go, v.Since)
			}
		}
	}
	for _, l := range f.Limits {
		s.limits[l.Go] = l
	}
	for i, v := range f.Versions {
		if v.Version != f.MinVersion+1+uint16(i) {
			return nil, fmt.Errorf("versions: entry %d is version %d", i, v.Version)
		}
	}
	if len(f.Versions) != int(f.Version-f.MinVersion) {
		return nil, fmt.Errorf("versions: %d entries for versions %d to %d", len(f.Versions), f.MinVersion+1, f.Version)
	}
	for i := range f.Records {
		r := &f.Records[i]
		if i > 0 && r.Code <= f.Records[i-1].Code {
			return nil, fmt.Errorf("record %s: codes out of order", r.Name)
		}
		if !versionOK(r.Since) {
			return nil, fmt.Errorf("record %s: added in unknown version %d", r.Name, r.Since)
		}
		if err := s.loadFields(r.Name, r.Fields, eventType, versionOK); err != nil {
			return nil, err
		}
		for _, name := range r.DumpOrder {
			if findField(r.Fields, name) == nil {
				return nil, fmt.Errorf("record %s: DumpOrder names unknown field %q", r.Name, name)
			}
		}
		if r.Streamed && (len(r.Fields) != 2 || r.Fields[1].Enc != trace.EncList) {
			return nil, fmt.Errorf("record %s: streamed but not a count and a list", r.Name)
		}
	}
	return s, nil
}

func (s *schema) loadFields(in string, fields []trace.FieldSpec, st reflect.Type, versionOK func(uint16) bool) error {
	addrs := 0
	for i := range fields {
		f := &fields[i]
		where := in + "." + f.Name
		if !versionOK(f.Since) {
			return fmt.Errorf("%s: added in unknown version %d", where, f.Since)
		}
		var g goField
		switch {
		case f.Go != "":
			sf, ok := st.FieldByName(f.Go)
			if !ok {
				return fmt.Errorf("%s: %s has no field %s", where, st, f.Go)
			}
			g = goField{name: f.Go, typ: sf.Type}
		case st.Kind() != reflect.Struct: // the element of a list of scalars
			if len(fields) != 1 {
				return fmt.Errorf("%s: a list of %s has one field", where, st)
			}
			g = goField{typ: st, self: true}
		default: // a count
			if !isCount(fields, f.Name) {
				return fmt.Errorf("%s: no Go field, and no Bytes or List field counts with it", where)
			}
			if f.Max == "" {
				return fmt.Errorf("%s: a count without a limit", where)
			}
			g = goField{typ: reflect.TypeOf(uint64(0))}
		}
		if f.Max != "" {
			if f.Enc != trace.EncUvarint {
				return fmt.Errorf("%s: a limit on a %s", where, encName(f.Enc))
			}
			if _, ok := s.limits[f.Max]; !ok {
				return fmt.Errorf("%s: unknown limit %s", where, f.Max)
			}
		}
		want := map[trace.Encoding][]reflect.Kind{
			trace.EncU8:      {reflect.Uint8},
			trace.EncUvarint: {reflect.Uint32, reflect.Uint64},
			trace.EncSvarint: {reflect.Int64},
			trace.EncAddr:    {reflect.Uint64},
			trace.EncStr:     {reflect.String},
			trace.EncBytes:   {reflect.Slice},
			trace.EncList:    {reflect.Slice},
		}[f.Enc]
		if want == nil {
			return fmt.Errorf("%s: unknown encoding %d", where, f.Enc)
		}
		if !slices.Contains(want, g.typ.Kind()) {
			return fmt.Errorf("%s: Go type %s does not fit encoding %s", where, g.typ, encName(f.Enc))
		}
		switch f.Enc {
		case trace.EncAddr:
			if addrs++; addrs > 1 {
				return fmt.Errorf("%s: a second addr field", where)
			}
		case trace.EncBytes, trace.EncList:
			if j := fieldIndex(fields, f.Len); j < 0 || j >= i {
				return fmt.Errorf("%s: count %q is not an earlier field", where, f.Len)
			}
		}
		if f.Enum != "" {
			e, ok := s.enums[f.Enum]
			if !ok || f.Enc != trace.EncU8 || g.typ.Name() != f.Enum {
				return fmt.Errorf("%s: enum %s needs a known enum, a u8 and a Go field of its type", where, f.Enum)
			}
			for _, b := range f.Bits {
				for _, v := range e.Values {
					if v.Value&b.Mask != 0 {
						return fmt.Errorf("%s: bit %#x overlaps value %s", where, b.Mask, v.Go)
					}
				}
			}
		}
		if f.Enc == trace.EncList {
			g.elem = g.typ.Elem()
			if len(f.Elem) == 0 || f.ElemName == "" {
				return fmt.Errorf("%s: a list without element fields or name", where)
			}
			if err := s.loadFields(where, f.Elem, g.elem, versionOK); err != nil {
				return err
			}
			if i != len(fields)-1 {
				return fmt.Errorf("%s: a list is the last field of its record", where)
			}
		}
		s.fields[f] = g
	}
	return nil
}

func fieldIndex(fields []trace.FieldSpec, name string) int {
	return slices.IndexFunc(fields, func(f trace.FieldSpec) bool { return f.Name == name })
}

func findField(fields []trace.FieldSpec, name string) *trace.FieldSpec {
	if i := fieldIndex(fields, name); i >= 0 {
		return &fields[i]
	}
	return nil
}

// isCount reports whether field name is the count of a Bytes or List field of fields.
func isCount(fields []trace.FieldSpec, name string) bool {
	return countOf(fields, name) != nil
}

// countOf returns the Bytes or List field that field name counts, or nil.
func countOf(fields []trace.FieldSpec, name string) *trace.FieldSpec {
	for i := range fields {
		if (fields[i].Enc == trace.EncBytes || fields[i].Enc == trace.EncList) && fields[i].Len == name {
			return &fields[i]
		}
	}
	return nil
}

func encName(e trace.Encoding) string {
	switch e {
	case trace.EncU8:
		return "u8"
	case trace.EncUvarint:
		return "uvarint"
	case trace.EncSvarint:
		return "svarint"
	case trace.EncAddr:
		return "addr"
	case trace.EncStr:
		return "str"
	case trace.EncBytes:
		return "bytes"
	case trace.EncList:
		return "list"
	}
	return fmt.Sprintf("encoding(%d)", e)
}

// fieldsText lists fields as the docs do ("`uvarint site`, `addr`, `uvarint size`,
// `bytes(size)`"); md quotes them for Markdown.
func fieldsText(s *schema, fields []trace.FieldSpec, md bool) string {
	q := func(x string) string {
		if md {
			return "`" + x + "`"
		}
		return x
	}
	var parts []string
	for i := range fields {
		f := &fields[i]
		var t string
		switch f.Enc {
		case trace.EncAddr:
			t = q(f.Name)
		case trace.EncBytes:
			t = q("bytes(" + f.Len + ")")
		case trace.EncList:
			if hasDocs(f.Elem) {
				t = fmt.Sprintf("then %s × %s", f.Len, f.ElemName)
			} else if len(f.Elem) == 1 {
				t = fmt.Sprintf("then %s × %s", f.Len, fieldsText(s, f.Elem, md))
			} else {
				t = fmt.Sprintf("then %s × (%s)", f.Len, fieldsText(s, f.Elem, md))
			}
		default:
			t = q(encName(f.Enc) + " " + f.Name)
		}
		parts = append(parts, t+s.since(f.Since))
	}
	return strings.Join(parts, ", ")
}

// hasDocs reports whether element fields have docs: their list has its own table.
func hasDocs(fields []trace.FieldSpec) bool {
	for _, f := range fields {
		if f.Doc != "" {
			return true
		}
	}
	return false
}

// group is a set of record kinds whose generated code is the same text.
type group struct {
	kinds []*trace.RecordSpec
	body  string
}

// groupBy groups records whose body (from gen; "" leaves a record out) is the same, in the
// order of their first record.
func groupBy(recs []trace.RecordSpec, gen func(*trace.RecordSpec) string) []*group {
	var out []*group
	byBody := map[string]*group{}
	for i := range recs {
		r := &recs[i]
		body := gen(r)
		if body == "" {
			continue
		}
		if g, ok := byBody[body]; ok {
			g.kinds = append(g.kinds, r)
			continue
		}
		g := &group{kinds: []*trace.RecordSpec{r}, body: body}
		byBody[body] = g
		out = append(out, g)
	}
	return out
}

// caseList is "KindA, KindB" for a group.
func (g *group) caseList() string {
	var names []string
	for _, r := range g.kinds {
		names = append(names, r.Go)
	}
	return strings.Join(names, ", ")
}

// buf is a bytes.Buffer with Printf.
type buf struct{ bytes.Buffer }

func (b *buf) p(format string, args ...any) { fmt.Fprintf(&b.Buffer, format, args...) }

// goHeader starts a generated Go file of package trace.
func goHeader(b *buf, imports ...string) {
	b.p("// Code generated by %s; DO NOT EDIT.\n\npackage trace\n\n", Generator)
	if len(imports) > 0 {
		b.p("import (\n")
		for _, imp := range imports {
			b.p("\t%q\n", imp)
		}
		b.p(")\n\n")
	}
}

// zero is the Go zero value literal of t.
func zero(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "false"
	case reflect.String:
		return `""`
	case reflect.Slice, reflect.Map, reflect.Pointer:
		return "nil"
	}
	return "0"
}

// since returns " (version N)" for a version after the first, else "".
func (s *schema) since(v uint16) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(" (version %d)", v)
}

// wrap breaks text into lines of at most width characters, each prefixed by prefix.
func wrap(text, prefix string, width int) string {
	var out strings.Builder
	line := prefix
	for _, w := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(w) > width {
			out.WriteString(strings.TrimRight(line, " ") + "\n")
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += w
	}
	out.WriteString(line + "\n")
	return out.String()
}
