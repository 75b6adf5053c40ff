package testenv

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// maxDiffs bounds the differences Diff lists.
const maxDiffs = 20

// Diff compares two values of the same type field by field, element by element and key by key,
// and returns their differences, one line each ("path: want ... got ..."), or "" when they are
// equal. A nil slice or map equals an empty one, since a JSON round trip may turn either into
// the other (`null` and `[]` under omitempty); everything else is compared exactly (strings,
// numbers, booleans, pointers by what they point to). At most 20 differences are listed.
func Diff(want, got any) string {
	var d differ
	d.walk("", reflect.ValueOf(want), reflect.ValueOf(got))
	if d.more > 0 {
		d.lines = append(d.lines, fmt.Sprintf("... and %d more differences", d.more))
	}
	return strings.Join(d.lines, "\n")
}

type differ struct {
	lines []string
	more  int
}

func (d *differ) add(path, format string, args ...any) {
	if len(d.lines) >= maxDiffs {
		d.more++
		return
	}
	if path == "" {
		path = "(value)"
	}
	d.lines = append(d.lines, path+": "+fmt.Sprintf(format, args...))
}

// show formats a value for a difference line; v may hold an unexported field.
func show(v reflect.Value) string {
	if !v.IsValid() {
		return "<nil>"
	}
	return fmt.Sprintf("%#v", v)
}

func (d *differ) walk(path string, a, b reflect.Value) {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			d.add(path, "want %s, got %s", show(a), show(b))
		}
		return
	}
	if a.Type() != b.Type() {
		d.add(path, "want type %v, got type %v", a.Type(), b.Type())
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				d.add(path, "want %s, got %s", show(a), show(b))
			}
			return
		}
		d.walk(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			d.walk(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			d.add(path, "want %d elements, got %d", a.Len(), b.Len())
		}
		for i := range min(a.Len(), b.Len()) {
			d.walk(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
		}
	case reflect.Map:
		keys := map[string]reflect.Value{}
		for _, k := range append(a.MapKeys(), b.MapKeys()...) {
			keys[fmt.Sprintf("%#v", k)] = k
		}
		for _, n := range slices.Sorted(maps.Keys(keys)) {
			k := keys[n]
			av, bv := a.MapIndex(k), b.MapIndex(k)
			p := fmt.Sprintf("%s[%s]", path, n)
			if !av.IsValid() || !bv.IsValid() {
				d.add(p, "want %s, got %s", show(av), show(bv))
				continue
			}
			d.walk(p, av, bv)
		}
	case reflect.String:
		if a.String() != b.String() {
			d.add(path, "want %q, got %q", a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			d.add(path, "want %v, got %v", a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			d.add(path, "want %d, got %d", a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			d.add(path, "want %d, got %d", a.Uint(), b.Uint())
		}
	case reflect.Float32, reflect.Float64:
		if a.Float() != b.Float() {
			d.add(path, "want %v, got %v", a.Float(), b.Float())
		}
	case reflect.Complex64, reflect.Complex128:
		if a.Complex() != b.Complex() {
			d.add(path, "want %v, got %v", a.Complex(), b.Complex())
		}
	default: // funcs, channels, unsafe pointers: identity
		if a.Pointer() != b.Pointer() {
			d.add(path, "want %s, got %s", show(a), show(b))
		}
	}
}
