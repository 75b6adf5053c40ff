package exec

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Reaping a run's escaped processes without scanning /proc.
//
// scry makes itself a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER): a process a run started
// whose parent dies is re-parented to scry, not to init, and becomes visible in scry's own
// list of children (/proc/self/task/TID/children, one file per thread of scry). When a run ends,
// its process group has been killed, so every process of the run still alive either is in the
// run's process group or descends from a process that died, and the highest such living process
// in each chain is a child of scry, or will be once the processes dying above it have exited.
// sweepRun therefore only looks at scry's children (a handful: the running programs of the
// other workers, the fork servers, the escaped processes) and, below them, at the run's own
// processes and the fork server's (whose children a dying process has not handed over yet),
// never at the whole machine's processes, and kills those of the run until a look finds none
// and none of the run died since the look before: the cost of a run's clean-up does not grow
// with the number of processes on the machine (the /proc scan of killTagged read every
// /proc/PID/environ after every run).
//
// A fork server's run children are the server's: their own children, once the run child dies,
// are re-parented to scry (the nearest subreaper among their ancestors), so the sweep sees
// them the same way.

var (
	reaperOnce sync.Once
	reaperOn   bool // scry is a child subreaper and can list its children

	// procScans counts the scans of every process's /proc/PID/environ (scanProcs), which the
	// subreaper spares runs; tests check that a run makes none.
	procScans atomic.Int64
)

// subreaper makes scry a child subreaper, once, and reports whether it is one and can list its
// children; when not (no prctl, no /proc/self/task/TID/children: a kernel without
// CONFIG_PROC_CHILDREN), runs fall back to the /proc scan of killTagged.
func subreaper() bool {
	reaperOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return
		}
		if _, err := children(); err != nil {
			return
		}
		reaperOn = true
	})
	return reaperOn
}

// children returns the process IDs of scry's children, read from the children file of each of
// its threads (a child belongs to the thread that forked it, or to the thread it was
// re-parented to). Errors: /proc/self/task cannot be read, or no thread has a children file.
func children() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var kids []int
	var lastErr error
	read := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/children")
		if err != nil {
			lastErr = err // the thread may have exited
			continue
		}
		read++
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, pid)
			}
		}
	}
	if read == 0 {
		return nil, lastErr
	}
	return kids, nil
}

// procStat returns the state letter (R, S, D, Z, ...) and process group of pid, from
// /proc/PID/stat; ok is false when the process is gone.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses; it ends at the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pgrp, true
}

// hasTag reports whether the environment pid was started with holds one of tags (VAR=value).
func hasTag(pid int, tags [][]byte) bool {
	tagged, _ := tagOf(pid, tags)
	return tagged
}

// tagOf is hasTag, and whether the environment could be read: a process in the middle of an
// execve, or just forked, may have none to read for a moment.
func tagOf(pid int, tags [][]byte) (tagged, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return false, false
	}
	return hasTagIn(b, tags), true
}

// hasTagIn reports whether the environment block b (NUL-separated) holds one of tags.
func hasTagIn(b []byte, tags [][]byte) bool {
	for _, kv := range bytes.Split(b, []byte{0}) {
		if slices.ContainsFunc(tags, func(t []byte) bool { return bytes.Equal(kv, t) }) {
			return true
		}
	}
	return false
}

// sweepRun kills what is left of a run that ended: the processes of its process group pgid
// (whose leader, numbered pgid, is the caller's to reap or the fork server's) and those whose
// environment carries one of tags (escaped: setsid, a daemon), except the process numbered
// except (a fork server, which carries its own tag). It returns when none is alive: each process
// it kills is a child of scry (subreaper), which it waits for (a killed process cannot fork
// any more), and the children a dying process leaves are re-parented to scry before it dies, so
// the next look finds them. Zombies of the run's process group are reaped. Without the
// subreaper it is killTagged.
func sweepRun(pgid, except int, tags ...string) {
	want := make([][]byte, len(tags))
	for i, t := range tags {
		want[i] = []byte(t)
	}
	if !subreaper() {
		killTagged(except, tags...)
		return
	}
	// A pass that killed processes scry does not wait for, saw the leader not yet dead, or saw
	// a process of the run newly dead is followed by another: their children may be handed to
	// scry during or after its look.
	zombies := map[int]bool{} // the run's processes seen dead, not reaped
	deadline := time.Now().Add(sweepWait)
	// A process whose environment cannot be read is looked at again for a short while only.
	unknownUntil := time.Now().Add(sweepWait / 40)
	for {
		kids, err := children()
		if err != nil {
			killTagged(except, tags...)
			return
		}
		var killed, deep []int
		leaderAlive, newZombie, unknown := false, false, false
		// The run's processes below scry's children too: a member of the run's group that
		// is still dying from the group's SIGKILL (the leader among them) has not handed its
		// children to scry yet, and a child it forked out of the group (setsid) would be
		// re-parented after this look and outlive the run. So the walk goes down from each
		// process of the run (and from the fork server, whose subtree is the run's), never
		// into other runs.
		direct := len(kids)
		for i := 0; i < len(kids); i++ {
			pid := kids[i]
			if pid == pgid || pid == except {
				// Neither is killed here, but the leader may still be dying with children it
				// has not handed over, and the fork server's subtree is the run's.
				if st, _, ok := procStat(pid); pid == pgid && ok {
					if st != 'Z' && st != 'X' {
						leaderAlive = true
					} else if !zombies[pid] {
						zombies[pid], newZombie = true, true
					}
				}
				kids = append(kids, childrenOf(pid)...)
				continue
			}
			state, pgrp, ok := procStat(pid)
			if !ok {
				continue
			}
			// A child of scry in the run's process group was re-parented (no package starts a
			// process in another's group): scry reaps it.
			inGroup := pgid > 0 && pgrp == pgid
			if state == 'Z' || state == 'X' {
				if inGroup && !zombies[pid] {
					// It may have handed its children to scry after this pass's look.
					zombies[pid], newZombie = true, true
				}
				if inGroup && i < direct {
					reap(pid)
				}
				continue
			}
			tagged, known := tagOf(pid, want)
			if !inGroup && !known && time.Now().Before(unknownUntil) {
				if _, _, ok := procStat(pid); ok {
					unknown = true // look again: it may be a run's process in an execve
				}
			}
			if inGroup || tagged {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				if i < direct {
					killed = append(killed, pid)
				} else {
					deep = append(deep, pid)
				}
				kids = append(kids, childrenOf(pid)...)
			}
		}
		if len(killed) == 0 && (len(deep) == 0 && !leaderAlive && !newZombie && !unknown || time.Now().After(deadline)) {
			return
		}
		for _, pid := range killed {
			reap(pid)
		}
		if len(killed) == 0 && (len(deep) > 0 || leaderAlive || unknown) {
			// Only processes that are not scry's to wait for: give them time to die.
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// sweepWait bounds how long sweepRun waits for a leader it was not given dead (its caller
// killed its group) or for processes it killed that are not its children, when nothing else is
// left to kill.
const sweepWait = 2 * time.Second

// childrenOf returns the children of pid (its threads' children files); none when it is gone.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if k, err := strconv.Atoi(string(f)); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
}

// reap waits for the child pid of scry (re-parented to it) to exit and reaps it; errors are
// ignored (another sweep may have reaped it first).
func reap(pid int) {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED, nil); err != unix.EINTR {
			return
		}
	}
}
