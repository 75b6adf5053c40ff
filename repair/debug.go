package repair

import (
	"fmt"
	"io"
	"os"
)

// debugOut receives a description of every problem when SCRY_FIX_DEBUG is set (for
// developers of scry fix).
var debugOut io.Writer

func init() {
	if os.Getenv("SCRY_FIX_DEBUG") != "" {
		debugOut = os.Stderr
	}
}

// dump describes the problem: its window, statements, gaps, choices and instructions.
func (p *problem) dump() {
	w := debugOut
	if w == nil {
		return
	}
	fmt.Fprintf(w, "problem in %s (depth %d serial %d), window %d-%d deadline %d, lines %v\n", p.fn, p.depth, p.serial, p.w.start, p.w.end, p.w.deadline, p.lines)
	for k := range p.w.events {
		e := p.ev(k)
		st := ""
		if p.stmtAt != nil && p.stmtAt[k] != nil {
			st = fmt.Sprintf("stmt %d-%d", p.stmtAt[k].file.firstLine(p.stmtAt[k].s), p.stmtAt[k].file.lastLine(p.stmtAt[k].s))
		}
		fmt.Fprintf(w, "  ev %d #%d t%d %v addr %#x+%d tail=%v %s\n", k, e.idx, e.thread, e.kind, e.addr, e.size, e.tail, st)
		if p.frames != nil && os.Getenv("SCRY_FIX_DEBUG") == "frames" {
			for _, f := range p.frames[k] {
				fmt.Fprintf(w, "      %s %s:%d:%d inlined=%v depth %d serial %d\n", f.Function, f.File, f.Line, f.Column, f.Inlined, f.depth, f.serial)
			}
		}
	}
	for _, o := range p.obls {
		fmt.Fprintf(w, "  obligation %+v\n", o)
	}
	for _, g := range p.gaps {
		fmt.Fprintf(w, "  gap %d after=%v line %d occ %v\n", g.id, g.after, g.line, g.occEv)
	}
	for _, c := range p.choices {
		gl := 0
		if c.gap != nil {
			gl = c.gap.line
		}
		fmt.Fprintf(w, "  choice %s %v gap-line %d store %d\n", c.name, c.kind, gl, c.store)
	}
	for i, in := range p.instrs {
		fmt.Fprintf(w, "  instr %d ev %d kind %d lines %v pos %s present %s harm %v\n", i, in.ev, in.kind, in.lines, in.sym.Pos, in.sym.Present, in.harm)
	}
	for _, n := range p.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}
