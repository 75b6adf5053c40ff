package exec

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Reaping a run's escaped processes without scanning /proc.
//
// scry makes itself a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER): a process a run started
// whose parent dies is re-parented to scry, not to init, and becomes visible in scry's own
// list of children (/proc/self/task/TID/children, one file per thread of scry). When a run ends,
// its leader is dead and its process group killed, so every process of the run still alive
// either is in the run's process group or descends from a process that died, and the highest
// such living process in each chain is a child of scry. sweepRun therefore only looks at scry's
// children (a handful: the running programs of the other workers, the fork servers, the escaped
// processes), never at the whole machine's processes, and kills those of the run until none is
// left: the cost of a run's clean-up no longer grows with the number of processes on the machine
// (the /proc scan of killTagged read every /proc/PID/environ after every run).
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
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
	for {
		kids, err := children()
		if err != nil {
			killTagged(except, tags...)
			return
		}
		var killed []int
		for _, pid := range kids {
			if pid == pgid || pid == except {
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
				if inGroup {
					reap(pid)
				}
				continue
			}
			if inGroup || hasTag(pid, want) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed = append(killed, pid)
			}
		}
		if len(killed) == 0 {
			return
		}
		for _, pid := range killed {
			reap(pid)
		}
	}
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
