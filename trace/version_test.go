package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// sinceOf returns, from the schema, the version that added each record kind and each site kind
// (absent: every version).
func sinceOf() (kinds map[Kind]uint16, sites map[SiteKind]uint16) {
	kinds, sites = map[Kind]uint16{}, map[SiteKind]uint16{}
	for _, r := range Schema().Records {
		kinds[Kind(r.Code)] = r.Since
	}
	for _, e := range Schema().Enums {
		if e.Type == "SiteKind" {
			for _, v := range e.Values {
				sites[SiteKind(v.Value)] = v.Since
			}
		}
	}
	return kinds, sites
}

// TestOlderVersions writes the sample trace, with sites of every kind and an inlined-at chain,
// at every format version this package reads, leaving out what the version lacks (the records
// and site kinds added later; the inlined-at field before version 4, the access field before
// version 9): the reader must read each
// back as written.
func TestOlderVersions(t *testing.T) {
	kindSince, siteSince := sinceOf()
	sites := append(append([]Site(nil), sampleSites...),
		Site{ID: 12, Kind: SiteInlined, Function: "btree_insert", File: "btree.c", Line: 44, Column: 3, Callee: "node_set"},
		Site{ID: 13, Kind: SiteStore, Function: "node_set", File: "btree.c", Line: 8, Column: 5, InlinedAt: 12},
		Site{ID: 14, Kind: SiteReturn, Function: "btree_find", File: "btree.c", Line: 20, Column: 2})
	for v := uint16(MinVersion); v <= Version; v++ {
		t.Run(fmt.Sprintf("version-%d", v), func(t *testing.T) {
			var want []Event
			for _, ev := range sampleEvents() {
				if kindSince[ev.Kind] > v {
					continue
				}
				if v < kindSince[KindFrame] {
					ev.Frames = nil // no FRAME records to carry them
				}
				if ev.Kind == KindSites {
					ev.Sites = nil
					for _, s := range sites {
						if siteSince[s.Kind] > v {
							continue
						}
						if v < 4 {
							s.InlinedAt = 0
						}
						if v < 9 {
							s.Access = AccessUnknown
						}
						ev.Sites = append(ev.Sites, s)
					}
				}
				want = append(want, ev)
			}
			var buf bytes.Buffer
			w, err := newWriterVersion(&buf, 64, v)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if err := w.Write(&want[i]); err != nil {
					t.Fatalf("writing %v: %v", want[i].Kind, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if r.Header().Version != v {
				t.Errorf("header version %d", r.Header().Version)
			}
			got, err := readAll(r)
			if err != io.EOF {
				t.Fatalf("error %v, want io.EOF", err)
			}
			compareWritten(t, "read back", got, want)
		})
	}
}

// TestAddedLater checks, for every record kind and site kind a version added, that a trace of
// the version before is corrupt when it holds one, and that the writer of that version refuses
// to write one.
func TestAddedLater(t *testing.T) {
	type test struct {
		name string
		v    uint16 // the version before the one that added it
		body []byte
		ev   Event
		msg  string
	}
	var tests []test
	for _, r := range Schema().Records {
		if r.Since > MinVersion {
			k := Kind(r.Code)
			tests = append(tests, test{r.Name, r.Since - 1, []byte{r.Code, 0, 0, 0, 0},
				Event{Kind: k, FS: FSSync, Fence: FenceSFENCE}, fmt.Sprintf("unknown record kind 0x%02x", r.Code)})
		}
	}
	for _, e := range Schema().Enums {
		if e.Type != "SiteKind" {
			continue
		}
		for _, v := range e.Values {
			if v.Since > MinVersion {
				body := []byte{byte(KindSites), 1, 1, v.Value, 0, 0, 0, 0, 0}
				if v.Since-1 >= 4 {
					body = append(body, 0) // inlined_at
				}
				tests = append(tests, test{"site-" + v.Name, v.Since - 1, body,
					Event{Kind: KindSites, Sites: []Site{{ID: 1, Kind: SiteKind(v.Value)}}}, fmt.Sprintf("unknown site kind %d", v.Value)})
			}
		}
	}
	if len(tests) == 0 {
		t.Fatal("the schema names no record or site kind added after the first version")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := header()
			h[8] = byte(tt.v)
			r, err := NewReader(bytes.NewReader(cat(h, tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(r)
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.msg) || fe.Record != 0 {
				t.Errorf("version %d: error %v, want ErrCorrupt in record 0 containing %q", tt.v, err, tt.msg)
			}
			w, err := newWriterVersion(io.Discard, 64, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(&tt.ev); err == nil {
				t.Errorf("the writer of version %d wrote %v", tt.v, tt.name)
			}
		})
	}
}
