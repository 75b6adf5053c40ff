package explore

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
)

// clusters groups failing states into findings by their static pair: the frames of the
// operation that must persist first (or atomically) and of the one persisted after it (ALICE,
// OSDI'14 §4.3: static vulnerabilities are the source lines of dynamic ones). A finding's id is
// report.ClusterID of its key, as crash findings of PM mode; its dynamic vulnerabilities (pairs
// of system calls) are its variants.
type clusters struct {
	p     *plan
	sites report.SiteTable
	// scratch is where the crash directories of reported states are built once more for their
	// digest ("" the temporary directory).
	scratch string
	order   []string
	by      map[string]*report.Finding
	dyn     map[string]map[[2]int]bool
	// orders are each cluster's distinct dynamic vulnerabilities with the place of their first
	// failing state in the unsharded order (a shard's report: shard.go).
	orders map[string][]report.ShardVariant
	// builds caches the other models' micro-operations, by model and split (models).
	builds map[string]map[model.Split][]model.Micro
}

func newClusters(p *plan, sites report.SiteTable, scratch string) *clusters {
	return &clusters{p: p, sites: sites, scratch: scratch, by: map[string]*report.Finding{}, dyn: map[string]map[[2]int]bool{},
		orders: map[string][]report.ShardVariant{}, builds: map[string]map[model.Split][]model.Micro{}}
}

func (c *clusters) frames(op int) []report.Frame {
	o := &c.p.m.Ops[op]
	if c.sites == nil || o.Site == 0 {
		return nil
	}
	return report.FramesAt(c.sites, o.Site, o.Stack)
}

func (c *clusters) callOf(op int) string {
	o := &c.p.m.Ops[op]
	s := fmt.Sprintf("%s %s", o.Call, o.Describe())
	if fr := c.frames(op); len(fr) > 0 {
		s += " at " + frameString(fr[0])
	}
	return s
}

func frameString(f report.Frame) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d (%s)", f.File, f.Line, f.Function)
	}
	return fmt.Sprintf("%s (%s)", f.File, f.Function)
}

// symptomText says how a failing state failed, for messages.
func symptomText(v verdict) string {
	switch v.symptom {
	case exec.SymptomChecker, "":
		return "fails the checker"
	case exec.SymptomHang:
		return "makes the program hang when it runs the rest of the workload"
	case exec.SymptomSignal:
		return "makes the program crash (a signal) when it runs the rest of the workload"
	case exec.SymptomExit:
		return "makes the program exit with " + report.NoLegalOutcome(v.symptom) + " when it runs the rest of the workload"
	}
	return "makes the program's output on the rest of the workload match " + report.NoLegalOutcome(exec.SymptomOutput)
}

