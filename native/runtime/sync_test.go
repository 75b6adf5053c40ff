package scryrt_test

// Tests of the SYNC records (sched.c, "SYNC records"): testdata/sync.c, built with the build's
// `scry cc`, run with one thread and with two, with and without the controlled scheduler.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// syncStep is one SYNC record as the test expects it: the thread that writes it (main or the
// child), its operation and its object ("mu", "counter", or "child" for the child's trace id).
type syncStep struct {
	thread string
	op     trace.SyncOp
	object string
}

func TestSyncRecords(t *testing.T) {
	exe := scryCC(t, "sync")
	twoThreads := []syncStep{
		{"main", trace.SyncCreate, "child"},
		{"child", trace.SyncLock, "mu"},
		{"child", trace.SyncRMW, "counter"},
		{"child", trace.SyncUnlock, "mu"},
		{"main", trace.SyncJoin, "child"},
		{"main", trace.SyncLock, "mu"},
		{"main", trace.SyncUnlock, "mu"},
	}
	tests := []struct {
		name, spec, mode string
		shared           int // the program's count of critical sections
		want             []syncStep
	}{
		{"one-thread", "no", "one", 1, nil},
		{"one-thread-sched", "pct:1", "one", 1, nil},
		{"two-threads", "no", "two", 2, twoThreads},
		{"two-threads-sched", "pct:1", "two", 2, twoThreads},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runSched(t, t.TempDir(), tt.name, tt.spec, exe, tt.mode)
			// The program prints the addresses of its mutex and counter, and its count.
			var mu, counter uint64
			var shared int
			if _, err := fmt.Sscanf(strings.TrimSpace(r.stdout), "%v %v %d", &mu, &counter, &shared); err != nil || shared != tt.shared {
				t.Fatalf("output %q (%v), want two addresses and %d\nstderr:\n%s", r.stdout, err, tt.shared, r.stderr)
			}
			res := readTrace(t, r.trace)
			var main, child uint32
			var got []syncStep
			for _, rec := range res.recs {
				ev := rec.Event
				if ev.Kind != trace.KindSync {
					continue
				}
				if ev.Sync == trace.SyncCreate && main == 0 {
					main, child = ev.Thread, uint32(ev.Object)
				}
				s := syncStep{thread: "thread " + strconv.Itoa(int(ev.Thread)), op: ev.Sync, object: fmt.Sprintf("%#x", ev.Object)}
				switch ev.Thread {
				case main:
					s.thread = "main"
				case child:
					s.thread = "child"
				}
				switch {
				case (ev.Sync == trace.SyncCreate || ev.Sync == trace.SyncJoin) && uint32(ev.Object) == child:
					s.object = "child"
				case ev.Object == mu:
					s.object = "mu"
				case ev.Object == counter:
					s.object = "counter"
				}
				if ev.Sync == trace.SyncRMW && res.sites[ev.Site].Kind != trace.SiteRMW {
					t.Errorf("record %d: SYNC rmw at site %d, which is no rmw site (%+v)", ev.Index, ev.Site, res.sites[ev.Site])
				}
				got = append(got, s)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("SYNC records:\n got %v\nwant %v", got, tt.want)
			}
			// The child's records all come after the create and before the join.
			created, joined := false, false
			for _, rec := range res.recs {
				ev := rec.Event
				if ev.Kind == trace.KindSync && ev.Thread == main && ev.Sync == trace.SyncCreate {
					created = true
				}
				if ev.Kind == trace.KindSync && ev.Thread == main && ev.Sync == trace.SyncJoin {
					joined = true
				}
				if child != 0 && ev.Thread == child && (!created || joined) {
					t.Errorf("record %d (%v) of the child outside its create and join", ev.Index, ev.Kind)
				}
			}
		})
	}
}
