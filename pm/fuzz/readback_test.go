package fuzz

import (
	"fmt"
	"testing"
)

// TestReadBack checks the reads appended to a search's best workload: one per distinct key the
// workload writes, in first-appearance order, in the program's own language (mapcli's c K; a
// copy of the seeds' read line with the key for its first number), none when the seeds have no
// read line.
func TestReadBack(t *testing.T) {
	tests := []struct {
		name string
		back ReadBack
		w    []string
		want []string
	}{
		{"key-value: inserts, removes, checks", KVReadBack,
			[]string{"i 5", "i 7", "c 5", "r 5", "n 9", "i 7", "p", "i x"},
			[]string{"c 5", "c 7", "c 9"}},
		{"key-value: nothing written", KVReadBack, []string{"c 1", "p"}, nil},
		{"template: WITCHER's get line", TemplateReadBack([]string{"i;10;100;0;", "g;10;", "d;10;"}),
			[]string{"i;42;7;0;", "d;8;", "g;42;", "i;42;9;0;"},
			[]string{"g;42;", "g;8;"}},
		{"template: a spaced read verb", TemplateReadBack([]string{"insert 1 2", "get 1"}),
			[]string{"insert 3 4", "insert 5 6"},
			[]string{"get 3", "get 5"}},
		{"template: no read line in the seeds", TemplateReadBack([]string{"i;1;2;0;", "d;1;"}), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.back == nil {
				if tt.want != nil {
					t.Fatal("no read-back")
				}
				return
			}
			if got := tt.back(tt.w); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("read-back of %q = %q, want %q", tt.w, got, tt.want)
			}
		})
	}
	var many []string
	for i := range MaxReadBack + 10 {
		many = append(many, fmt.Sprintf("i %d", i+1))
	}
	if n := len(KVReadBack(many)); n != MaxReadBack {
		t.Errorf("%d reads of %d keys, want at most %d", n, len(many), MaxReadBack)
	}
}