// add records failing state it (judged v; at place o of the unsharded order) as a finding of
// kind, or as a dynamic vulnerability of an earlier finding with the same static pair.
func (c *clusters) add(kind report.Kind, it item, v verdict, o report.ShardOrder) {
	m, ms := c.p.m, c.p.micro[it.build]
	fa, fb := c.frames(it.a), c.frames(it.b)
	key := string(kind) + "\x00" + report.FramesKey(fa) + "\x00" + report.FramesKey(fb)
	if kind == report.FSAtomicityViolation && it.strategy == strategySplit {
		key = string(kind) + "\x00" + report.FramesKey(fa) + "\x00split"
	}
	pair := [2]int{it.a, it.b}
	f, ok := c.by[key]
	if !ok {
		oa, ob := &m.Ops[it.a], &m.Ops[it.b]
		sym := symptomText(v)
		var msg string
		switch kind {
		case report.FSOrderingViolation:
			msg = fmt.Sprintf("%s must persist before %s: a crash that keeps the second and loses the first %s", oa.Describe(), ob.Describe(), sym)
		case report.FSDurabilityViolation:
			msg = fmt.Sprintf("%s is not durable when the program prints %s: a crash after the output loses it and %s", oa.Describe(), ob.Describe(), sym)
		default:
			if it.a == it.b {
				msg = fmt.Sprintf("%s must persist atomically: a crash that persists part of it (%s) %s", oa.Describe(), it.what, sym)
			} else {
				msg = fmt.Sprintf("operations %d (%s) to %d (%s) must persist atomically: a crash between them %s", it.a, oa.Describe(), it.b, ob.Describe(), sym)
			}
		}
		models := c.models(it)
		msg += " (" + modelsText(models) + ")"
		f = &report.Finding{Kind: kind, Class: report.Correctness, Message: msg, FirstEvent: oa.Event, Stack: fa}
		if len(fa) > 0 {
			f.Location = fa[0].Location()
		}
		if it.a != it.b && len(fb) > 0 {
			role := report.RolePersistedBefore
			if kind == report.FSDurabilityViolation {
				role = report.RoleOutput
			} else if kind == report.FSAtomicityViolation {
				role = report.RoleEndOfRun
			}
			f.Related = append(f.Related, fb[0].Location().Related(role))
		}
		if k := m.Ops[it.point].Operation; c.p.workload != nil && k >= 0 && k < len(c.p.workload.Ops) {
			f.Operation = &report.Operation{Index: uint64(k), Text: c.p.workload.Ops[k]}
		}
		fs := &report.FSCrash{FailingState: report.FailingState{ID: report.ClusterID(key), CrashPoint: it.point, Strategy: it.strategy, Symptom: v.symptom},
			APM: c.p.apm.Name, Models: models, What: it.what, Checker: v.detail, DiffCommitted: v.diffCommitted, DiffRolledBack: v.diffRolledBack}
		if it.strategy == strategySplit {
			fs.Split = c.p.builds[it.build].String()
		}
		stdout := v.stdout
		if len(stdout) > 1024 {
			stdout = stdout[len(stdout)-1024:]
		}
		fs.Stdout = stdout
		fs.Persisted, fs.Lost = describeState(m, ms, it.st)
		fs.State = c.state(it, v, c.scratch)
		f.FS = fs
		c.by[key] = f
		c.dyn[key] = map[[2]int]bool{}
		c.order = append(c.order, key)
	}
	if c.dyn[key][pair] {
		return
	}
	c.dyn[key][pair] = true
	c.orders[key] = append(c.orders[key], report.ShardVariant{Key: pairKey(it.a, it.b), Order: o})
	f.Count = len(c.dyn[key])
	f.FS.Count = f.Count
	if n := len(f.FS.Dynamic); n < report.MaxFSDynamic {
		d := report.FSVulnerability{A: it.a, B: it.b, CallA: c.callOf(it.a), CallB: c.callOf(it.b)}
		if n > 0 { // the first one's state is the finding's
			d.ID = fmt.Sprintf("%s-%d", f.FS.ID, n+1)
			d.State = c.state(it, v, c.scratch)
		}
		f.FS.Dynamic = append(f.FS.Dynamic, d)
	}
}

// models returns the persistence models under which failing state it, or one that leaves the
// same directory, is legal (model.LegalUnder), in model.APMs's order: the exploring model, and
// each other one whose micro-operations allow it. Each other model's builds are made once.
func (c *clusters) models(it item) []string {
	var out []string
	for _, a := range model.APMs() {
		if a == c.p.apm {
			out = append(out, a.Name)
			continue
		}
		if c.builds[a.Name] == nil {
			c.builds[a.Name] = map[model.Split][]model.Micro{}
		}
		if model.LegalUnder(c.p.m, c.p.micro[it.build], it.st, it.point, a, c.builds[a.Name]) {
			out = append(out, a.Name)
		}
	}
	return out
}

// modelsText says under which models a finding occurs: "under every model", "default only;
// not under ext4-ordered or ext4-journal", "default and ext4-ordered; not under ext4-journal".
func modelsText(models []string) string {
	var not []string
	for _, a := range model.APMs() {
		if !slices.Contains(models, a.Name) {
			not = append(not, a.Name)
		}
	}
	if len(not) == 0 {
		return "under every persistence model: " + strings.Join(models, ", ")
	}
	in := strings.Join(models, " and ")
	if len(models) == 1 {
		in += " only"
	}
	return in + "; not under " + strings.Join(not, " or ")
}

// describeState lists the logical operations a state persisted (whole or in part) and lost,
// up to its last persisted one, at most 20 of each.
func describeState(m *model.Model, ms []model.Micro, st model.State) (persisted, lost []string) {
	full := map[int]int{}
	count := map[int]int{}
	last := -1
	for j, p := range st.Persisted {
		count[ms[j].Op]++
		if p {
			full[ms[j].Op]++
			last = max(last, ms[j].Op)
		}
	}
	ops := make([]int, 0, len(count))
	for op := range count {
		ops = append(ops, op)
	}
	sort.Ints(ops)
	for _, op := range ops {
		if op > last {
			break
		}
		d := fmt.Sprintf("%d %s", op, m.Ops[op].Describe())
		switch {
		case full[op] == count[op]:
			if len(persisted) < 20 {
				persisted = append(persisted, d)
			}
		case full[op] == 0:
			if len(lost) < 20 {
				lost = append(lost, d)
			}
		default:
			if len(persisted) < 20 {
				persisted = append(persisted, d+" (in part)")
			}
		}
	}
	return persisted, lost
}

func (c *clusters) findings() []report.Finding {
	out := make([]report.Finding, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, *c.by[k])
	}
	return out
}
