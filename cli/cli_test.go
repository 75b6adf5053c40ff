package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/report"
)

// flagStores reports every store to the flag word at flag: a custom oracle for TestCustomOracles.
type flagStores struct{}

func (flagStores) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
	if s.Addr == flag && !p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
		p.Report(analysis.Diagnostic{Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Message: "the flag is set"})
	}
}

var flagStore = &analysis.Analyzer{
	Name: "flag-store", Doc: "a store to the flag word", Class: report.Correctness, ResultType: reflect.TypeOf(flagStores{}),
	New: func(*analysis.Pass) (any, error) { return flagStores{}, nil },
}

// TestCustomOracles: the command line built with a custom analyzer lists its kind in the help
// texts, runs it in `analyze` with scry's own analyses, selects it with --oracles, reports it in
// every format (SARIF: its Doc as the rule's text) and exits 1 for its correctness findings.
func TestCustomOracles(t *testing.T) {
	dir := t.TempDir()
	buf, err := analysistest.New().Map(1, base, 0x10000).
		Store(3, data, 8).Persist(4, data, 8).Store(5, flag, 8).Persist(6, flag, 8).Exit(0).Encode()
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "t.trace")
	if err := os.WriteFile(tr, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "oracle", Analyzers: []*analysis.Analyzer{flagStore}}
	run := func(cfg Config, args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := Run(cfg, args, &out, &errOut)
		return out.String(), errOut.String(), code
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "oracle is scry with custom oracles: flag-store (see `oracle check --help`)"},
		{[]string{"analyze", "--help"}, "flag-store               correctness a store to the flag word"},
		{[]string{"check", "--help"}, "flag-store               correctness a store to the flag word"},
		{[]string{"check", "--help"}, "mpa-violation, inter-thread-inconsistency, flag-store, ordering-violation"},
	} {
		out, errOut, code := run(cfg, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("oracle %s: exit %d, stderr %q; output lacks %q:\n%s", strings.Join(tc.args, " "), code, errOut, tc.want, out)
		}
	}

	out, errOut, code := run(cfg, "analyze", "--format", "json", tr)
	if ks := findingKinds(t, out); code != 1 || !slices.Equal(ks, []string{"flag-store"}) {
		t.Errorf("oracle analyze: exit %d, kinds %q (stderr %q); want 1 and the custom kind", code, ks, errOut)
	}
	out, _, code = run(cfg, "analyze", "--oracles", "redundant-fence", "--format", "json", tr)
	if ks := findingKinds(t, out); code != 0 || len(ks) != 0 {
		t.Errorf("oracle analyze --oracles redundant-fence: exit %d, kinds %q; want 0 and none", code, ks)
	}
	out, _, code = run(cfg, "analyze", "--oracles", "flag-store", "--format", "sarif", tr)
	var sarif struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID               string
						ShortDescription struct{ Text string }
						Help             struct{ Text string }
					}
				}
			}
			Results []struct{ RuleID string }
		}
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || len(sarif.Runs) != 1 {
		t.Fatalf("SARIF: %v\n%s", err, out)
	}
	rules := sarif.Runs[0].Tool.Driver.Rules
	if code != 1 || len(rules) != 1 || rules[0].ID != "flag-store" || rules[0].ShortDescription.Text != flagStore.Doc || rules[0].Help.Text != flagStore.Doc ||
		len(sarif.Runs[0].Results) != 1 || sarif.Runs[0].Results[0].RuleID != "flag-store" {
		t.Errorf("SARIF (exit %d): rules %+v results %+v", code, rules, sarif.Runs[0].Results)
	}
	out, _, code = run(cfg, "analyze", tr)
	if code != 1 || !strings.Contains(out, "flag-store: the flag is set") {
		t.Errorf("text report (exit %d):\n%s", code, out)
	}

	for _, tc := range []struct {
		cfg  Config
		args []string
		want string
	}{
		{Config{}, []string{"analyze", "--oracles", "flag-store", tr}, "unknown oracle flag-store"},
		{Config{Analyzers: []*analysis.Analyzer{{Name: "unpersisted-store", Doc: "d", Class: report.Correctness, ResultType: flagStore.ResultType, New: flagStore.New}}},
			[]string{"analyze", tr}, "unpersisted-store is a kind of scry's own"},
		{Config{Analyzers: []*analysis.Analyzer{flagStore, flagStore}}, []string{"--help"}, "two custom analyzers are named flag-store"},
	} {
		_, errOut, code := run(tc.cfg, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v %q: exit %d, stderr %q; want 2 and %q", tc.cfg.Analyzers, tc.args, code, errOut, tc.want)
		}
	}
}
