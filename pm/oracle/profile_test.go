package oracle_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// TestOraclesEADR runs the trace oracles with the model under the eADR profile: a cached store
// needs no flush (nor a fence to be durable at exit), cached stores persist in store order (an
// overwrite loses nothing), a non-temporal store still needs its fence, and every flush is
// unnecessary.
func TestOraclesEADR(t *testing.T) {
	tests := []profileCase{
		{"never flushed", []string{"unpersisted-store"}, pool().Store(10, A, 8).Exit(0), nil, ""},
		{"flushed not fenced", []string{"unpersisted-store"}, pool().Store(10, A, 8).Flush(11, clwb, A).Exit(0), nil, ""},
		{"at unmap", []string{"unpersisted-store"}, pool().Store(10, A, 8).Unmap(1, 20).Map(2, base, size).Exit(0), nil, ""},
		{"nt store needs a fence", []string{"unpersisted-store"}, pool().NTStore(10, A, 64).Exit(0), []string{"unpersisted-store@10"}, "non-temporal"},
		{"nt store fenced", []string{"unpersisted-store"}, pool().NTStore(10, A, 64).Fence(12, sfence).Exit(0), nil, ""},
		{"overwrite of a cached store", []string{"overwritten-unpersisted"}, pool().Store(10, A, 8).Store(11, A, 8).Exit(0), nil, ""},
		{"overwrite of a non-temporal store", []string{"overwritten-unpersisted"}, pool().NTStore(10, A, 8).Store(11, A, 8).Exit(0), []string{"overwritten-unpersisted@11"}, ""},
		{"every flush is unnecessary", []string{"redundant-flush"}, pool().Store(10, A, 8).Flush(11, clwb, A).Fence(12, sfence).Exit(0), []string{"redundant-flush@11"}, "unnecessary under eADR"},
		{"clflush too", []string{"redundant-flush"}, pool().Store(10, A, 8).Flush(11, clf, A).Exit(0), []string{"redundant-flush@11"}, "unnecessary under eADR"},
		{"a fence after stores orders them", []string{"redundant-fence"}, pool().Store(10, A, 8).Fence(12, sfence).Exit(0), nil, ""},
		{"a fence with nothing before it", []string{"redundant-fence"}, pool().Store(10, A, 8).Fence(12, sfence).Fence(13, sfence).Exit(0), []string{"redundant-fence@13"}, ""},
	}
	runProfileCases(t, tests, px86.EADR)
}

// profileCase is one trace of a profile's table: the oracles run, the findings wanted
// ("kind@site") and a word of the first finding's message.
type profileCase struct {
	name    string
	oracles []string
	b       *analysistest.Builder
	want    []string
	msg     string
}

// runProfileCases runs the oracles of each case over its trace with the model under profile p
// (ADR, the zero value, lets the trace's architecture decide).
func runProfileCases(t *testing.T, cases []profileCase, p px86.Profile) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := pipeline.AnalyzeSource(tc.b.Source(t), pipeline.AnalyzeOptions{Oracles: tc.oracles, NoInfer: true, Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			if got := analysistest.Summary(rep); !slices.Equal(got, tc.want) {
				t.Fatalf("findings %q, want %q\nreport: %+v", got, tc.want, rep.Findings)
			}
			if tc.msg != "" && !strings.Contains(rep.Findings[0].Message, tc.msg) {
				t.Errorf("message %q does not say %q", rep.Findings[0].Message, tc.msg)
			}
		})
	}
}

// TestOraclesArm runs the trace oracles over the trace of an aarch64 program (header flag
// aarch64): the model applies the Arm profile by itself. A store is durable once a DC CVAP of
// its line and a DSB of the cleaning thread followed; a DMB orders the clean before later stores
// but leaves it incomplete at the end; a DMB or DSB with no clean before it is redundant.
func TestOraclesArm(t *testing.T) {
	const cvap, cvac, dsb, dmb = trace.FlushDCCVAP, trace.FlushDCCVAC, trace.FenceDSB, trace.FenceDMB
	arm := func() *analysistest.Builder {
		b := pool()
		b.Flags = trace.HeaderAArch64
		return b
	}
	tests := []profileCase{
		{"never cleaned", []string{"unpersisted-store"}, arm().Store(10, A, 8).Exit(0), []string{"unpersisted-store@10"}, "missing DC CVAP and DSB"},
		{"cleaned, no barrier", []string{"unpersisted-store"}, arm().Store(10, A, 8).Flush(11, cvap, A).Exit(0), []string{"unpersisted-store@10"}, "missing DSB"},
		{"cleaned and ordered by a DMB only", []string{"unpersisted-store"}, arm().Store(10, A, 8).Flush(11, cvap, A).Fence(12, dmb).Exit(0), []string{"unpersisted-store@10"}, "a DMB only orders it"},
		{"DMB then a later store persists it", []string{"unpersisted-store"}, arm().Store(10, A, 8).Flush(11, cvap, A).Fence(12, dmb).Store(13, B, 8).Flush(14, cvap, B).Fence(15, dsb).Exit(0), nil, ""},
		{"cleaned and completed", []string{"unpersisted-store"}, arm().Store(10, A, 8).Flush(11, cvap, A).Fence(12, dsb).Exit(0), nil, ""},
		{"DC CVAC cleans too", []string{"unpersisted-store"}, arm().Store(10, A, 8).Flush(11, cvac, A).Fence(12, dsb).Exit(0), nil, ""},
		{"a DMB after a clean orders it", []string{"redundant-fence"}, arm().Store(10, A, 8).Flush(11, cvap, A).Fence(12, dmb).Fence(13, dsb).Exit(0), nil, ""},
		{"a DMB with nothing to order", []string{"redundant-fence"}, arm().Store(10, A, 8).Fence(12, dmb).Exit(0), []string{"redundant-fence@12"}, "dmb is redundant"},
		{"a second clean of the line", []string{"redundant-flush"}, arm().Store(10, A, 8).Flush(11, cvap, A).Flush(12, cvap, A).Fence(13, dsb).Exit(0), []string{"redundant-flush@12"}, "dc-cvap"},
	}
	runProfileCases(t, tests, px86.ADR)
	// The x86 profiles do not apply to an aarch64 program's trace, nor Arm's to an x86 one's.
	if _, err := pipeline.AnalyzeSource(arm().Store(10, A, 8).Exit(0).Source(t), pipeline.AnalyzeOptions{NoInfer: true, Profile: px86.EADR}); err == nil || !strings.Contains(err.Error(), "aarch64") {
		t.Errorf("eadr on an aarch64 trace: error %v", err)
	}
	if _, err := pipeline.AnalyzeSource(pool().Store(10, A, 8).Exit(0).Source(t), pipeline.AnalyzeOptions{NoInfer: true, Profile: px86.ARM}); err == nil || !strings.Contains(err.Error(), "aarch64") {
		t.Errorf("arm on an x86 trace: error %v", err)
	}
}
