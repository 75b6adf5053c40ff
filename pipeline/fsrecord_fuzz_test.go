package pipeline

import (
	"encoding/json"
	"testing"
)

// FuzzFSManifest: any bytes as a recording's recording.json are a manifest with a directory
// and a program, or an error, never a panic; a manifest parses back to itself.
func FuzzFSManifest(f *testing.F) {
	good, err := json.Marshal(fsManifest{Format: 1, Dir: "/d", Args: []string{"./copy", "in", "out"}, Workload: "workload.txt"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(good), `{}`, `{"format":2,"dir":"/d","args":["x"]}`, `{"format":1,"dir":"","args":["x"]}`, `[`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		man, err := parseFSManifest(b)
		if err != nil {
			return
		}
		if man.Format != 1 || man.Dir == "" || len(man.Args) == 0 {
			t.Fatalf("accepted %q as %+v", b, man)
		}
		again, err := json.Marshal(man)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseFSManifest(again); err != nil {
			t.Fatalf("%+v does not parse back: %v", man, err)
		}
	})
}
