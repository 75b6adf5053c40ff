package fuzz

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// WriteReport writes a search's report: the coverage over time (one row per sample), the
// minimised corpus, the workload written to out ("" none) and what it covers, and the PM store
// sites no workload reached.
func WriteReport(w io.Writer, res *Result, out string) {
	fmt.Fprintf(w, "coverage over time (%d runs, %d stopped at the run time limit and not kept):\n", res.Runs, res.Slow)
	fmt.Fprintf(w, "  %8s %7s %6s %15s %9s\n", "elapsed", "runs", "corpus", "PM store sites", "features")
	for _, s := range res.Samples {
		fmt.Fprintf(w, "  %8s %7d %6d %15d %9d\n", s.Elapsed, s.Runs, s.Corpus, s.StoreSites, s.Features)
	}
	fmt.Fprintf(w, "minimised corpus: %d workloads\n", len(res.Corpus))
	if res.BestCov != nil {
		dest := ""
		if out != "" {
			dest = " (" + out + ")"
		}
		reads := ""
		if res.ReadBack > 0 {
			reads = fmt.Sprintf(" (the last %d read back the keys it writes)", res.ReadBack)
		}
		fmt.Fprintf(w, "best workload%s: %d operations%s, %d PM store sites, %d features\n",
			dest, len(res.Best), reads, len(res.BestCov.StoreSites), len(res.BestCov.Features))
	}
	writeUnreached(w, res.Sites, res.StoreSites)
	if res.Stopped != nil {
		fmt.Fprintf(w, "stopped early: %v (the corpus is kept)\n", res.Stopped)
	}
}

// writeUnreached lists the PM store sites no workload reached (Unreached).
func writeUnreached(w io.Writer, sites []trace.Site, reached map[uint32]struct{}) {
	un := Unreached(sites, reached)
	fmt.Fprintf(w, "PM store sites never reached (in the files of the sites reached): %d\n", len(un))
	for _, l := range un {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// WriteHTML writes a search's report as a self-contained HTML page (report.WriteCoverageHTML):
// what WriteReport writes, with the coverage over time drawn as plots. command is the program
// searched (shown as given), out the file the best workload was written to ("" none). Errors: a
// write error.
func WriteHTML(w io.Writer, res *Result, command, out string) error {
	p := &report.CoveragePage{Command: command, Runs: res.Runs, Slow: res.Slow,
		Unreached: Unreached(res.Sites, res.StoreSites)}
	if res.Stopped != nil {
		p.Stopped = res.Stopped.Error()
	}
	for _, s := range res.Samples {
		p.Samples = append(p.Samples, report.CoverageSample(s))
	}
	for _, e := range res.Corpus {
		p.Corpus = append(p.Corpus, report.CoverageWorkload{Name: e.Name, Ops: len(e.Lines),
			StoreSites: len(e.Cov.StoreSites), Features: len(e.Cov.Features)})
	}
	if res.BestCov != nil {
		p.Best = &report.CoverageWorkload{Name: out, Ops: len(res.Best),
			StoreSites: len(res.BestCov.StoreSites), Features: len(res.BestCov.Features)}
	}
	return report.WriteCoverageHTML(w, p)
}

// Cover runs r on each workload file and writes, per workload and for all together, the PM store
// sites reached and the features, then the PM store sites none reached. It returns the same as
// a page for report.WriteCoverageHTML (Workloads, Together, Unreached; command is the program,
// as shown). Errors: a file cannot be read, a run fails (Runner.Run).
func Cover(ctx context.Context, w io.Writer, r *Runner, files []string, command string) (*report.CoveragePage, error) {
	sites := map[uint32]struct{}{}
	features := map[Feature]struct{}{}
	var static []trace.Site
	p := &report.CoveragePage{Command: command}
	ops := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cov, err := r.Run(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		fmt.Fprintf(w, "%s: %d operations, %d PM store sites, %d features (%s)\n",
			f, cov.Ops, len(cov.StoreSites), len(cov.Features), cov.Result)
		p.Workloads = append(p.Workloads, report.CoverageWorkload{Name: f, Ops: cov.Ops,
			StoreSites: len(cov.StoreSites), Features: len(cov.Features), Result: cov.Result.String()})
		ops += cov.Ops
		for s := range cov.StoreSites {
			sites[s] = struct{}{}
		}
		for ft := range cov.Features {
			features[ft] = struct{}{}
		}
		if len(cov.Sites) > len(static) {
			static = slices.Clone(cov.Sites)
		}
	}
	if len(files) > 1 {
		fmt.Fprintf(w, "together: %d PM store sites, %d features\n", len(sites), len(features))
	}
	writeUnreached(w, static, sites)
	p.Together = &report.CoverageWorkload{Name: "together", Ops: ops, StoreSites: len(sites), Features: len(features)}
	p.Unreached = Unreached(static, sites)
	return p, nil
}
