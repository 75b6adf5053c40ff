package replay

import (
	"slices"
	"strings"

	"github.com/scry-pm/scry/trace"
)

// Op is a workload operation (OP_BEGIN): its 0-based index, its text (the workload line), the
// thread that runs it and the record index of its OP_BEGIN (which tells apart two operations
// a trace gives one index).
type Op struct {
	Index  int64
	Text   string
	Thread uint32
	Begin  uint64
}

// Ops holds the operations in flight (begun, not ended), in OP_BEGIN order. The zero value has
// none.
type Ops struct {
	flights []Op
}

// InFlight returns the operations in flight in OP_BEGIN order (valid until the next record).
func (o *Ops) InFlight() []Op { return o.flights }

// Current returns the operation a record of thread tid belongs to: the one in flight on that
// thread, else the latest begun (a helper thread working for it); false when none is in flight.
// With one operation in flight (a sequential workload) it is that operation.
func (o *Ops) Current(tid uint32) (Op, bool) {
	if len(o.flights) == 0 {
		return Op{}, false
	}
	for i := len(o.flights) - 1; i >= 0; i-- {
		if f := o.flights[i]; f.Thread == tid {
			return f, true
		}
	}
	return o.flights[len(o.flights)-1], true
}

// newOp returns the operation an OP_BEGIN begins; begin puts it in flight.
func newOp(ev *trace.Event) Op {
	return Op{Index: int64(ev.Op), Text: strings.Clone(ev.Text), Thread: ev.Thread, Begin: ev.Index}
}

func (o *Ops) begin(op Op) { o.flights = append(o.flights, op) }

// endThread ends the latest operation of thread tid in flight, if any.
func (o *Ops) endThread(tid uint32) (Op, bool) {
	for i := len(o.flights) - 1; i >= 0; i-- {
		if f := o.flights[i]; f.Thread == tid {
			o.flights = slices.Delete(o.flights, i, i+1)
			return f, true
		}
	}
	return Op{}, false
}

// end ends the operation an OP_END names: the one with its index, else the latest of its
// thread; false when none is in flight.
func (o *Ops) end(ev *trace.Event) (Op, bool) {
	for i, f := range o.flights {
		if f.Index == int64(ev.Op) {
			o.flights = slices.Delete(o.flights, i, i+1)
			return f, true
		}
	}
	return o.endThread(ev.Thread)
}
