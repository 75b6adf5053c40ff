package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

func TestAnalyzeProfiles(t *testing.T) {
	f := func(kind report.Kind, class report.Class, line int) report.Finding {
		return report.Finding{Kind: kind, Class: class, Location: report.Location{File: "a.c", Line: line}}
	}
	missing := f("unpersisted-store", report.Correctness, 10)
	nt := f("unpersisted-store", report.Correctness, 11)
	flush := f("redundant-flush", report.Performance, 12)
	fence := f("redundant-fence", report.Performance, 13)
	tests := []struct {
		name string
		ps   []px86.Profile
		by   map[px86.Profile][]report.Finding
		fail px86.Profile // a profile whose run fails (ADR: none)
		want []string     // "kind@line profiles"
		warn string
	}{
		{name: "no profiles: unlabelled", by: map[px86.Profile][]report.Finding{px86.ADR: {missing}},
			want: []string{"unpersisted-store@10 []"}},
		{name: "correctness: union, labelled", ps: []px86.Profile{px86.ADR, px86.EADR},
			by:   map[px86.Profile][]report.Finding{px86.ADR: {missing, nt}, px86.EADR: {nt}},
			want: []string{"unpersisted-store@10 [adr]", "unpersisted-store@11 [adr eadr]"}},
		{name: "a finding only a later profile shows", ps: []px86.Profile{px86.ADR, px86.EADR},
			by:   map[px86.Profile][]report.Finding{px86.EADR: {nt}},
			want: []string{"unpersisted-store@11 [eadr]"}},
		{name: "performance: every profile must show it", ps: []px86.Profile{px86.ADR, px86.EADR},
			by:   map[px86.Profile][]report.Finding{px86.ADR: {fence}, px86.EADR: {flush, fence}},
			want: []string{"redundant-fence@13 [adr eadr]"}},
		{name: "performance under one profile", ps: []px86.Profile{px86.EADR},
			by:   map[px86.Profile][]report.Finding{px86.EADR: {flush}},
			want: []string{"redundant-flush@12 [eadr]"}},
		{name: "a later run that fails is a warning", ps: []px86.Profile{px86.ADR, px86.EADR}, fail: px86.EADR,
			by:   map[px86.Profile][]report.Finding{px86.ADR: {missing}},
			want: []string{"unpersisted-store@10 [adr]"}, warn: "under persistency profile eadr did not complete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := analyzeProfiles(tt.ps, false, func(p px86.Profile, first bool) (*report.Report, error) {
				if first != (len(tt.ps) == 0 || p == tt.ps[0]) {
					t.Errorf("profile %v: first %v", p, first)
				}
				if p == tt.fail && p != px86.ADR {
					return nil, errors.New("boom")
				}
				return &report.Report{Findings: slices.Clone(tt.by[p])}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, fmt.Sprintf("%s@%d %v", f.Kind, f.Location.Line, f.Profiles))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
			if tt.warn != "" && !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, tt.warn) }) {
				t.Errorf("warnings %q lack %q", rep.Warnings, tt.warn)
			}
			if len(tt.ps) > 0 && !slices.Equal(rep.Profiles, px86.ProfileNames(tt.ps)) {
				t.Errorf("report profiles %v", rep.Profiles)
			}
		})
	}
}

func TestProfilesText(t *testing.T) {
	r := &report.Report{Profiles: []string{"adr", "eadr"}}
	for _, tt := range []struct {
		f    []string
		want string
	}{
		{[]string{"adr"}, "adr; not under eadr"},
		{[]string{"adr", "eadr"}, "adr, eadr"},
		{nil, ""},
	} {
		if got := r.ProfilesText(&report.Finding{Profiles: tt.f}); got != tt.want {
			t.Errorf("ProfilesText(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}
