package crash

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"text/tabwriter"

	"github.com/scry-pm/scry/trace"
)

// StrategyCount is what one strategy would test over a whole trace.
type StrategyCount struct {
	Name   string
	Tested *big.Int // states yielded, after the per-point cap
	Full   *big.Int // states before the cap
	Capped int      // crash points where the cap cut the states
	Max    *big.Int // most states (before the cap) at one crash point
}

// Summary is the dry run of crash exploration: the crash points of a trace and, per strategy,
// the number of crash states it would test (WITCHER's comparison of search spaces,
// WITCHER (SOSP'21) §6.5, Figure 4).
type Summary struct {
	Stats
	Kinds      map[string]int // crash points by kind
	Units      uint64         // unpersisted units summed over crash points
	Options    Options
	Strategies []StrategyCount
}

// Summarize walks the trace and counts, for every crash point, the states of each strategy
// (closed forms: no state is enumerated). Errors as for Walk; the summary is returned with
// what was counted even then.
func Summarize(r *trace.Reader, strats []*Strategy, o Options) (*Summary, error) {
	s := &Summary{Kinds: map[string]int{}, Options: o}
	for _, st := range strats {
		s.Strategies = append(s.Strategies, StrategyCount{Name: st.Name, Tested: new(big.Int), Full: new(big.Int), Max: new(big.Int)})
	}
	stats, err := Walk(r, o, func(cp *CrashPoint) error {
		s.Kinds[cp.Kind.String()]++
		s.Units += uint64(cp.Space.Units())
		for i, st := range strats {
			full, tested := st.Count(cp.Space, o)
			c := &s.Strategies[i]
			c.Full.Add(c.Full, full)
			c.Tested.Add(c.Tested, tested)
			if tested.Cmp(full) < 0 {
				c.Capped++
			}
			if full.Cmp(c.Max) > 0 {
				c.Max.Set(full)
			}
		}
		return nil
	})
	s.Stats = stats
	return s, err
}

// invariants returns the number of invariants the summary's strategies were given, and whether
// one of them uses invariants.
func (s *Summary) invariants() (int, bool) {
	for _, c := range s.Strategies {
		if st := StrategyByName(c.Name); st != nil && st.NeedsInvariants {
			return len(s.Options.Invariants), true
		}
	}
	return 0, false
}

// WriteText prints the summary as a table.
func (s *Summary) WriteText(w io.Writer, name string) error {
	fmt.Fprintf(w, "trace:         %s (%d records%s)\n", name, s.Events, map[bool]string{true: ", truncated"}[s.Truncated])
	fmt.Fprintf(w, "crash points:  %d (", s.Points)
	first := true
	for _, k := range []string{"fence", "flush", "library", "unmap", "store", "end"} {
		if n := s.Kinds[k]; n > 0 {
			if !first {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%d before %s", n, k)
			first = false
		}
	}
	fmt.Fprintf(w, "); %d skipped as duplicates\n", s.Skipped)
	mean := 0.0
	if s.Points > 0 {
		mean = float64(s.Units) / float64(s.Points)
	}
	fmt.Fprintf(w, "unpersisted:   %.1f units per crash point on average, at most %d units on %d lines\n", mean, s.MaxUnits, s.MaxLines)
	if n, ok := s.invariants(); ok {
		fmt.Fprintf(w, "invariants:    %d inferred (ordering and atomicity), the invariants strategy's input\n", n)
	}
	max := s.Options.maxStates()
	capText := "no cap"
	if max >= 0 {
		capText = fmt.Sprintf("cap %d per crash point", max)
	}
	fmt.Fprintf(w, "states:        (%s)\n", capText)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\ttested\tfull\tcapped points\tmost at one point\t")
	for _, c := range s.Strategies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", c.Name, count(c.Tested), count(c.Full), c.Capped, count(c.Max))
	}
	return tw.Flush()
}

// count writes a state count for the table: in full up to 30 digits, else as its leading
// digits and power of ten ("2.3e+39457"), so that the exhaustive strategy's 2^131072 states
// of a 1 MiB unpersisted memset do not make a column 40 000 characters wide. JSON keeps the
// exact decimal.
func count(n *big.Int) string {
	s := n.String()
	if len(s) <= 30 {
		return s
	}
	return fmt.Sprintf("%s.%se+%d", s[:1], s[1:2], len(s)-1)
}

// WriteJSON prints the summary as one JSON object; counts are decimal strings (they may pass
// 2^64).
func (s *Summary) WriteJSON(w io.Writer, name string) error {
	type sc struct {
		Name   string `json:"name"`
		Tested string `json:"tested"`
		Full   string `json:"full"`
		Capped int    `json:"capped_points"`
		Max    string `json:"max_per_point"`
	}
	out := struct {
		Trace       string         `json:"trace"`
		Events      uint64         `json:"events"`
		Truncated   bool           `json:"truncated"`
		CrashPoints int            `json:"crash_points"`
		Skipped     int            `json:"skipped"`
		Kinds       map[string]int `json:"kinds"`
		Units       uint64         `json:"units"`
		MaxUnits    int            `json:"max_units"`
		MaxLines    int            `json:"max_lines"`
		MaxStates   int64          `json:"max_states"`
		Invariants  *int           `json:"invariants,omitempty"`
		Strategies  []sc           `json:"strategies"`
	}{name, s.Events, s.Truncated, s.Points, s.Skipped, s.Kinds, s.Units, s.MaxUnits, s.MaxLines, s.Options.maxStates(), nil, nil}
	if n, ok := s.invariants(); ok {
		out.Invariants = &n
	}
	for _, c := range s.Strategies {
		out.Strategies = append(out.Strategies, sc{c.Name, c.Tested.String(), c.Full.String(), c.Capped, c.Max.String()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
