package pipeline

import (
	"fmt"
	"slices"

	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// analyzeProfiles runs analyze once per profile of ps (nil: ADR alone, findings unlabelled) and
// returns one report: the first profile's, with every finding labelled with the profiles under
// which it occurs (report.Finding.Profiles) and the findings only later profiles show added,
// and report.Report.Profiles set. Findings are the same finding across profiles by findingKey,
// as across thread schedules. A performance finding (work a profile does not need) is kept
// only when every profile that ran shows it: a flush that eADR does not need is still needed
// under ADR, so `--persistency eadr` alone reports it and `adr,eadr` does not. Each run replays
// the one trace with its own px86 model (px86.Config.Profile); nothing is recorded twice. The
// first profile's run is the one whose results later steps use (analyze gets first = true).
// The profiles are first fitted to the trace's architecture (px86.ForTrace: aarch64 is true for
// an aarch64 program's trace, which is checked under ARM).
// Errors: the first run's (with its report); a later run's error is a warning; profiles that do
// not fit the trace (no report).
func analyzeProfiles(ps []px86.Profile, aarch64 bool, analyze func(p px86.Profile, first bool) (*report.Report, error)) (*report.Report, error) {
	ps, err := px86.ForTrace(ps, aarch64)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return analyze(px86.ADR, true)
	}
	rep, err := analyze(ps[0], true)
	if rep == nil {
		return rep, err
	}
	rep.Profiles = px86.ProfileNames(ps)
	byKey := map[string]int{}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Profiles = []string{ps[0].String()}
		if _, ok := byKey[findingKey(f)]; !ok {
			byKey[findingKey(f)] = i
		}
	}
	ran := 1
	for _, p := range ps[1:] {
		other, oerr := analyze(p, false)
		if other == nil || oerr != nil {
			msg := "no report"
			if oerr != nil {
				msg = oerr.Error()
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the trace analyses under persistency profile %s did not complete (%s): the findings' profiles may leave it out", p, msg))
			if other == nil {
				continue
			}
		}
		ran++
		for _, f := range other.Findings {
			k := findingKey(&f)
			if i, ok := byKey[k]; ok {
				rep.Findings[i].Profiles = report.UnionProfiles(rep.Findings[i].Profiles, []string{p.String()})
				continue
			}
			f.Profiles = []string{p.String()}
			byKey[k] = len(rep.Findings)
			rep.Findings = append(rep.Findings, f)
		}
		for _, r := range other.Rules {
			if !slices.ContainsFunc(rep.Rules, func(x report.Rule) bool { return x.Kind == r.Kind }) {
				rep.Rules = append(rep.Rules, r)
			}
		}
		for _, w := range other.Warnings {
			if !slices.Contains(rep.Warnings, w) {
				rep.Warnings = append(rep.Warnings, w)
			}
		}
	}
	rep.Findings = slices.DeleteFunc(rep.Findings, func(f report.Finding) bool {
		return f.Class == report.Performance && len(f.Profiles) < ran
	})
	return rep, err
}
