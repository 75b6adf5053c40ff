// Package strace is the front end of file-system mode (docs/fs-mode.md, `scry fs check`): it
// runs a program under strace in its workload directory and writes the trace of the calls that
// change that directory, the first stage of the pipeline strace -> model -> explore (packages
// fs/strace, fs/model, fs/explore).
//
// # Input and output
//
// [Record] takes the program and its arguments, the workload directory (the program's working
// directory and the only part of the file system whose changes are recorded) and, optionally,
// a workload: lines fed to the program's standard input one at a time, each once the program
// has read everything before it, so that the read returning a line's first byte is where its
// operation begins whatever the program's buffering.
//
// It writes a trace (docs/trace-format.md, version 6) of:
//
//   - FS_OP records, one per successful call on a file or directory under the workload
//     directory: the opens and closes that name its descriptors, and every call that changes
//     it (write and its vector and positional forms, with flags dsync and sync when an O_DSYNC
//     or O_SYNC descriptor or pwritev2's RWF_DSYNC or RWF_SYNC made it durable on return,
//     truncate, fallocate, rename, link, linkat of an O_TMPFILE file, symlink, unlink, mkdir,
//     rmdir, copy_file_range, fsync, fdatasync, sync_file_range with
//     SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER, msync; sync and syncfs too), with
//     absolute paths, the bytes written, and file offsets and sizes in bytes;
//   - OUTPUT records, the bytes the program wrote to its standard output and error;
//   - OP_BEGIN records, with a workload, at the read that begins each of its lines;
//   - SITES and STACK records, the call stacks of the calls (strace -k) symbolized into
//     function, file and line through the binary's DWARF line table when it has one, as the
//     demangled symbol+offset and the binary's path otherwise;
//   - FS_OP writes for the stores through shared writable mappings of files under the
//     directory: the program runs with scry's mapping shim (native/fsshim) in LD_PRELOAD, which
//     reports the changed pages by marker calls strace prints (mmap.go);
//   - WARNING records for what the trace cannot show (stores through shared writable mappings
//     of a process without the shim, writes cut at strace's string limit, sendfile and splice,
//     fallocate's COLLAPSE_RANGE and INSERT_RANGE, a sync_file_range that waits for nothing, a
//     copy_file_range source outside the directory read after the run), and END, the
//     program's exit status or signal.
//
// It returns a [Recorded]: how the program ended, the number of records and the warnings.
//
// Between the two, the converter follows what the calls name: each process's descriptor
// table, the open file descriptions that dup and fork share with their file offsets (in bytes,
// moved by write, read and lseek; positional writes go to their offset argument and leave the
// offset alone; O_APPEND writes at the end), each process's working directory, and its shared
// mappings. A write strace prints with more than 16 MiB is cut, and its data warned about as
// incomplete; a line of strace output is at most 65 MiB.
//
// # Sources
//
// ALICE (Pillai et al., OSDI'14) records the system calls of a workload's run and turns them
// into the logical operations its persistence models act on (§4.1), and places a static
// vulnerability at the application's source line, not the C library's (§4): the library and
// loader frames of a stack are skipped here. Barowsky et al., "Improving Application Crash
// Consistency with Symbolic Execution and Fuzzing" (2021), §3.1.3 describes that recording as
// scry takes it (a trace of the program's system calls under a user's workload, with dynamic
// and static vulnerabilities), and §7.1 and §7.3 show why frames matter: static
// vulnerabilities ALICE placed at `_start` were confusing, and those in library code had to be
// set aside by hand; here frames are symbolized through DWARF and a call is placed at its
// innermost frame outside libc.
//
// # Errors
//
// Record fails when no program or no workload directory is given, the directory does not exist
// or is not a directory, strace cannot be found or started, strace wrote no output (the
// program could not be run), strace's output cannot be read (a line that is not strace output,
// wrapped as *[ParseError], or one over the size limit: the trace so far is kept and the
// [Recorded] returned with the error), or the trace cannot be written (an existing file at its
// path that is not a trace is not replaced). A program that fails or is killed is no error:
// Recorded says how it ended. When the context is cancelled the program's process group gets
// SIGTERM, then SIGKILL after 5 s, and the trace holds what ran (Recorded.Interrupted).
package strace
