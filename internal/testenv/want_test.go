package testenv

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClausesParseWant(t *testing.T) {
	tests := []struct {
		line string
		want []Want
		err  bool
	}{
		{`	r->data = 42; // want "unpersisted-store"`, []Want{{"a.c", 7, "unpersisted-store", ""}}, false},
		{`x = 1; // want "redundant-flush redundant-fence:unconfirmed"`, []Want{{"a.c", 7, "redundant-flush", ""}, {"a.c", 7, "redundant-fence", "unconfirmed"}}, false},
		{`x = 1; // want "mpb-violation"; property MPB after "slot"`, []Want{{"a.c", 7, "mpb-violation", ""}}, false},
		{`// want "unpersisted-store" (prose: a whole-line comment)`, nil, false},
		{`x = 1; // a comment that wants nothing`, nil, false},
		{`x = 1; // want unpersisted-store`, nil, true},
		{`x = 1; // want "unpersisted-store:fatal"`, nil, true},
	}
	for _, tt := range tests {
		var got []Want
		var err error
		for _, c := range Clauses(tt.line) {
			ws, _, e := ParseWant("a.c", 7, c)
			if e != nil {
				err = e
			}
			got = append(got, ws...)
		}
		if (err != nil) != tt.err {
			t.Errorf("%q: error %v, want error %v", tt.line, err, tt.err)
		}
		if !tt.err && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: wants %v, want %v", tt.line, got, tt.want)
		}
	}
	path := filepath.Join(t.TempDir(), "b.cpp")
	if err := os.WriteFile(path, []byte("int x;\n// want \"prose\"\nvoid f() { x = 1; } // want \"unpersisted-store\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Wants(path)
	if err != nil || !reflect.DeepEqual(got, []Want{{"b.cpp", 3, "unpersisted-store", ""}}) {
		t.Errorf("Wants(b.cpp) = %v, %v", got, err)
	}
}
