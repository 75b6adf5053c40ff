package trace

import "fmt"

// Schedule is what a SCHEDULE record says (docs/trace-format.md, "SCHEDULE"): the controlled
// schedule the program ran under (the runtime's SCRY_SCHED) and, in the record written before
// END, the run's counts.
type Schedule struct {
	Spec     string      // the value of SCRY_SCHED as given
	Policy   SchedPolicy // SchedPCT, SchedPM or SchedOps
	Seed     uint64
	Depth    uint32 // PCT's depth d (d-1 priority change points), defaults applied
	Steps    uint64 // the change points lie among the first Steps scheduling points
	End      bool   // the record before END: the counts below are the run's
	Deadlock bool   // every thread waited: the runtime ended the run with SIGABRT
	Points   uint64 // scheduling points passed since the second thread started
	Switches uint64 // times the turn passed from one thread to another
	Threads  uint32 // threads the scheduler ran, the first included
	Timed    uint64 // choices that depended on time; 0: Spec and the input give the same run again
}

// ScheduleOf returns the schedule of a SCHEDULE event.
func ScheduleOf(ev *Event) Schedule {
	return Schedule{
		Spec: ev.Text, Policy: ev.Policy, Seed: ev.Seed, Depth: ev.Depth, Steps: ev.Steps,
		End: ev.Flags&SchedEnd != 0, Deadlock: ev.Flags&SchedDeadlock != 0,
		Points: ev.Points, Switches: ev.Switches, Threads: ev.Threads, Timed: ev.Timed,
	}
}

// Replayable reports whether the run's schedule follows from its spec and input alone: the
// counts are the run's (End) and no choice depended on time.
func (s Schedule) Replayable() bool { return s.End && s.Timed == 0 }

// String describes the schedule in one line, as `scry trace stats` prints it.
func (s Schedule) String() string {
	t := fmt.Sprintf("%s (%v, seed %d, depth %d, steps %d)", s.Spec, s.Policy, s.Seed, s.Depth, s.Steps)
	if !s.End {
		return t + "; the run's counts are missing (no record before END)"
	}
	t += fmt.Sprintf(": %d threads, %d scheduling points, %d switches", s.Threads, s.Points, s.Switches)
	if s.Timed > 0 {
		t += fmt.Sprintf(", %d choices that depended on time (not replayable)", s.Timed)
	}
	if s.Deadlock {
		t += ", ended by a deadlock"
	}
	return t
}
