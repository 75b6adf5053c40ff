package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
)

// notReport is the error of a file name that does not decode as a JSON report of scry
// (docs/findings-json.md): "NAME is not a JSON report of scry: " and what is wrong in JSON's
// terms (empty, not JSON at byte N, cut short, a field of the wrong JSON type), never the Go
// types the decoder names. data is the file's content, err json.Unmarshal's error.
func notReport(name string, data []byte, err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	why := err.Error()
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		why = "the file is empty"
	case errors.As(err, &typ):
		where := "the file holds"
		if typ.Field != "" {
			where = fmt.Sprintf("its %q is", typ.Field)
		}
		why = fmt.Sprintf("%s %s where a report has %s", where, article(typ.Value), jsonKind(typ.Type))
	case err.Error() == "unexpected end of JSON input":
		why = "its JSON is cut short"
	case errors.As(err, &syn):
		why = fmt.Sprintf("not JSON (at byte %d: %v)", syn.Offset, syn)
	}
	return fmt.Errorf("%s is not a JSON report of scry: %s (write one with --format json -o FILE)", name, why)
}

// article puts "a" or "an" before a JSON value's kind as encoding/json names it ("array",
// "number", "string", "object", "bool", or "number N" for N out of range).
func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	case "number", "string":
		return "a " + v
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n // out of the Go type's range
	}
	return v
}

// jsonKind names the JSON kind a Go type decodes from: an array, an object, a string, a number
// or a boolean.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

// ReadFile reads the file at path that the user named as what ("a JSON report", "a
// suppressions file"). Errors name path once: a directory ("PATH is a directory, not WHAT"), or
// os.ReadFile's error.
func ReadFile(path, what string) ([]byte, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not %s", path, what)
	}
	return os.ReadFile(path)
}
