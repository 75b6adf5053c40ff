package oracle_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
)

// TestOraclesEADR runs the trace oracles with the model under the eADR profile: a cached store
// needs no flush (nor a fence to be durable at exit), cached stores persist in store order (an
// overwrite loses nothing), a non-temporal store still needs its fence, and every flush is
// unnecessary.
func TestOraclesEADR(t *testing.T) {
	tests := []struct {
		name    string
		oracles []string
		b       *analysistest.Builder
		want    []string // "kind@site"
		msg     string   // a word of the first finding's message
	}{
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := pipeline.AnalyzeSource(tc.b.Source(t), pipeline.AnalyzeOptions{Oracles: tc.oracles, NoInfer: true, Profile: px86.EADR})
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
