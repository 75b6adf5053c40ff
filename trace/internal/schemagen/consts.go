package schemagen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// genConsts writes trace/schema_gen.go: the constants of the format, the enum types, their
// names and checks.
func genConsts(s *schema) ([]byte, error) {
	var b buf
	goHeader(&b, "strconv")

	b.p("// Magic is the first %d bytes of every trace file.\nconst Magic = %q\n\n", len(s.Magic), s.Magic)
	var added []string
	for _, v := range s.Versions {
		added = append(added, fmt.Sprintf("version %d added %s", v.Version, strings.ReplaceAll(v.Added, "`", "")))
	}
	b.p("%s", wrap(fmt.Sprintf("Version is the format version this package writes. %s.", capitalize(strings.Join(added, "; "))), "// ", 100))
	b.p("const Version = %d\n\n", s.Version)
	b.p("%s", wrap("MinVersion is the oldest format version this package reads. A trace of an older version is read as one of Version without the records, fields and values added after its version.", "// ", 100))
	b.p("const MinVersion = %d\n\n", s.MinVersion)
	b.p("// HeaderSize is the size of the fixed file header in bytes.\nconst HeaderSize = %d\n\n", headerSize(s))

	b.p("// Kind is the one-byte code that starts every record.\ntype Kind uint8\n\n")
	b.p("// Record kinds, in the order of docs/trace-format.md.\nconst (\n")
	for _, r := range s.Records {
		b.p("\t%s Kind = 0x%02X // %s%s\n", r.Go, r.Code, r.Short, s.since(r.Since))
	}
	b.p("\n\t// KindLast is the highest record kind of this version.\n\tKindLast = %s\n)\n\n", s.Records[len(s.Records)-1].Go)

	// Bits of enum bytes and flag bits, each constant once.
	type flagConst struct {
		goName, short string
		value         uint64
	}
	var flagConsts []flagConst
	seen := map[string]uint64{}
	add := func(goName, short string, value uint64) error {
		if v, ok := seen[goName]; ok {
			if v != value {
				return fmt.Errorf("flag %s declared with values %#x and %#x", goName, v, value)
			}
			return nil
		}
		seen[goName] = value
		flagConsts = append(flagConsts, flagConst{goName, short, value})
		return nil
	}
	var err error
	for _, h := range s.Header {
		for _, fl := range h.Flags {
			if e := add(fl.Go, fl.Short, 1<<fl.Bit); e != nil {
				err = e
			}
		}
	}
	walkFields(s, func(r *trace.RecordSpec, f *trace.FieldSpec) {
		for _, bit := range f.Bits {
			if e := add(bit.Const, fmt.Sprintf("%s: %s", enumUsers(s, bit.Const), bit.Doc), uint64(bit.Mask)); e != nil {
				err = e
			}
		}
		for _, fl := range f.Flags {
			if e := add(fl.Go, fl.Short, 1<<fl.Bit); e != nil {
				err = e
			}
		}
		if f.StrictFlags != "" {
			var all uint64
			for _, fl := range f.Flags {
				all |= 1 << fl.Bit
			}
			if e := add(f.StrictFlags, "the bits of "+r.Name+" "+f.Name+" defined by this version", all); e != nil {
				err = e
			}
		}
	})
	if err != nil {
		return nil, err
	}
	b.p("// Bits and flags of the byte and flags fields of records (docs/trace-format.md).\nconst (\n")
	for _, c := range flagConsts {
		if c.value&(c.value-1) == 0 {
			b.p("\t%s = 1 << %d // %s\n", c.goName, bits.TrailingZeros64(c.value), c.short)
		} else if c.value&(c.value+1) == 0 {
			b.p("\t%s = 1<<%d - 1 // %s\n", c.goName, bits.Len64(c.value), c.short)
		} else {
			b.p("\t%s = %#x // %s\n", c.goName, c.value, c.short)
		}
	}
	b.p(")\n\n")

	for _, e := range s.Enums {
		b.p("%s", wrap(fmt.Sprintf("%s is %s.", e.Type, e.Short), "// ", 100))
		b.p("type %s uint8\n\n// Values of %s.\nconst (\n", e.Type, e.Type)
		for _, v := range e.Values {
			comment := v.Short
			if comment != "" || v.Since != 0 {
				comment = strings.TrimPrefix(comment+s.since(v.Since), " ")
				b.p("\t%s %s = %d // %s\n", v.Go, e.Type, v.Value, comment)
			} else {
				b.p("\t%s %s = %d\n", v.Go, e.Type, v.Value)
			}
		}
		if e.Last != "" {
			b.p("\n\t// %s is the highest %s of this version.\n\t%s = %s\n", e.Last, e.Type, e.Last, e.Values[len(e.Values)-1].Go)
		}
		b.p(")\n\n")
	}

	b.p("// Limits a reader enforces; larger values are reported as corruption.\nconst (\n")
	for _, l := range s.Limits {
		b.p("\t%s = %s // %s\n", l.Go, shiftLiteral(l.Value), l.Short)
	}
	b.p(")\n\n")

	// Names.
	b.p("var kindNames = [...]string{")
	for _, r := range s.Records {
		b.p("%s: %q, ", r.Go, r.Name)
	}
	b.p("}\n\n")
	b.p(`// String returns the record kind's name as docs/trace-format.md spells it ("STORE",
// "NT_STORE", ...), or "KIND(0xNN)" for an unknown code.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "KIND(0x" + strconv.FormatUint(uint64(k), 16) + ")"
}

// Valid reports whether k is a record kind of the format version this package writes.
func (k Kind) Valid() bool { return int(k) < len(kindNames) && kindNames[k] != "" }

`)
	for _, e := range s.Enums {
		recv := strings.ToLower(e.Type[:1])
		names := lowerFirst(e.Type) + "Names"
		b.p("var %s = [...]string{", names)
		var quoted []string
		for _, v := range e.Values {
			b.p("%s: %q, ", v.Go, v.Name)
			quoted = append(quoted, fmt.Sprintf("%q", v.Name))
		}
		b.p("}\n\n")
		prefix, verb, suffix, err := splitVerb(e.Unknown)
		if err != nil {
			return nil, fmt.Errorf("enum %s: %w", e.Type, err)
		}
		conv := "strconv.Itoa(int(" + recv + "))"
		if verb == "x" {
			conv = "strconv.FormatUint(uint64(" + recv + "), 16)"
		}
		b.p("%s", wrap(fmt.Sprintf("String returns the name of the %s as docs/trace-format.md spells it (%s), or %q for an unknown value.",
			e.Type, strings.Join(quoted, ", "), strings.Replace(e.Unknown, "%"+verb, "N", 1)), "// ", 100))
		b.p("func (%s %s) String() string {\n\tif int(%s) < len(%s) && %s[%s] != \"\" {\n\t\treturn %s[%s]\n\t}\n",
			recv, e.Type, recv, names, names, recv, names, recv)
		b.p("\treturn %q + %s + %q\n}\n\n", prefix, conv, suffix)

		// validIn: the values added after MinVersion, then a range (or set) check.
		b.p("// validIn reports whether %s is a %s of format version v.\n", recv, e.Type)
		b.p("func (%s %s) validIn(v uint16) bool {\n", recv, e.Type)
		var versioned []trace.EnumValue
		for _, v := range e.Values {
			if v.Since > s.MinVersion {
				versioned = append(versioned, v)
			}
		}
		if len(versioned) > 0 {
			b.p("\tswitch %s {\n", recv)
			for _, v := range versioned {
				b.p("\tcase %s:\n\t\treturn v >= %d\n", v.Go, v.Since)
			}
			b.p("\t}\n")
		}
		first, last := e.Values[0], e.Values[len(e.Values)-1]
		if int(last.Value)-int(first.Value) == len(e.Values)-1 {
			b.p("\treturn %s >= %s && %s <= %s\n}\n\n", recv, first.Go, recv, last.Go)
		} else {
			var all []string
			for _, v := range e.Values {
				all = append(all, v.Go)
			}
			b.p("\tswitch %s {\n\tcase %s:\n\t\treturn true\n\t}\n\treturn false\n}\n\n", recv, strings.Join(all, ", "))
		}
	}
	return b.Bytes(), nil
}

