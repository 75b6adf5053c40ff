package infer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/scry-pm/scry/report"
)

// JSON shape of `scry infer --format json` (docs/inference.md).
type (
	jsonResult struct {
		Properties []jsonProperty `json:"properties"`
		Counts     map[Rule]int   `json:"counts"`
		Events     uint64         `json:"events"`
		Seconds    float64        `json:"seconds"`
	}
	jsonProperty struct {
		ID       int            `json:"id"`
		Kind     Kind           `json:"kind"`
		Rule     Rule           `json:"rule"`
		Sides    []jsonSide     `json:"sides"`
		Evidence []jsonEvidence `json:"evidence"`
		Count    int            `json:"count"`
	}
	jsonSide struct {
		Role     string `json:"role"`
		File     string `json:"file"`
		Line     uint32 `json:"line"`
		Function string `json:"function"`
	}
	jsonLoc struct {
		File     string `json:"file"`
		Line     uint32 `json:"line"`
		Function string `json:"function"`
	}
	jsonEvidence struct {
		Guard     jsonLoc  `json:"guard"`
		Dependent jsonLoc  `json:"dependent"`
		Branch    *jsonLoc `json:"branch"`
	}
)

func (res *Result) jloc(id uint32) jsonLoc {
	l := report.Loc(res.Sites[id])
	return jsonLoc{File: l.File, Line: uint32(l.Line), Function: l.Function}
}

// Sides returns the roles and sites of a property: "before" and "after" (ordering), "member"
// (atomicity), "store" (durability).
func (p Property) Sides() (roles []string, sites []uint32) {
	switch p.Kind {
	case Ordering:
		return []string{"before", "after"}, []uint32{p.Before, p.After}
	case Atomicity:
		for range p.Sites {
			roles = append(roles, "member")
		}
		return roles, p.Sites
	}
	for range p.Sites {
		roles = append(roles, "store")
	}
	return roles, p.Sites
}

// WriteJSON writes res as one indented JSON object (docs/inference.md, "JSON"); seconds is the
// time the inference took.
func WriteJSON(w io.Writer, res *Result, seconds float64) error {
	out := jsonResult{Properties: []jsonProperty{}, Counts: res.Counts, Events: res.Events, Seconds: seconds}
	if out.Counts == nil {
		out.Counts = map[Rule]int{}
	}
	for _, p := range res.Properties {
		jp := jsonProperty{ID: p.ID, Kind: p.Kind, Rule: p.Rule, Count: p.Count, Sides: []jsonSide{}, Evidence: []jsonEvidence{}}
		roles, sites := p.Sides()
		for i, s := range sites {
			l := res.jloc(s)
			jp.Sides = append(jp.Sides, jsonSide{Role: roles[i], File: l.File, Line: l.Line, Function: l.Function})
		}
		for _, e := range p.Evidence {
			je := jsonEvidence{Guard: res.jloc(e.Guard), Dependent: res.jloc(e.Dependent)}
			if e.Branch != 0 {
				b := res.jloc(e.Branch)
				je.Branch = &b
			}
			jp.Evidence = append(jp.Evidence, je)
		}
		out.Properties = append(out.Properties, jp)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// WriteText writes res for people: one line per property ("#ID RULE: ..., N instances"), its
// evidence indented below, then the counts per rule and the time taken.
func WriteText(w io.Writer, res *Result, seconds float64) error {
	bw := bufio.NewWriter(w)
	for _, p := range res.Properties {
		fmt.Fprintf(bw, "#%d %s (%s)", p.ID, p.Describe(res.Sites), p.Kind)
		if p.Count != 1 {
			fmt.Fprintf(bw, ", %d instances", p.Count)
		}
		bw.WriteByte('\n')
		for _, e := range p.Evidence {
			fmt.Fprintf(bw, "    evidence: %s\n", DescribeEvidence(p.Rule, e, res.Sites))
		}
	}
	var counts []string
	for _, r := range AllRules {
		if n, ok := res.Counts[r]; ok {
			counts = append(counts, fmt.Sprintf("%d %s", n, r))
		}
	}
	fmt.Fprintf(bw, "scry infer: %s properties from %d events (%d PM loads, %d PM stores) in %.2fs\n",
		strings.Join(counts, ", "), res.Events, res.Loads, res.Stores, seconds)
	return bw.Flush()
}
