// Package exec runs the program under test on crash images: one run at a time with isolation
// and a time limit ([Target], [Checker]), the comparison of outputs that makes WITCHER's
// output-equivalence oracle ([Equivalent], [Diff]), and a worker pool that runs many images over
// all cores ([Map]). It knows nothing of traces or crash states: package crash builds the images
// and the orchestration that pairs images with oracles lives elsewhere.
//
// # Targets and workloads
//
// A target is a command line with a {pool} placeholder, e.g. `./mapcli btree {pool}` (docs/crash-exploration.md). Its workload is fed to standard input, one operation per
// line. The same program opens an existing pool and continues, which is how it recovers from a
// crash image: running operations k+1..n on the image of a crash during operation k is one call
// of [Target.Run].
//
// # One run
//
// [Target.Run] replaces every {pool} (also inside a larger argument, --pool={pool}) with the
// image's absolute path and runs the program:
//
//   - in a working directory of the caller's choice (with [Map], the worker's private directory,
//     emptied before each item), so runs do not see each other's files;
//   - on its own copy of the pool: the caller passes an image or a copy ([CopyFile], which keeps
//     holes), never the user's pool;
//   - in its own process group, so that a hang (Target.Timeout, default 10 s), a cancelled
//     context or the program's exit kills the whole group with SIGKILL, background children
//     included; processes that left the group (setsid) are found among scry's own children,
//     scry being a child subreaper (reap.go), and killed too;
//   - compared, under a context with legal outcomes (WithLegal), line by line with them as its
//     output streams, and stopped at the first line that matches none (Outcome.Diverged);
//   - with PMEM_IS_PMEM_FORCE=1, and with tracing sent to /dev/null for programs built with
//     `scry cc` (SCRY_TRACE=/dev/null, SCRY_NO_LOADS=1, other SCRY_* variables removed), since the
//     runtime always traces and must not overwrite a real trace;
//   - with standard output kept up to 16 MiB (then cut, Outcome.Truncated) and standard error
//     up to 64 KiB.
//
// The [Outcome] says how the run ended (exit status, signal, hang, could not start) and what it
// printed. A crash, a hang, or a non-zero exit where the oracle exited 0 is a failure.
//
// # Oracles
//
// The checker oracle ([Checker], --checker 'CMD {image}') is a shell command run on the image;
// exit status 0 means consistent. {image} becomes the shell-quoted path, so any file name is
// safe.
//
// The output-equivalence oracle (WITCHER, SOSP'21, §4.5) compares the
// run on the crash image with two legal outcomes computed on consistent images: operation k
// committed and operation k rolled back. [Equivalent] decides (same ending and same output
// after the target's OutputFilter removed the lines that legitimately vary, such as mapcli's
// seed); [Diff] shows the difference in a report.
//
// # Many runs
//
// [Map] runs a function over many items with Pool.Jobs workers (default: the number of CPUs).
// Items are handed out in a fixed shuffled order so that expensive neighbours spread over the
// workers (the shuffled recovery of Fernandes's thesis, Automatic Testing of PM Applications, 2022, §5.1.4), results come
// back in input order so that they are identical whatever the job count, temporary files live in
// one directory removed when Map returns, and a progress bar with rate and ETA is drawn when the
// progress writer is a terminal. [SignalContext] turns Ctrl-C and SIGTERM into a cancelled
// context: Map then kills the running programs, removes its files and returns the context's
// error.
package exec
