package schemagen

import (
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// mutated returns a deep enough copy of trace.Schema() for edit to change records, fields and
// enums without touching the original.
func mutated(edit func(f *trace.FormatSpec)) *trace.FormatSpec {
	f := *trace.Schema()
	f.Records = append([]trace.RecordSpec(nil), f.Records...)
	for i := range f.Records {
		f.Records[i].Fields = append([]trace.FieldSpec(nil), f.Records[i].Fields...)
	}
	f.Enums = append([]trace.EnumSpec(nil), f.Enums...)
	for i := range f.Enums {
		f.Enums[i].Values = append([]trace.EnumValue(nil), f.Enums[i].Values...)
	}
	f.Versions = append([]trace.VersionSpec(nil), f.Versions...)
	edit(&f)
	return &f
}

func record(f *trace.FormatSpec, name string) *trace.RecordSpec {
	for i := range f.Records {
		if f.Records[i].Name == name {
			return &f.Records[i]
		}
	}
	panic("no record " + name)
}

// TestLoadRejects checks that the generator refuses an inconsistent schema with an error that
// says what is wrong, instead of generating code that does not compile or misreads.
func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(f *trace.FormatSpec)
		want string
	}{
		{"codes-out-of-order", func(f *trace.FormatSpec) { f.Records[1].Code = f.Records[0].Code }, "codes out of order"},
		{"unknown-go-field", func(f *trace.FormatSpec) { record(f, "STORE").Fields[0].Go = "Nowhere" }, "has no field Nowhere"},
		{"type-mismatch", func(f *trace.FormatSpec) { record(f, "STORE").Fields[0].Enc = trace.EncStr }, "does not fit encoding str"},
		{"count-after", func(f *trace.FormatSpec) {
			fs := record(f, "OUTPUT").Fields
			fs[2], fs[3] = fs[3], fs[2]
		}, `count "n" is not an earlier field`},
		{"count-without-limit", func(f *trace.FormatSpec) { record(f, "OUTPUT").Fields[2].Max = "" }, "a count without a limit"},
		{"unknown-limit", func(f *trace.FormatSpec) { record(f, "OUTPUT").Fields[2].Max = "MaxNothing" }, "unknown limit MaxNothing"},
		{"unknown-enum", func(f *trace.FormatSpec) { record(f, "FENCE").Fields[1].Enum = "NoSuchKind" }, "enum NoSuchKind"},
		{"record-version", func(f *trace.FormatSpec) { record(f, "OUTPUT").Since = 12 }, "unknown version 12"},
		{"field-version", func(f *trace.FormatSpec) { record(f, "OUTPUT").Fields[1].Since = 1 }, "unknown version 1"},
		{"versions", func(f *trace.FormatSpec) { f.Versions = f.Versions[1:] }, "versions"},
		{"enum-order", func(f *trace.FormatSpec) { f.Enums[0].Values[1].Value = 1 }, "values out of order"},
		{"dump-order", func(f *trace.FormatSpec) { record(f, "FS_OP").DumpOrder = []string{"nothing"} }, `unknown field "nothing"`},
		{"bit-overlap", func(f *trace.FormatSpec) {
			fl := &record(f, "FLUSH").Fields[1]
			fl.Bits = append([]trace.BitSpec(nil), fl.Bits...)
			fl.Bits[0].Mask = 2
		}, "overlaps value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(mutated(tt.edit))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("load: error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := load(mutated(func(*trace.FormatSpec) {})); err != nil {
		t.Errorf("load of the schema: %v", err)
	}
}

// TestGenDocMarkers checks the splicing of docs/trace-format.md: hand-written text is kept, the
// parts between markers are rewritten, and a missing or unknown part is an error.
func TestGenDocMarkers(t *testing.T) {
	s, err := load(trace.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	all.WriteString("# title\n\nhand-written\n")
	for _, name := range []string{"header", "limits", "records", "fs-ops", "sites", "dep-kinds", "schedule"} {
		all.WriteString("<!-- BEGIN GENERATED " + name + " -->\nold text\n<!-- END GENERATED " + name + " -->\nafter " + name + "\n")
	}
	out, err := genDoc(s, []byte(all.String()))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.HasPrefix(text, docFirstLine+"\n# title\n\nhand-written\n") || strings.Contains(text, "old text") ||
		!strings.Contains(text, "after dep-kinds\n") || !strings.Contains(text, "| 0x05 | `STORE` |") ||
		!strings.Contains(text, "| seed | `uvarint` | the seed") {
		t.Errorf("spliced doc:\n%s", text)
	}
	again, err := genDoc(s, out)
	if err != nil || string(again) != text {
		t.Errorf("generating twice changes the doc (error %v)", err)
	}
	for _, tt := range []struct{ name, doc, want string }{
		{"no-end", "<!-- BEGIN GENERATED records -->\n", "no end marker"},
		{"unknown", "<!-- BEGIN GENERATED nothing -->\n<!-- END GENERATED nothing -->\n", `unknown generated part "nothing"`},
		{"missing", "no markers\n", "no generated part"},
	} {
		if _, err := genDoc(s, []byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}