// walkFields calls fn on every field of every record, list elements included.
func walkFields(s *schema, fn func(r *trace.RecordSpec, f *trace.FieldSpec)) {
	var walk func(r *trace.RecordSpec, fields []trace.FieldSpec)
	walk = func(r *trace.RecordSpec, fields []trace.FieldSpec) {
		for i := range fields {
			fn(r, &fields[i])
			walk(r, fields[i].Elem)
		}
	}
	for i := range s.Records {
		walk(&s.Records[i], s.Records[i].Fields)
	}
}

// enumUsers names the records whose fields have the bit named constName ("FLUSH, FENCE").
func enumUsers(s *schema, constName string) string {
	var names []string
	walkFields(s, func(r *trace.RecordSpec, f *trace.FieldSpec) {
		for _, b := range f.Bits {
			if b.Const == constName {
				names = append(names, r.Name)
			}
		}
	})
	return strings.Join(names, ", ")
}

func headerSize(s *schema) int {
	n := 0
	for _, h := range s.Header {
		n += h.Size
	}
	return n
}

// shiftLiteral writes v as "a << n" when v is a multiple of a power of two above 1024.
func shiftLiteral(v uint64) string {
	if v >= 1024 && v&(v-1) == 0 {
		n := bits.TrailingZeros64(v)
		return fmt.Sprintf("1 << %d", n)
	}
	return fmt.Sprint(v)
}

// splitVerb splits "flush(%d)" into "flush(", "d", ")".
func splitVerb(f string) (prefix, verb, suffix string, err error) {
	i := strings.Index(f, "%")
	if i < 0 || i+1 >= len(f) || (f[i+1] != 'd' && f[i+1] != 'x') || strings.Contains(f[i+2:], "%") {
		return "", "", "", fmt.Errorf("format %q needs exactly one %%d or %%x", f)
	}
	return f[:i], f[i+1 : i+2], f[i+2:], nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
